"""Paper 004's small-angle single-track model with saturating tyres and a low-speed blend.

Reference point and frame: the centre of gravity (CG); state in the odom (ENU) frame for the
pose and in base_link (x forward, y left) for the velocities:

    x = [X_m, Y_m, yaw_rad, u_mps, v_mps, r_radps]          (indices S_*)

Dynamics (paper 004, eqs. 1-5; Fx_f acts along the front wheel, small delta):

    m (du/dt - v r) = Fxf + Fxr - delta Fyf + F_res
    m (dv/dt + u r) = Fyf + Fyr + delta Fxf
    Iz dr/dt       = a Fyf - b Fyr
    tan(alpha_f) = delta sgn(u) - (v + a r) / |u|,   tan(alpha_r) = (b r - v) / |u|

Eqs. 4-5 are used as the tangent of the slip angle (exact for the rear, first order in delta at
the front) and written with |u| so that reversing is handled. Sign convention of paper 004: a
positive slip angle gives a positive (leftward) lateral force, i.e. minus the ISO 8855 angle.
Lateral force: Fiala brush model (conventions.md), its limit reduced by the friction ellipse
sqrt((mu Fz)^2 - Fx^2). Longitudinal: see :func:`axle_long_forces`. Static axle loads (no load
transfer). Below a planar speed of ``P_V_LO`` the model is the kinematic bicycle at the CG (v, r
relax to u b tan(delta) / L and u tan(delta) / L, v at most at mu g), linearly blended up to
``P_V_HI`` (eqs. 4-5 are singular at u = 0; there |u| is floored at ``P_V_LO``).

External wrench (``set_external_wrench``: crash forces, paper 004 sec. 7): the odom force,
rotated into base_link at the current yaw, and the moment about the CG are added to
m du/dt, m dv/dt and Iz dr/dt in both regimes (below ``P_V_LO`` the kinematic relaxation of v and
r then acts like the tyres resisting a sideways push).

Snapshot outputs: engine_rpm is 0 (the constant-power gearbox has no engine speed); gear is the
commanded one; the aligning moment is -t Fyf with the brush-model trail; wheel spin is u / R
(no wheel DOF) except brake-locked axles (0).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from vehicle_sim.core.vehicle.drive_law import full_drive_force_n
from vehicle_sim.core.vehicle.interface import (
    SNAPSHOT_SIZE, V_ACCELERATION, V_ALIGNING, V_ANGULAR_ACCELERATION, V_ANGULAR_VELOCITY,
    V_ENGINE_RPM, V_GEAR, V_POSITION, V_RPY, V_SLIP_ANGLE, V_SLIP_RATIO, V_STEER, V_VELOCITY,
    V_WHEEL_SPEED, VehicleSnapshot)
from vehicle_sim.core.vehicle.params import (
    P_A, P_B, P_BRAKE_FMAX, P_BRAKE_FRONT, P_CAF, P_CAR, P_CRR, P_DRAG, P_DRIVE_FRONT, P_FMAX,
    P_EXT_FX, P_EXT_FY, P_EXT_MZ, P_FZF, P_FZR, P_G, P_IZ, P_MASS, P_MU, P_PMAX, P_STEER_MAX,
    P_RW, P_TAU, P_TRAIL, P_V_HI, P_V_LO, P_VREV)
from vehicle_sim.core.vehicle.planar_outputs import aligning_moment, brake_locked, wheel_spin_slip
from vehicle_sim.core.vehicle.planar import (  # noqa: F401 (re-exported for kinematic, full14)
    N_INPUT, U_BRAKE, U_CLUTCH, U_GEAR, U_HANDBRAKE, U_STEER, U_THROTTLE, PlanarModel,
    controls_array, stepper)

S_X, S_Y, S_YAW, S_U, S_V, S_R = range(6)
N_STATE = 6


@njit(cache=True)
def _clip(x, lo, hi):
    return min(max(x, lo), hi)


@njit(cache=True)
def steer_angle(u, p):
    """Road-wheel angle [rad] after the model's limit."""
    return _clip(u[U_STEER], -p[P_STEER_MAX], p[P_STEER_MAX])


@njit(cache=True)
def drive_force(speed, u, p):
    """Signed drive force at the wheels [N]: throttle * min(F_max, P / |u|) (paper 004).

    Gear > 0 drives forward, < 0 backward (cut beyond the max reverse speed), 0 is neutral; the
    clutch pedal (1 = pressed) disengages proportionally.
    """
    gear = u[U_GEAR]
    if gear == 0.0:
        return 0.0
    direction = 1.0 if gear > 0.0 else -1.0
    if direction < 0.0 and speed <= -p[P_VREV]:
        return 0.0
    pedal = _clip(u[U_THROTTLE], 0.0, 1.0) * (1.0 - _clip(u[U_CLUTCH], 0.0, 1.0))
    return direction * pedal * full_drive_force_n(p[P_FMAX], p[P_PMAX], speed)


@njit(cache=True)
def brake_demands(u, p):
    """Brake force demanded on (front, rear) axle [N]; the handbrake locks the rear."""
    total = _clip(u[U_BRAKE], 0.0, 1.0) * p[P_BRAKE_FMAX]
    front = p[P_BRAKE_FRONT] * total
    rear = (1.0 - p[P_BRAKE_FRONT]) * total
    if u[U_HANDBRAKE] > 0.5:
        rear = max(rear, p[P_MU] * p[P_FZR])
    return front, rear


@njit(cache=True)
def holding_force(u, p):
    """Largest force [N] brakes and rolling resistance can resist at standstill."""
    bf, br = brake_demands(u, p)
    mu = p[P_MU]
    roll = p[P_CRR] * p[P_MASS] * p[P_G]
    return min(bf, mu * p[P_FZF]) + min(br, mu * p[P_FZR]) + roll


@njit(cache=True)
def axle_long_forces(speed, u, p):
    """(Fx_front, Fx_rear, F_resist) [N] for the longitudinal speed ``speed`` [m/s].

    Axle force = drive share - brake (opposing motion), saturated at +-mu Fz (no ABS, no wheel
    spin dynamics). F_resist = rolling resistance + drag 0.5 rho CdA u|u|, on the body. At
    exactly zero speed nothing moves unless the drive exceeds brakes + rolling resistance.
    """
    fd = drive_force(speed, u, p)
    if speed == 0.0:
        if abs(fd) <= holding_force(u, p):
            return 0.0, 0.0, 0.0
        s = 1.0 if fd > 0.0 else -1.0
    else:
        s = 1.0 if speed > 0.0 else -1.0
    bf, br = brake_demands(u, p)
    limf, limr = p[P_MU] * p[P_FZF], p[P_MU] * p[P_FZR]
    kf = p[P_DRIVE_FRONT]
    fxf = _clip(kf * fd - s * bf, -limf, limf)
    fxr = _clip((1.0 - kf) * fd - s * br, -limr, limr)
    fres = -s * p[P_CRR] * p[P_MASS] * p[P_G] - p[P_DRAG] * speed * abs(speed)
    return fxf, fxr, fres


@njit(cache=True)
def fiala(tan_alpha, c_alpha, fy_max):
    """Fiala brush lateral force [N] for tan(slip) (paper-004 sign: + slip -> + force)."""
    if fy_max <= 0.0:
        return 0.0
    z_sl = 3.0 * fy_max / c_alpha
    if abs(tan_alpha) >= z_sl:
        return fy_max if tan_alpha > 0.0 else -fy_max
    z = tan_alpha
    return (c_alpha * z - c_alpha * c_alpha / (3.0 * fy_max) * abs(z) * z
            + c_alpha ** 3 / (27.0 * fy_max * fy_max) * z ** 3)


@njit(cache=True)
def blend_weight(speed, p):
    """Weight of the dynamic model for the planar CG speed [m/s] (0 below P_V_LO, 1 above P_V_HI).

    The planar speed (not u alone) keeps a car sliding sideways in the dynamic model, where
    its saturated tyres, not the kinematic constraint, stop the slide.
    """
    return _clip((abs(speed) - p[P_V_LO]) / (p[P_V_HI] - p[P_V_LO]), 0.0, 1.0)


@njit(cache=True)
def tyre_state(x, u, p):
    """(delta, Fxf, Fxr, F_res, Fyf, Fyr, tan_af, tan_ar, Fy_max_f) of the current state."""
    delta = steer_angle(u, p)
    vx, vy, r = x[S_U], x[S_V], x[S_R]
    fxf, fxr, fres = axle_long_forces(vx, u, p)
    us = max(abs(vx), p[P_V_LO])
    sgn = 1.0 if vx >= 0.0 else -1.0
    tan_af = delta * sgn - (vy + p[P_A] * r) / us  # paper 004, eq. 4
    tan_ar = (p[P_B] * r - vy) / us  # paper 004, eq. 5
    capf = math.sqrt(max((p[P_MU] * p[P_FZF]) ** 2 - fxf * fxf, 0.0))
    capr = math.sqrt(max((p[P_MU] * p[P_FZR]) ** 2 - fxr * fxr, 0.0))
    fyf = fiala(tan_af, p[P_CAF], capf)
    fyr = fiala(tan_ar, p[P_CAR], capr)
    return delta, fxf, fxr, fres, fyf, fyr, tan_af, tan_ar, capf


@njit(cache=True)
def single_track_f(x, u, p):
    """dx/dt of the single-track model (state S_*, input U_*, packed params P_*)."""
    delta, fxf, fxr, fres, fyf, fyr, _, _, _ = tyre_state(x, u, p)
    vx, vy, r, yaw = x[S_U], x[S_V], x[S_R], x[S_YAW]
    m, a, b = p[P_MASS], p[P_A], p[P_B]
    w = blend_weight(math.hypot(vx, vy), p)
    dx = np.empty(N_STATE)
    dx[S_X] = vx * math.cos(yaw) - vy * math.sin(yaw)
    dx[S_Y] = vx * math.sin(yaw) + vy * math.cos(yaw)
    dx[S_YAW] = r
    du = dv = dr = 0.0
    if w > 0.0:  # dynamic model, paper 004 eqs. 1-3
        du = w * ((fxf + fxr - delta * fyf + fres) / m + vy * r)
        dv = w * ((fyf + fyr + delta * fxf) / m - vx * r)
        dr = w * (a * fyf - b * fyr) / p[P_IZ]
    if w < 1.0:  # kinematic bicycle at the CG, v and r relax to their kinematic values
        du_k = (fxf + fxr + fres) / m
        k = math.tan(delta) / (a + b)
        du += (1.0 - w) * du_k
        mu_g = p[P_MU] * p[P_G]  # the tyres cannot pull v back faster than mu g
        dv += (1.0 - w) * (du_k * b * k + _clip((vx * b * k - vy) / p[P_TAU], -mu_g, mu_g))
        dr += (1.0 - w) * (du_k * k + (vx * k - r) / p[P_TAU])
    c, s = math.cos(yaw), math.sin(yaw)  # external wrench (odom force, moment about the CG)
    du += (c * p[P_EXT_FX] + s * p[P_EXT_FY]) / m
    dv += (-s * p[P_EXT_FX] + c * p[P_EXT_FY]) / m
    dr += p[P_EXT_MZ] / p[P_IZ]
    dx[S_U], dx[S_V], dx[S_R] = du, dv, dr
    return dx


@njit(cache=True)
def settle_speed(speed_old, speed_new, u, p, dt):
    """True if the step must end at rest: brakes and rolling resistance never reverse the car.

    At rest when (1) the speed went through zero, unless the drive at standstill exceeds the
    holding force in the new direction, or (2) the remaining speed is below what the net holding
    force removes in one more step (else RK4's averaged stages settle on a spurious creep speed
    because the braking force switches sign with the speed).
    """
    if speed_old == 0.0:
        return False
    fd = drive_force(0.0, u, p)
    net_hold = holding_force(u, p) - abs(fd)
    if speed_new == 0.0 or (speed_new > 0.0) != (speed_old > 0.0):
        return not (net_hold < 0.0 and fd * speed_new > 0.0)
    return net_hold > 0.0 and abs(speed_new) < dt * net_hold / p[P_MASS]


@njit(cache=True)
def single_track_after_step(x, x_new, u, p, dt):
    """The stop-at-rest rule after a step (integrators.advance; edits x_new in place)."""
    if settle_speed(x[S_U], x_new[S_U], u, p, dt):
        x_new[S_U] = 0.0
        if abs(x_new[S_V]) < p[P_V_LO]:
            x_new[S_V] = 0.0
            x_new[S_R] = 0.0


@njit(cache=True)
def st_snapshot_vector(x, u, p, planar_speed):
    """The snapshot of state x under controls u as ``VehicleSnapshot.to_vector``'s vector (see
    the module docstring); accelerations from the derivative. planar_speed: hypot(u, v) [m/s]
    as the caller's Python math.hypot gives it (numba's hypot differs in the last bit), the
    blend weight of the slip angles and the aligning moment."""
    out = np.zeros(SNAPSHOT_SIZE)
    delta, fxf, fxr, _, fyf, _, taf, tar, capf = tyre_state(x, u, p)
    dx = single_track_f(x, u, p)
    vx, vy, r = x[S_U], x[S_V], x[S_R]
    w = blend_weight(planar_speed, p)
    bf, br = brake_demands(u, p)
    v_front = vx * math.cos(delta) + (vy + p[P_A] * r) * math.sin(delta)
    locked_f = brake_locked(fxf, bf, p[P_MU] * p[P_FZF], vx)
    locked_r = brake_locked(fxr, br, p[P_MU] * p[P_FZR], vx)
    alpha_f, alpha_r = w * math.atan(taf), w * math.atan(tar)
    for i in range(4):
        front = i < 2
        spin, slip = wheel_spin_slip(v_front if front else vx, locked_f if front else locked_r,
                                     p[P_RW])
        out[V_WHEEL_SPEED + i], out[V_SLIP_RATIO + i] = spin, slip
        out[V_SLIP_ANGLE + i] = alpha_f if front else alpha_r
    out[V_POSITION], out[V_POSITION + 1], out[V_RPY + 2] = x[S_X], x[S_Y], x[S_YAW]
    out[V_VELOCITY], out[V_VELOCITY + 1], out[V_ANGULAR_VELOCITY + 2] = vx, vy, r
    out[V_ACCELERATION], out[V_ACCELERATION + 1] = dx[S_U] - vy * r, dx[S_V] + vx * r
    out[V_ANGULAR_ACCELERATION + 2] = dx[S_R]
    out[V_STEER], out[V_GEAR], out[V_ENGINE_RPM] = delta, u[U_GEAR], 0.0
    out[V_ALIGNING] = w * aligning_moment(fyf, taf, p[P_CAF], capf, p[P_TRAIL])
    return out


def set_planar_external_wrench(model: PlanarModel, force_n=(0.0, 0.0, 0.0),
                               point_m=None) -> None:
    """``set_external_wrench`` of the planar models: a constant external force [N] (odom; z
    ignored) at point [m] (odom; None = the CG), e.g. paper 004's crash spring-dampers, until the
    next call (as full14's). The moment about the CG is taken at the current pose: call again
    every step for a moving contact. No arguments clear it. Its effect: each model's module."""
    force = np.asarray(force_n, dtype=float)
    lever = np.zeros(3) if point_m is None else np.asarray(point_m, dtype=float) - \
        np.array([model._x[0], model._x[1], 0.0])
    if force.shape != (3,) or lever.shape != (3,):
        raise ValueError("force_n and point_m must be 3-vectors")
    if not (np.all(np.isfinite(force)) and np.all(np.isfinite(lever))):
        raise ValueError(f"external wrench must be finite, got {force}, {point_m}")
    model._p[P_EXT_FX], model._p[P_EXT_FY] = force[0], force[1]
    model._p[P_EXT_MZ] = lever[0] * force[1] - lever[1] * force[0]


class SingleTrackModel(PlanarModel):
    """Paper 004 single-track model as a :class:`~interface.VehicleModel` (reference point: CG).

    State indices S_*: at (x, y) heading yaw with forward speed u, lateral speed v, yaw rate r.
    """

    name = "single_track"
    dynamics = (single_track_f, single_track_after_step)
    set_external_wrench = set_planar_external_wrench

    def initial_state(self, x_m, y_m, yaw_rad, speed_mps) -> np.ndarray:
        return np.array([x_m, y_m, yaw_rad, speed_mps, 0.0, 0.0], dtype=float)

    def snapshot(self) -> VehicleSnapshot:
        """The current state; accelerations from the derivative at the last controls."""
        x = self._x
        return VehicleSnapshot.of_vector(
            st_snapshot_vector(x, self._u, self._p, math.hypot(x[S_U], x[S_V])))
