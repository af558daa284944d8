"""Parameter sets of the IMU and GNSS models (frozen, validated by ``vehicle_sim.core.config``).

Load a preset with ``config.load(ImuParams, "config/sensors/imu_adis16448.yaml")``. Every noise
term is given in its continuous-time form (densities, correlation times); the models discretise
them with the formulas in ``noise.py``. Lever arms are measured from the vehicle CG (the origin of
``base_link``) in ``base_link`` axes (REP-103: x forward, y left, z up).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, make_dataclass

from vehicle_sim.core.config import spec
from vehicle_sim.core.sensors.faults import (
    MAX_ACCEL_BIAS_STEP_MPS2,
    MAX_GYRO_BIAS_STEP_RADPS,
    MAX_NOISE_SCALE,
)
from vehicle_sim.core.units import GRAVITY_MAX_MPS2, GRAVITY_MIN_MPS2, GRAVITY_MPS2

_VEC3 = tuple[float, float, float]

# Plausibility bounds (a choice each: far past any vehicle sensor, yet finite):
MAX_IMU_RATE_HZ = 2000.0  # 2.4x the ADIS16448's fastest 819.2 Hz
MAX_GNSS_RATE_HZ = 100.0  # receivers output tens of Hz at most (ZED-F9P RTK: 20 Hz)
# a Gauss-Markov tau: 30x a tactical-grade gyro's ~1 h, 100x the presets' 300-1000 s; a longer
# one is a constant bias (turn_on_bias_sigma)
MAX_CORRELATION_TIME_S = 1.0e5
# white noise and bias walk densities (the same number in each unit): >= 100x a consumer
# MEMS part's (MPU-6050: 8.7e-5 rad/s/sqrt(Hz), 3.9e-3 m/s^2/sqrt(Hz))
MAX_GYRO_DENSITY = 0.1
MAX_ACCEL_DENSITY = 1.0
# saturation range and LSB: 140x the widest MEMS gyro (+-4000 deg/s), 5x a crash-test
# accelerometer (+-2000 g); the 1e3 default means no saturation
MAX_GYRO_RANGE_RADPS = 1.0e4
MAX_ACCEL_RANGE_MPS2 = 1.0e5
# GNSS position sigmas: 10x the ~100 m of urban non-line-of-sight errors and pre-2000 (SA) fixes
MAX_GNSS_SIGMA_M = 1000.0
MAX_GNSS_VELOCITY_SIGMA_MPS = 10.0  # 200x a u-blox receiver's 0.05 m/s
MAX_LEVER_ARM_M = 20.0  # a point on the vehicle: a 25 m road train's end is 12.5 m from its CG


def _check_gm(sigma: float, tau_s: float, what: str) -> None:
    if sigma > 0.0 and tau_s <= 0.0:
        raise ValueError(f"{what}: a Gauss-Markov sigma > 0 needs a correlation time > 0 s")


def _inertial_noise(name: str, what: str, unit: str, rate_unit: str, white: str,
                    symbol: str, range_field: str, resolution_field: str, *,
                    max_density: float, max_bias: float, max_range: float) -> type:
    """The per-axis error model of one inertial sensor (all axes alike), in ``unit`` (the
    measured quantity) and ``rate_unit`` (its time derivative): one definition for the gyro
    and the accelerometer, which differ only in units, field names and bounds (a bias sigma:
    at most the largest injectable bias step, core.sensors.faults)."""
    fields = [
        ("noise_density", float, spec(0.0, unit=f"{unit}/sqrt(Hz)", ge=0.0, le=max_density,
                                      doc=white)),
        ("bias_random_walk", float, spec(0.0, unit=f"{rate_unit}/sqrt(Hz)", ge=0.0,
                                         le=max_density, doc="pure bias walk")),
        ("bias_gm_sigma", float, spec(0.0, unit=unit, ge=0.0, le=max_bias,
                                      doc="stationary sigma of GM drift")),
        ("bias_gm_tau_s", float, spec(0.0, unit="s", ge=0.0, le=MAX_CORRELATION_TIME_S,
                                      doc="GM drift correlation time")),
        ("turn_on_bias_sigma", float, spec(0.0, unit=unit, ge=0.0, le=max_bias,
                                           doc="constant bias drawn at start")),
        ("scale_factor_sigma", float, spec(0.0, unit="-", ge=0.0, lt=1.0,
                                           doc="relative, drawn at start")),
        ("misalignment_sigma_rad", float, spec(0.0, unit="rad", ge=0.0, lt=0.5,
                                               doc="cross-axis terms, drawn at start")),
        (range_field, float, spec(1.0e3, unit=unit, gt=0.0, le=max_range,
                                  doc=f"saturation |{symbol}| per axis")),
        (resolution_field, float, spec(0.0, unit=unit, ge=0.0, le=max_range,
                                       doc="LSB size; 0 = no quantisation")),
    ]

    def check(self) -> None:
        _check_gm(self.bias_gm_sigma, self.bias_gm_tau_s, what)

    doc = f"{what.capitalize()} error model per axis (all axes alike), units {unit} based."
    return make_dataclass(name, fields, frozen=True,
                          namespace={"__post_init__": check, "__doc__": doc,
                                     "__module__": __name__})


GyroNoise = _inertial_noise("GyroNoise", "gyro", "rad/s", "rad/s^2", "white rate noise (ARW)",
                            "w", "range_radps", "resolution_radps", max_density=MAX_GYRO_DENSITY,
                            max_bias=MAX_GYRO_BIAS_STEP_RADPS, max_range=MAX_GYRO_RANGE_RADPS)
AccelNoise = _inertial_noise("AccelNoise", "accel", "m/s^2", "m/s^3", "white noise (VRW)",
                             "f", "range_mps2", "resolution_mps2", max_density=MAX_ACCEL_DENSITY,
                             max_bias=MAX_ACCEL_BIAS_STEP_MPS2, max_range=MAX_ACCEL_RANGE_MPS2)


@dataclass(frozen=True)
class ImuParams:
    """IMU: sample rate, mounting (imu_link relative to base_link) and the two error models."""

    rate_hz: float = spec(200.0, unit="Hz", gt=0.0, le=MAX_IMU_RATE_HZ)
    lever_arm_m: _VEC3 = spec((0.0, 0.0, 0.0), unit="m", ge=-MAX_LEVER_ARM_M, le=MAX_LEVER_ARM_M)
    """imu_link origin from CG, base_link"""
    mounting_rpy_rad: _VEC3 = spec((0.0, 0.0, 0.0), unit="rad", ge=-2 * math.pi, le=2 * math.pi)
    """imu_link axes in base_link"""
    gravity_mps2: float = spec(GRAVITY_MPS2, unit="m/s^2", ge=GRAVITY_MIN_MPS2,
                               le=GRAVITY_MAX_MPS2)
    gyro: GyroNoise = GyroNoise()
    accel: AccelNoise = AccelNoise()
    orientation_enabled: bool = spec(False)
    """also output imu_link orientation in the world"""
    orientation_sigma_rad: float = spec(0.0, unit="rad", ge=0.0, le=math.pi)
    """white noise per axis"""


@dataclass(frozen=True)
class AxisError:
    """GNSS position error on one axis: white noise + first-order Gauss-Markov correlated error."""

    white_sigma_m: float = spec(0.0, unit="m", ge=0.0, le=MAX_GNSS_SIGMA_M)
    gm_sigma_m: float = spec(0.0, unit="m", ge=0.0, le=MAX_GNSS_SIGMA_M)
    """stationary sigma of the correlated part"""
    gm_tau_s: float = spec(0.0, unit="s", ge=0.0, le=MAX_CORRELATION_TIME_S)

    def __post_init__(self) -> None:
        _check_gm(self.gm_sigma_m, self.gm_tau_s, "position error")


@dataclass(frozen=True)
class UrbanParams:
    """Degradation while the antenna is within ``distance_m`` of a building footprint."""

    distance_m: float = spec(0.0, unit="m", ge=0.0, le=1000.0)
    """0 = only inside footprints (a choice: 1 km is no longer near)"""
    sigma_scale: float = spec(1.0, unit="-", ge=1.0, le=MAX_NOISE_SCALE)
    """multiplies white and GM sigmas"""
    jump_rate_hz: float = spec(0.0, unit="1/s", ge=0.0, le=100 * MAX_GNSS_RATE_HZ)
    """rate of new multipath offsets (>> rate_hz: one per fix)"""
    jump_sigma_m: float = spec(0.0, unit="m", ge=0.0, le=MAX_GNSS_SIGMA_M)
    """horizontal sigma of an offset"""


@dataclass(frozen=True)
class GeoOrigin:
    """WGS-84 origin of the local ENU frame (``map``/``odom``); set per scenario."""

    latitude_deg: float = spec(0.0, unit="deg", ge=-90.0, le=90.0)
    """geodetic latitude of the ENU origin, north positive"""
    longitude_deg: float = spec(0.0, unit="deg", ge=-180.0, le=180.0)
    """longitude of the ENU origin, east positive"""
    altitude_m: float = spec(0.0, unit="m", ge=-1.0e4, le=1.0e4)
    """above the WGS-84 ellipsoid (roads: -430 m to ~5,800 m)"""


@dataclass(frozen=True)
class GnssParams:
    """GNSS receiver: rate, latency, antenna lever arm, error model, outage behaviour."""

    rate_hz: float = spec(10.0, unit="Hz", gt=0.0, le=MAX_GNSS_RATE_HZ)
    latency_s: float = spec(0.0, unit="s", ge=0.0, le=5.0)
    """measurement to availability"""
    origin: GeoOrigin = GeoOrigin()
    antenna_lever_arm_m: _VEC3 = spec((0.0, 0.0, 0.0), unit="m", ge=-MAX_LEVER_ARM_M,
                                      le=MAX_LEVER_ARM_M)
    """from CG, base_link axes"""
    horizontal: AxisError = AxisError()
    vertical: AxisError = AxisError()
    urban: UrbanParams = UrbanParams()
    outage_mode: str = spec("no_fix", choices=("no_fix", "no_output"))
    velocity_enabled: bool = spec(False)
    """also output ENU antenna velocity"""
    velocity_sigma_mps: float = spec(0.0, unit="m/s", ge=0.0, le=MAX_GNSS_VELOCITY_SIGMA_MPS)
    """white noise, horizontal axes"""
    velocity_vertical_sigma_mps: float = spec(0.0, unit="m/s", ge=0.0,
                                              le=MAX_GNSS_VELOCITY_SIGMA_MPS)
