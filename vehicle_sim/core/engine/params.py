"""The engine's parameters: each core's (its node's, EngineParams), and the engine node's own:
which scenario it runs, and the launch arguments its cores' parameters are read with
(vehicle_sim.engine_setup)."""
from __future__ import annotations

from dataclasses import dataclass

from vehicle_sim.core.accident.params import AccidentParams
from vehicle_sim.core.config import SEED_MAX, spec
from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.ego.params import EgoDriverParams
from vehicle_sim.core.frames import REFERENCE_POINTS
from vehicle_sim.core.run_summary import MAX_RUN_DURATION_S
from vehicle_sim.core.sensors.node_params import GpsNodeParams, ImuNodeParams
from vehicle_sim.core.traffic.node_params import TrafficNodeParams


@dataclass(frozen=True)
class EngineNodeParams:
    scenario: str = spec("urban")
    """scenario whose cores the engine runs (config/scenarios/<name>.yaml, or a path)"""
    seed: int = spec(0, ge=0, le=SEED_MAX)
    """seed of every random process (traffic, sensor noise)"""
    duration: float = spec(0.0, unit="s", ge=0.0, le=MAX_RUN_DURATION_S)
    """end the run at this simulated time, 0 = never"""
    record_dir: str = spec("runs")
    """folder for the JSON run summary ('' = none) and the recording"""
    record: bool = spec(False)
    """write the edges the scenario's recorder node would record to an MCAP file in record_dir,
    every message at its sim time, read or not"""
    base_link: str = spec("cg", choices=REFERENCE_POINTS)
    """reference point of base_link in odom and /tf, as the dynamics node's"""
    vehicle_file: str = spec("")
    """the ego's vehicle file for every core that models the ego, as the launch argument of that
    name ('' = the scenario's parameter files)"""
    wait_for_nodes: tuple[str, ...] = spec(())
    """start stepping only when these nodes (a stack, a probe) are up, read /clock and are matched
    as readers of its topics, as the dynamics node's parameter of that name (start_timeout_s and
    start_settle_s: the scenario's dynamics node's)"""
    clockless_nodes: tuple[str, ...] = spec(())
    """those of wait_for_nodes that read no /clock: not waited for as readers"""


@dataclass(frozen=True)
class EngineParams:
    """Each core's node parameters, as the scenario gives them to its node."""

    dynamics: DynamicsParams
    traffic: TrafficNodeParams
    ego_driver: EgoDriverParams
    imu: ImuNodeParams
    gps: GpsNodeParams
    accident: AccidentParams | None = None  # None: the scenario has no accident node
