"""After the ego driver's, the dynamics node's and the bridge's warm-up stages (vehicle_sim.warm),
what they run per control step, per physics step and per stack command compiles nothing: every
kernel the autopilot, the single-track model and the stack controller call has machine code for
the argument types of a real run.

No timing: numba's own record of the types each kernel has code for (Dispatcher.signatures).
Each check runs in a fresh interpreter: in the suite's process a kernel an earlier test called
already has its code, which hid a warm-up that missed the drive law (called from Python by the
inverse model since the drive laws became one)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from vehicle_sim import warm
from vehicle_sim.core.config import load
from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.ego.autopilot import Autopilot
from vehicle_sim.core.ego.params import EgoDriverParams
from vehicle_sim.core.motion.stack_controller import (
    ControllerGains,
    LongitudinalModel,
    Measured,
    Setpoint,
    StackController,
)
from vehicle_sim.core.numba_cache import compiled_signatures
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.vehicle.factory import make_model
from vehicle_sim.core.vehicle.interface import Controls
from vehicle_sim.core.vehicle.params import VehicleParams
from vehicle_sim.paths import config_path


def drive_ego() -> None:
    """The autopilot's control steps along a straight drive, a car ahead and one beside."""
    p, ego = DynamicsParams(), EgoDriverParams()
    vehicle = load(VehicleParams, config_path(p.vehicle_file))
    network = Network(load_map(config_path(ego.map_file)), ego.map_file)
    autopilot = Autopilot(network, vehicle, ego)
    i = p.initial
    # a car 20 m ahead in the ego's lane and one beside: the leader search runs in full
    autopilot.set_agents(np.array([[i.x_m + 20.0, i.y_m, i.yaw_rad, 3.0, 4.5, 1.8],
                                   [i.x_m + 5.0, i.y_m + 3.5, i.yaw_rad + np.pi, 3.0, 4.5, 1.8]]))
    cmd = None
    for k in range(10):
        cmd = autopilot.update(k * 0.02, i.x_m + 0.1 * k, i.y_m, i.yaw_rad, 5.0)
    assert cmd.reference == "leader"  # the leader search found the car ahead
    assert cmd.throttle > 0.0 or cmd.brake > 0.0


def step_vehicle() -> None:
    """The dynamics node's model and integrator stepping with throttle and steering."""
    p = DynamicsParams()
    model = make_model(p.model, load(VehicleParams, config_path(p.vehicle_file)), p.integrator)
    i = p.initial
    model.reset(i.x_m, i.y_m, i.yaw_rad, i.speed_mps)
    for _ in range(100):
        model.step(Controls(steer_rad=0.02, throttle=0.3), p.dt_ns * 1e-9)
        model.snapshot()


def command_the_stack_controller() -> None:
    vehicle = load(VehicleParams, config_path(DynamicsParams().vehicle_file))
    controller = StackController(LongitudinalModel.from_vehicle(vehicle), ControllerGains())
    for k in range(10):  # speed up from rest: the drive force is asked for
        controller.step(Setpoint(speed_mps=10.0),
                        Measured(speed_mps=k * 0.1, accel_mps2=1.0, t_ns=k * 20_000_000))


# each process's own stages: the ego driver runs warm_ego alone (warm_vehicles compiles the drive
# law inside the single-track model, which hid the ego's miss when both ran)
CHECKS = {"ego": ((warm.warm_ego,), drive_ego),
          "vehicles": ((warm.warm_vehicles,), step_vehicle),
          "bridge": ((warm.warm_bridge,), command_the_stack_controller)}


def check(name: str) -> None:
    stages, run = CHECKS[name]
    for stage in stages:
        stage()
    before = compiled_signatures()
    run()
    after = compiled_signatures()
    new = {n: sigs - before.get(n, frozenset()) for n, sigs in after.items()}
    assert not {n: sigs for n, sigs in new.items() if sigs}, f"compiled after the warm-up: {new}"


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_the_warm_up_leaves_nothing_to_compile(name):
    done = subprocess.run([sys.executable, __file__, name], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


if __name__ == "__main__":
    check(sys.argv[1])
