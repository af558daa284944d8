"""Motion cues at the driver's head from the vehicle state (rigid-body kinematics).

Reference point: the vehicle state is given at the centre of gravity (CG) in ``base_link``
(REP-103: x forward, y left, z up), as ``VehicleSnapshot`` provides it. The head sits at the
lever arm r (``CueingParams.head_position_m``) from the CG. Outputs are in ``base_link`` axes:

    a_head = a_cg + alpha x r + omega x (omega x r)        (coordinate acceleration)
    f_head = a_head - R^T g_world,  g_world = (0, 0, -g)    (specific force, +g on z at rest)

R rotates base_link into the ENU world frame (roll, pitch, yaw, ZYX convention), so road grade
and body roll appear in the specific force as they would on the driver. Angular velocity is the
same everywhere on a rigid body. The law is core.frames.specific_force, the IMU's.
"""
from __future__ import annotations

import numpy as np

from vehicle_sim.core.frames import specific_force
from vehicle_sim.core.motion.params import CueingParams


def head_cues(params: CueingParams, accel_cg_mps2: np.ndarray, omega_radps: np.ndarray,
              alpha_radps2: np.ndarray, rpy_rad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(specific force [m/s^2], angular velocity [rad/s]) at the head, both in base_link axes.

    accel_cg_mps2: coordinate acceleration of the CG in base_link (no gravity term).
    omega_radps, alpha_radps2: body angular velocity / acceleration in base_link.
    rpy_rad: body roll, pitch, yaw in the world frame (yaw does not change the result).
    """
    w = np.asarray(omega_radps, dtype=float)
    a, alpha, r = (np.asarray(v, dtype=float).tolist()
                   for v in (accel_cg_mps2, alpha_radps2, params.head_position_m))
    f_head = specific_force(a, alpha, w.tolist(), r, float(rpy_rad[0]), float(rpy_rad[1]),
                            params.gravity_mps2)  # core.frames: the IMU's law
    return np.array(f_head), w.copy()
