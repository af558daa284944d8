"""The dynamics node's crash forces over real DDS (issue 11): driven into the urban map's barrier
(a wall along x = -15 m, 0.5 m thick), the ego stops at it, publishes its damage on
accidents/damage, and sim/reset clears the damage."""
from __future__ import annotations

import json
import math

from std_srvs.srv import Trigger
from vehicle_sim.msg import VehicleControl, VehicleDamage, VehicleState

from vehicle_sim.nodes import qos

WALL_FACE_X_M = -15.0 + 0.25  # east face of barrier0 (config/maps/urban_grid.yaml)
HALF_LENGTH_M = 0.5 * 4.298  # medium_car


def test_driven_into_the_barrier_the_ego_stops_there_and_reports_damage(ros_node, start_node):
    states: list[VehicleState] = []
    damage: list[VehicleDamage] = []
    subs = [ros_node.create_subscription(VehicleState, "vehicle/state", states.append, qos.STATE),
            ros_node.create_subscription(VehicleDamage, "accidents/damage", damage.append,
                                         qos.LATCHED)]
    cmd = ros_node.create_publisher(VehicleControl, "vehicle/control", qos.COMMAND)
    reset = ros_node.create_client(Trigger, "sim/reset")
    # at rest heading west towards the wall, 6.6 m from it; then full throttle into it
    node = start_node("dynamics_node", params={
        "map_file": "maps/urban_grid.yaml", "initial.x_m": -6.0, "initial.y_m": 0.0,
        "initial.yaw_rad": math.pi, "command_timeout_s": 100.0, "real_time_factor": 2.0})
    ros_node.spin_until(lambda: cmd.get_subscription_count() > 0 and reset.service_is_ready(),
                        what="dynamics node up", timeout_s=60)
    ros_node.spin_until(lambda: damage, what="the latched damage state at start")
    assert list(damage[-1].level) == [0] * 6
    cmd.publish(VehicleControl(gear=1, throttle=1.0))
    try:
        ros_node.spin_until(lambda: any(max(d.level) > 0 for d in damage), what="damage",
                            timeout_s=60)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; states {[s.pose.position.x for s in states[-5:]]}; node "
                             f"said:\n{node.stop()}") from None
    hit = next(d for d in damage if max(d.level) > 0)
    assert hit.body == "ego"
    front = (VehicleDamage.PART_FRONT_LEFT, VehicleDamage.PART_FRONT_CENTRE,
             VehicleDamage.PART_FRONT_RIGHT)
    assert sum(hit.impulse[i] for i in front) > 0.0
    assert hit.impulse[VehicleDamage.PART_REAR] == 0.0
    t_hit = hit.header.stamp.sec + 1e-9 * hit.header.stamp.nanosec
    ros_node.spin_until(lambda: states and states[-1].header.stamp.sec >= t_hit + 2.0,
                        what="2 s after the impact", timeout_s=60)
    # the front never went through the wall and the car is at it, (nearly) at rest
    fronts = [s.pose.position.x - HALF_LENGTH_M for s in states]
    assert min(fronts) > WALL_FACE_X_M - 0.1
    assert fronts[-1] < WALL_FACE_X_M + 0.6 and abs(states[-1].twist.linear.x) < 0.3

    n = len(damage)
    future = reset.call_async(Trigger.Request())
    ros_node.spin_until(future.done, what="sim/reset response")
    assert future.result().success
    ros_node.spin_until(lambda: len(damage) > n and max(damage[-1].level) == 0,
                        what="damage cleared by the reset")
    assert list(damage[-1].impulse) == [0.0] * 6
    for s in subs:
        ros_node.destroy_subscription(s)


def test_a_missing_map_file_refuses_to_start(assert_refuses):
    assert_refuses("dynamics_node", {"map_file": "maps/no_such_map.yaml"}, "no_such_map")


def test_the_run_summary_lists_the_damage(ros_node, start_node, tmp_path):
    """The monitor keeps the latest VehicleDamage of each body and writes it to the summary."""
    pub = ros_node.create_publisher(VehicleDamage, "accidents/damage", qos.LATCHED)
    node = start_node("sim_monitor", params={"record_dir": str(tmp_path)})
    ros_node.spin_until(lambda: pub.get_subscription_count() > 0, what="monitor up")
    hit = VehicleDamage(body="ego")
    hit.impulse[VehicleDamage.PART_FRONT_CENTRE] = 12_000.0
    hit.level[VehicleDamage.PART_FRONT_CENTRE] = VehicleDamage.LEVEL_SEVERE
    pub.publish(hit)
    for _ in range(20):  # 1 s for the sample to arrive
        ros_node.test_executor.spin_once(timeout_sec=0.05)
    out = node.stop()
    written = list(tmp_path.glob("summary-*.json"))
    assert len(written) == 1, f"the monitor wrote {written}; it said:\n{out}"
    summary = json.loads(written[0].read_text())
    ego = summary["damage"]["ego"]
    assert ego["level"][VehicleDamage.PART_FRONT_CENTRE] == VehicleDamage.LEVEL_SEVERE
    assert ego["impulse_ns"][VehicleDamage.PART_FRONT_CENTRE] == 12_000.0
    assert "front_centre severe" in out
    ros_node.destroy_publisher(pub)
