"""Traffic agents see the scripted accident vehicles (core/accident/scene_obstacles.py): an agent
driving behind the rear-end chain (config/accidents/rear_end_chain.yaml) on the same lane brakes
for the last car as for a leader, before it starts, while it drives and after it crashed and
slid to rest; it keeps a gap and never touches it. Without the obstacles (the control case) the
same agent runs into the car, so the test can fail."""
from __future__ import annotations

import numpy as np
import pytest

from vehicle_sim.core.accident.scene import VEHICLE_FILES, AccidentScene
from vehicle_sim.core.accident.scene_obstacles import SceneObstacles
from vehicle_sim.core.accident.traffic_crashes import TrafficCrashes
from vehicle_sim.core.traffic import agents as ag
from vehicle_sim.core.traffic.kernels import layout as lay
from vehicle_sim.core.traffic.sim import TrafficSim
from vehicle_sim.core.vehicle.params import load_vehicle
from vehicle_sim.paths import config_path

DT_S = 0.05  # the traffic node's default 20 Hz


def drive(with_obstacles: bool, seconds: float = 12.0):
    """(min bumper gap [m] agent -> car1 over the run, contacts with the agent, last agent)."""
    sim = TrafficSim.from_files(config_path("maps/crossroad.yaml"),
                                config_path("traffic/no_agents.yaml"))
    vehicles = {k: load_vehicle(config_path(f)) for k, f in VEHICLE_FILES.items()}
    scene = AccidentScene(config_path("accidents/rear_end_chain.yaml"), vehicles, 1.0)
    crashes = TrafficCrashes(sim, scene)
    obstacles = SceneObstacles(sim)
    car1 = scene.names.index("car1")
    lane = sim.network.lane_index("west_f0")  # from x = -70 m east; car1 starts at x = -42 m
    slot = sim.spawn(lane, 14.0, speed=10.0, profile=ag.MODERATE)
    agent_uid = int(sim.store.ai[lay.AI_UID, slot])
    gap_min, touches = np.inf, []
    for k in range(1, round(seconds / DT_S) + 1):
        t_ns = k * round(DT_S * 1e9)
        touches += [c for c in crashes.step(t_ns, DT_S, None)
                    if agent_uid in (c.a_id, c.b_id)]
        if with_obstacles:
            obstacles.step(scene.agents(), DT_S, None)
        else:
            sim.step(DT_S, None)
        scene.step(t_ns, DT_S)
        a, s = sim.agents(), scene.agents()
        i = int(np.flatnonzero(a["uid"] == agent_uid)[0])
        gap = s["x"][car1] - a["x"][i] - 0.5 * (s["length"][car1] + a["length"][i])
        gap_min = min(gap_min, gap)
    assert len(sim.agents()["uid"]) == 1, "the scene's rows must not stay in the traffic"
    return gap_min, touches, {k: v[i] for k, v in sim.agents().items()}


@pytest.mark.parametrize("with_obstacles", [True, False])
def test_an_agent_behind_a_scripted_car_keeps_a_gap_to_it(with_obstacles):
    gap_min, touches, agent = drive(with_obstacles)
    if not with_obstacles:  # control: blind to the scripted car, it runs into it
        assert touches and agent["crashed"], gap_min
        return
    assert not touches, touches
    assert not agent["crashed"]
    assert gap_min > 0.5, f"closest bumper gap {gap_min:.2f} m"
    assert abs(agent["speed"]) < 0.1  # stopped behind the crashed car1 (at rest in its lane)


def test_lane_of_a_crossing_car_is_its_own_connector():
    sim = TrafficSim.from_files(config_path("maps/crossroad.yaml"),
                                config_path("traffic/no_agents.yaml"))
    obstacles = SceneObstacles(sim)
    names = sim.network.lane_names
    # at the junction centre heading east: the west -> east connector, not a crossing one
    lane, _, lat = obstacles.lane_of(0.0, -1.75, 0.0)
    assert names[lane] == "centre:west_f0>east_f0" and abs(lat) < 0.1
    # heading north at the same x: a south -> north lane
    lane, _, _ = obstacles.lane_of(1.75, -1.0, np.pi / 2)
    assert names[lane].startswith("centre:south_f0>north_f0")
