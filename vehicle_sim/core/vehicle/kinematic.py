"""Kinematic bicycle model, reference point the centre of gravity (CG).

State (indices K_*): ``[X_m, Y_m, yaw_rad, v_mps]`` with (X, Y) the CG in odom (ENU) and v the
signed CG speed along its velocity, which points at the body slip angle
beta = atan(b tan(delta) / L) from body x:

    dX/dt = v cos(yaw + beta),  dY/dt = v sin(yaw + beta),
    dyaw/dt = v cos(beta) tan(delta) / L,  dv/dt = (Fxf + Fxr + F_res) / m

No tyre slip: the rear axle moves on a circle of radius L / tan(delta), the CG on
sqrt(b^2 + (L / tan(delta))^2). Longitudinal forces are the single-track model's
(:func:`single_track.axle_long_forces`: constant-power drive, brakes saturating at mu Fz, rolling
resistance, drag), so both models accelerate and stop alike. Valid at low lateral acceleration.

External wrench (``set_external_wrench``, e.g. crash forces): only its component along the CG
velocity direction (yaw + beta) acts, on dv/dt. The model has no lateral or yaw degree of
freedom: the no-slip constraint carries the rest, as tyres below their limit would (a choice;
use single_track or full14 when sideways crash motion matters).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from vehicle_sim.core.vehicle.interface import VehicleSnapshot
from vehicle_sim.core.vehicle.params import (
    P_A, P_B, P_EXT_FX, P_EXT_FY, P_FZF, P_FZR, P_MASS, P_MU)
from vehicle_sim.core.vehicle.planar import PlanarModel
from vehicle_sim.core.vehicle.planar_outputs import brake_locked, wheel_outputs
from vehicle_sim.core.vehicle.single_track import (
    U_GEAR, axle_long_forces, brake_demands, set_planar_external_wrench, settle_speed,
    steer_angle)

K_X, K_Y, K_YAW, K_V = range(4)
N_STATE = 4


@njit(cache=True)
def kinematic_f(x, u, p):
    """dx/dt of the kinematic bicycle at the CG (state K_*, input U_*, packed params P_*)."""
    delta = steer_angle(u, p)
    wheelbase = p[P_A] + p[P_B]
    beta = math.atan(p[P_B] * math.tan(delta) / wheelbase)
    v, yaw = x[K_V], x[K_YAW]
    fxf, fxr, fres = axle_long_forces(v, u, p)
    dx = np.empty(N_STATE)
    dx[K_X] = v * math.cos(yaw + beta)
    dx[K_Y] = v * math.sin(yaw + beta)
    dx[K_YAW] = v * math.cos(beta) * math.tan(delta) / wheelbase
    along = math.cos(yaw + beta) * p[P_EXT_FX] + math.sin(yaw + beta) * p[P_EXT_FY]
    dx[K_V] = (fxf + fxr + fres + along) / p[P_MASS]
    return dx


@njit(cache=True)
def kinematic_after_step(x, x_new, u, p, dt):
    """The stop-at-rest rule after a step (integrators.advance; edits x_new in place)."""
    if settle_speed(x[K_V], x_new[K_V], u, p, dt):
        x_new[K_V] = 0.0


class KinematicModel(PlanarModel):
    """Kinematic bicycle as a :class:`~interface.VehicleModel` (reference point: CG).

    State indices K_*: at (x, y) heading yaw with speed v of the CG (along beta from body x).
    """

    name = "kinematic"
    dynamics = (kinematic_f, kinematic_after_step)
    set_external_wrench = set_planar_external_wrench

    def initial_state(self, x_m, y_m, yaw_rad, speed_mps) -> np.ndarray:
        return np.array([x_m, y_m, yaw_rad, speed_mps], dtype=float)

    def snapshot(self) -> VehicleSnapshot:
        """Current state; slip angles are 0 by construction, accelerations from dx/dt."""
        x, u, p = self._x, self._u, self._p
        delta = steer_angle(u, p)
        wheelbase = p[P_A] + p[P_B]
        beta = math.atan(p[P_B] * math.tan(delta) / wheelbase)
        v, dv = x[K_V], kinematic_f(x, u, p)[K_V]
        r = v * math.cos(beta) * math.tan(delta) / wheelbase
        c, s = math.cos(beta), math.sin(beta)
        fxf, fxr, _ = axle_long_forces(v, u, p)
        bf, br = brake_demands(u, p)
        spin, slip = wheel_outputs(
            v * c / math.cos(delta), v * c,
            brake_locked(fxf, bf, p[P_MU] * p[P_FZF], v),
            brake_locked(fxr, br, p[P_MU] * p[P_FZR], v), self.params.tyre.rolling_radius_m)
        return VehicleSnapshot(
            position_m=np.array([x[K_X], x[K_Y], 0.0]),
            rpy_rad=np.array([0.0, 0.0, x[K_YAW]]),
            velocity_mps=np.array([v * c, v * s, 0.0]),
            angular_velocity_radps=np.array([0.0, 0.0, r]),
            # inertial acceleration in base_link: dv along the velocity + v r across it
            acceleration_mps2=np.array([dv * c - v * r * s, dv * s + v * r * c, 0.0]),
            angular_acceleration_radps2=np.array([0.0, 0.0, dv * c * math.tan(delta) / wheelbase]),
            wheel_speed_radps=spin, wheel_slip_ratio=slip,
            wheel_slip_angle_rad=np.zeros(4),
            steer_rad=float(delta), gear=int(u[U_GEAR]), engine_rpm=0.0,
            aligning_moment_nm=0.0)
