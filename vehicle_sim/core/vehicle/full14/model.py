"""The 14-DOF model (``full14``) as a VehicleModel: stepping, equilibrium start, snapshots.

Dynamics: dynamics.py (frames, reference point; states X_* in state_layout.py). Between
integration steps ``discrete.full14_after_step`` updates the discrete states (tyre deflection
limit, gear, clutch lock).

Snapshot accelerations: the mean over the last step, (v_k+1 - v_k) / dt of the integrated
velocities (``_mean_accelerations``), not dx/dt at the state after it; see there why.

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

from vehicle_sim.core.vehicle.full14.corners import rotation
from vehicle_sim.core.vehicle.full14.discrete import carrier_speed, full14_after_step
from vehicle_sim.core.vehicle.full14.drivetrain import choose_gear, total_ratio
from vehicle_sim.core.vehicle.full14.dynamics import full14_eval, full14_f
from vehicle_sim.core.vehicle.full14.packing import (
    F_A, F_B, F_CL_ENGAGE, F_EXT, F_FZ_STATIC, F_GRIP, F_HCG, F_IDLE, F_KT, F_NGEARS, F_R0,
    F_RRSCALE, F_RSCALE, F_SHIFT_DT, F_TERRAIN, F_TRACK, pack_full)
from vehicle_sim.core.vehicle.full14.state_layout import (
    N_OUT, N_STATE, O_AX, O_FZ, O_MZ, O_RE, O_TAN, O_VX, X_ENGINE, X_GEAR, X_LOCK, X_OMEGA, X_P,
    X_PITCH, X_ROLL, X_SHIFT_T, X_VX, X_X, X_YAW, X_Z, X_ZW)
from vehicle_sim.core.vehicle.full14.terrain import TerrainParams, ground, pack_terrain
from vehicle_sim.core.vehicle.integrators import model_step
from vehicle_sim.core.vehicle.interface import WHEELS, Controls, VehicleSnapshot
from vehicle_sim.core.vehicle.params import VehicleParams
from vehicle_sim.core.vehicle.planar import SteppedModel, stepper

# Slip ratio (w R - v) / max(|v|, floor) in snapshots: the floor [m/s] avoids dividing by ~0.
SLIP_SPEED_FLOOR_MPS = 0.5


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
        gear = choose_gear(gear, carrier_speed(x, p), 0.0, 0.0, p)
    x[X_GEAR], x[X_SHIFT_T] = gear, p[F_SHIFT_DT]
    engine = total_ratio(gear, p) * carrier_speed(x, p)
    x[X_ENGINE] = p[F_IDLE]
    if engine > p[F_CL_ENGAGE]:
        x[X_ENGINE], x[X_LOCK] = engine, 1.0
    return x


class Full14Model(SteppedModel):
    """14-DOF vehicle (papers 004/001) as a :class:`~interface.VehicleModel`; reference: CG.

    ``state`` indices: state_layout.X_*."""

    name = "full14"
    # (state before, state after, dt [s]) of the last step, for the snapshot's accelerations
    _last_step: tuple[np.ndarray, np.ndarray, float] | None = None

    def __init__(self, params: VehicleParams, integrator: str = "rk4",
                 terrain: TerrainParams | None = None):
        self.params = params
        self._p = pack_full(params, terrain)
        self._advance = model_step(stepper(integrator), full14_f, full14_after_step)
        self._hold(Controls())
        self._x = equilibrium_state(self._p)

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
        self._hold(Controls())
        self._last_step = None

    def step(self, controls: Controls, dt_s: float) -> None:
        """Advance by dt_s [s] with the controls held (SteppedModel.step); remembers the state
        before the step for the snapshot's mean accelerations (a reference: never edited)."""
        before = self._x
        super().step(controls, dt_s)  # raises before the bookkeeping if the step failed
        self._last_step = (before, self._x, dt_s)

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

    def _mean_accelerations(self, dx: np.ndarray, out: np.ndarray,
                            rot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(CG acceleration [m/s^2], angular acceleration [rad/s^2]) in base_link over the last
        step: (v_k+1 - v_k) / dt of the world-frame velocity (so inertial, the w x v terms
        included) expressed in the current base_link, and of the body rates.

        Why the step mean and not dx/dt at the current state: the integrated motion chatters
        at half the step rate where a mode is too stiff for the step, e.g. the dry clutch in
        the step before it locks (engine/wheel-spin mode lambda dt ~ -7.6 inside its 1 rad/s
        band at 1 ms: the stages cross the band), and near rest under braking. dx/dt at one
        state then misses the step's motion by 0.1-1 m/s^2 under throttle in a turn, up to
        4 m/s^2 braking to rest. The mean is exactly the slope the integrator applied (RK4: the
        weighted stage mean; after_step never edits the body velocities, only wheel and engine
        spin), so integrating the reported accelerations gives back the trajectory, as a
        delta-velocity IMU sampled at the step would. It is centred half a step back (error ~
        jerk dt / 2). Before any step, or if the state was replaced since, the derivative at the
        current state is used.
        """
        last = self._last_step
        if last is None or last[1] is not self._x:
            return rot.T @ out[O_AX:O_AX + 3], dx[X_P:X_P + 3].copy()
        before, after, dt_s = last
        linear_world = (after[X_VX:X_VX + 3] - before[X_VX:X_VX + 3]) / dt_s
        return rot.T @ linear_world, (after[X_P:X_P + 3] - before[X_P:X_P + 3]) / dt_s

    def snapshot(self) -> VehicleSnapshot:
        """The current state; accelerations: the mean over the last step
        (``_mean_accelerations``); forces and slips at the current state and controls."""
        x = self._x
        dx, out = self.outputs()
        rot = rotation(x[X_ROLL], x[X_PITCH], x[X_YAW])
        accel, angular_accel = self._mean_accelerations(dx, out, rot)
        vx = out[O_VX:O_VX + 4]
        omega = x[X_OMEGA:X_OMEGA + 4].copy()
        limit = self.params.steering.max_road_wheel_angle_rad
        slip = (omega * out[O_RE:O_RE + 4] - vx) / np.maximum(np.abs(vx), SLIP_SPEED_FLOOR_MPS)
        return VehicleSnapshot(
            position_m=x[X_X:X_Z + 1].copy(),
            rpy_rad=x[X_ROLL:X_YAW + 1].copy(),
            velocity_mps=rot.T @ x[X_VX:X_VX + 3],
            angular_velocity_radps=x[X_P:X_P + 3].copy(),
            acceleration_mps2=accel, angular_acceleration_radps2=angular_accel,
            wheel_speed_radps=omega, wheel_slip_ratio=slip,
            wheel_slip_angle_rad=np.arctan(out[O_TAN:O_TAN + 4]),
            steer_rad=float(np.clip(self._u[0], -limit, limit)),
            gear=int(x[X_GEAR]), engine_rpm=float(x[X_ENGINE] * 60.0 / (2.0 * math.pi)),
            aligning_moment_nm=float(out[O_MZ] + out[O_MZ + 1]))
