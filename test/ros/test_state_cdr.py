"""The CDR encoders of the state's edges (nodes.state_cdr) give byte for byte what
``serialize_message`` gives for the builders' messages (conversions.vehicle_state,
tf_publisher.reference_odometry and odometry_transform, imu_node.imu_msg, Clock): the builders
are the law, the encoders the engine's fast path.

Every byte but the alignment padding: rmw's serialiser leaves padding bytes as it found its
buffer (not zeroed, e.g. b"d\x01d\x02l\x01" after a frame name), the encoders write zeros there;
the padding's place is the layout's, and the message read back from the encoder's bytes must
equal the builder's, so a number misplaced into "padding" still fails."""
from __future__ import annotations

import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from rosgraph_msgs.msg import Clock

from vehicle_sim.core.sensors.imu import ImuSample
from vehicle_sim.core.vehicle.interface import VehicleSnapshot
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import state_cdr
from vehicle_sim.nodes.imu_node import imu_msg
from vehicle_sim.nodes.tf_publisher import odometry_transform, reference_odometry

# odd and even lengths (with the NUL): every padding before the float64 that follow
FRAMES = [("odom", "base_link", "single_track"), ("o", "bl", "kinematic"),
          ("odom_frame_x", "base_link_12", "full14"), ("", "", "")]
R_M = [np.zeros(3), np.array([-1.5, 0.0, 0.0]), np.array([-1.35, 0.2, -0.55])]
STAMPS_NS = [0, 5, 1_000_000_000, 123_456_789_012, 2**31 * 1_000_000_000 - 1]


def assert_same_cdr(raw: bytes, msg, packer: state_cdr.Packer) -> None:
    """``raw`` is ``serialize_message(msg)`` but for the padding, which is zero in ``raw``."""
    ref = serialize_message(msg)
    assert len(raw) == len(ref)
    pad = set(packer.padding)
    assert all(raw[i] == 0 for i in pad)
    assert ([b for i, b in enumerate(raw) if i not in pad]
            == [b for i, b in enumerate(ref) if i not in pad])
    assert deserialize_message(raw, type(msg)) == msg


def snapshots() -> list[VehicleSnapshot]:
    """Rest, a driving state, a tumbling one with negative and large values."""
    rng = np.random.default_rng(14)
    out = [VehicleSnapshot()]
    for scale in (1.0, 1e6):
        out.append(VehicleSnapshot(
            position_m=rng.normal(0.0, 100.0 * scale, 3), rpy_rad=rng.uniform(-3.2, 3.2, 3),
            velocity_mps=rng.normal(0.0, 20.0 * scale, 3),
            angular_velocity_radps=rng.normal(0.0, 2.0, 3),
            acceleration_mps2=rng.normal(0.0, 9.0 * scale, 3),
            angular_acceleration_radps2=rng.normal(0.0, 5.0, 3),
            wheel_speed_radps=rng.normal(0.0, 80.0 * scale, 4),
            wheel_slip_ratio=rng.uniform(-1.0, 1.0, 4), wheel_slip_angle_rad=rng.normal(0, 0.2, 4),
            steer_rad=-0.41, gear=-1 if scale > 1 else 5, engine_rpm=6543.21 * scale,
            aligning_moment_nm=-12.5 * scale))
    return out


def imu_samples() -> list[ImuSample]:
    rng = np.random.default_rng(5)
    cov = np.diag([1e-4, 2e-4, 3e-4])
    no_orientation = np.zeros((3, 3))
    no_orientation[0, 0] = -1.0
    return [ImuSample(0.0, np.array([0.0, 0.0, 9.81]), np.zeros(3), cov, cov, None,
                      no_orientation),
            ImuSample(1.5, rng.normal(0, 30, 3), rng.normal(0, 3, 3), cov * 7, rng.normal(0, 1,
                      (3, 3)), np.array([0.1, -0.2, 0.3, 0.927]), cov * 0.5),
            ImuSample(2.0, -rng.normal(0, 3e5, 3), rng.normal(0, 3e3, 3), cov, cov,
                      np.array([0.0, 0.0, -0.70710678, 0.70710678], dtype=np.float32), cov)]


@pytest.mark.parametrize("frame, child, model", FRAMES)
@pytest.mark.parametrize("r_m", R_M, ids=["cg", "rear_axle", "offset_3d"])
def test_state_odometry_and_tf_bytes_equal_the_builders_messages(frame, child, model, r_m):
    from tf2_msgs.msg import TFMessage
    encoder = state_cdr.StateEncoder(frame, child, model, r_m)
    for snap in snapshots():
        for t_ns in STAMPS_NS:
            state, odom, tf = encoder.encode(snap, t_ns)
            msg = conv.vehicle_state(snap, t_ns, frame, child, model)
            assert_same_cdr(state, msg, encoder.state)
            odom_msg = reference_odometry(msg, r_m)
            assert_same_cdr(odom, odom_msg, encoder.odom)
            assert_same_cdr(tf, TFMessage(transforms=[odometry_transform(odom_msg)]),
                            encoder.tf)
            assert encoder.encode(snap, t_ns, odometry=False) == (state, None, None)


@pytest.mark.parametrize("frame_id", ["imu_link", "imu", "i", "imu_link_front_"])
def test_imu_bytes_equal_imu_msg(frame_id):
    encoder = state_cdr.ImuEncoder(frame_id)
    for sample in imu_samples():
        for t_ns in STAMPS_NS:
            assert_same_cdr(encoder.encode(sample, t_ns), imu_msg(sample, t_ns, frame_id),
                            encoder.imu)


def test_clock_bytes_equal_the_clock_message():
    for t_ns in STAMPS_NS:
        assert state_cdr.clock(t_ns) == serialize_message(Clock(clock=conv.stamp(t_ns)))
    assert state_cdr.CLOCK.padding == ()  # the one message here with no padding: all bytes


def test_the_reference_point_moves_odometry_not_the_state():
    """The rear-axle odometry differs from the CG's (the test above is not vacuous)."""
    snap = snapshots()[1]
    at_cg = state_cdr.StateEncoder("odom", "base_link", "m", np.zeros(3)).encode(snap, 7)
    at_axle = state_cdr.StateEncoder("odom", "base_link", "m", R_M[1]).encode(snap, 7)
    assert at_cg[0] == at_axle[0] and at_cg[1] != at_axle[1] and at_cg[2] != at_axle[2]


def test_the_header_stamp_is_read_from_the_bytes_in_either_byte_order():
    """state_cdr.header_stamp(_ns): the one reader of a serialised message's header stamp (the
    recorder, the ground-truth node and its agents decoder use it), little and big endian; a
    stub too short for a stamp is None (each caller decides what to do with it)."""
    from vehicle_sim.msg import TrafficAgentArray
    for t_ns in [*STAMPS_NS, 50_000_000, 12 * 10**9 + 345_678_901]:
        msg = TrafficAgentArray()
        msg.header.stamp, msg.header.frame_id = conv.stamp(t_ns), "map"
        data = serialize_message(msg)
        assert state_cdr.header_stamp(data) == conv.sec_nanosec(t_ns)
        assert state_cdr.header_stamp_ns(data) == t_ns
        big = data[:1] + bytes([data[1] & ~1]) + data[2:4] + data[4:8][::-1] + data[8:12][::-1]
        assert state_cdr.header_stamp_ns(big) == t_ns
        assert state_cdr.header_stamp_ns(state_cdr.clock(t_ns)) == t_ns  # Clock: a stamp first
    for stub in (b"", b"\x00", b"\x00\x01", b"\x00\x01\x00\x00\x01", bytes(11)):
        assert state_cdr.header_stamp(stub) is None and state_cdr.header_stamp_ns(stub) is None
    assert state_cdr.header_stamp_ns(bytes(12)) == 0
