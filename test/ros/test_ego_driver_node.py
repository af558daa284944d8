"""The ego driver node drives the real dynamics node through the city on simulation time."""
from __future__ import annotations

import itertools
import math

from rosgraph_msgs.msg import Clock
from vehicle_sim.msg import VehicleControl, VehicleState

from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos
from vehicle_sim.paths import config_path


def test_autopilot_drives_the_dynamics_node_along_the_lane(ros_node, start_node, tmp_path):
    states: list[VehicleState] = []
    commands: list[VehicleControl] = []
    clock: list[int] = []
    ros_node.create_subscription(VehicleState, "vehicle/state", states.append, qos.STATE)
    ros_node.create_subscription(VehicleControl, "autonomy/control", commands.append,
                                 qos.COMMAND)
    ros_node.create_subscription(Clock, "/clock", lambda m: clock.append(conv.to_ns(m.clock)),
                                 qos.STREAM)
    # the ego starts at the dynamics node's default pose (0, 0, 0), in the corner junction off
    # the lanes: the autopilot picks lane h0_0_f0 (from (9, -1.75) heading east) and joins it
    driver = start_node("ego_driver_node", params={"use_sim_time": True},
                        params_file=str(config_path("ego_driver.yaml")))
    start_node("dynamics_node", params={"real_time_factor": 3.0, "status_rate_hz": 5.0},
               remappings=("vehicle/control:=autonomy/control",))
    ros_node.spin_until(lambda: states and conv.to_ns(states[-1].header.stamp) > 30e9,
                        timeout_s=60.0, what="30 s of simulation")
    path = sum(math.hypot(b.pose.position.x - a.pose.position.x,
                          b.pose.position.y - a.pose.position.y)
               for a, b in itertools.pairwise(states))
    assert path > 50.0, driver.stop()
    on_lane = [s for s in states if 9.5e9 < conv.to_ns(s.header.stamp) < 10.5e9]
    assert on_lane and all(abs(s.pose.position.y + 1.75) < 0.5 for s in on_lane)
    assert all(s.pose.position.x > 20.0 for s in on_lane)
    assert all(abs(conv.rpy_from_quaternion(s.pose.orientation)[2]) < 0.1 for s in on_lane)
    # commands at 50 Hz of simulation time, stamped with simulation time
    stamps = [conv.to_ns(c.header.stamp) for c in commands]
    assert stamps == sorted(stamps) and stamps[-1] <= clock[-1] + 1
    late = [t for t in stamps if 10e9 <= t < 20e9]
    assert 400 <= len(late) <= 510  # 50 Hz over 10 s of sim time (a few lost on a busy host)
    gaps = sorted(b - a for a, b in itertools.pairwise(late))
    assert abs(gaps[len(gaps) // 2] - 20_000_000) < 2_000_000  # median period 20 ms sim time


def test_a_missing_map_refuses_to_start(start_node, tmp_path):
    proc = start_node("ego_driver_node", params={"map_file": "maps/no_such_map.yaml"})
    assert proc.proc.wait(timeout=30) == 2
    assert "no_such_map.yaml" in proc.stop()
