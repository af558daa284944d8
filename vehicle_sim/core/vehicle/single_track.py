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

from vehicle_sim.core.vehicle.interface import VehicleSnapshot
from vehicle_sim.core.vehicle.params import (
    P_A, P_B, P_BRAKE_FMAX, P_BRAKE_FRONT, P_CAF, P_CAR, P_CRR, P_DRAG, P_DRIVE_FRONT, P_FMAX,
    P_EXT_FX, P_EXT_FY, P_EXT_MZ, P_FZF, P_FZR, P_G, P_IZ, P_MASS, P_MU, P_PMAX, P_STEER_MAX,
    P_TAU, P_TRAIL, P_V_HI, P_V_LO, P_VREV)
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
    force = p[P_FMAX]
    if abs(speed) * force > p[P_PMAX]:
        force = p[P_PMAX] / abs(speed)
    return direction * pedal * force


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
def st_outputs(x, u, p):
    """[delta, Fxf, Fxr, F_res, Fyf, Fyr, tan_af, tan_ar, Fy_max_f] as an array (snapshots)."""
    out = np.empty(9)
    vals = tyre_state(x, u, p)
    for i in range(9):
        out[i] = vals[i]
    return out


# Slip ratio (w R - v) / max(|v|, floor): the floor [m/s] only avoids dividing by ~0 at rest.
SLIP_SPEED_FLOOR_MPS = 0.5


def wheel_outputs(v_front: float, v_rear: float, locked_f: bool, locked_r: bool,
                  radius_m: float) -> tuple[np.ndarray, np.ndarray]:
    """(wheel spin [rad/s], slip ratio) FL FR RL RR from axle rolling speeds [m/s].

    No wheel-spin DOF: a free wheel rolls (slip 0); an axle whose brake force saturated at
    mu Fz is locked (spin 0, slip -sgn(v)). Drive-side saturation (wheel spin) is not reported.
    """
    spin = np.zeros(4)
    slip = np.zeros(4)
    for i, (v, locked) in enumerate(((v_front, locked_f), (v_front, locked_f),
                                     (v_rear, locked_r), (v_rear, locked_r))):
        spin[i] = 0.0 if locked else v / radius_m
        slip[i] = (spin[i] * radius_m - v) / max(abs(v), SLIP_SPEED_FLOOR_MPS)
    return spin, slip


def brake_locked(fx: float, demand: float, limit: float, speed: float) -> bool:
    """True when an axle's brake force saturated at mu Fz against the motion."""
    return demand > 0.0 and speed != 0.0 and fx * speed < 0.0 and abs(fx) >= limit * (1 - 1e-9)


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
        x, u, p = self._x, self._u, self._p
        delta, fxf, fxr, _, fyf, _, taf, tar, capf = st_outputs(x, u, p)
        dx = single_track_f(x, u, p)
        vx, vy, r = x[S_U], x[S_V], x[S_R]
        w = blend_weight(math.hypot(vx, vy), p)
        bf, br = brake_demands(u, p)
        v_front = vx * math.cos(delta) + (vy + p[P_A] * r) * math.sin(delta)
        spin, slip = wheel_outputs(
            v_front, vx, brake_locked(fxf, bf, p[P_MU] * p[P_FZF], vx),
            brake_locked(fxr, br, p[P_MU] * p[P_FZR], vx), self.params.tyre.rolling_radius_m)
        alpha_f, alpha_r = w * math.atan(taf), w * math.atan(tar)
        return VehicleSnapshot(
            position_m=np.array([x[S_X], x[S_Y], 0.0]),
            rpy_rad=np.array([0.0, 0.0, x[S_YAW]]),
            velocity_mps=np.array([vx, vy, 0.0]),
            angular_velocity_radps=np.array([0.0, 0.0, r]),
            acceleration_mps2=np.array([dx[S_U] - vy * r, dx[S_V] + vx * r, 0.0]),
            angular_acceleration_radps2=np.array([0.0, 0.0, dx[S_R]]),
            wheel_speed_radps=spin, wheel_slip_ratio=slip,
            wheel_slip_angle_rad=np.array([alpha_f, alpha_f, alpha_r, alpha_r]),
            steer_rad=float(delta), gear=int(u[U_GEAR]), engine_rpm=0.0,
            aligning_moment_nm=w * aligning_moment(fyf, taf, p[P_CAF], capf, p[P_TRAIL]))


def aligning_moment(fy: float, tan_alpha: float, c_alpha: float, fy_max: float,
                    trail0_m: float) -> float:
    """Self-aligning moment about body z [N m] = -t * Fy, trail t from the brush model.

    t = t0 * 3 (1 - l)^3 / (3 - 3 l + l^2) with l = C |tan a| / (3 Fy_max) clipped to 1
    (Pacejka, Tyre and Vehicle Dynamics, ch. 3 brush model: t0 = a/3 at zero slip, 0 when the
    whole contact slides). The force acts behind the contact centre, so Mz opposes Fy.
    """
    if fy_max <= 0.0:
        return 0.0
    lam = min(c_alpha * abs(tan_alpha) / (3.0 * fy_max), 1.0)
    trail = trail0_m * 3.0 * (1.0 - lam) ** 3 / (3.0 - 3.0 * lam + lam * lam)
    return -trail * fy
