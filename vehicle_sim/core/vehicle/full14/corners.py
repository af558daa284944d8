"""Per-corner geometry, suspension and tyre-coefficient helpers of the 14-DOF model (numba).

Body rotation, Ackermann steer angles, corner positions and velocities, suspension compression
and force, tyre friction / stiffness at a load and relaxation lengths. States X_* are in
state_layout.py, parameters F_* in packing.py. Wheel order FL, FR, RL, RR.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from vehicle_sim.core.vehicle.full14.magic_formula import load_friction
from vehicle_sim.core.vehicle.full14.packing import (
    F_A, F_B, F_BUMP, F_CBUMP, F_CREB, F_CX, F_CY, F_FZ0, F_GRIP, F_KPROG, F_KS, F_KSTOP, F_KXC,
    F_KYC, F_L0, F_MUX, F_MUY, F_PD2, F_REB, F_SIGX, F_SIGY, F_TRACK, F_X0)
from vehicle_sim.core.vehicle.full14.state_layout import X_VX, X_VY, X_VZ, X_X, X_Y, X_Z, X_ZW


@njit(cache=True)
def rot9(roll, pitch, yaw):
    """Body-to-world rotation R = Rz(yaw) Ry(pitch) Rx(roll) as a row-major 9-tuple."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return (cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,
            sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,
            -sp, cp * sr, cp * cr)


def rotation(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Body-to-world rotation matrix (3 x 3) R = Rz(yaw) Ry(pitch) Rx(roll)."""
    return np.array(rot9(roll, pitch, yaw)).reshape(3, 3)


@njit(cache=True)
def steer_angles(delta, p):
    """(front-left, front-right) road-wheel angles [rad], Ackermann geometry."""
    if delta == 0.0:
        return 0.0, 0.0
    wb, t = p[F_A] + p[F_B], p[F_TRACK]
    tan_d = math.tan(delta)
    return (math.atan(wb * tan_d / (wb - 0.5 * t * tan_d)),
            math.atan(wb * tan_d / (wb + 0.5 * t * tan_d)))


@njit(cache=True)
def corner(x, p, rt, w0, w1, w2, i):
    """Suspension corner i: world offset from the CG (d0, d1, d2), world (x, y) and velocity.

    rt: rot9 tuple; (w0, w1, w2): angular velocity in the world frame [rad/s]."""
    axle = i // 2
    bx = p[F_A] if axle == 0 else -p[F_B]
    by = 0.5 * p[F_TRACK + axle] * (1.0 if i % 2 == 0 else -1.0)
    d0 = rt[0] * bx + rt[1] * by
    d1 = rt[3] * bx + rt[4] * by
    d2 = rt[6] * bx + rt[7] * by
    v0 = x[X_VX] + w1 * d2 - w2 * d1
    v1 = x[X_VY] + w2 * d0 - w0 * d2
    v2 = x[X_VZ] + w0 * d1 - w1 * d0
    return d0, d1, d2, x[X_X] + d0, x[X_Y] + d1, v0, v1, v2


@njit(cache=True)
def tyre_coefficients(fz, lam_mu, lam_k, i, p):
    """(mu_x, mu_y, K_x [N], K_y [N/rad], B_x, B_y) of wheel i at load fz on a surface."""
    grip = p[F_GRIP + i]
    mux = load_friction(p[F_MUX], fz, p[F_FZ0], p[F_PD2]) * lam_mu * grip
    muy = load_friction(p[F_MUY], fz, p[F_FZ0], p[F_PD2]) * lam_mu * grip
    kx = p[F_KXC] * fz * lam_k * grip
    ky = p[F_KYC + i // 2] * fz * lam_k * grip
    if fz <= 0.0 or mux <= 0.0 or muy <= 0.0:
        return mux, muy, kx, ky, 0.0, 0.0
    return mux, muy, kx, ky, kx / (p[F_CX] * mux * fz), ky / (p[F_CY] * muy * fz)


@njit(cache=True)
def relaxation_lengths(lam_k, i, p):
    """(sigma_x, sigma_y) [m] of wheel i: sigma = K / c_carcass scales with the slip stiffness
    (Pacejka 2012 ch. 7), so the surface and fault stiffness factors scale it too."""
    scale = max(lam_k * p[F_GRIP + i], 1e-3)
    return p[F_SIGX] * scale, p[F_SIGY] * scale


@njit(cache=True)
def compression(x, p, rt, i):
    """Suspension compression [m] of corner i from the spring's free length."""
    axle = i // 2
    bx = p[F_A] if axle == 0 else -p[F_B]
    by = 0.5 * p[F_TRACK + axle] * (1.0 if i % 2 == 0 else -1.0)
    corner_z = x[X_Z] + rt[6] * bx + rt[7] * by
    return p[F_X0 + axle] + p[F_L0 + axle] - (corner_z - x[X_ZW + i])


@njit(cache=True)
def suspension_force(comp, rate, axle, p):
    """Corner force [N] for compression comp [m] (from free length) and its rate [m/s]."""
    f = p[F_KS + axle] * max(comp, 0.0) * (1.0 + p[F_KPROG] * comp * comp)
    f += (p[F_CBUMP + axle] if rate > 0.0 else p[F_CREB + axle]) * rate
    bump = comp - p[F_X0 + axle] - p[F_BUMP]
    if bump > 0.0:
        f += p[F_KSTOP] * bump * bump
    rebound = p[F_X0 + axle] - comp - p[F_REB]
    if rebound > 0.0:
        f -= p[F_KSTOP] * rebound * rebound
    return f
