"""``python -m vehicle_sim.warm``: compile every numba kernel of the nodes once, into numba's
on-disk cache, so that no node compiles while simulated time runs.

numba compiles a kernel at its first call for the argument types of that call and, with
``cache=True``, stores the machine code next to the kernel's source (``__pycache__`` of the
installed package; ``NUMBA_CACHE_DIR`` if set, the user cache dir for a read-only install). A
later process that calls the kernel with the same types loads it from there instead of
compiling. Each ``warm_*`` function below runs the code path of one node on the shipped files
(map, traffic parameters, vehicles), so the types are those of a real run:

- :func:`warm_traffic` (traffic node): the traffic core on the urban map, zone and whole-city,
  with and without an ego, and its crash world with a contact (ego on an agent);
- :func:`warm_vehicles` (dynamics node): every model with every integrator;
- :func:`warm_accident` (accident node, the dynamics node's crash link): the broad phase;
- :func:`warm_ego` (ego driver): the autopilot's geometry and driving-law kernels;
- :func:`warm_bridge` (bridge node): the frame sender's loop;
- :func:`warm_exit_guard` (every node process): the bound of its clean-up at the end.

The nodes call their function before they join the ROS graph (``nodes.main.run``'s
``warm_up``), so the clock owner, which waits for every node of the graph, starts the
simulation only once they are ready; ``scripts/setup.sh`` runs this module once after
installing, so the first run loads instead of compiling (``core.numba_cache`` drops the cache
when a source changed). Nothing here reads the wall clock but the printed durations.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable

from vehicle_sim.paths import config_path

URBAN_MAP = "maps/urban_grid.yaml"
CITY_PARAMS = "traffic/city.yaml"  # whole-city traffic (urban_sharded): no control zone
WARM_STEPS = 3  # traffic steps per variant: the first builds, the next ones move agents
DT_S = 0.05  # the traffic node's default step (20 Hz)


def warm_traffic() -> None:
    """The traffic node's kernels: TrafficSim steps on the urban map, with the control zone
    (urban) and whole-city (city.yaml), without and with an ego, and TrafficCrashes with the
    ego placed on an agent so the broad phase, narrow phase and crash model all run."""
    from vehicle_sim.core.accident.traffic_crashes import TrafficCrashes
    from vehicle_sim.core.traffic.sim import TrafficSim

    for params in (None, config_path(CITY_PARAMS)):
        sim = TrafficSim.from_files(config_path(URBAN_MAP), params, seed=0)
        crashes = TrafficCrashes(sim)
        ego = None
        for k in range(1, WARM_STEPS + 1):
            crashes.step(k * round(DT_S * 1e9), DT_S, ego)
            sim.step(DT_S, ego)
            a = sim.agents()
            if len(a["x"]):  # the ego on the first agent: a contact in the next step
                ego = (float(a["x"][0]), float(a["y"][0]), float(a["yaw"][0]), 5.0)
            elif ego is None:
                ego = (10.0, -1.75, 0.0, 5.0)  # config/dynamics.yaml's initial pose


def warm_vehicles() -> None:
    """The dynamics node's kernels: one step of every model with every integrator."""
    from vehicle_sim.core.dynamics_params import DynamicsParams
    from vehicle_sim.core.vehicle.factory import MODELS, make_model
    from vehicle_sim.core.vehicle.integrators import INTEGRATORS
    from vehicle_sim.core.vehicle.interface import Controls
    from vehicle_sim.core.vehicle.params import load_vehicle

    p = DynamicsParams()
    vehicle = load_vehicle(config_path(p.vehicle_file))
    for kind in MODELS:
        for integrator in INTEGRATORS:
            model = make_model(kind, vehicle, integrator)
            model.reset(0.0, 0.0, 0.0, 5.0)
            model.step(Controls(throttle=0.2, steer_rad=0.02), p.dt_ns * 1e-9)
            model.snapshot()


def warm_accident() -> None:
    """The accident detector's broad phase (accident node; the ego crash link uses the same)."""
    from vehicle_sim.core.accident import broad_phase
    from vehicle_sim.core.accident.detect import AccidentDetector
    from vehicle_sim.core.accident.ego_crash import far_agent

    AccidentDetector.warm_up()
    a = far_agent()  # the ego crash physics' agents phase (every physics step with traffic)
    broad_phase.agents_near(a.pose, a.vel, a.size, a.stamp_ns, 0, 200_000_000, 0.0, 0.0, 2.4,
                            0.05)


def warm_ego() -> None:
    """The ego autopilot's kernels on the urban map."""
    from vehicle_sim.core.ego.autopilot import warm_up
    from vehicle_sim.core.traffic.mapfile import load_map
    from vehicle_sim.core.traffic.network import Network

    path = config_path(URBAN_MAP)
    warm_up(Network(load_map(path), str(path)))


def warm_bridge() -> None:
    """The bridge's frame sender (core.devices.frame_sender): its compiled send loop; and the
    stack controller's drive law (core.motion.stack_controller), for the first stack command."""
    from vehicle_sim.core.devices import frame_sender
    from vehicle_sim.core.motion import stack_controller
    frame_sender.warm_up()
    stack_controller.warm_up()


def warm_exit_guard() -> None:
    """The clean-up bound of every node process (core.exit_guard): loaded at its start."""
    from vehicle_sim.core.exit_guard import warm_up
    warm_up()


STAGES: dict[str, Callable[[], None]] = {
    "traffic": warm_traffic, "vehicles": warm_vehicles, "accident": warm_accident,
    "ego": warm_ego, "bridge": warm_bridge, "exit_guard": warm_exit_guard}


def main(argv: list[str] | None = None) -> int:
    """Run the named stages (default: all); one line each with its wall time."""
    names = list(argv if argv is not None else sys.argv[1:]) or list(STAGES)
    unknown = [n for n in names if n not in STAGES]
    if unknown:
        print(f"vehicle_sim.warm: unknown stage {unknown[0]!r} (known: {', '.join(STAGES)})",
              file=sys.stderr)
        return 2
    for name in names:
        start = time.monotonic()
        STAGES[name]()
        print(f"[warm] {name} kernels ready in {time.monotonic() - start:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
