"""The 14-DOF model (``full14``) as a VehicleModel: stepping, discrete events, snapshots.

Dynamics: full14_kernel.py (frames, reference point; states X_* in full14_parts.py). Between
integration steps ``full_advance`` updates the discrete states: the gear (manual: Controls.gear;
automatic: drivetrain.choose_gear, 001's torque rule generalised to part throttle, while
Controls.gear >= 1, at most one shift per ``min_shift_interval_s``), and the dry clutch lock (locks
when the slip speed falls below half the slip band with capacity left; unlocks when the locked
torque exceeded the capacity, seen as a speed mismatch after the step, or on a gear change).

Time step: 1 ms recommended (the tyre-deflection / wheel-spin mode, ~20 Hz at standstill, and
the wheel hop, ~13 Hz, are the fastest modes). Measured with bench/bench_full14.py (launch,
slalom, full braking): RK4 and midpoint stay stable up to 8 ms, Euler up to 5 ms (diverges at
8 ms); position error vs a 0.25 ms reference ~0.1 m at 1 ms over the 9 s run.

API for nodes: ``factory.make_model("full14", params, integrator)`` (or ``Full14Model(params,
integrator, terrain)``), then ``reset``, ``step``, ``snapshot`` (interface.VehicleModel) plus
``set_terrain``, ``set_tyre_fault``, ``set_external_wrench``, ``wheel_loads_n`` and
``steering_wheel_torque_nm``.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from vehicle_sim.core.vehicle.drivetrain import choose_gear, clutch_capacity, total_ratio
from vehicle_sim.core.vehicle.full14_kernel import full14_eval, full14_f
from vehicle_sim.core.vehicle.full14_parts import (
    N_OUT, N_STATE, O_AX, O_FZ, O_MZ, O_RE, O_TAN, O_VX, X_ENGINE, X_GEAR, X_LOCK, X_OMEGA, X_P,
    X_PITCH, X_ROLL, X_SHIFT_T, X_UX, X_UY, X_VX, X_X, X_YAW, X_Z, X_ZW, corner, relaxation_lengths,
    rot9, rotation, tyre_coefficients)
from vehicle_sim.core.vehicle.full_pack import (
    F_A, F_AUTO, F_B, F_EXT, F_CL_BAND, F_CL_ENGAGE, F_CL_VISCOUS, F_FZ_STATIC, F_GRIP, F_HCG,
    F_IDLE, F_KDRIVE, F_KT, F_NGEARS, F_R0, F_RRSCALE, F_RSCALE, F_SHIFT_DT, F_SPEAK, F_TERRAIN,
    F_TRACK, pack_full)
from vehicle_sim.core.vehicle.interface import WHEELS, Controls, VehicleSnapshot
from vehicle_sim.core.vehicle.params import VehicleParams
from vehicle_sim.core.vehicle.single_track import U_GEAR, U_THROTTLE, controls_array, stepper
from vehicle_sim.core.vehicle.terrain import (
    T_K, T_KIND, T_MU, T_NZONES, TerrainParams, ground, pack_terrain, surface_at)

# Slip ratio (w R - v) / max(|v|, floor) in snapshots: the floor [m/s] avoids dividing by ~0.
SLIP_SPEED_FLOOR_MPS = 0.5
# A locked clutch unlocks when engine and carrier speeds differ by more than this [rad/s]
# after a step (they are equal to round-off while the lock torque is within capacity).
LOCK_MISMATCH_RADPS = 1e-9


@njit(cache=True)
def _carrier(x, p):
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
def discrete_update(x, u, p):
    """Tyre deflection limit, gear selection and clutch lock/unlock after a step (in place)."""
    limit_deflections(x, p)
    gear = int(x[X_GEAR])
    wanted = int(np.rint(u[U_GEAR]))
    n = int(p[F_NGEARS])
    carrier = _carrier(x, p)
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
    elif abs(slip) < 0.5 * p[F_CL_BAND] and clutch_capacity(x[X_ENGINE], u, p) > 0.0:
        x[X_LOCK] = 1.0
        x[X_ENGINE] = ratio * carrier


@njit(cache=False)  # takes jitted functions as arguments: numba cannot cache those
def full_advance(step_fn, f, x, u, p, dt):
    """One ``step_fn`` step of ``f`` (= full14_f) followed by the discrete update."""
    x_new = step_fn(f, x, u, p, dt)
    discrete_update(x_new, u, p)
    return x_new


@njit(cache=False)  # takes jitted functions as arguments: numba cannot cache those
def full_simulate(step_fn, f, x0, controls, p, dt, n):
    """n steps from x0; row i of ``controls`` (clamped to the last row) is held over step i."""
    out = np.empty((n + 1, N_STATE))
    out[0] = x0
    x = x0.copy()
    last = controls.shape[0] - 1
    for i in range(n):
        x = full_advance(step_fn, f, x, controls[min(i, last)], p, dt)
        out[i + 1] = x
    return out


def equilibrium_state(p: np.ndarray, x_m: float = 0.0, y_m: float = 0.0, yaw_rad: float = 0.0,
                      speed_mps: float = 0.0) -> np.ndarray:
    """Static equilibrium on the terrain at (x, y), heading yaw, rolling at speed [m/s].

    The body is level at the static CG height above the ground under the CG; each wheel centre
    sits at its ground height + loaded radius; wheels spin at speed / R_e; the gear is the
    automatic choice for that speed at zero throttle and the clutch is locked when the engine
    speed it implies is above clutch_engage_rpm, else the engine idles.
    """
    o = int(p[F_TERRAIN])
    x = np.zeros(N_STATE)
    x[X_X], x[1], x[X_YAW] = x_m, y_m, yaw_rad
    x[X_Z] = ground(p, o, x_m, y_m)[0] + p[F_HCG]
    x[X_VX], x[X_VX + 1] = speed_mps * math.cos(yaw_rad), speed_mps * math.sin(yaw_rad)
    rot = rotation(0.0, 0.0, yaw_rad)
    for i in range(4):
        axle = i // 2
        bx = p[F_A] if axle == 0 else -p[F_B]
        by = 0.5 * p[F_TRACK + axle] * (1.0 if i % 2 == 0 else -1.0)
        cx, cy = x_m + rot[0, 0] * bx + rot[0, 1] * by, y_m + rot[1, 0] * bx + rot[1, 1] * by
        deflection = p[F_FZ_STATIC + axle] / p[F_KT]
        r0 = p[F_R0 + axle] * p[F_RSCALE + i]
        x[X_ZW + i] = ground(p, o, cx, cy)[0] + r0 - deflection
        x[X_OMEGA + i] = speed_mps / (r0 - deflection / 3.0)
    gear = 1
    for _ in range(int(p[F_NGEARS])):
        gear = choose_gear(gear, _carrier(x, p), 0.0, 0.0, p)
    x[X_GEAR], x[X_SHIFT_T] = gear, p[F_SHIFT_DT]
    engine = total_ratio(gear, p) * _carrier(x, p)
    x[X_ENGINE] = p[F_IDLE]
    if engine > p[F_CL_ENGAGE]:
        x[X_ENGINE], x[X_LOCK] = engine, 1.0
    return x


class Full14Model:
    """14-DOF vehicle (papers 004/001) as a :class:`~interface.VehicleModel`; reference: CG."""

    name = "full14"

    def __init__(self, params: VehicleParams, integrator: str = "rk4",
                 terrain: TerrainParams | None = None):
        self.params = params
        self._p = pack_full(params, terrain)
        self._stepper = stepper(integrator)
        self._u = controls_array(Controls())
        self._x = equilibrium_state(self._p)

    @property
    def state(self) -> np.ndarray:
        """A copy of the state vector (indices full14_parts.X_*)."""
        return self._x.copy()

    @property
    def packed_params(self) -> np.ndarray:
        """A copy of the packed parameters (for factory.simulate with faults or terrain)."""
        return self._p.copy()

    def set_terrain(self, terrain: TerrainParams | None) -> None:
        """Replace the terrain (heightmap and friction map); the state is kept."""
        o = int(self._p[F_TERRAIN])
        self._p = np.concatenate([self._p[:o], pack_terrain(terrain)])

    def set_tyre_fault(self, wheel: int | str, grip_scale: float = 1.0,
                       radius_scale: float = 1.0, rolling_resistance_scale: float = 1.0) -> None:
        """Degrade one tyre (e.g. a blow-out): peak friction and slip stiffness x grip_scale,
        free radius x radius_scale, rolling resistance x rolling_resistance_scale.

        wheel: 0..3 or a name of interface.WHEELS. All ones = healthy tyre.
        """
        i = WHEELS.index(wheel) if isinstance(wheel, str) else int(wheel)
        if not 0 <= i < 4:
            raise ValueError(f"wheel must be 0..3 or one of {WHEELS}, got {wheel!r}")
        checks = {"grip_scale": (grip_scale, 0.0, 1.0), "radius_scale": (radius_scale, 0.5, 1.0),
                  "rolling_resistance_scale": (rolling_resistance_scale, 1.0, 100.0)}
        for name, (value, lo, hi) in checks.items():
            if not (math.isfinite(value) and lo <= value <= hi):
                raise ValueError(f"{name} must be in [{lo}, {hi}], got {value}")
        self._p[F_GRIP + i] = grip_scale
        self._p[F_RSCALE + i] = radius_scale
        self._p[F_RRSCALE + i] = rolling_resistance_scale

    def set_external_wrench(self, force_n=(0.0, 0.0, 0.0), point_m=None) -> None:
        """Apply a constant external force [N] (odom frame) to the body at point [m] (odom; None
        = at the CG), e.g. a collision spring-damper of paper 004, until the next call. The
        moment about the CG is taken at the current pose: call again every step for a moving
        contact. ``set_external_wrench()`` clears it."""
        force = np.asarray(force_n, dtype=float)
        lever = np.zeros(3) if point_m is None else np.asarray(point_m, dtype=float) - self._x[:3]
        if force.shape != (3,) or lever.shape != (3,):
            raise ValueError("force_n and point_m must be 3-vectors")
        if not (np.all(np.isfinite(force)) and np.all(np.isfinite(lever))):
            raise ValueError(f"external wrench must be finite, got {force}, {point_m}")
        self._p[F_EXT:F_EXT + 3] = force
        self._p[F_EXT + 3:F_EXT + 6] = np.cross(lever, force)

    def reset(self, x_m: float = 0.0, y_m: float = 0.0, yaw_rad: float = 0.0,
              speed_mps: float = 0.0) -> None:
        """Static equilibrium at (x, y) [m] heading yaw [rad] moving forward at speed [m/s]."""
        self._x = equilibrium_state(self._p, x_m, y_m, yaw_rad, speed_mps)
        self._u = controls_array(Controls())

    def step(self, controls: Controls, dt_s: float) -> None:
        """Advance by dt_s [s] with the controls held."""
        if not dt_s > 0.0 or not math.isfinite(dt_s):
            raise ValueError(f"dt_s must be a positive finite time step, got {dt_s}")
        self._u = controls_array(controls)
        self._x = full_advance(self._stepper, full14_f, self._x, self._u, self._p, dt_s)

    def outputs(self) -> tuple[np.ndarray, np.ndarray]:
        """(dx/dt, O_* output array) at the current state and last controls."""
        out = np.empty(N_OUT)
        dx = full14_eval(self._x, self._u, self._p, out)
        return dx, out

    def steering_wheel_torque_nm(self) -> float:
        """Front tyres' aligning moment at the steering wheel [N m]: Mz / steering_ratio (no
        steering-system friction or efficiency; + = counter-clockwise, REP-103)."""
        _, out = self.outputs()
        return float(out[O_MZ] + out[O_MZ + 1]) / self.params.body.steering_ratio

    def wheel_loads_n(self) -> np.ndarray:
        """Tyre normal loads [N], FL FR RL RR."""
        return self.outputs()[1][O_FZ:O_FZ + 4].copy()

    def snapshot(self) -> VehicleSnapshot:
        """The current state; accelerations from the derivative at the last controls."""
        x = self._x
        dx, out = self.outputs()
        rot = rotation(x[X_ROLL], x[X_PITCH], x[X_YAW])
        vx = out[O_VX:O_VX + 4]
        omega = x[X_OMEGA:X_OMEGA + 4].copy()
        limit = self.params.steering.max_road_wheel_angle_rad
        slip = (omega * out[O_RE:O_RE + 4] - vx) / np.maximum(np.abs(vx), SLIP_SPEED_FLOOR_MPS)
        return VehicleSnapshot(
            position_m=x[X_X:X_Z + 1].copy(),
            rpy_rad=x[X_ROLL:X_YAW + 1].copy(),
            velocity_mps=rot.T @ x[X_VX:X_VX + 3],
            angular_velocity_radps=x[X_P:X_P + 3].copy(),
            acceleration_mps2=rot.T @ out[O_AX:O_AX + 3],
            angular_acceleration_radps2=dx[X_P:X_P + 3].copy(),
            wheel_speed_radps=omega, wheel_slip_ratio=slip,
            wheel_slip_angle_rad=np.arctan(out[O_TAN:O_TAN + 4]),
            steer_rad=float(np.clip(self._u[0], -limit, limit)),
            gear=int(x[X_GEAR]), engine_rpm=float(x[X_ENGINE] * 60.0 / (2.0 * math.pi)),
            aligning_moment_nm=float(out[O_MZ] + out[O_MZ + 1]))
