"""Parameters of the imu and gps nodes (one source of truth for names, types, defaults, bounds).

The error model itself lives in the preset file (``config/sensors/*.yaml``, ImuParams /
GnssParams); these dataclasses only choose the preset and wire the node. ``rate_hz`` overrides the
preset's rate and is validated against the preset's own bounds when the preset is loaded
(:func:`load_preset`), so the bounds are stated once (in params.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from vehicle_sim.core.config import SEED_MAX, build, load_yaml, spec
from vehicle_sim.core.dynamics_params import MODES
from vehicle_sim.core.frames import REFERENCE_POINTS
from vehicle_sim.core.sensors.params import MAX_GNSS_RATE_HZ, MAX_IMU_RATE_HZ, GeoOrigin

T = TypeVar("T")


@dataclass(frozen=True)
class SensorNodeParams:
    """What the imu and gps nodes share: the preset (default per sensor), seed and rate, the
    state input, the body frame and the run's pacing."""

    preset_file: str = spec("")
    """preset of the error model, absolute or relative to the config dir"""
    seed: int = spec(0, ge=0, le=SEED_MAX)
    """seed of the sensor's random errors (noise, drawn-at-start errors)"""
    rate_hz: float = spec(0.0, unit="Hz", ge=0.0, le=max(MAX_IMU_RATE_HZ, MAX_GNSS_RATE_HZ))
    """output rate in sim time; 0 = the preset's (whose bound applies)"""
    base_link: str = spec("cg", choices=REFERENCE_POINTS)
    """reference point of base_link, as the dynamics node's base_link: the static TF gives the mount
    from it (core.frames)"""
    vehicle_file: str = spec("vehicles/medium_car.yaml")
    """the dynamics node's vehicle file (rear-axle position)"""
    model: str = spec("single_track", choices=("single_track", "kinematic", "full14"))
    """the dynamics node's model (full14: the CG's height above the road)"""
    base_frame: str = spec("base_link")
    """vehicle body frame at base_link (static TF parent)"""
    state_topic: str = spec("vehicle/state_raw")
    """VehicleState input (every physics step)"""
    mode: str = spec("realtime", choices=MODES)
    """the run's pacing (set by the scenario); only lockstep waits for this node: there alone is
    every state sampled (repeatable)"""
    lockstep: bool = spec(False)
    """acknowledge every /clock tick on /sim/lockstep_ack once the states up to it are sampled, so
    the dynamics never runs ahead of this node and no state is lost (dynamics mode lockstep; set by
    the scenario)"""


@dataclass(frozen=True)
class ImuNodeParams(SensorNodeParams):
    """imu_node: sensor_msgs/Imu from vehicle/state_raw through core.sensors.ImuModel."""

    preset_file: str = spec("sensors/imu_adis16448.yaml")
    """ImuParams preset, absolute or relative to the config dir"""
    frame_id: str = spec("imu_link")
    """sensor frame (header.frame_id, static TF child)"""
    imu_topic: str = spec("imu/data")
    """sensor_msgs/Imu output"""
    fault_target: str = spec("imu")
    """FaultCommand.target this node answers"""


@dataclass(frozen=True)
class GpsNodeParams(SensorNodeParams):
    """gps_node: sensor_msgs/NavSatFix (+ ENU velocity) through core.sensors.GnssModel."""

    preset_file: str = spec("sensors/gnss_consumer.yaml")
    """GnssParams preset, absolute or relative to the config dir"""
    zones_file: str = spec("")
    """GnssZones file (buildings, outages; relative to the config dir), '' = open sky"""
    origin_override: bool = spec(False)
    """use origin.* instead of the preset's ENU origin"""
    origin: GeoOrigin = GeoOrigin()
    frame_id: str = spec("gnss_link")
    """antenna frame (header.frame_id, static TF child)"""
    fix_topic: str = spec("gnss/fix")
    """sensor_msgs/NavSatFix output"""
    velocity_topic: str = spec("gnss/velocity")
    """TwistWithCovarianceStamped (ENU) output, '' = off; needs velocity_enabled in the preset"""
    fault_target: str = spec("gps")
    """FaultCommand.target this node answers"""


def load_preset(cls: type[T], path: str | Path, **overrides: Any) -> T:
    """Load the preset ``cls`` from ``path`` with top-level ``overrides`` applied before
    validation (so an override out of the preset's bounds raises ConfigError naming the file and
    key). An override of None or 0.0 for ``rate_hz`` keeps the preset's value."""
    data = load_yaml(path)
    for key, value in overrides.items():
        if value is None or (key == "rate_hz" and value == 0.0):
            continue
        data[key] = value
    return build(cls, data, source=str(path))
