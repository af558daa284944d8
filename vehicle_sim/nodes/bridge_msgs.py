"""The bridge node's messages at the edge: the newest vehicle state in the core's terms, and the
MotionCue it publishes (frame ``driver_head``, stamped with the state's sim time)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from builtin_interfaces.msg import Time

from vehicle_sim.core.motion.bridge import MotionFrame
from vehicle_sim.core.motion.safety import Mode
from vehicle_sim.msg import MotionCue, VehicleState
from vehicle_sim.nodes import conversions as conv

CUE_STATE = {Mode.NEUTRAL: MotionCue.STATE_NEUTRAL, Mode.SOFT_START: MotionCue.STATE_STARTING,
             Mode.ACTIVE: MotionCue.STATE_RUNNING, Mode.RETURNING: MotionCue.STATE_PARKING,
             Mode.ESTOP: MotionCue.STATE_ESTOP}


@dataclass(frozen=True)
class StateSample:
    """The newest vehicle state, in the core's terms (base_link, CG)."""

    recv_s: float  # wall time it arrived [s] (time.monotonic)
    stamp: Time
    accel: np.ndarray  # [m/s^2]
    omega: np.ndarray  # [rad/s]
    alpha: np.ndarray  # [rad/s^2]
    rpy: np.ndarray  # [rad]
    aligning_nm: float


def state_sample(msg: VehicleState, recv_s: float) -> StateSample:
    return StateSample(recv_s, msg.header.stamp, conv.vec(msg.linear_acceleration),
                       conv.vec(msg.twist.angular), conv.vec(msg.angular_acceleration),
                       np.array(conv.rpy_from_quaternion(msg.pose.orientation)),
                       msg.aligning_moment)


def motion_cue(frame: MotionFrame, sample: StateSample | None, torque_nm: float,
               cue: tuple[np.ndarray, np.ndarray]) -> MotionCue:
    """``cue``: the washout's (specific force [m/s^2], angular velocity [rad/s])."""
    msg = MotionCue(state=CUE_STATE[frame.mode], limited=frame.limited,
                    steering_torque=torque_nm)
    msg.header.stamp = sample.stamp if sample else Time()
    msg.header.frame_id = "driver_head"
    force, omega = cue
    msg.specific_force, msg.angular_velocity = conv.vector3(force), conv.vector3(omega)
    msg.platform_pose = conv.pose(frame.pose[:3], frame.pose[3:])
    msg.actuator_positions = np.asarray(frame.positions_m, dtype=np.float64)
    return msg
