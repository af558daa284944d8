"""The vehicle state's high-rate edges as CDR bytes (issue 14): VehicleState, nav_msgs/Odometry
and the /tf odom -> base_link of a VehicleSnapshot, sensor_msgs/Imu of an ImuSample and
rosgraph_msgs/Clock, packed with ``struct`` into what rmw_fastrtps takes from
``Publisher.publish(bytes)`` (XCDR1 little endian after the 4-byte encapsulation header, as
traffic_msgs.AgentEncoder does for the agents).

The message builders stay the law (conversions.vehicle_state, tf_publisher.reference_odometry
and odometry_transform, imu_node.imu_msg; the other nodes publish those): these encoders are
the fast path, pinned byte for byte to ``serialize_message`` of the builders' messages by
test/ros/test_state_cdr.py. Frame names are fixed per encoder, so every layout is constant: it
is laid out once (``Layout``) as constant bytes between runs of numbers, and a message packs
only its numbers: state, odometry and /tf ~12 us together, an Imu ~4 us, against ~89 us and
~17 us to build the messages (timeit, one core, load 5), which publish then converts again.
"""
from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

from vehicle_sim.core.sensors.imu import ImuSample
from vehicle_sim.core.vehicle.interface import VehicleSnapshot
from vehicle_sim.nodes.conversions import ns_of, quaternion_xyzw, reference_motion, sec_nanosec

ENCAPSULATION = b"\x00\x01\x00\x00"  # CDR little endian, no options
_STAMP = {True: struct.Struct("<iI"), False: struct.Struct(">iI")}  # by "little endian"
# nav_msgs/Odometry's covariances as conversions.odometry sets them: 1e-6 on the diagonal
ODOM_COVARIANCE = tuple(1e-6 if i % 7 == 0 else 0.0 for i in range(36))
NO_ORIENTATION_XYZW = (0.0, 0.0, 0.0, 1.0)  # sensor_msgs/Imu's default orientation


class Packer:
    """A laid-out message: ``pack(*runs)`` -> the CDR bytes (one tuple of numbers per run).
    ``padding``: where the alignment padding lies in them (zeros here; rmw's serialiser leaves
    those bytes as it found its buffer, so the tests compare every other byte)."""

    def __init__(self, constants: list[bytes], runs: list[struct.Struct],
                 padding: list[int]):
        self.constants, self.runs, self.padding = constants, runs, tuple(padding)

    def pack(self, *values: Sequence) -> bytes:
        parts = [self.constants[0]]
        for run, numbers, constant in zip(self.runs, values, self.constants[1:], strict=True):
            parts.append(run.pack(*numbers))
            parts.append(constant)
        return b"".join(parts)


class Layout:
    """One message's CDR layout, field by field in stream order: constant bytes (strings,
    fixed numbers, padding) and runs of numbers packed per message. A primitive is aligned to
    its size, counted from the byte after the encapsulation header (XCDR1)."""

    def __init__(self) -> None:
        self._constants: list[bytes] = []
        self._runs: list[struct.Struct] = []
        self._constant = bytearray(ENCAPSULATION)
        self._run: str | None = None  # the struct format of the run under way
        self._at = 0  # [bytes] stream offset after the encapsulation header
        self._padding: list[int] = []  # offsets of padding bytes in the message

    def _align(self, code: str, count: int) -> int:
        """The padding [bytes] before ``count`` primitives ``code``; the offset moves past them."""
        size = struct.calcsize("<" + code)
        pad = -self._at % size
        start = len(ENCAPSULATION) + self._at
        self._padding.extend(range(start, start + pad))
        self._at += pad + size * count
        return pad

    def _end_run(self) -> None:
        if self._run is not None:
            self._runs.append(struct.Struct(self._run))
            self._run = None

    def numbers(self, code: str, count: int = 1) -> Layout:
        """``count`` numbers of struct type ``code`` (d, i, I, b, ...), given per message."""
        if self._run is None:
            self._constants.append(bytes(self._constant))
            self._constant, self._run = bytearray(), "<"
        self._run += "x" * self._align(code, count) + code * count
        return self

    def constant(self, code: str, values: Sequence) -> Layout:
        """Numbers that never change (a covariance, a sequence's length)."""
        self._end_run()
        pad = self._align(code, len(values))
        self._constant += bytes(pad) + struct.pack(f"<{len(values)}{code}", *values)
        return self

    def string(self, text: str) -> Layout:
        """A fixed string: uint32 length (with the NUL), the UTF-8 bytes, the NUL."""
        data = text.encode() + b"\0"
        self.constant("I", (len(data),))
        self._constant += data
        self._at += len(data)
        return self

    def stamp(self) -> Layout:
        """builtin_interfaces/Time: int32 sec, uint32 nanosec (given per message)."""
        return self.numbers("i").numbers("I")

    def done(self) -> Packer:
        self._end_run()
        return Packer(self._constants + [bytes(self._constant)], self._runs, self._padding)


def header_stamp(cdr: bytes) -> tuple[int, int] | None:
    """(sec, nanosec) of the std_msgs/Header a serialised message starts with, read from its
    bytes: after the 4-byte encapsulation (bit 0 of its second byte set: little endian) int32
    sec, uint32 nanosec. None when the bytes are too short to hold them (the one failure rule:
    what to do with such a message is the caller's)."""
    if len(cdr) < 12:
        return None
    return _STAMP[bool(cdr[1] & 1)].unpack_from(cdr, 4)


def header_stamp_ns(cdr: bytes) -> int | None:
    """header_stamp in [ns]; None when the bytes hold none."""
    stamp = header_stamp(cdr)
    return None if stamp is None else ns_of(*stamp)


CLOCK = Layout().stamp().done()


def clock(t_ns: int) -> bytes:
    """rosgraph_msgs/Clock at sim time t_ns [ns]."""
    return CLOCK.pack(sec_nanosec(t_ns))


class StateEncoder:
    """VehicleState (frame ``frame``, child ``child``, ``model``), its nav_msgs/Odometry of
    base_link at ``r_m`` [m] from the CG and the TFMessage of that odom -> base_link, from a
    VehicleSnapshot; equal to conversions.vehicle_state, tf_publisher.reference_odometry and
    tf_publisher.odometry_transform."""

    def __init__(self, frame: str, child: str, model: str, r_m: np.ndarray):
        self.r_m = np.asarray(r_m, dtype=float)
        self.at_cg = not np.any(self.r_m)
        # pose 7, twist 6, two Vector3 6, three float64[4] 12, steering and aligning moment 2
        self.state = (Layout().stamp().string(frame).string(child).numbers("d", 33)
                      .numbers("b").numbers("d").string(model).done())
        self.odom = (Layout().stamp().string(frame).string(child).numbers("d", 7)
                     .constant("d", ODOM_COVARIANCE).numbers("d", 6)
                     .constant("d", ODOM_COVARIANCE).done())
        self.tf = (Layout().constant("I", (1,)).stamp().string(frame).string(child)
                   .numbers("d", 7).done())

    def encode(self, s: VehicleSnapshot, t_ns: int, odometry: bool = True
               ) -> tuple[bytes, bytes | None, bytes | None]:
        """(VehicleState, Odometry, TFMessage) of ``s`` stamped t_ns [ns]; the last two None
        unless ``odometry`` (a raw state alone)."""
        sec_ns = sec_nanosec(t_ns)
        p, v, w = s.position_m.tolist(), s.velocity_mps.tolist(), s.angular_velocity_radps.tolist()
        q = quaternion_xyzw(*s.rpy_rad.tolist())
        state = self.state.pack(sec_ns, (
            *p, *q, *v, *w, *s.acceleration_mps2.tolist(),
            *s.angular_acceleration_radps2.tolist(), *_floats(s.wheel_speed_radps),
            *_floats(s.wheel_slip_ratio), *_floats(s.wheel_slip_angle_rad), float(s.steer_rad),
            float(s.aligning_moment_nm), int(s.gear), float(s.engine_rpm)))
        if not odometry:
            return state, None, None
        if not self.at_cg:
            ref_p, ref_v = reference_motion(p, q, v, w, self.r_m)
            p, v = ref_p.tolist(), ref_v.tolist()
        odom = self.odom.pack(sec_ns, (*p, *q), (*v, *w))
        return state, odom, self.tf.pack(sec_ns, (*p, *q))


def _floats(values) -> list[float]:
    """A wheel array as float64 values (the message's np.asarray(..., float64))."""
    return np.asarray(values, dtype=np.float64).tolist()


class ImuEncoder:
    """sensor_msgs/Imu of an ImuSample in ``frame_id``, equal to imu_node.imu_msg."""

    def __init__(self, frame_id: str):
        self.imu = Layout().stamp().string(frame_id).numbers("d", 4 + 9 + 3 + 9 + 3 + 9).done()

    def encode(self, s: ImuSample, t_ns: int) -> bytes:
        q = (NO_ORIENTATION_XYZW if s.orientation_xyzw is None
             else np.asarray(s.orientation_xyzw, dtype=np.float64).tolist())
        return self.imu.pack(sec_nanosec(t_ns), (
            *q, *_ravel(s.orientation_cov), *_floats(s.angular_velocity_radps),
            *_ravel(s.angular_velocity_cov), *_floats(s.linear_acceleration_mps2),
            *_ravel(s.linear_acceleration_cov)))


def _ravel(cov: np.ndarray) -> list[float]:
    return np.asarray(cov, dtype=np.float64).ravel().tolist()
