"""Engine, clutch, gearbox, differentials and brakes of the full model (paper 001), numba.

Engine (001): full-throttle torque = peak * normalised piecewise-linear curve(omega), linear in
throttle; inertia; friction f0 + f1 omega. An idle governor opens the throttle below idle (fully
``F_GOV`` below it); the rev limiter cuts it above max_rpm.
Clutch (001): dry (Coulomb: slips with capacity * sgn(slip), locks when the speeds meet and the
torque needed to keep them locked is within capacity; lock/unlock in full14.advance) or viscous.
The capacity is scaled by (1 - clutch pedal) and ramps from 0 at idle to 1 at clutch_engage_rpm
(001's automatic disengagement under an rpm threshold: the engine cannot stall).
Gearbox (001): the ratio multiplies torque and divides speed; the automatic box moves to a
neighbouring gear when that gear gives more full-throttle wheel torque at the current road speed
(001), generalised to part throttle (see choose_gear).
Differentials: carrier speed = sum k_i omega_i, wheel i gets k_i * G * T_clutch (k from the drive
layout; 4wd centre differential with a fixed split, 001); limited slip = viscous coupling
between left and right wheels of an axle (001: "like a viscous clutch").
Brakes: one torque per wheel, front/rear bias; the handbrake adds the full-pedal rear torque.
"""
from __future__ import annotations

from numba import njit

from vehicle_sim.core.vehicle.full14.packing import (
    F_CL_ENGAGE, F_CL_TMAX, F_CURVE_T, F_CURVE_W, F_F0, F_F1, F_FINAL, F_GOV, F_IDLE, F_IE,
    F_IW, F_KDRIVE, F_NCURVE, F_NGEARS, F_RATIOS, F_REVERSE, F_TB, F_TB_FRONT, F_TPEAK, F_WMAX)
from vehicle_sim.core.vehicle.single_track import U_BRAKE, U_CLUTCH, U_HANDBRAKE


@njit(cache=True)
def curve_norm(omega, p):
    """Normalised full-throttle torque at engine speed omega [rad/s] (flat beyond the ends)."""
    n = int(p[F_NCURVE])
    if omega <= p[F_CURVE_W]:
        return p[F_CURVE_T]
    for i in range(1, n):
        w1 = p[F_CURVE_W + i]
        if omega <= w1:
            w0, t0, t1 = p[F_CURVE_W + i - 1], p[F_CURVE_T + i - 1], p[F_CURVE_T + i]
            return t0 + (t1 - t0) * (omega - w0) / (w1 - w0)
    return p[F_CURVE_T + n - 1]


@njit(cache=True)
def effective_throttle(omega, throttle, p):
    """Pedal after the idle governor and the rev limiter, in [0, 1]."""
    governor = min(max((p[F_IDLE] - omega) / p[F_GOV], 0.0), 1.0)
    th = max(min(max(throttle, 0.0), 1.0), governor)
    if omega >= p[F_WMAX]:
        th = 0.0
    return th


@njit(cache=True)
def engine_torque(omega, throttle, p):
    """Net engine torque [N m] at speed omega [rad/s]: combustion - friction (001)."""
    th = effective_throttle(omega, throttle, p)
    friction = p[F_F0] * min(max(omega / p[F_GOV], -1.0), 1.0) + p[F_F1] * omega
    return th * p[F_TPEAK] * curve_norm(omega, p) - friction


@njit(cache=True)
def total_ratio(gear, p):
    """Engine speed / carrier speed for ``gear`` (-1 reverse, 0 neutral, 1..n), signed."""
    if gear == 0:
        return 0.0
    if gear < 0:
        return -p[F_REVERSE] * p[F_FINAL]
    g = min(gear, int(p[F_NGEARS]))
    return p[F_RATIOS + g - 1] * p[F_FINAL]


@njit(cache=True)
def clutch_inverse_inertia(ratio, p):
    """1 / I_e + G^2 sum k_i^2 / I_w [1/(kg m^2)]: how fast a clutch torque closes the slip
    between the engine and the driven wheels' spin (the locked torque's and the lock's)."""
    k2 = 0.0
    for i in range(4):
        k2 += p[F_KDRIVE + i] ** 2
    return 1.0 / p[F_IE] + ratio * ratio * k2 / p[F_IW]


@njit(cache=True)
def clutch_capacity(omega_engine, u, p):
    """Dry-clutch torque capacity [N m]: pedal and anti-stall ramp applied."""
    pedal = 1.0 - min(max(u[U_CLUTCH], 0.0), 1.0)
    ramp = (omega_engine - p[F_IDLE]) / (p[F_CL_ENGAGE] - p[F_IDLE])
    return p[F_CL_TMAX] * pedal * min(max(ramp, 0.0), 1.0)


@njit(cache=True)
def brake_torque_limits(u, p, out):
    """Fill out[0..3] with the brake torque capacity [N m] per wheel (FL, FR, RL, RR)."""
    total = min(max(u[U_BRAKE], 0.0), 1.0) * p[F_TB]
    front = 0.5 * p[F_TB_FRONT] * total
    rear = 0.5 * (1.0 - p[F_TB_FRONT]) * total
    if u[U_HANDBRAKE] > 0.5:
        rear += 0.5 * (1.0 - p[F_TB_FRONT]) * p[F_TB]
    out[0] = front
    out[1] = front
    out[2] = rear
    out[3] = rear


@njit(cache=True)
def choose_gear(gear, carrier_speed, engine_speed, throttle, p):
    """Automatic box: one step towards the target gear for the carrier speed [rad/s].

    Paper 001 shifts when the neighbouring gear gives more (full-throttle) torque. Generalised
    to part throttle: the demanded carrier torque is throttle * the best full-throttle torque
    over all gears at this speed, and the target is the highest gear that still delivers it
    while its engine speed stays within [clutch_engage_rpm, max_rpm) (first gear always
    allowed). At full throttle this is 001's rule (the gear of maximum torque; torque is zero
    at the rev limiter, so the box upshifts there at the latest); at light throttle it upshifts
    early, and it downshifts when the engine speed falls below clutch_engage_rpm. At a top speed
    limited by the gearing (every gear at or past the limiter) the top gear is kept: a
    downshift there would only over-rev the engine. The current
    gear is rated at the higher of the engine speed [rad/s] and the speed its ratio implies
    (a clutch slipping at the limiter also upshifts). Returns the new gear (>= 1).
    """
    g = max(gear, 1)
    n = int(p[F_NGEARS])
    w = abs(carrier_speed)
    best = 0.0
    for k in range(1, n + 1):
        best = max(best, _rated_torque(k, g, w, engine_speed, p))
    demand = min(max(throttle, 0.0), 1.0) * best
    target = 1
    for k in range(2, n + 1):
        rpm_ok = p[F_CL_ENGAGE] <= w * total_ratio(k, p) and (w * total_ratio(k, p) < p[F_WMAX]
                                                              or k == n)
        if rpm_ok and _rated_torque(k, g, w, engine_speed, p) >= demand:
            target = k
    if target > g:
        return g + 1
    if target < g:
        return g - 1
    return g


@njit(cache=True)
def _rated_torque(k, current, carrier_speed, engine_speed, p):
    """Full-throttle carrier torque of gear k; the current gear is rated at the higher of the
    engine speed and the speed its ratio implies."""
    if k == current:
        carrier_speed = max(carrier_speed, abs(engine_speed) / total_ratio(k, p))
    return _gear_torque(k, carrier_speed, p)


@njit(cache=True)
def _gear_torque(gear, carrier_speed, p):
    """Full-throttle carrier torque [N m] in ``gear`` at carrier speed [rad/s] (0 at the
    rev limiter, which cuts the throttle)."""
    r = total_ratio(gear, p)
    if carrier_speed * r >= p[F_WMAX]:
        return 0.0
    return p[F_TPEAK] * curve_norm(carrier_speed * r, p) * r
