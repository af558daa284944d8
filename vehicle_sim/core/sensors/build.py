"""The sensor models as the sensor nodes build them (one place: nodes.imu_node, nodes.gps_node
and the lockstep engine, core.engine): the preset file with the node's overrides, one random
generator per sensor and scenario seed."""
from __future__ import annotations

import dataclasses

import numpy as np

from vehicle_sim.core.config import load
from vehicle_sim.core.sensors.gnss import GnssModel
from vehicle_sim.core.sensors.imu import ImuModel
from vehicle_sim.core.sensors.node_params import GpsNodeParams, ImuNodeParams, load_preset
from vehicle_sim.core.sensors.params import GnssParams, ImuParams
from vehicle_sim.core.sensors.zones import GnssZones
from vehicle_sim.paths import config_path

IMU_STREAM, GPS_STREAM = 1, 2  # each sensor's generator among those of one scenario seed


def sensor_rng(seed: int, stream: int) -> np.random.Generator:
    """Independent generator per sensor for one scenario seed (imu and gps share `seed`)."""
    return np.random.default_rng(np.random.SeedSequence([seed, stream]))


def imu_model(p: ImuNodeParams, rng: np.random.Generator) -> ImuModel:
    params = load_preset(ImuParams, config_path(p.preset_file), rate_hz=p.rate_hz)
    return ImuModel(params, rng)


def gnss_model(p: GpsNodeParams, rng: np.random.Generator) -> GnssModel:
    origin = dataclasses.asdict(p.origin) if p.origin_override else None
    params = load_preset(GnssParams, config_path(p.preset_file), rate_hz=p.rate_hz,
                         origin=origin)
    zones = load(GnssZones, config_path(p.zones_file)) if p.zones_file else None
    return GnssModel(params, rng, zones)
