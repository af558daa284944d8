"""IMU emulation: specific force and angular rate in ``imu_link`` from the true vehicle state.

Kinematics (rigid body, all vectors in base_link axes, r = lever arm from the CG to imu_link):
  a_imu = a_cg + alpha x r + omega x (omega x r)        (conventions.md, "IMU away from the CG")
  f_body = a_imu - g_world expressed in base_link, g_world = (0, 0, -g) ENU  -> +g on z at rest
  f_imu = R_bi^T f_body, omega_imu = R_bi^T omega      (R_bi: fixed imu_link mounting rotation)
The accelerations are inputs (never differentiated positions). Errors per triad:
  y = sat(quant(M x + b + n + fault_step)), M = I + diag(scale) + misalignment (drawn at start),
  b = turn-on + random walk + Gauss-Markov (noise.TriadBias), n white with sigma_d = N/sqrt(dt).
Covariances reported: diagonal, white-noise variance (N^2/dt) plus quantisation (LSB^2/12).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from vehicle_sim.core import config
from vehicle_sim.core.sensors.faults import ImuFaults
from vehicle_sim.core.sensors.frames import (KinematicState, cross3, matrix_to_quaternion_xyzw,
                                             read_state, rotation_vector_to_matrix,
                                             rpy_to_matrix)
from vehicle_sim.core.sensors.noise import TriadBias, white_sigma
from vehicle_sim.core.sensors.params import AccelNoise, GyroNoise, ImuParams
from vehicle_sim.core.sensors.schedule import Schedule


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


class _Triad:
    """Error model of one 3-axis sensor with its drawn-at-start constants."""

    def __init__(self, p: GyroNoise | AccelNoise, range_: float, lsb: float,
                 rng: np.random.Generator):
        self.p, self.range, self.lsb = p, range_, lsb
        self.bias = TriadBias(p.bias_random_walk, p.bias_gm_sigma, p.bias_gm_tau_s,
                              p.turn_on_bias_sigma, rng)
        off = p.misalignment_sigma_rad * rng.standard_normal((3, 3))
        np.fill_diagonal(off, 0.0)
        self.matrix = np.eye(3) + np.diag(p.scale_factor_sigma * rng.standard_normal(3)) + off

    def measure(self, x: np.ndarray, dt_s: float, scale: float, step: np.ndarray,
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(reading (3,), covariance (3, 3)) of the true value x after dt_s [s]."""
        sigma = scale * white_sigma(self.p.noise_density, dt_s)
        y = self.matrix @ x + self.bias.step(dt_s, rng) + step
        if sigma > 0.0:
            y = y + sigma * rng.standard_normal(3)
        y = np.minimum(np.maximum(y, -self.range), self.range)
        if self.lsb > 0.0:
            y = np.round(y / self.lsb) * self.lsb
        return y, np.eye(3) * (sigma * sigma + self.lsb * self.lsb / 12.0)


class ImuModel:
    """Seeded IMU emulator; call :meth:`update` at every physics step with the true state."""

    def __init__(self, params: ImuParams, seed: int | np.random.Generator):
        self.params = params
        self.rng = np.random.default_rng(seed)
        self.faults = ImuFaults()
        self._r_bi = rpy_to_matrix(*params.mounting_rpy_rad)
        self._lever = np.asarray(params.lever_arm_m, dtype=float)
        self._gyro = _Triad(params.gyro, params.gyro.range_radps, params.gyro.resolution_radps,
                            self.rng)
        self._accel = _Triad(params.accel, params.accel.range_mps2, params.accel.resolution_mps2,
                             self.rng)
        self._schedule = Schedule(params.rate_hz)
        self._last: ImuSample | None = None

    @classmethod
    def from_file(cls, path: str | Path, seed: int | np.random.Generator) -> ImuModel:
        """Build from a preset YAML (``config/sensors/imu_*.yaml``); ConfigError names the key."""
        return cls(config.load(ImuParams, path), seed)

    def ideal(self, state: KinematicState) -> tuple[np.ndarray, np.ndarray]:
        """Error-free (specific force [m/s^2], angular rate [rad/s]) in imu_link axes."""
        _, rpy, _, w, a, alpha = read_state(state)
        r = self._lever
        a_imu = a + cross3(alpha, r) + cross3(w, cross3(w, r))
        r_wb = rpy_to_matrix(*rpy)
        f_body = a_imu + self.params.gravity_mps2 * r_wb[2, :]  # R_wb^T (0, 0, g)
        return self._r_bi.T @ f_body, self._r_bi.T @ w

    def update(self, t_s: float, state: KinematicState) -> ImuSample | None:
        """The sample due at sim time t_s [s], or None (not due, or dropout fault)."""
        dt_s = self._schedule.due(t_s)
        if dt_s is None:
            return None
        f, w = self.ideal(state)
        fl = self.faults
        acc, acc_cov = self._accel.measure(f, dt_s, fl.noise_scale, fl.accel_bias_step_mps2,
                                           self.rng)
        gyr, gyr_cov = self._gyro.measure(w, dt_s, fl.noise_scale, fl.gyro_bias_step_radps,
                                          self.rng)
        quat, q_cov = self._orientation(state)
        if fl.dropout:
            return None
        if fl.freeze and self._last is not None:
            self._last = replace(self._last, stamp_s=float(t_s))
            return self._last
        self._last = ImuSample(float(t_s), acc, gyr, acc_cov, gyr_cov, quat, q_cov)
        return self._last

    def _orientation(self, state: KinematicState) -> tuple[np.ndarray | None, np.ndarray]:
        p = self.params
        if not p.orientation_enabled:
            cov = np.zeros((3, 3))
            cov[0, 0] = -1.0  # sensor_msgs/Imu convention: orientation not provided
            return None, cov
        r_wi = rpy_to_matrix(*np.asarray(state.rpy_rad, dtype=float)) @ self._r_bi
        sigma = p.orientation_sigma_rad
        if sigma > 0.0:
            r_wi = r_wi @ rotation_vector_to_matrix(sigma * self.rng.standard_normal(3))
        return matrix_to_quaternion_xyzw(r_wi), np.eye(3) * sigma * sigma
