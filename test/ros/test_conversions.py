"""conversions: every value of a snapshot lands in its field of the state message; the one law
for times (stamps, normalised Durations) and attitude (yaw <-> quaternion, scalar and numpy, and
the rule for a quaternion from outside the graph)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from vehicle_sim.core import rotations
from vehicle_sim.core.vehicle.interface import VehicleSnapshot
from vehicle_sim.nodes import conversions as conv


def test_vehicle_state_puts_every_value_in_its_field():
    s = VehicleSnapshot(position_m=np.array([1.0, 2.0, 3.0]), rpy_rad=np.array([0.1, -0.2, 2.5]),
                        velocity_mps=np.array([4.0, 5.0, 6.0]),
                        angular_velocity_radps=np.array([7.0, 8.0, 9.0]),
                        acceleration_mps2=np.array([10.0, 11.0, 12.0]),
                        angular_acceleration_radps2=np.array([13.0, 14.0, 15.0]),
                        wheel_speed_radps=np.array([16.0, 17.0, 18.0, 19.0]),
                        wheel_slip_ratio=np.array([0.1, 0.2, 0.3, 0.4]),
                        wheel_slip_angle_rad=np.array([0.5, 0.6, 0.7, 0.8]), steer_rad=0.25,
                        gear=-1, engine_rpm=900.0, aligning_moment_nm=30.0)
    m = conv.vehicle_state(s, 12 * 10**9 + 345, "odom", "base_link", "full14")
    assert (m.header.stamp.sec, m.header.stamp.nanosec) == (12, 345)
    assert (m.header.frame_id, m.child_frame_id, m.model) == ("odom", "base_link", "full14")
    assert list(conv.vec(m.pose.position)) == [1.0, 2.0, 3.0]
    assert conv.rpy_from_quaternion(m.pose.orientation) == pytest.approx((0.1, -0.2, 2.5))
    assert list(conv.vec(m.twist.linear)) == [4.0, 5.0, 6.0]
    assert list(conv.vec(m.twist.angular)) == [7.0, 8.0, 9.0]
    assert list(conv.vec(m.linear_acceleration)) == [10.0, 11.0, 12.0]
    assert list(conv.vec(m.angular_acceleration)) == [13.0, 14.0, 15.0]
    assert list(m.wheel_speed) == [16.0, 17.0, 18.0, 19.0]
    assert list(m.wheel_slip_ratio) == [0.1, 0.2, 0.3, 0.4]
    assert list(m.wheel_slip_angle) == [0.5, 0.6, 0.7, 0.8]
    assert (m.steering_angle, m.gear, m.engine_rpm, m.aligning_moment) == (0.25, -1, 900.0, 30.0)
    q = conv.quaternion_from_rpy(0.1, -0.2, 2.5)  # the same law as the message's, in place
    assert (q.x, q.y, q.z, q.w) == (m.pose.orientation.x, m.pose.orientation.y,
                                    m.pose.orientation.z, m.pose.orientation.w)


# ---- times: one law for stamps and durations ------------------------------------------------

def test_stamps_and_nanoseconds_are_one_law_both_ways():
    for t_ns in (0, 1, 999_999_999, 10**9, 12 * 10**9 + 345, 2**31 * 10**9 - 1, -1, -10**9 - 1):
        sec, nanosec = conv.sec_nanosec(t_ns)
        assert 0 <= nanosec < 10**9 and conv.ns_of(sec, nanosec) == t_ns
        msg = conv.stamp(t_ns)
        assert (msg.sec, msg.nanosec) == (sec, nanosec) and conv.to_ns(msg) == t_ns
    assert conv.sec_nanosec(-1) == (-1, 999_999_999)  # the floor, as rclpy's Duration.to_msg


def _old_round_duration(s: float) -> tuple[int, int]:
    """ground_truth_msgs.path_time_step before conversions.duration (kept to show the bug)."""
    return int(s), round((s % 1.0) * 1e9)


def _markers(lifetime_s: float):
    """traffic_msgs.markers_msg of no agents and the ego's box at yaw 0.5 rad."""
    from vehicle_sim.nodes import traffic_msgs as tm
    empty = {k: np.zeros(0) for k in ("x", "y", "yaw", "length", "width", "speed")}
    empty |= {"profile": np.zeros(0, dtype=np.int64), "ghost": np.zeros(0, dtype=bool)}
    return tm.markers_msg(empty, np.zeros((0, 2)), np.zeros(0, dtype=np.int64), 5, "map",
                          lifetime_s, ego_box=(1.0, 2.0, 0.5, 4.0, 1.8))


def _path_time_step(seconds: float):
    from vehicle_sim.nodes.ground_truth_msgs import path_time_step
    return path_time_step(seconds)


def _markers_lifetime(seconds: float):
    markers = _markers(seconds).markers[1:]  # the ego's box and the lights
    assert all(m.lifetime == markers[0].lifetime for m in markers)
    return markers[0].lifetime


@pytest.mark.parametrize("make", [conv.duration, _path_time_step, _markers_lifetime],
                         ids=["duration", "path_time_step", "markers_lifetime"])
@pytest.mark.parametrize("seconds, want", [
    (0.0, (0, 0)), (1e-9, (0, 1)), (0.00207, (0, 2_070_000)), (0.05, (0, 50_000_000)),
    (0.1, (0, 100_000_000)), (0.5, (0, 500_000_000)), (2.3, (2, 300_000_000)),
    (0.9999999999, (1, 0)), (1.9999999996, (2, 0)), (0.9999999994, (0, 999_999_999)),
    (-0.5, (-1, 500_000_000)), (-1e-9, (-1, 999_999_999))])
def test_a_duration_is_the_nearest_nanosecond_normalised(make, seconds, want):
    """Both users (a predicted path's time_step, the markers' lifetime) give the one law's
    Duration; the old round() of path_time_step gave (0, 1e9) at 0.9999999999 s."""
    d = make(seconds)
    assert (d.sec, d.nanosec) == want
    assert 0 <= d.nanosec < 10**9


def test_the_old_round_duration_was_not_normalised_and_truncation_lost_a_nanosecond():
    """What conversions.duration replaced: round() in ground_truth_msgs.path_time_step gave
    nanosec == 1e9 (not normalised: 0 <= nanosec < 1e9 is what readers assume), int() in
    traffic_msgs.markers_msg cut 2.07 ms to 2_069_999 ns, and both read -0.5 s as +0.5 s."""
    assert _old_round_duration(0.9999999999) == (0, 1_000_000_000)
    assert int((0.00207 % 1.0) * 1e9) == 2_069_999 and conv.duration(0.00207).nanosec == 2_070_000
    assert _old_round_duration(-0.5) == (0, 500_000_000)
    assert conv.duration(0.9999999999).nanosec == 0


def test_a_duration_that_is_no_number_is_refused():
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError):
            conv.duration(bad)


def test_every_duration_is_normalised():
    rng = np.random.default_rng(3)
    for s in np.concatenate((rng.uniform(-5.0, 5.0, 2000), np.arange(1, 200) - 1e-10)).tolist():
        d = conv.duration(s)
        assert 0 <= d.nanosec < 10**9
        assert abs(conv.ns_of(d.sec, d.nanosec) - s * 1e9) <= 0.5 + 1e-6 * abs(s * 1e9)


def test_the_egos_marker_turns_by_the_one_yaw_quaternion():
    ego = _markers(0.5).markers[1].pose.orientation
    assert (ego.x, ego.y, ego.z, ego.w) == conv.yaw_xyzw(0.5)


# ---- attitude: one law for yaw <-> quaternion, and one rule for outside input -----------------

YAWS = [0.0, -0.0, 1e-9, 0.3, -2.0, math.pi / 2, math.pi, -math.pi, 3.0, 7.5, -100.25]


def test_the_yaw_quaternion_is_the_euler_one_with_no_roll_or_pitch():
    for yaw in YAWS:
        assert conv.yaw_xyzw(yaw) == conv.quaternion_xyzw(0.0, 0.0, yaw)
        x, y, z, w = conv.yaw_xyzw(yaw)
        assert x * x + y * y + z * z + w * w == pytest.approx(1.0, abs=1e-15)
        assert conv.yaw_from_xyzw(x, y, z, w) == pytest.approx(
            math.remainder(yaw, 2 * math.pi), abs=1e-12)


def test_the_attitude_helpers_are_the_cores():
    """The yaw helpers and the quaternion rule live in core.rotations (their numpy variants'
    bits: test/core/test_rotations.py); the nodes call them here, and rpy_from_xyzw's yaw is
    theirs."""
    assert (conv.yaw_from_xyzw, conv.yaw_from_xyzw_array, conv.yaw_xyzw, conv.yaw_zw,
            conv.unit_xyzw) == (rotations.yaw_from_xyzw, rotations.yaw_from_xyzw_array,
                                rotations.yaw_xyzw, rotations.yaw_zw, rotations.unit_xyzw)
    q = np.random.default_rng(8).normal(size=(50, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    assert [conv.rpy_from_xyzw(*row)[2] for row in q.tolist()] == \
        rotations.yaw_from_xyzw_array(*q.T).tolist()


def test_a_quaternion_from_outside_is_read_as_the_rotation_it_stands_for():
    """The unit formulas are not scale invariant (why outside input is normalised first):
    a quaternion of norm 1.01 at yaw 90 deg reads ~1.1 deg off unnormalised, exact normalised."""
    q = conv.quaternion_xyzw(0.2, -0.1, math.pi / 2)
    scaled = tuple(1.01 * c for c in q)
    assert abs(conv.yaw_from_xyzw(*scaled) - math.pi / 2) > math.radians(1.0)
    for k in (1e-3, 0.5, 1.01, 2.0, 1e4):
        unit = conv.unit_xyzw(*(k * c for c in q))
        assert unit == pytest.approx(q, abs=1e-15)
        assert conv.rpy_from_xyzw(*unit) == pytest.approx((0.2, -0.1, math.pi / 2), abs=1e-12)
    for bad in ((0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1e-7), (math.nan, 0.0, 0.0, 1.0),
                (0.0, 0.0, math.inf, 1.0)):
        assert conv.unit_xyzw(*bad) is None


def test_a_stacks_initial_pose_follows_the_rule():
    from geometry_msgs.msg import PoseWithCovarianceStamped

    from vehicle_sim.nodes.stack_inputs import initial_pose

    def pose(xyzw):
        msg = PoseWithCovarianceStamped()
        msg.header.frame_id = "map"
        o = msg.pose.pose.orientation
        o.x, o.y, o.z, o.w = xyzw
        return initial_pose(msg)

    q = conv.quaternion_xyzw(0.05, 0.02, 2.5)
    for k in (0.5, 1.0, 1.01, 2.0):
        got, why = pose(tuple(k * c for c in q))
        assert why == "" and got[2] == pytest.approx(2.5, abs=1e-12)
    got, why = pose((0.0, 0.0, 0.0, 0.0))
    assert got is None and why == "orientation has norm 0, not a rotation"
