"""IMU emulation: specific force and angular rate in ``imu_link`` from the true vehicle state.

Kinematics (rigid body, all vectors in base_link axes, r = lever arm from the CG to imu_link):
  a_imu = a_cg + alpha x r + omega x (omega x r)        (conventions.md, "IMU away from the CG")
  f_body = a_imu - g_world expressed in base_link, g_world = (0, 0, -g) ENU  -> +g on z at rest
  f_imu = R_bi^T f_body, omega_imu = R_bi^T omega      (R_bi: fixed imu_link mounting rotation)
The accelerations are inputs (never differentiated positions). Errors per triad:
  y = sat(quant(M x + b + n + fault_step)), M = I + diag(scale) + misalignment (drawn at start),
  b = turn-on + random walk + Gauss-Markov (noise.TriadBias), n white with sigma_d = N/sqrt(dt).
Covariances reported: diagonal, white-noise variance (N^2/dt) plus quantisation (LSB^2/12).
Per sample the arithmetic runs on Python floats (triad.py says why and how it stays bit for bit
the array form's), with one block of normal draws in the order of the terms above.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from vehicle_sim.core import config
from vehicle_sim.core.frames import specific_force
from vehicle_sim.core.sensors.faults import ImuFaults
from vehicle_sim.core.sensors.frames import (
    FixedMatrix,
    KinematicState,
    matrix_to_quaternion_xyzw,
    read_state_floats,
    rotation_vector_to_matrix,
    rpy_to_matrix,
)
from vehicle_sim.core.sensors.params import ImuParams
from vehicle_sim.core.sensors.schedule import Schedule
from vehicle_sim.core.sensors.triad import Triad, TriadPlan

_NO_DRAWS: list[float] = []
_PLAN_CACHE_SIZE = 64  # distinct (dt, noise scale) pairs kept; a run at a fixed rate has a few
_NO_ORIENTATION_COV = np.diag([-1.0, 0.0, 0.0])  # sensor_msgs/Imu: orientation not provided


@dataclass(frozen=True)
class ImuSample:
    """One IMU output, ready for sensor_msgs/Imu (frame imu_link, stamp = sim time)."""

    stamp_s: float
    linear_acceleration_mps2: np.ndarray  # specific force (3,), +g on z at rest
    angular_velocity_radps: np.ndarray  # (3,)
    linear_acceleration_cov: np.ndarray  # (3, 3) [m^2/s^4]
    angular_velocity_cov: np.ndarray  # (3, 3) [rad^2/s^2]
    orientation_xyzw: np.ndarray | None  # imu_link in ENU, None when disabled
    orientation_cov: np.ndarray  # (3, 3) [rad^2]; [0, 0] = -1 when no orientation


class ImuModel:
    """Seeded IMU emulator; call :meth:`update` at every physics step with the true state."""

    def __init__(self, params: ImuParams, seed: int | np.random.Generator):
        self.params = params
        self.rng = np.random.default_rng(seed)
        self.faults = ImuFaults()
        self._r_bi = rpy_to_matrix(*params.mounting_rpy_rad)
        self._to_imu = FixedMatrix(self._r_bi.T)  # base_link -> imu_link axes
        self._lever = np.asarray(params.lever_arm_m, dtype=float)
        self._lever_xyz = self._lever.tolist()
        self._gyro = Triad(params.gyro, params.gyro.range_radps, params.gyro.resolution_radps,
                           self.rng)
        self._accel = Triad(params.accel, params.accel.range_mps2, params.accel.resolution_mps2,
                            self.rng)
        self._orientation_draws = 3 * (params.orientation_enabled
                                       and params.orientation_sigma_rad > 0.0)
        self._plan_cache: dict[tuple[float, float], tuple[TriadPlan, TriadPlan, int]] = {}
        self._schedule = Schedule(params.rate_hz)
        self._last: ImuSample | None = None

    @classmethod
    def from_file(cls, path: str | Path, seed: int | np.random.Generator) -> ImuModel:
        """Build from a preset YAML (``config/sensors/imu_*.yaml``); ConfigError names the key."""
        return cls(config.load(ImuParams, path), seed)

    def ideal(self, state: KinematicState) -> tuple[np.ndarray, np.ndarray]:
        """Error-free (specific force [m/s^2], angular rate [rad/s]) in imu_link axes."""
        return self._ideal(read_state_floats(state))

    def _ideal(self, x: list[float]) -> tuple[np.ndarray, np.ndarray]:
        """ideal() of the 18 state values (frames.read_state_floats), in floats: the specific
        force at the lever arm (core.frames.specific_force) and the body rate, in imu_link."""
        w = x[9:12]
        f_body = np.array(specific_force(x[12:15], x[15:18], w, self._lever_xyz, x[3], x[4],
                                         self.params.gravity_mps2))
        return self._to_imu.times(f_body), self._to_imu.times(np.array(w))

    def update(self, t_s: float, state: KinematicState) -> ImuSample | None:
        """The sample due at sim time t_s [s], or None (not due, or dropout fault)."""
        dt_s = self._schedule.due(t_s)
        if dt_s is None:
            return None
        f, w = self._ideal(read_state_floats(state))
        fl = self.faults
        plans = self._plan_cache.get((dt_s, fl.noise_scale))
        acc_plan, gyr_plan, n = plans or self._plans(dt_s, fl.noise_scale)
        z = self.rng.standard_normal(n).tolist() if n else _NO_DRAWS  # all of this sample's
        acc, acc_cov = self._accel.measure(f, acc_plan, z, 0, fl.accel_bias_step_mps2)
        gyr, gyr_cov = self._gyro.measure(w, gyr_plan, z, acc_plan.draws,
                                          fl.gyro_bias_step_radps)
        quat, q_cov = (self._orientation(state, z[n - self._orientation_draws:])
                       if self.params.orientation_enabled else (None, _NO_ORIENTATION_COV.copy()))
        if fl.dropout:
            return None
        if fl.freeze and self._last is not None:
            self._last = replace(self._last, stamp_s=float(t_s))
            return self._last
        self._last = ImuSample(float(t_s), acc, gyr, acc_cov, gyr_cov, quat, q_cov)
        return self._last

    def _plans(self, dt_s: float, scale: float) -> tuple[TriadPlan, TriadPlan, int]:
        """(accel plan, gyro plan, normals of the sample) after dt_s [s] with the fault noise
        scale: a function of (dt_s, scale) only, kept (``_plan_cache``) for the few dt values a
        run has."""
        if len(self._plan_cache) >= _PLAN_CACHE_SIZE:
            self._plan_cache.clear()
        acc, gyr = self._accel.plan(dt_s, scale), self._gyro.plan(dt_s, scale)
        plans = self._plan_cache[dt_s, scale] = (acc, gyr,
                                                 acc.draws + gyr.draws + self._orientation_draws)
        return plans

    def _orientation(self, state: KinematicState,
                     z: list[float]) -> tuple[np.ndarray, np.ndarray]:
        """(imu_link orientation in ENU (x, y, z, w), covariance) when the preset outputs it;
        z: this sample's 3 normals of orientation noise (none when its sigma is 0)."""
        p = self.params
        r_wi = rpy_to_matrix(*np.asarray(state.rpy_rad, dtype=float)) @ self._r_bi
        sigma = p.orientation_sigma_rad
        if sigma > 0.0:
            r_wi = r_wi @ rotation_vector_to_matrix(sigma * np.array(z))
        return matrix_to_quaternion_xyzw(r_wi), np.eye(3) * sigma * sigma
