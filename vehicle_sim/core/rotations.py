"""Rotations shared by every model (REP-103: fixed-axis roll, pitch, yaw; right-handed).

Quaternions are (x, y, z, w) tuples, as the graph's messages carry them. Quaternion rule: the
readers here (yaw_from_xyzw, ...) take a unit quaternion, as every message the graph builds
carries. Their formulas are not scale invariant (q of norm 1.01 at yaw 90 deg reads ~1.1 deg
off), so a quaternion from outside the graph (a stack's message) goes through ``unit_xyzw``
first, which also refuses one that is no rotation. The numpy variants give the scalar ones'
bits (the vectorised encoders and the message builders agree bit for bit).
"""
from __future__ import annotations

import math

import numpy as np

MIN_QUATERNION_NORM = 1e-6  # below it a quaternion is taken as no rotation (unit_xyzw)


def rpy_to_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """R = Rz(yaw) Ry(pitch) Rx(roll) (3, 3) [rad]: child (body) axes expressed in the parent.

    Written out rather than through transforms3d.euler.euler2mat (same matrix, axes 'sxyz'),
    which costs several times more per call in the 400-500 Hz sensor and platform loops.
    """
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def yaw_from_xyzw(x: float, y: float, z: float, w: float) -> float:
    """Unit quaternion -> yaw [rad] (ZYX), the third Euler angle."""
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def yaw_from_xyzw_array(x: np.ndarray, y: np.ndarray, z: np.ndarray, w: np.ndarray
                        ) -> np.ndarray:
    """yaw_from_xyzw of unit quaternions given as arrays, bit for bit: the arguments are
    numpy's, atan2 math's (numpy's differs in the last bit)."""
    return np.array(list(map(math.atan2, (2.0 * (w * z + x * y)).tolist(),
                             (1.0 - 2.0 * (y * y + z * z)).tolist())), dtype=np.float64)


def yaw_xyzw(yaw: float) -> tuple[float, float, float, float]:
    """Yaw [rad] about z -> unit quaternion (0, 0, sin(yaw/2), cos(yaw/2)): the ZYX Euler
    quaternion of (0, 0, yaw) but for the sign of its zeros."""
    half = 0.5 * yaw
    return 0.0, 0.0, math.sin(half), math.cos(half)


def yaw_zw(yaw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """yaw_xyzw of an array of yaws [rad]: its (z, w) arrays (x and y are 0); sin and cos are
    numpy's (libm's bits on this build: test/core/test_rotations.py would tell)."""
    half = 0.5 * np.asarray(yaw, dtype=np.float64)
    return np.sin(half), np.cos(half)


def unit_xyzw(x: float, y: float, z: float, w: float
              ) -> tuple[float, float, float, float] | None:
    """A quaternion from outside the graph scaled to norm 1, the rotation it stands for; None
    when its norm is below MIN_QUATERNION_NORM or not finite (no rotation)."""
    norm = math.hypot(x, y, z, w)
    if not (MIN_QUATERNION_NORM <= norm < math.inf):
        return None
    return x / norm, y / norm, z / norm, w / norm
