"""The sensor models as the sensor nodes build them (one place: nodes.imu_node, nodes.gps_node
and the lockstep engine, core.engine): the preset file with the node's overrides, one random
generator per sensor and scenario seed."""
from __future__ import annotations

import dataclasses

import numpy as np

from vehicle_sim.core.config import load
from vehicle_sim.core.dynamics_params import DynamicsParams
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


def sensor_rate_hz(p: ImuNodeParams | GpsNodeParams) -> float:
    """The output rate a sensor node runs at: its rate_hz, else its preset's [Hz] (a rate out
    of the preset's bounds: ConfigError naming it, as the node's start)."""
    cls = ImuParams if isinstance(p, ImuNodeParams) else GnssParams
    return load_preset(cls, config_path(p.preset_file), rate_hz=p.rate_hz).rate_hz


def input_rate_problem(rate_hz: float, topic: str, dynamics: DynamicsParams) -> str | None:
    """Why a sensor sampling at ``rate_hz`` [Hz] cannot run on the states of ``topic`` from
    the dynamics node (None: it can, or the topic is not one of its state topics). The model
    samples at the first state at or after each due time (core.sensors.schedule): faster than
    its input it would publish at the input's rate while its log and covariances say
    ``rate_hz``."""
    name = topic.strip("/")
    if name == "vehicle/state_raw":
        d = dynamics.raw_state_decimation
        if not d:
            return "the dynamics node's raw state is off (raw_state_decimation 0)"
        input_hz, how = dynamics.physics_rate_hz / d, f"raw_state_decimation {d}"
    elif name == "vehicle/state":
        input_hz = dynamics.physics_rate_hz / dynamics.every(dynamics.state_rate_hz)
        how = f"state_rate_hz {dynamics.state_rate_hz:g}"
    else:
        return None
    if rate_hz > input_hz * (1.0 + 1e-9):
        return (f"{rate_hz:g} Hz is faster than its input {name} at {input_hz:g} Hz (the "
                f"dynamics node's physics_rate_hz {dynamics.physics_rate_hz:g}, {how}): it "
                "would publish at the input's rate")
    return None


def imu_model(p: ImuNodeParams, rng: np.random.Generator) -> ImuModel:
    params = load_preset(ImuParams, config_path(p.preset_file), rate_hz=p.rate_hz)
    return ImuModel(params, rng)


def gnss_model(p: GpsNodeParams, rng: np.random.Generator) -> GnssModel:
    origin = dataclasses.asdict(p.origin) if p.origin_override else None
    params = load_preset(GnssParams, config_path(p.preset_file), rate_hz=p.rate_hz,
                         origin=origin)
    zones = load(GnssZones, config_path(p.zones_file)) if p.zones_file else None
    return GnssModel(params, rng, zones)
