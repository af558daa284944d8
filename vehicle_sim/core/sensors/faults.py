"""Fault inputs of the sensor models: the small API the accident/fault node calls.

Each model owns one fault object (``ImuModel.faults``, ``GnssModel.faults``); setting a field
takes effect from the next sample and lasts until changed or ``clear()``:
- bias step: a constant added to the output (IMU accel/gyro; GNSS: ``position_jump``);
- freeze: the last released sample is repeated (new stamp, same values);
- dropout: no output at all;
- noise scale: multiplies the random error (IMU white noise; GNSS white + correlated error) and
  the reported covariance by its square;
- no_fix (GNSS): status NO_FIX, position NaN.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


def _vec3(value, name: str) -> np.ndarray:
    v = np.asarray(value, dtype=float)
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be 3 finite numbers, got {value!r}")
    return v


def _scale(value: float) -> float:
    if not (math.isfinite(value) and value >= 0.0):
        raise ValueError(f"noise scale must be finite and >= 0, got {value!r}")
    return float(value)


@dataclass
class ImuFaults:
    """Active IMU faults (mutable; the fault node sets them between samples)."""

    accel_bias_step_mps2: np.ndarray = field(default_factory=lambda: np.zeros(3))
    gyro_bias_step_radps: np.ndarray = field(default_factory=lambda: np.zeros(3))
    freeze: bool = False
    dropout: bool = False
    noise_scale: float = 1.0

    def set_bias_step(self, accel_mps2=(0.0, 0.0, 0.0), gyro_radps=(0.0, 0.0, 0.0)) -> None:
        """Add constant offsets [m/s^2], [rad/s] (imu_link axes) to every following sample."""
        self.accel_bias_step_mps2 = _vec3(accel_mps2, "accel_mps2")
        self.gyro_bias_step_radps = _vec3(gyro_radps, "gyro_radps")

    def set_noise_scale(self, factor: float) -> None:
        """Multiply the white noise sigma by ``factor`` (>= 0)."""
        self.noise_scale = _scale(factor)

    def clear(self) -> None:
        """Remove every fault."""
        self.__init__()


@dataclass
class GnssFaults:
    """Active GNSS faults (mutable; the fault node sets them between samples)."""

    position_jump_enu_m: np.ndarray = field(default_factory=lambda: np.zeros(3))
    freeze: bool = False
    dropout: bool = False
    no_fix: bool = False
    noise_scale: float = 1.0

    def set_position_jump(self, offset_enu_m) -> None:
        """Add a constant ENU offset [m] to every following reported position."""
        self.position_jump_enu_m = _vec3(offset_enu_m, "offset_enu_m")

    def set_noise_scale(self, factor: float) -> None:
        """Multiply the random position error (white + correlated) by ``factor`` (>= 0)."""
        self.noise_scale = _scale(factor)

    def clear(self) -> None:
        """Remove every fault."""
        self.__init__()
