"""Parameters of the traffic node and the shard rule of the scale-out (paper 003).

The traffic model itself is configured by a ``TrafficParams`` YAML (``params_file``) and the map
(``map_file``); these fields only choose those files and wire the node.

Shard rule (deterministic, documented for scenario authors): the map is cut into square sectors
(``zone.Sectors``: id = sy * nx + sx over the map bounds, ``zone.sector_size_m`` of the params
file). Shards own whole columns of sectors, ordered by the x of the sector centre: shard i of n
owns the columns sx with ``floor(i * nx / n) <= sx < floor((i + 1) * nx / n)``, i.e. contiguous
west-to-east bands, as even as the column count allows. ``shard_count`` 1 means 'all': one node
simulates the whole map and hands nothing over.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vehicle_sim.core.config import SEED_MAX, spec
from vehicle_sim.core.traffic.params import HEARTBEAT_MAX_STEPS, MAP_SPAN_M
from vehicle_sim.core.traffic.zone import Sectors

MAX_SHARDS = 256  # TrafficAgent.id packs the creating shard into its top 8 bits (traffic_msgs)
VIEW_RATE_MAX_HZ = 100.0  # a choice: RViz and the light readers need no more (a display: 60 Hz)


@dataclass(frozen=True)
class TrafficNodeParams:
    """traffic_node: steps core.traffic.TrafficSim on simulation time around vehicle/state."""

    map_file: str = spec("maps/urban_grid.yaml")
    """map (config/maps/README.md), absolute or relative to the config dir"""
    params_file: str = spec("")
    """TrafficParams YAML, absolute or relative to the config dir; '' = the core defaults (control
    zone around the ego)"""
    seed: int = spec(0, ge=0, le=SEED_MAX)
    """seed of placement and driver profiles (same on every shard)"""
    rate_hz: float = spec(20.0, unit="Hz", ge=5.0, le=1000.0)
    """traffic step rate in simulation time; dt = 1 / rate_hz"""
    shard_index: int = spec(0, ge=0, le=MAX_SHARDS - 1)
    """this node's shard (owner id), < shard_count"""
    shard_count: int = spec(1, ge=1, le=MAX_SHARDS)
    """1 = 'all' (whole map, no hand-over); n: sector columns split into n west-to-east bands"""
    heartbeat_steps: int = spec(0, ge=0, le=HEARTBEAT_MAX_STEPS)
    """ghosts published every N steps (003's N; in lockstep every step); 0 =
    TrafficParams.heartbeat_steps of the params file"""
    ghost_margin_m: float = spec(50.0, unit="m", gt=0.0, le=MAP_SPAN_M)
    """agents this close to a foreign sector are sent as ghosts (at most the largest map's width:
    then every agent)"""
    lockstep: bool = spec(False)
    """acknowledge every /clock tick on /sim/lockstep_ack once the traffic steps due up to it are
    done (dynamics mode lockstep)"""
    lockstep_inputs: tuple[str, ...] = spec(())
    """sharded lockstep: the node names of the other shards, whose hand-overs and ghosts each frame
    waits for (set by the scenario)"""
    compute_ahead: bool = spec(True)
    """on the sim-time timer, step k+1 is computed right after step k went out, from the inputs in
    then (the ego of t_k), and goes out at t_k+1 without waiting for its compute; false: computed at
    t_k+1 from the ego of then. Lockstep and shards compute at the tick"""
    max_catch_up_steps: int = spec(5, ge=1, le=100)
    """steps run per callback when sim time jumped (one more when a step was computed ahead);
    beyond, the excess is skipped with a warning (a choice: at most 100, more blocks the node for
    seconds)"""
    publish_markers: bool = spec(True)
    """visualization_msgs/MarkerArray on traffic/markers"""
    markers_rate_hz: float = spec(5.0, unit="Hz", gt=0.0, le=VIEW_RATE_MAX_HZ)
    """marker rate in simulation time"""
    lights_rate_hz: float = spec(10.0, unit="Hz", gt=0.0, le=VIEW_RATE_MAX_HZ)
    """light states re-published at this sim-time rate (and on change); Autoware's traffic_light
    module takes a signal older than its tl_state_timeout (1.0 s) for a stop, so the ground truth's
    copy must come well inside that"""
    state_topic: str = spec("vehicle/state")
    """VehicleState of the ego (pose in odom = map)"""
    frame_id: str = spec("map")
    """frame of agents, lights and markers (identity to odom)"""
    crashes: bool = spec(True)
    """crash physics (004 sec. 7) between agents, scripted vehicles, the ego and the map's static
    objects (core/accident/traffic_crashes.py)"""
    ego_vehicle_file: str = spec("vehicles/medium_car.yaml")
    """the ego's vehicle file: its box in the crash world and the one the agents keep their gaps to
    and cut in ahead of"""
    accident_template: str = spec("")
    """paper 002 accident template whose vehicles this node drives (config/accidents/*.yaml); '' =
    none"""
    accident_start_s: float = spec(1.0, unit="s", ge=0.0, le=1.0e6)
    """simulation time at which the template's run-up starts"""
    accident_origin_x_m: float = spec(0.0, unit="m", ge=-1.0e4, le=1.0e4)
    """map x of the template's road centre"""
    accident_origin_y_m: float = spec(0.0, unit="m", ge=-1.0e4, le=1.0e4)
    """map y of the template's road centre"""
    accident_heading_rad: float = spec(0.0, unit="rad", ge=-7.0, le=7.0)
    """rotation of the template's east axis in the map"""

    def __post_init__(self) -> None:
        if self.accident_template and self.shard_count > 1:
            raise ValueError(f"accident_template with shard_count {self.shard_count}: every "
                             "shard would drive its own copy of the scene; give it to one "
                             "traffic node of shard_count 1")
        if self.shard_index >= self.shard_count:
            raise ValueError(f"shard_index ({self.shard_index}) must be < shard_count "
                             f"({self.shard_count})")
        if self.lockstep and self.shard_count > 1 and (
                len(set(self.lockstep_inputs)) != self.shard_count - 1):
            raise ValueError(f"lockstep with {self.shard_count} shards needs the node names of "
                             f"the {self.shard_count - 1} other shards in lockstep_inputs "
                             f"(got {list(self.lockstep_inputs)})")

    @property
    def dt_ns(self) -> int:
        """Traffic step [ns] (a whole number of nanoseconds, so stamps stay exact)."""
        return round(1e9 / self.rate_hz)


def shard_of_sector(sectors: Sectors, sector: np.ndarray, shard_count: int) -> np.ndarray:
    """Owning shard of each sector id (the west-to-east band rule of the module docstring)."""
    sx = np.asarray(sector, dtype=np.int64) % sectors.nx
    # inverse of floor(i * nx / n) <= sx < floor((i + 1) * nx / n)
    return ((sx + 1) * shard_count - 1) // sectors.nx


def owned_sectors(sectors: Sectors, shard_index: int, shard_count: int) -> np.ndarray | None:
    """Sector ids owned by ``shard_index``; None for ``shard_count`` 1 (whole map).

    Raises ValueError if the map has fewer sector columns than shards (a shard would own none).
    """
    if shard_count == 1:
        return None
    if sectors.nx < shard_count:
        raise ValueError(f"shard_count {shard_count} exceeds the map's {sectors.nx} sector "
                         f"columns: lower zone.sector_size_m ({sectors.size} m) in params_file")
    ids = np.arange(sectors.nx * sectors.ny, dtype=np.int64)
    return ids[shard_of_sector(sectors, ids, shard_count) == shard_index]
