"""After the ego driver's and the dynamics node's warm-up stages (vehicle_sim.warm), what they run
per control step and per physics step compiles nothing: every kernel the autopilot and the
single-track model call has machine code for the argument types of a real run.

No timing: numba's own record of the types each kernel has code for (Dispatcher.signatures)."""
from __future__ import annotations

import numpy as np

from vehicle_sim import warm
from vehicle_sim.core.config import load
from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.ego.autopilot import Autopilot
from vehicle_sim.core.ego.params import EgoDriverParams
from vehicle_sim.core.numba_cache import compiled_signatures
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.vehicle.factory import make_model
from vehicle_sim.core.vehicle.interface import Controls
from vehicle_sim.core.vehicle.params import VehicleParams
from vehicle_sim.paths import config_path


def test_the_ego_and_vehicle_warm_up_leaves_nothing_to_compile():
    warm.warm_ego()
    warm.warm_vehicles()
    before = compiled_signatures()
    assert any("route_scan" in name and sigs for name, sigs in before.items())
    assert any("st_snapshot_vector" in name and sigs for name, sigs in before.items())
    p, ego = DynamicsParams(), EgoDriverParams()
    vehicle = load(VehicleParams, config_path(p.vehicle_file))
    network = Network(load_map(config_path(ego.map_file)), ego.map_file)
    autopilot = Autopilot(network, vehicle, ego)
    model = make_model(p.model, vehicle, p.integrator)
    i = p.initial
    model.reset(i.x_m, i.y_m, i.yaw_rad, i.speed_mps)
    # a car 20 m ahead in the ego's lane and one beside: the leader search runs in full
    autopilot.set_agents(np.array([[i.x_m + 20.0, i.y_m, i.yaw_rad, 3.0, 4.5, 1.8],
                                   [i.x_m + 5.0, i.y_m + 3.5, i.yaw_rad + np.pi, 3.0, 4.5, 1.8]]))
    cmd = None
    for k in range(100):
        s = model.snapshot()
        if k % 10 == 0:
            cmd = autopilot.update(k * 1e-3, float(s.position_m[0]), float(s.position_m[1]),
                                   float(s.rpy_rad[2]), float(s.velocity_mps[0]))
        model.step(Controls(steer_rad=cmd.steer_rad, throttle=cmd.throttle, brake=cmd.brake,
                            gear=cmd.gear), p.dt_ns * 1e-9)
    assert cmd.reference == "leader"  # the leader search found the car ahead
    after = compiled_signatures()
    new = {name: sigs - before.get(name, frozenset()) for name, sigs in after.items()}
    assert not {name: sigs for name, sigs in new.items() if sigs}, "compiled after the warm-up"
