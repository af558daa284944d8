"""REP-105 frames of the dynamics node over real DDS: odom -> base_link on /tf equals the state's
pose at the state's own stamp, map -> odom is latched on /tf_static, and base_link at the rear
axle moves the odometry and TF by the rigid-body law (core.frames)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from nav_msgs.msg import Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from vehicle_sim.msg import VehicleControl, VehicleState

from vehicle_sim.core.vehicle.params import load_vehicle
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.conversions import rpy_from_quaternion, to_ns
from vehicle_sim.paths import config_path

tf2 = pytest.importorskip("tf2_msgs.msg")
STATIC_LISTENER = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)  # tf2's listener
CAR = load_vehicle(config_path("vehicles/medium_car.yaml"))


class Frames:
    """States, odometry and TF by stamp."""

    def __init__(self, node):
        self.node, self.states, self.odom, self.tf, self.static = node, {}, {}, {}, []
        self.subs = [
            node.create_subscription(VehicleState, "vehicle/state", self._keep(self.states),
                                     qos.STATE),
            node.create_subscription(Odometry, "odom", self._keep(self.odom), qos.STATE),
            node.create_subscription(tf2.TFMessage, "/tf", self._on_tf, qos.TF),
            node.create_subscription(tf2.TFMessage, "/tf_static", self.static.append,
                                     STATIC_LISTENER)]
        self.cmd = node.create_publisher(VehicleControl, "vehicle/control", qos.COMMAND)

    @staticmethod
    def _keep(store):
        return lambda msg: store.__setitem__(to_ns(msg.header.stamp), msg)

    def _on_tf(self, msg) -> None:
        for t in msg.transforms:
            self.tf[(t.header.frame_id, t.child_frame_id, to_ns(t.header.stamp))] = t

    def matched(self) -> list[int]:
        return sorted(set(self.states) & set(self.odom)
                      & {s for (_, _, s) in self.tf})

    def close(self) -> None:
        for sub in self.subs:
            self.node.destroy_subscription(sub)
        self.node.destroy_publisher(self.cmd)


@pytest.fixture
def frames(ros_node):
    f = Frames(ros_node)
    yield f
    f.close()


def _turn(ros_node, frames) -> None:
    ros_node.spin_until(lambda: frames.cmd.get_subscription_count() > 0, what="command match")
    frames.cmd.publish(VehicleControl(gear=1, throttle=0.4, steering_angle=0.1))
    ros_node.spin_until(lambda: frames.states and max(frames.states.values(), key=lambda s: to_ns(
        s.header.stamp)).twist.angular.z > 0.05, what="car turning")
    turning = max(frames.states)
    ros_node.spin_until(lambda: sum(s > turning for s in frames.matched()) >= 20,
                        what="20 turning states with their odometry and /tf")


def test_tf_is_the_states_pose_at_its_stamp_and_map_to_odom_is_latched(ros_node, frames,
                                                                       start_node):
    start_node("dynamics_node", params={"real_time_factor": 2.0, "command_timeout_s": 30.0,
                                        "odom_in_map.x_m": 100.0, "odom_in_map.yaw_rad": 0.5,
                                        "map_file": "''"})  # an offset: no map (frames.py)
    _turn(ros_node, frames)
    for stamp in frames.matched()[-20:]:
        state, tf = frames.states[stamp], frames.tf[("odom", "base_link", stamp)]
        p, t = state.pose.position, tf.transform.translation
        assert (t.x, t.y, t.z) == (p.x, p.y, p.z)  # base_link at the CG: the same numbers
        assert tf.transform.rotation == state.pose.orientation
    # a late subscriber still gets map -> odom (transient local, as tf2's static broadcaster)
    late = []
    sub = ros_node.create_subscription(tf2.TFMessage, "/tf_static", late.append, STATIC_LISTENER)
    try:
        ros_node.spin_until(lambda: any(t.child_frame_id == "odom" for m in late
                                        for t in m.transforms), what="latched map -> odom")
    finally:
        ros_node.destroy_subscription(sub)
    m2o = next(t for m in late for t in m.transforms if t.child_frame_id == "odom")
    assert m2o.header.frame_id == "map"
    assert m2o.transform.translation.x == 100.0 and m2o.transform.translation.y == 0.0
    assert rpy_from_quaternion(m2o.transform.rotation)[2] == pytest.approx(0.5, abs=1e-12)


def test_rear_axle_reference_moves_odometry_and_tf_by_the_rigid_body_law(ros_node, frames,
                                                                          start_node):
    """Kinematic model: the rear axle rolls without slip, so base_link's lateral velocity is 0
    while the CG's is not; the position is the CG's minus b along the heading."""
    start_node("dynamics_node", params={"real_time_factor": 2.0, "command_timeout_s": 30.0,
                                        "model": "kinematic", "base_link": "rear_axle"})
    _turn(ros_node, frames)
    b = CAR.chassis.cg_to_rear_axle_m
    for stamp in frames.matched()[-20:]:
        state, odom = frames.states[stamp], frames.odom[stamp]
        tf = frames.tf[("odom", "base_link", stamp)]
        yaw = rpy_from_quaternion(state.pose.orientation)[2]
        p = state.pose.position
        expected = (p.x - b * math.cos(yaw), p.y - b * math.sin(yaw))
        got = odom.pose.pose.position
        assert np.allclose((got.x, got.y), expected, atol=1e-9)
        assert (tf.transform.translation.x, tf.transform.translation.y) == (got.x, got.y)
        assert state.twist.linear.y > 0.02
        assert abs(odom.twist.twist.linear.y) < 1e-6
        assert odom.twist.twist.linear.x == pytest.approx(state.twist.linear.x, abs=1e-12)
        assert odom.twist.twist.angular.z == state.twist.angular.z


@pytest.mark.parametrize("model, height_m", [
    ("single_track", 0.0),
    ("full14", CAR.body.cg_height_m if CAR.body is not None else None)])
def test_sensor_frames_are_given_from_the_rear_axle(ros_node, start_node, model, height_m):
    """The presets mount the IMU and the antenna at the CG (lever arm 0): from the rear axle on
    the ground that is b forward and, for full14, the CG height up."""
    if height_m is None:
        pytest.skip("the vehicle file has no 14-DOF body")
    got = []
    sub = ros_node.create_subscription(tf2.TFMessage, "/tf_static", got.append, STATIC_LISTENER)
    try:
        common = {"base_link": "rear_axle", "model": model}
        start_node("imu_node", params=common)
        start_node("gps_node", params=common)
        frames = {}
        ros_node.spin_until(lambda: frames.update({t.child_frame_id: t for m in got
                                                   for t in m.transforms})
                            or {"imu_link", "gnss_link"} <= set(frames), what="sensor frames")
    finally:
        ros_node.destroy_subscription(sub)
    for child in ("imu_link", "gnss_link"):
        t = frames[child]
        assert t.header.frame_id == "base_link"
        assert (t.transform.translation.x, t.transform.translation.y,
                t.transform.translation.z) == pytest.approx(
                    (CAR.chassis.cg_to_rear_axle_m, 0.0, height_m), abs=1e-12)


@pytest.mark.parametrize("exe, params, words", [
    ("dynamics_node", {"base_link": "front_bumper"}, "base_link"),
    ("dynamics_node", {"odom_in_map.yaw_rad": 9.0}, "odom_in_map.yaw_rad"),
    ("imu_node", {"base_link": "rear_axle", "vehicle_file": "vehicles/no_such_car.yaml"},
     "no_such_car.yaml")])
def test_bad_frame_parameters_refuse_to_start(assert_refuses, exe, params, words):
    assert_refuses(exe, params, words)


def test_reference_odometry_leaves_the_cg_state_as_it_was():
    """Odometry shares nested fields with the state it is built from (rclpy): the rear-axle
    odometry must not write the reference point's numbers into the CG's state."""
    import numpy as np
    from vehicle_sim.msg import VehicleState

    from vehicle_sim.nodes.tf_publisher import reference_odometry
    state = VehicleState()
    state.pose.position.x, state.twist.linear.x, state.twist.angular.z = 5.0, 10.0, 0.5
    state.pose.orientation.w = 1.0
    odom = reference_odometry(state, np.array([-1.5, 0.0, 0.0]))
    assert (odom.pose.pose.position.x, odom.twist.twist.linear.y) == (3.5, -0.75)
    assert (state.pose.position.x, state.twist.linear.y) == (5.0, 0.0)
