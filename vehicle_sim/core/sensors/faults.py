"""Fault inputs of the sensor models: the small API the accident/fault node calls.

Each model owns one fault object (``ImuModel.faults``, ``GnssModel.faults``); setting a field
takes effect from the next sample and lasts until changed or ``clear()``:
- bias step: a constant added to the output (IMU accel/gyro; GNSS: ``position_jump``);
- freeze: the last released sample is repeated (new stamp, same values);
- dropout: no output at all;
- noise scale: multiplies the random error (IMU white noise; GNSS white + correlated error) and
  that error's part of the reported covariance by its square;
- no_fix (GNSS): status NO_FIX, position NaN.

Injected faults (core.faults.FaultBook, targets ``imu`` and ``gps``): ``check_imu`` /
``check_gps`` say why a request cannot apply, ``ImuFaults.apply`` / ``GnssFaults.apply`` set the
fields from the active faults combined: offsets add, noise scales multiply, any freeze / dropout
/ no-fix holds. The checks bound what the active faults ADD UP TO (each command alone is a sum of
one), so no accepted combination can overflow the model's inputs (two position jumps of 1e308 m
summed to inf); a command that would pass a bound is rejected, the active faults stay.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from vehicle_sim.core.faults import ActiveFault, FaultRequest, not_applicable

IMU_CHANNELS = ("accel_x", "accel_y", "accel_z", "gyro_x", "gyro_y", "gyro_z")
IMU_KINDS = ("bias_step", "freeze", "dropout", "noise_scale")
GNSS_KINDS = ("freeze", "dropout", "noise_scale", "position_jump", "no_fix")

# Bounds of the combined active faults of one sensor: past any physical fault, yet far from
# overflow. Accel/gyro: per axis, well beyond the measuring range of vehicle IMUs (ADIS16448:
# 18 g, 1000 deg/s), so a bias step can saturate any real sensor.
MAX_ACCEL_BIAS_STEP_MPS2 = 1_000.0  # |sum| per axis [m/s^2], about 100 g
MAX_GYRO_BIAS_STEP_RADPS = 100.0  # |sum| per axis [rad/s], about 5700 deg/s
MAX_NOISE_SCALE = 1_000.0  # product of the active noise scales (covariance x 1e6)
# |sum| per ENU axis [m]: GNSS spoofing moves a receiver by up to tens of km; 100 km also keeps
# the ENU offset small against the Earth radius
MAX_POSITION_JUMP_M = 100_000.0


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
class SensorFaults:
    """What every sensor's faults have: freeze, dropout, noise scale (mutable; the fault node
    sets them between samples)."""

    freeze: bool = False
    dropout: bool = False
    noise_scale: float = 1.0

    def set_noise_scale(self, factor: float) -> None:
        """Multiply the random error (IMU: white noise; GNSS: white + correlated position
        error) by ``factor`` (>= 0)."""
        self.noise_scale = _scale(factor)

    def clear(self) -> None:
        """Remove every fault."""
        self.__init__()

    def apply(self, active: list[ActiveFault]) -> None:
        """Set every field from the active faults: the sensor's offsets summed
        (``_apply_offsets``), the product of the noise scales, any freeze/dropout."""
        self._apply_offsets(active)
        # each fault was bounded alone and with the others when it began; clearing one (a scale
        # of 0, a cancelling offset) may leave a combination past the bound: clip it there
        self.set_noise_scale(min(math.prod(f.request.value for f in active
                                           if f.kind == "noise_scale"), MAX_NOISE_SCALE))
        self.freeze, self.dropout = _any(active, "freeze"), _any(active, "dropout")

    def _apply_offsets(self, active: list[ActiveFault]) -> None:
        raise NotImplementedError


@dataclass
class ImuFaults(SensorFaults):
    """Active IMU faults."""

    accel_bias_step_mps2: np.ndarray = field(default_factory=lambda: np.zeros(3))
    gyro_bias_step_radps: np.ndarray = field(default_factory=lambda: np.zeros(3))

    def set_bias_step(self, accel_mps2=(0.0, 0.0, 0.0), gyro_radps=(0.0, 0.0, 0.0)) -> None:
        """Add constant offsets [m/s^2], [rad/s] (imu_link axes) to every following sample."""
        self.accel_bias_step_mps2 = _vec3(accel_mps2, "accel_mps2")
        self.gyro_bias_step_radps = _vec3(gyro_radps, "gyro_radps")

    def _apply_offsets(self, active: list[ActiveFault]) -> None:
        """Sum of the bias steps per channel."""
        steps = np.zeros(6)
        for f in active:
            if f.kind == "bias_step":
                steps[IMU_CHANNELS.index(f.request.channel)] += f.request.value
        self.set_bias_step(np.clip(steps[:3], -MAX_ACCEL_BIAS_STEP_MPS2, MAX_ACCEL_BIAS_STEP_MPS2),
                           np.clip(steps[3:], -MAX_GYRO_BIAS_STEP_RADPS, MAX_GYRO_BIAS_STEP_RADPS))


@dataclass
class GnssFaults(SensorFaults):
    """Active GNSS faults."""

    position_jump_enu_m: np.ndarray = field(default_factory=lambda: np.zeros(3))
    no_fix: bool = False

    def set_position_jump(self, offset_enu_m) -> None:
        """Add a constant ENU offset [m] to every following reported position."""
        self.position_jump_enu_m = _vec3(offset_enu_m, "offset_enu_m")

    def _apply_offsets(self, active: list[ActiveFault]) -> None:
        """Sum of the position jumps; any no-fix."""
        jump = np.zeros(3)
        for f in active:
            if f.kind == "position_jump":
                jump += f.request.vector
        self.set_position_jump(np.clip(jump, -MAX_POSITION_JUMP_M, MAX_POSITION_JUMP_M))
        self.no_fix = _any(active, "no_fix")


def check_imu(req: FaultRequest, others: list[ActiveFault]) -> str | None:
    """Why the imu cannot take ``req`` (BIAS_STEP on a channel, FREEZE, DROPOUT, NOISE_SCALE)."""
    if req.kind not in IMU_KINDS:
        return not_applicable("imu", IMU_KINDS)
    if req.kind == "bias_step":
        if req.channel not in IMU_CHANNELS:
            return f"unknown channel {req.channel!r} (known: {', '.join(IMU_CHANNELS)})"
    elif req.channel:
        return f"takes no channel (acts on all), got {req.channel!r}"
    if req.kind in ("bias_step", "noise_scale"):
        if not math.isfinite(req.value):
            return f"value must be finite, got {req.value}"
        if req.kind == "noise_scale" and req.value < 0.0:
            return f"noise scale must be >= 0, got {req.value}"
    if req.kind == "bias_step":
        return _bias_sum_problem(req, others)
    return _scale_product_problem(req, others)


def check_gps(req: FaultRequest, others: list[ActiveFault]) -> str | None:
    """Why the gps cannot take ``req`` (FREEZE, DROPOUT, NOISE_SCALE, POSITION_JUMP, NO_FIX)."""
    if req.kind not in GNSS_KINDS:
        return not_applicable("gps", GNSS_KINDS)
    if req.channel:
        return f"takes no channel, got {req.channel!r}"
    if req.kind == "noise_scale" and not (math.isfinite(req.value) and req.value >= 0.0):
        return f"noise scale must be finite and >= 0, got {req.value}"
    if req.kind == "position_jump":
        if not all(map(math.isfinite, req.vector)):
            x, y, z = req.vector
            return f"vector must be finite, got ({x}, {y}, {z})"
        return _jump_sum_problem(req, others)
    return _scale_product_problem(req, others)


def _bias_sum_problem(req: FaultRequest, others: list[ActiveFault]) -> str | None:
    """The step alone and the sum of the channel's steps within the bound (alone too: two huge
    steps that cancel would leave one of them after a CLEAR)."""
    total = req.value + sum(f.request.value for f in others
                            if f.kind == "bias_step" and f.request.channel == req.channel)
    limit, unit = ((MAX_ACCEL_BIAS_STEP_MPS2, "m/s^2") if req.channel.startswith("accel")
                   else (MAX_GYRO_BIAS_STEP_RADPS, "rad/s"))
    if abs(req.value) > limit:
        return f"bias step {req.value:g} {unit} beyond the bound {limit:g} {unit} (absolute)"
    if abs(total) <= limit:
        return None
    return (f"the active bias steps on {req.channel} would add up to {total:g} {unit}, beyond "
            f"the bound {limit:g} {unit} (absolute)")


def _jump_sum_problem(req: FaultRequest, others: list[ActiveFault]) -> str | None:
    if any(abs(c) > MAX_POSITION_JUMP_M for c in req.vector):
        return f"position jump beyond the bound {MAX_POSITION_JUMP_M:g} m per axis (absolute)"
    jumps = [req.vector] + [f.request.vector for f in others if f.kind == "position_jump"]
    e, n, u = (sum(axis) for axis in zip(*jumps))
    if all(abs(c) <= MAX_POSITION_JUMP_M for c in (e, n, u)):
        return None
    return (f"the active position jumps would add up to ({e:g}, {n:g}, {u:g}) m, beyond the "
            f"bound {MAX_POSITION_JUMP_M:g} m per axis (absolute)")


def _scale_product_problem(req: FaultRequest, others: list[ActiveFault]) -> str | None:
    if req.kind != "noise_scale":
        return None
    if req.value > MAX_NOISE_SCALE:  # alone too: with a scale of 0 active the product is 0
        return f"noise scale {req.value:g} beyond the bound {MAX_NOISE_SCALE:g}"
    product = req.value * math.prod(f.request.value for f in others if f.kind == "noise_scale")
    if product <= MAX_NOISE_SCALE:
        return None
    return (f"the active noise scales would multiply to {product:g}, beyond the bound "
            f"{MAX_NOISE_SCALE:g}")


def _any(active: list[ActiveFault], kind: str) -> bool:
    return any(f.kind == kind for f in active)
