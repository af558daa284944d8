"""Core values <-> ROS messages, at the edge of the nodes (the only place they meet).

The nodes' one law for each conversion written here: times (integer nanoseconds <-> stamp,
float seconds -> Duration), attitude (Euler angles <-> quaternion). The yaw <-> quaternion
helpers (scalar and numpy) and ``unit_xyzw`` live in vehicle_sim.core.rotations, with the
quaternion rule (unit quaternions in, ``unit_xyzw`` first for one from outside the graph), so
that report/ and live/ read yaws with the nodes' bits and no ROS import; they are re-exported
here for the nodes that call them as ``conversions.<name>``.
"""
from __future__ import annotations

import math

import numpy as np
from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import Pose, Quaternion, Twist, Vector3
from nav_msgs.msg import Odometry

from vehicle_sim.core.controls import DriveCommand
from vehicle_sim.core.frames import PoseTwist, at_reference
from vehicle_sim.core.rotations import (  # noqa: F401  (re-exported: the nodes' conv.<name>)
    unit_xyzw,
    yaw_from_xyzw,
    yaw_from_xyzw_array,
    yaw_xyzw,
    yaw_zw,
)
from vehicle_sim.core.vehicle.interface import VehicleSnapshot
from vehicle_sim.msg import VehicleControl, VehicleState

NS_PER_S = 1_000_000_000


def sec_nanosec(t_ns: int) -> tuple[int, int]:
    """(sec, nanosec) of t_ns [ns] with 0 <= nanosec < 1e9: a builtin_interfaces Time's or
    Duration's fields (before 0 the floor, as rclpy: -1 ns is (-1, 999_999_999))."""
    return divmod(t_ns, NS_PER_S)


def ns_of(sec: int, nanosec: int) -> int:
    """Inverse of ``sec_nanosec``: [ns] of a stamp's (sec, nanosec)."""
    return sec * NS_PER_S + nanosec


def stamp(t_ns: int) -> Time:
    sec, nanosec = sec_nanosec(t_ns)
    return Time(sec=sec, nanosec=nanosec)


def to_ns(time_msg: Time) -> int:
    return ns_of(time_msg.sec, time_msg.nanosec)


def duration(seconds: float) -> Duration:
    """builtin_interfaces/Duration of ``seconds`` [s] to the nearest nanosecond, normalised
    (0 <= nanosec < 1e9, so 0.9999999999 s is 1 s; a negative one as sec_nanosec); ValueError
    when not finite."""
    if not math.isfinite(seconds):
        raise ValueError(f"a Duration of {seconds} s")
    sec, nanosec = sec_nanosec(round(seconds * 1e9))
    return Duration(sec=sec, nanosec=nanosec)


def quaternion_from_rpy(roll: float, pitch: float, yaw: float) -> Quaternion:
    """ZYX (yaw, pitch, roll) Euler angles [rad] -> unit quaternion (REP-103)."""
    return fill_quaternion(Quaternion(), roll, pitch, yaw)


def fill_quaternion(q: Quaternion, roll: float, pitch: float, yaw: float) -> Quaternion:
    """``q`` set in place to the rotation of ZYX Euler angles [rad] (REP-103); returns it."""
    q.x, q.y, q.z, q.w = quaternion_xyzw(roll, pitch, yaw)
    return q


def quaternion_xyzw(roll: float, pitch: float, yaw: float) -> tuple[float, float, float, float]:
    """ZYX Euler angles [rad] -> unit quaternion (x, y, z, w) as plain floats (the messages' and
    the CDR encoders' one formula)."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return (sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy)


def rpy_from_quaternion(q: Quaternion) -> tuple[float, float, float]:
    return rpy_from_xyzw(q.x, q.y, q.z, q.w)


def rpy_from_xyzw(x: float, y: float, z: float, w: float) -> tuple[float, float, float]:
    """Unit quaternion -> ZYX Euler angles (roll, pitch, yaw) [rad]."""
    roll = math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = math.asin(max(-1.0, min(1.0, 2 * (w * y - z * x))))
    return roll, pitch, yaw_from_xyzw(x, y, z, w)


def reference_motion(position_m, q_xyzw, velocity_mps, angular_velocity_radps,
                     r_m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(position [m], velocity [m/s]) of the point r_m [m] (body axes) of the rigid body whose
    CG has these values, its attitude read back from the quaternion (as a message carries it):
    odom at base_link for the Odometry builder and the CDR encoder alike."""
    cg = PoseTwist(position_m=np.array(position_m),
                   rpy_rad=np.array(rpy_from_xyzw(*q_xyzw)),
                   velocity_mps=np.array(velocity_mps),
                   angular_velocity_radps=np.array(angular_velocity_radps))
    ref = at_reference(cg, r_m)
    return ref.position_m, ref.velocity_mps


def vec(v: Vector3) -> np.ndarray:
    """A Vector3 (or any x, y, z message) as a numpy array."""
    return np.array([v.x, v.y, v.z])


def vector3(v: np.ndarray) -> Vector3:
    return fill_xyz(Vector3(), v)


def fill_xyz(msg, v: np.ndarray):
    """``msg``'s x, y, z (a Vector3, a Point) set in place from ``v``; returns it."""
    msg.x, msg.y, msg.z = float(v[0]), float(v[1]), float(v[2])
    return msg


def pose(position: np.ndarray, rpy: np.ndarray) -> Pose:
    out = Pose()
    fill_xyz(out.position, position)
    fill_quaternion(out.orientation, *(float(a) for a in rpy))
    return out


def twist(linear: np.ndarray, angular: np.ndarray) -> Twist:
    return Twist(linear=vector3(linear), angular=vector3(angular))


def vehicle_control(cmd: DriveCommand) -> VehicleControl:
    """The core's command as a VehicleControl, with its stamp and frame."""
    v = cmd.values
    msg = VehicleControl(steering_angle=float(v.steer_rad), throttle=float(v.throttle),
                         brake=float(v.brake), clutch=float(v.clutch), gear=int(v.gear),
                         handbrake=bool(v.handbrake))
    msg.header.stamp = stamp(cmd.stamp_ns)
    msg.header.frame_id = cmd.frame_id
    return msg


def vehicle_state(s: VehicleSnapshot, t_ns: int, frame: str, child: str, model: str
                  ) -> VehicleState:
    """The state message of ``s`` at t_ns; its nested messages are filled in place (~70 us per
    message, against ~100 us building and assigning new ones: the dynamics node's publish path)."""
    msg = VehicleState()
    msg.header.stamp.sec, msg.header.stamp.nanosec = sec_nanosec(t_ns)
    msg.header.frame_id = frame
    msg.child_frame_id = child
    fill_xyz(msg.pose.position, s.position_m)
    fill_quaternion(msg.pose.orientation, *(float(a) for a in s.rpy_rad))
    fill_xyz(msg.twist.linear, s.velocity_mps)
    fill_xyz(msg.twist.angular, s.angular_velocity_radps)
    fill_xyz(msg.linear_acceleration, s.acceleration_mps2)
    fill_xyz(msg.angular_acceleration, s.angular_acceleration_radps2)
    msg.wheel_speed = np.asarray(s.wheel_speed_radps, dtype=np.float64)
    msg.wheel_slip_ratio = np.asarray(s.wheel_slip_ratio, dtype=np.float64)
    msg.wheel_slip_angle = np.asarray(s.wheel_slip_angle_rad, dtype=np.float64)
    msg.steering_angle = float(s.steer_rad)
    msg.aligning_moment = float(s.aligning_moment_nm)
    msg.gear = int(s.gear)
    msg.engine_rpm = float(s.engine_rpm)
    msg.model = model
    return msg


def odometry(state: VehicleState) -> Odometry:
    """nav_msgs/Odometry from a VehicleState: pose in odom, twist in base_link (REP-105).

    The simulator's state is exact: covariances are a small diagonal (1e-6) rather than zero so
    that filters consuming ground truth do not divide by zero.
    """
    msg = Odometry()
    msg.header = state.header
    msg.child_frame_id = state.child_frame_id
    msg.pose.pose = state.pose
    msg.twist.twist = state.twist
    diag = [i * 7 for i in range(6)]
    for i in diag:
        msg.pose.covariance[i] = 1e-6
        msg.twist.covariance[i] = 1e-6
    return msg
