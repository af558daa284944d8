"""conversions: every value of a snapshot lands in its field of the state message; the one law
for times (stamps)."""
from __future__ import annotations

import numpy as np
import pytest

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


# ---- times: one law for stamps ----------------------------------------------------------------

def test_stamps_and_nanoseconds_are_one_law_both_ways():
    for t_ns in (0, 1, 999_999_999, 10**9, 12 * 10**9 + 345, 2**31 * 10**9 - 1, -1, -10**9 - 1):
        sec, nanosec = conv.sec_nanosec(t_ns)
        assert 0 <= nanosec < 10**9 and conv.ns_of(sec, nanosec) == t_ns
        msg = conv.stamp(t_ns)
        assert (msg.sec, msg.nanosec) == (sec, nanosec) and conv.to_ns(msg) == t_ns
    assert conv.sec_nanosec(-1) == (-1, 999_999_999)  # the floor, as rclpy's Duration.to_msg
