"""Discrete states of the 14-DOF model, updated between integration steps (numba).

After each step ``full14_after_step`` keeps the tyre deflections within the Magic Formula peak
and updates the gear (manual: Controls.gear; automatic: drivetrain.choose_gear, 001's torque
rule generalised to part throttle, while Controls.gear >= 1, at most one shift per
``min_shift_interval_s``) and the dry clutch lock; it unlocks when the locked torque exceeded
the capacity, seen as a speed mismatch after the step, or on a gear change.

The clutch locks (Karnopp's stick-slip rule, Karnopp 1985, J. Dyn. Sys. Meas. Control 107(1))
when the speeds can meet within the step and stay together: the angular impulse that equalises
them, J = slip / (1 / I_e + G^2 sum k_i^2 / I_w) (engine against the spinning wheels, whose
tyres act over much longer than a step), is at most capacity * dt, or the slip is within the
slip band (whose friction, below the capacity, stands in for static friction); and the torque
that holds them locked is within the capacity. The lock applies J to both sides, so angular
momentum is kept. Waiting for the slip itself to reach the band does not work at a 1 ms step:
inside the band the engine / wheel-spin mode has lambda dt ~ -7.6 (RK4 is stable to -2.8), and
a slipping clutch settled into a two-step cycle of 1-7 rad/s that never locked at 1 kHz (it
did at 5 kHz).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from vehicle_sim.core.vehicle.full14.corners import (
    corner, relaxation_lengths, rot9, tyre_coefficients)
from vehicle_sim.core.vehicle.full14.drivetrain import (
    choose_gear, clutch_capacity, clutch_inverse_inertia, total_ratio)
from vehicle_sim.core.vehicle.full14.dynamics import full14_eval
from vehicle_sim.core.vehicle.full14.packing import (
    F_AUTO, F_CL_BAND, F_CL_VISCOUS, F_IE, F_IW, F_KDRIVE, F_KT, F_NGEARS, F_R0, F_RSCALE,
    F_SHIFT_DT, F_SPEAK, F_TERRAIN)
from vehicle_sim.core.vehicle.full14.state_layout import (
    N_OUT, O_TCLUTCH, X_ENGINE, X_GEAR, X_LOCK, X_OMEGA, X_PITCH, X_ROLL, X_SHIFT_T, X_UX, X_UY,
    X_YAW, X_ZW)
from vehicle_sim.core.vehicle.full14.terrain import T_K, T_KIND, T_MU, T_NZONES, ground, surface_at
from vehicle_sim.core.vehicle.planar import U_GEAR, U_THROTTLE

# A locked clutch unlocks when engine and carrier speeds differ by more than this [rad/s]
# after a step (they are equal to round-off while the lock torque is within capacity).
LOCK_MISMATCH_RADPS = 1e-9
# A slipping clutch locks only if holding takes at most this share of its capacity (a choice:
# where the demand crosses the capacity, a lock with nothing to spare was taken and lost every
# other step, 36 times in a full-throttle half-clutch launch; with 2 % to spare, 4 times).
LOCK_CAPACITY_SHARE = 0.98


@njit(cache=True)
def carrier_speed(x, p):
    """Speed of the drive carrier [rad/s]: the drive-weighted mean of the wheel spins."""
    c = 0.0
    for i in range(4):
        c += p[F_KDRIVE + i] * x[X_OMEGA + i]
    return c


@njit(cache=True)
def limit_deflections(x, p):
    """Keep each tyre's transient slip within the Magic Formula peak (modifies x in place).

    The deflection states stand for carcass deflection, which stops growing once the contact
    slides: without this limit a locked wheel would store sigma of deflection and push the car
    back when it stops. Load from the static tyre deflection (damping ignored).
    """
    o = int(p[F_TERRAIN])
    uniform = p[o + T_KIND] == 0.0 and p[o + T_NZONES] == 0.0  # flat, one surface
    rt = rot9(x[X_ROLL], x[X_PITCH], x[X_YAW]) if not uniform else (0.0,) * 9
    h, lam_mu, lam_k = 0.0, p[o + T_MU], p[o + T_K]
    for i in range(4):
        if not uniform:
            _, _, _, cx, cy, _, _, _ = corner(x, p, rt, 0.0, 0.0, 0.0, i)
            h = ground(p, o, cx, cy)[0]
            lam_mu, lam_k = surface_at(p, o, cx, cy)
        fz = max(p[F_KT] * (p[F_R0 + i // 2] * p[F_RSCALE + i] - (x[X_ZW + i] - h)), 0.0)
        _, _, _, _, bnx, bny = tyre_coefficients(fz, lam_mu, lam_k, i, p)
        sig_x, sig_y = relaxation_lengths(lam_k, i, p)
        s = math.hypot(bnx * x[X_UX + i] / sig_x, bny * x[X_UY + i] / sig_y)
        if s > p[F_SPEAK]:
            x[X_UX + i] *= p[F_SPEAK] / s
            x[X_UY + i] *= p[F_SPEAK] / s


@njit(cache=True)
def discrete_update(x, u, p, dt):
    """Tyre deflection limit, gear selection and clutch lock/unlock after a step of dt [s]
    (in place)."""
    limit_deflections(x, p)
    gear = int(x[X_GEAR])
    wanted = int(np.rint(u[U_GEAR]))
    n = int(p[F_NGEARS])
    carrier = carrier_speed(x, p)
    if p[F_AUTO] > 0.0 and wanted >= 1:
        new = gear
        if gear < 1:
            new = 1
        elif x[X_SHIFT_T] >= p[F_SHIFT_DT]:
            new = choose_gear(gear, carrier, x[X_ENGINE], u[U_THROTTLE], p)
    else:
        new = min(max(wanted, -1), n)
    if new != gear:
        x[X_GEAR] = new
        x[X_LOCK] = 0.0
        x[X_SHIFT_T] = 0.0
    ratio = total_ratio(new, p)
    slip = x[X_ENGINE] - ratio * carrier
    if ratio == 0.0 or p[F_CL_VISCOUS] > 0.0:
        x[X_LOCK] = 0.0
    elif x[X_LOCK] > 0.5:
        if abs(slip) > LOCK_MISMATCH_RADPS:
            x[X_LOCK] = 0.0
        else:
            x[X_ENGINE] = ratio * carrier
    else:
        try_lock(x, u, p, slip, ratio, dt)


@njit(cache=True)
def try_lock(x, u, p, slip, ratio, dt):
    """Lock the slipping dry clutch (in place) where the module docstring's rule allows it."""
    cap = clutch_capacity(x[X_ENGINE], u, p)
    impulse = slip / clutch_inverse_inertia(ratio, p)  # [N m s]
    if cap <= 0.0 or (abs(impulse) > cap * dt and abs(slip) >= p[F_CL_BAND]):
        return
    locked = x.copy()
    locked[X_ENGINE] -= impulse / p[F_IE]
    for i in range(4):
        locked[X_OMEGA + i] += p[F_KDRIVE + i] * ratio * impulse / p[F_IW]
    locked[X_ENGINE] = ratio * carrier_speed(locked, p)  # equal to round-off already
    locked[X_LOCK] = 1.0
    out = np.empty(N_OUT)
    full14_eval(locked, u, p, out)  # the holding torque; clamped to the capacity when short
    if abs(out[O_TCLUTCH]) < LOCK_CAPACITY_SHARE * clutch_capacity(locked[X_ENGINE], u, p):
        x[:] = locked


@njit(cache=True)
def full14_after_step(x, x_new, u, p, dt):
    """The model's rule between steps (integrators.advance): ``discrete_update`` of x_new."""
    discrete_update(x_new, u, p, dt)
