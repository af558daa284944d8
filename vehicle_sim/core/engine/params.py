"""The engine node's own parameters: which scenario it runs, and the launch arguments its
cores' parameters are read with (vehicle_sim.engine_setup)."""
from __future__ import annotations

from dataclasses import dataclass

from vehicle_sim.core.config import spec
from vehicle_sim.core.frames import REFERENCE_POINTS

MAX_DURATION_S = 1e7  # [s] ~116 days of simulated time: a bound, not a use


@dataclass(frozen=True)
class EngineNodeParams:
    scenario: str = spec("urban", doc="scenario whose cores the engine runs (config/scenarios/"
                         "<name>.yaml, or a path)")
    seed: int = spec(0, ge=0, doc="seed of every random process (traffic, sensor noise)")
    duration: float = spec(0.0, unit="s", ge=0.0, le=MAX_DURATION_S,
                           doc="end the run at this simulated time, 0 = never")
    record_dir: str = spec("runs", doc="folder for the JSON run summary ('' = none)")
    base_link: str = spec("cg", choices=REFERENCE_POINTS, doc="reference point of base_link "
                          "in odom and /tf, as the dynamics node's")
    wait_for_nodes: tuple[str, ...] = spec((), doc="start stepping only when these nodes (a "
                                           "stack, a probe) are up and read /clock, as the "
                                           "dynamics node's parameter of that name "
                                           "(start_timeout_s and start_settle_s: the "
                                           "scenario's dynamics node's)")
