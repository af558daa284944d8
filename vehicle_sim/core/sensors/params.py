"""Parameter sets of the IMU and GNSS models (frozen, validated by ``vehicle_sim.core.config``).

Load a preset with ``config.load(ImuParams, "config/sensors/imu_adis16448.yaml")``. Every noise
term is given in its continuous-time form (densities, correlation times); the models discretise
them with the formulas in ``noise.py``. Lever arms are measured from the vehicle CG (the origin of
``base_link``) in ``base_link`` axes (REP-103: x forward, y left, z up).
"""
from __future__ import annotations

from dataclasses import dataclass, make_dataclass

from vehicle_sim.core.config import spec
from vehicle_sim.core.units import GRAVITY_MPS2

_VEC3 = tuple[float, float, float]


def _check_gm(sigma: float, tau_s: float, what: str) -> None:
    if sigma > 0.0 and tau_s <= 0.0:
        raise ValueError(f"{what}: a Gauss-Markov sigma > 0 needs a correlation time > 0 s")


def _inertial_noise(name: str, what: str, unit: str, rate_unit: str, white: str,
                    symbol: str, range_field: str, resolution_field: str) -> type:
    """The per-axis error model of one inertial sensor (all axes alike), in ``unit`` (the
    measured quantity) and ``rate_unit`` (its time derivative): one definition for the gyro
    and the accelerometer, which differ only in units and field names."""
    fields = [
        ("noise_density", float, spec(0.0, unit=f"{unit}/sqrt(Hz)", ge=0.0, doc=white)),
        ("bias_random_walk", float, spec(0.0, unit=f"{rate_unit}/sqrt(Hz)", ge=0.0,
                                         doc="pure bias walk")),
        ("bias_gm_sigma", float, spec(0.0, unit=unit, ge=0.0,
                                      doc="stationary sigma of GM drift")),
        ("bias_gm_tau_s", float, spec(0.0, unit="s", ge=0.0, doc="GM drift correlation time")),
        ("turn_on_bias_sigma", float, spec(0.0, unit=unit, ge=0.0,
                                           doc="constant bias drawn at start")),
        ("scale_factor_sigma", float, spec(0.0, unit="-", ge=0.0, lt=1.0,
                                           doc="relative, drawn at start")),
        ("misalignment_sigma_rad", float, spec(0.0, unit="rad", ge=0.0, lt=0.5,
                                               doc="cross-axis terms, drawn at start")),
        (range_field, float, spec(1.0e3, unit=unit, gt=0.0,
                                  doc=f"saturation |{symbol}| per axis")),
        (resolution_field, float, spec(0.0, unit=unit, ge=0.0,
                                       doc="LSB size; 0 = no quantisation")),
    ]

    def check(self) -> None:
        _check_gm(self.bias_gm_sigma, self.bias_gm_tau_s, what)

    doc = f"{what.capitalize()} error model per axis (all axes alike), units {unit} based."
    return make_dataclass(name, fields, frozen=True,
                          namespace={"__post_init__": check, "__doc__": doc,
                                     "__module__": __name__})


GyroNoise = _inertial_noise("GyroNoise", "gyro", "rad/s", "rad/s^2", "white rate noise (ARW)",
                            "w", "range_radps", "resolution_radps")
AccelNoise = _inertial_noise("AccelNoise", "accel", "m/s^2", "m/s^3", "white noise (VRW)",
                             "f", "range_mps2", "resolution_mps2")


@dataclass(frozen=True)
class ImuParams:
    """IMU: sample rate, mounting (imu_link relative to base_link) and the two error models."""

    rate_hz: float = spec(200.0, unit="Hz", gt=0.0, le=2000.0)
    lever_arm_m: _VEC3 = spec((0.0, 0.0, 0.0), unit="m", doc="imu_link origin from CG, base_link")
    mounting_rpy_rad: _VEC3 = spec((0.0, 0.0, 0.0), unit="rad", doc="imu_link axes in base_link")
    gravity_mps2: float = spec(GRAVITY_MPS2, unit="m/s^2", gt=0.0)
    gyro: GyroNoise = GyroNoise()
    accel: AccelNoise = AccelNoise()
    orientation_enabled: bool = spec(False, doc="also output imu_link orientation in the world")
    orientation_sigma_rad: float = spec(0.0, unit="rad", ge=0.0, doc="white noise per axis")


@dataclass(frozen=True)
class AxisError:
    """GNSS position error on one axis: white noise + first-order Gauss-Markov correlated error."""

    white_sigma_m: float = spec(0.0, unit="m", ge=0.0)
    gm_sigma_m: float = spec(0.0, unit="m", ge=0.0, doc="stationary sigma of the correlated part")
    gm_tau_s: float = spec(0.0, unit="s", ge=0.0)

    def __post_init__(self) -> None:
        _check_gm(self.gm_sigma_m, self.gm_tau_s, "position error")


@dataclass(frozen=True)
class UrbanParams:
    """Degradation while the antenna is within ``distance_m`` of a building footprint."""

    distance_m: float = spec(0.0, unit="m", ge=0.0, doc="0 = only inside footprints")
    sigma_scale: float = spec(1.0, unit="-", ge=1.0, doc="multiplies white and GM sigmas")
    jump_rate_hz: float = spec(0.0, unit="1/s", ge=0.0, doc="rate of new multipath offsets")
    jump_sigma_m: float = spec(0.0, unit="m", ge=0.0, doc="horizontal sigma of an offset")


@dataclass(frozen=True)
class GeoOrigin:
    """WGS-84 origin of the local ENU frame (``map``/``odom``); set per scenario."""

    latitude_deg: float = spec(0.0, unit="deg", ge=-90.0, le=90.0)
    longitude_deg: float = spec(0.0, unit="deg", ge=-180.0, le=180.0)
    altitude_m: float = spec(0.0, unit="m", doc="above the WGS-84 ellipsoid")


@dataclass(frozen=True)
class GnssParams:
    """GNSS receiver: rate, latency, antenna lever arm, error model, outage behaviour."""

    rate_hz: float = spec(10.0, unit="Hz", gt=0.0, le=100.0)
    latency_s: float = spec(0.0, unit="s", ge=0.0, le=5.0, doc="measurement to availability")
    origin: GeoOrigin = GeoOrigin()
    antenna_lever_arm_m: _VEC3 = spec((0.0, 0.0, 0.0), unit="m", doc="from CG, base_link axes")
    horizontal: AxisError = AxisError()
    vertical: AxisError = AxisError()
    urban: UrbanParams = UrbanParams()
    outage_mode: str = spec("no_fix", choices=("no_fix", "no_output"))
    velocity_enabled: bool = spec(False, doc="also output ENU antenna velocity")
    velocity_sigma_mps: float = spec(0.0, unit="m/s", ge=0.0, doc="white noise, horizontal axes")
    velocity_vertical_sigma_mps: float = spec(0.0, unit="m/s", ge=0.0)
