"""Rotations shared by every model (REP-103: fixed-axis roll, pitch, yaw; right-handed)."""
from __future__ import annotations

import math

import numpy as np


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
