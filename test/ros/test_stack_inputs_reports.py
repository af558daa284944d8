"""Status out in Autoware's types and /initialpose, over real DDS (issue 12): the reports follow
the real ego under a real Autoware-type command stream; /initialpose places the ego."""
from __future__ import annotations

import importlib
import math

import pytest
from geometry_msgs.msg import PoseWithCovarianceStamped
from vehicle_sim.msg import VehicleState

from vehicle_sim.nodes import qos
from vehicle_sim.nodes.conversions import quaternion_from_rpy, rpy_from_quaternion, to_ns

aw_control = importlib.import_module("autoware_control_msgs.msg")
aw_vehicle = importlib.import_module("autoware_vehicle_msgs.msg")
PRESET = "platforms/stewart6_generic.yaml"
REPORTS = {"velocity_status": aw_vehicle.VelocityReport,
           "steering_status": aw_vehicle.SteeringReport, "gear_status": aw_vehicle.GearReport,
           "control_mode": aw_vehicle.ControlModeReport,
           "turn_indicators_status": aw_vehicle.TurnIndicatorsReport}


@pytest.fixture
def sim(ros_node, start_node):
    dyn = start_node("dynamics_node", params={"command_timeout_s": 0.3})
    bridge = start_node("bridge_node", params={"platform_file": PRESET,
                                               "platform_rate_hz": 100.0})
    states: list[VehicleState] = []
    ros_node.create_subscription(VehicleState, "vehicle/state", states.append, qos.STATE)
    got: dict[str, list] = {name: [] for name in REPORTS}
    for name, msg_type in REPORTS.items():
        ros_node.create_subscription(msg_type, f"/vehicle/status/{name}", got[name].append,
                                     qos.COMMAND)
    ros_node.spin_until(lambda: states and all(got.values()), what="state and every report")
    return states, got, dyn, bridge


def publisher(ros_node, msg_type, topic):
    pub = ros_node.create_publisher(msg_type, topic, qos.COMMAND)
    ros_node.spin_until(lambda: pub.get_subscription_count() > 0, what=f"{topic} match")
    return pub


def test_reports_follow_the_ego_under_autoware_commands(ros_node, sim):
    states, got, _dyn, _bridge = sim
    v = aw_vehicle
    control = publisher(ros_node, aw_control.Control, "/control/command/control_cmd")
    turn = publisher(ros_node, v.TurnIndicatorsCommand, "/control/command/turn_indicators_cmd")
    gear = publisher(ros_node, v.GearCommand, "/control/command/gear_cmd")
    turn.publish(v.TurnIndicatorsCommand(command=v.TurnIndicatorsCommand.ENABLE_LEFT))
    ros_node.spin_until(lambda: got["turn_indicators_status"][-1].report
                        == v.TurnIndicatorsReport.ENABLE_LEFT, what="left indicator reported")

    def command():
        msg = aw_control.Control()
        msg.stamp = states[-1].header.stamp
        msg.longitudinal.velocity, msg.longitudinal.acceleration = 4.0, 1.0
        msg.longitudinal.is_defined_acceleration = True
        msg.lateral.steering_tire_angle = 0.05
        return msg

    def drive_until(predicate, what):
        def tick():
            control.publish(command())
            return predicate()
        ros_node.spin_until(tick, what=what)

    drive_until(lambda: got["velocity_status"][-1].longitudinal_velocity > 3.0, "speed report")
    assert got["gear_status"][-1].report == v.GearReport.DRIVE
    assert got["control_mode"][-1].mode == v.ControlModeReport.AUTONOMOUS
    assert got["steering_status"][-1].steering_tire_angle == pytest.approx(0.05, abs=1e-3)
    # the bridge reports from the raw state stream: compare with the 100 Hz state nearest in
    # sim time (at most 5 ms apart: 1 m/s^2 changes the speed by 0.005 m/s in that time)
    report = got["velocity_status"][-1]
    t = to_ns(report.header.stamp)
    ros_node.spin_until(lambda: to_ns(states[-1].header.stamp) >= t, what="the state after")
    state = min(states, key=lambda s: abs(to_ns(s.header.stamp) - t))
    assert report.longitudinal_velocity == pytest.approx(state.twist.linear.x, abs=0.02)
    assert report.heading_rate == pytest.approx(state.twist.angular.z, abs=0.01)
    assert report.heading_rate > 0.03  # a left turn (0.05 rad at > 3 m/s: > 0.06 rad/s)
    assert report.header.frame_id == "base_link"
    gear.publish(v.GearCommand(command=v.GearCommand.PARK))
    drive_until(lambda: got["gear_status"][-1].report == v.GearReport.PARK, "PARK reported")
    drive_until(lambda: abs(states[-1].twist.linear.x) < 0.05, "parked: the ego at rest")


def test_initialpose_places_the_ego(ros_node, sim):
    states, _got, dyn, _bridge = sim
    pub = publisher(ros_node, PoseWithCovarianceStamped, "/initialpose")
    msg = PoseWithCovarianceStamped()
    msg.header.frame_id = "map"
    msg.pose.pose.position.x, msg.pose.pose.position.y = 120.0, -35.0
    msg.pose.pose.orientation = quaternion_from_rpy(0.0, 0.0, 1.2)
    pub.publish(msg)

    def placed() -> bool:
        p = states[-1].pose.position
        return abs(p.x - 120.0) < 0.01 and abs(p.y + 35.0) < 0.01
    ros_node.spin_until(placed, what="the ego at the initial pose")
    yaw = rpy_from_quaternion(states[-1].pose.orientation)[2]
    assert yaw == pytest.approx(1.2, abs=1e-3)
    bad = PoseWithCovarianceStamped()
    bad.header.frame_id = "earth"
    bad.pose.pose.orientation.w = 1.0
    nan = PoseWithCovarianceStamped()
    nan.header.frame_id = "map"
    nan.pose.pose.position.x = math.nan
    for refused in (bad, nan):
        pub.publish(refused)
        mark = len(states)
        ros_node.spin_until(lambda m=mark: len(states) > m + 50, what="states after a bad pose")
    assert abs(states[-1].pose.position.x - 120.0) < 0.01, "a refused pose moves nothing"
    out = dyn.stop()
    assert "/initialpose refused: frame_id 'earth' is not one of" in out, out


def test_initialpose_in_map_places_base_link_at_the_rear_axle_through_map_to_odom(ros_node,
                                                                                  start_node):
    """The pose a stack sets is base_link's, in map: with base_link at the rear axle and an
    odom offset in map, the odometry (base_link in odom) reports exactly that pose in odom.
    The quaternion is sent scaled by 2 (normalised on receipt)."""
    from nav_msgs.msg import Odometry
    offset = {"x_m": 100.0, "y_m": -50.0, "yaw_rad": 0.3}
    dyn = start_node("dynamics_node", params={
        "base_link": "rear_axle", "map_file": "''",  # an offset: no map (dynamics_params)
        **{f"odom_in_map.{k}": v for k, v in offset.items()}})
    odom: list[Odometry] = []
    sub = ros_node.create_subscription(Odometry, "odom", odom.append, qos.STATE)
    try:
        pub = publisher(ros_node, PoseWithCovarianceStamped, "/initialpose")
        msg = PoseWithCovarianceStamped()
        msg.header.frame_id = "map"
        msg.pose.pose.position.x, msg.pose.pose.position.y = 110.0, -30.0
        q = quaternion_from_rpy(0.0, 0.0, 1.2)
        msg.pose.pose.orientation.z, msg.pose.pose.orientation.w = 2.0 * q.z, 2.0 * q.w
        pub.publish(msg)
        c, s = math.cos(offset["yaw_rad"]), math.sin(offset["yaw_rad"])
        dx, dy = 110.0 - offset["x_m"], -30.0 - offset["y_m"]
        want = (c * dx + s * dy, -s * dx + c * dy, 1.2 - offset["yaw_rad"])

        def placed() -> bool:
            p = odom[-1].pose.pose.position if odom else None
            return p is not None and abs(p.x - want[0]) < 0.01 and abs(p.y - want[1]) < 0.01
        ros_node.spin_until(placed, what="base_link at the initial pose, in odom")
        assert rpy_from_quaternion(odom[-1].pose.pose.orientation)[2] == \
            pytest.approx(want[2], abs=1e-3)
        assert "in map (/initialpose" in dyn.stop()
    finally:
        ros_node.destroy_subscription(sub)


def reports_of(ros_node, reference: str):
    """VehicleReports on the test node for the medium car, base_link at ``reference``; and the
    vehicle."""
    from vehicle_sim.core.config import load
    from vehicle_sim.core.controls import ControlLimits
    from vehicle_sim.core.vehicle.params import VehicleParams
    from vehicle_sim.nodes.stack_inputs import StackInputs
    from vehicle_sim.nodes.vehicle_reports import VehicleReports
    from vehicle_sim.paths import config_path
    vehicle = load(VehicleParams, config_path("vehicles/medium_car.yaml"))
    inputs = StackInputs(vehicle, ControlLimits(0.5, 1), lambda line: None, "base_link")
    return VehicleReports(ros_node, inputs, reference, vehicle), vehicle


def listen(ros_node, reports, name: str, msg_type) -> tuple[list, object]:
    """(received messages, subscription) of report ``name``, once matched with its publisher."""
    got: list = []
    sub = ros_node.create_subscription(msg_type, f"/vehicle/status/{name}", got.append,
                                       qos.COMMAND)
    ros_node.spin_until(lambda: reports._pubs[name].get_subscription_count() > 0,
                        what=f"{name} match")
    return got, sub


def test_reports_restart_with_sim_time_and_say_who_drives(ros_node):
    """A new run (sim time back to the start) is reported at once, not after the old run's
    time; the control mode is MANUAL for the rig, DISENGAGED under the e-stop."""
    from vehicle_sim.nodes.conversions import stamp
    reports, _ = reports_of(ros_node, "cg")
    modes, sub = listen(ros_node, reports, "control_mode", aw_vehicle.ControlModeReport)
    try:
        for t_ms, source in ((5000, "autonomy"), (5020, "driver"), (5040, "estop"),
                             (20, "autonomy")):  # the last: a new run
            state = VehicleState()
            state.header.stamp = stamp(t_ms * 1_000_000)
            n = len(modes)
            reports.on_state(state, source)  # keep-last 1: read each before the next
            ros_node.spin_until(lambda n=n: len(modes) > n, what=f"the report at {t_ms} ms")
        m = aw_vehicle.ControlModeReport
        assert [r.mode for r in modes] == [m.AUTONOMOUS, m.MANUAL, m.DISENGAGED, m.AUTONOMOUS]
        assert to_ns(modes[-1].stamp) == 20_000_000
    finally:
        ros_node.destroy_subscription(sub)


def test_the_velocity_report_is_the_reference_points(ros_node):
    """base_link at the rear axle: the report's lateral velocity is the rear axle's,
    v_y - r * l_r (Autoware's base_link), not the CG's; forward speed and yaw rate as they are."""
    from vehicle_sim.nodes.conversions import stamp
    reports, vehicle = reports_of(ros_node, "rear_axle")
    got, sub = listen(ros_node, reports, "velocity_status", aw_vehicle.VelocityReport)
    try:
        state = VehicleState()
        state.header.stamp = stamp(1_000_000_000)
        state.twist.linear.x, state.twist.linear.y, state.twist.angular.z = 10.0, 0.5, 0.4
        reports.on_state(state, "autonomy")
        ros_node.spin_until(lambda: got, what="the velocity report")
        lr = vehicle.chassis.cg_to_rear_axle_m
        assert got[-1].lateral_velocity == pytest.approx(0.5 - 0.4 * lr, abs=1e-6)
        assert got[-1].longitudinal_velocity == pytest.approx(10.0)
        assert got[-1].heading_rate == pytest.approx(0.4)
    finally:
        ros_node.destroy_subscription(sub)
