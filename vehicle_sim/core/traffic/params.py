"""Parameters of the traffic core (frozen, validated by ``vehicle_sim.core.config``).

Paper 004 gives the driver-model structure but no gains; every value below cites its source or
is marked as a documented choice. Per-agent values are drawn from a profile and randomised by
+-``spread`` (uniform) with the simulation seed, so each agent carries its own copy.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from vehicle_sim.core.config import spec
from vehicle_sim.core.traffic.mapfile import MAX_COORD_M, MAX_SPEED_LIMIT_MPS

# Bounds of the driver law's parameters, shared by DriverProfile and the ego's EgoDriverParams
# (core.ego.params imports them: one law, one set of limits).
DRIVER_ACCEL_MAX_MPS2 = 15.0  # ~1.5 g: no road tyre grips more, to speed up or to slow down
DRIVER_TIME_MAX_S = 10.0  # look-ahead, headway: 10 s at 14 m/s ~ the 150 m leader range
DRIVER_D_GAIN_MAX_S = 1.0  # a choice: 12x the aggressive driver's c_d (0.08 s)
DRIVER_DISTANCE_MAX_M = 50.0  # a choice: d_0, s0, red-run distance; 10x the cautious driver's
# Agent slots: 33 float64 + 13 int64 columns, ~370 B each (measured): 1e6 slots are ~370 MB, and
# each step scans them all (~80 ms empty). 50x the largest benchmark (20,000 agents), above a
# jam on the largest map (2,000 km of lane at ~7 m a car: ~300,000).
MAX_AGENTS = 1_000_000
HEARTBEAT_MAX_STEPS = 100  # a choice: ghosts 5 s old at 20 Hz are no neighbours (003: N = 10)
MAP_SPAN_M = 2 * MAX_COORD_M  # the largest map is a square this wide (mapfile)
MAP_DIAGONAL_M = math.sqrt(2.0) * MAP_SPAN_M
INTERVAL_MAX_S = 60.0  # a choice: a minute of yellow, all-red, yielding or lane change


@dataclass(frozen=True)
class DriverProfile:
    """One driver type of 004 sec. 6 (aggressive / moderate / passive). The defaults are the
    moderate driver's (``MODERATE``), the values the ego autopilot takes too (core.ego.params)."""

    lookahead_time_s: float = spec(1.0, unit="s", gt=0, le=DRIVER_TIME_MAX_S)
    """t_s of 004 eq. 6 (smaller: aggressive)"""
    lookahead_min_m: float = spec(4.0, unit="m", gt=0, le=DRIVER_DISTANCE_MAX_M)
    """d_0 of 004 eq. 6 (the look-ahead t_s u + d_0 is capped at half the radius of a curve
    ahead)"""
    steer_d_gain_s: float = spec(0.05, unit="s", ge=0, le=DRIVER_D_GAIN_MAX_S)
    """c_d of 004 eq. 8 (larger: aggressive)"""
    accel_mean_mps2: float = spec(1.0, unit="m/s^2", gt=0, le=DRIVER_ACCEL_MAX_MPS2)
    """a_m of 004 eqs. 11-12 and IDM a"""
    comfort_decel_mps2: float = spec(1.5, unit="m/s^2", gt=0, le=DRIVER_ACCEL_MAX_MPS2)
    """IDM b (Treiber city: 1.5)"""
    time_headway_s: float = spec(1.0, unit="s", gt=0, le=DRIVER_TIME_MAX_S)
    """IDM T (Treiber city traffic: 1.0)"""
    min_gap_m: float = spec(2.0, unit="m", gt=0, le=DRIVER_DISTANCE_MAX_M)
    """IDM s0 (Treiber: 2 m)"""
    speed_factor: float = spec(1.0, unit="-", gt=0, le=1.5)
    """desired speed / limit"""
    lateral_accel_mps2: float = spec(2.0, unit="m/s^2", gt=0, le=DRIVER_ACCEL_MAX_MPS2)
    """curve speed sqrt(a_lat R)"""
    yellow_stop_decel_mps2: float = spec(3.0, unit="m/s^2", gt=0, le=DRIVER_ACCEL_MAX_MPS2)
    """stops at yellow if it needs less (ITE: 3.0)"""
    red_run_distance_m: float = spec(1.0, unit="m", ge=0, le=DRIVER_DISTANCE_MAX_M)
    """goes on red only this close"""
    stop_sign_speed_mps: float = spec(2.0, unit="m/s", ge=0, le=MAX_SPEED_LIMIT_MPS)
    """speed at a stop line before requesting the junction"""
    give_way_speed_mps: float = spec(4.0, unit="m/s", ge=0, le=MAX_SPEED_LIMIT_MPS)
    """speed at a give-way line"""
    ignores_signs_when_clear: bool = spec(False)
    """no slow-down at stop/give way if junction empty"""
    crossing_speed_factor: float = spec(1.0, unit="-", gt=0, le=1.0)
    """speed at zebra crossings"""
    accel_d_gain_s: float = spec(0.0, unit="s", ge=0, le=DRIVER_D_GAIN_MAX_S)
    """c_d/c_p of 004 eq. 10 (not given)"""


# Values: IDM city set of Treiber & Kesting, "Traffic Flow Dynamics" (2013), table 11.2 for the
# moderate driver (the class defaults); aggressive / passive bracket it (shorter / longer headway,
# 004 sec. 6 ordering of t_s and c_d). Yellow: ITE kinematic yellow interval uses 3.0 m/s^2
# (10 ft/s^2) deceleration. Stop signs: the moderate driver rolls through at 2 m/s, the
# aggressive one hardly slows (13 m/s), the passive one stops (0.3 m/s).
MODERATE = DriverProfile()
AGGRESSIVE = DriverProfile(
    lookahead_time_s=0.8, lookahead_min_m=3.0, steer_d_gain_s=0.08, accel_mean_mps2=1.5,
    comfort_decel_mps2=2.0, time_headway_s=0.8, min_gap_m=1.5, speed_factor=1.1,
    lateral_accel_mps2=2.8, yellow_stop_decel_mps2=2.0, red_run_distance_m=3.0,
    stop_sign_speed_mps=13.0, give_way_speed_mps=13.0, ignores_signs_when_clear=True)
PASSIVE = DriverProfile(
    lookahead_time_s=1.2, lookahead_min_m=5.0, steer_d_gain_s=0.03, accel_mean_mps2=0.8,
    comfort_decel_mps2=1.2, time_headway_s=1.5, min_gap_m=2.5, speed_factor=0.9,
    lateral_accel_mps2=1.5, yellow_stop_decel_mps2=4.0, red_run_distance_m=0.0,
    stop_sign_speed_mps=0.3, give_way_speed_mps=0.3, crossing_speed_factor=0.6)


@dataclass(frozen=True)
class ZoneParams:
    """Control zone of 004 sec. 3: rectangle oriented with the ego, ego towards its rear."""

    enabled: bool = spec(True)
    ahead_m: float = spec(200.0, unit="m", gt=0, le=MAP_SPAN_M)
    """visibility limit forward"""
    behind_m: float = spec(60.0, unit="m", gt=0, le=MAP_SPAN_M)
    """rear-mirror limit"""
    half_width_m: float = spec(120.0, unit="m", gt=0, le=MAP_SPAN_M)
    sector_size_m: float = spec(400.0, unit="m", ge=10.0, le=2 * MAP_DIAGONAL_M)
    """>= zone diagonal: <= 4 sectors (at least 10 m: a 20 km map has 4e6 of them; at most the
    largest zone's diagonal)"""
    density_per_km: float = spec(30.0, unit="1/km", gt=0, le=200.0)
    """vehicles per km of lane in zone (at most a car per 5 m)"""

    def __post_init__(self) -> None:
        diag = math.hypot(self.ahead_m + self.behind_m, 2 * self.half_width_m)
        if self.enabled and self.sector_size_m < diag:
            raise ValueError(f"sector_size_m ({self.sector_size_m}) must be >= the zone diagonal "
                             f"({diag:.1f} m) so the zone covers at most 4 sectors (004 sec. 3)")


@dataclass(frozen=True)
class LightParams:
    """Traffic-light regulation of 004 sec. 6.4 (cycle shared by the entry streets)."""

    cycle_s: float = spec(60.0, unit="s", gt=0, le=600.0)
    """choice; urban cycles 60-120 s (HCM), real ones < 300 s"""
    yellow_s: float = spec(3.0, unit="s", gt=0, le=INTERVAL_MAX_S)
    """ITE yellow for 50 km/h ~3 s"""
    all_red_s: float = spec(2.0, unit="s", ge=0, le=INTERVAL_MAX_S)
    """ITE red clearance 1-2 s"""
    offset_speed_mps: float = spec(13.89, unit="m/s", gt=0, le=1000.0)
    """offset = distance to master / this speed (green wave; 1000: the lights of a city switch
    nearly together)"""

    def __post_init__(self) -> None:
        if self.cycle_s < 2 * (self.yellow_s + self.all_red_s + 1.0):
            raise ValueError("cycle_s too short for two groups with yellow and all-red")


@dataclass(frozen=True)
class TrafficParams:
    """Everything the traffic core needs besides the map and the seed."""

    capacity: int = spec(2048, unit="agents", gt=0, le=MAX_AGENTS)
    initial_agents: int = spec(0, unit="agents", ge=0, le=MAX_AGENTS)
    """whole-city mode: agents to place"""
    share_aggressive: float = spec(0.2, unit="-", ge=0, le=1)
    share_passive: float = spec(0.3, unit="-", ge=0, le=1)
    spread: float = spec(0.1, unit="-", ge=0, lt=0.5)
    """uniform +- randomisation of profiles"""
    lod_radius_m: float = spec(80.0, unit="m", ge=0, le=1.0e6)
    """single-track model within this of ego (beyond the map's diagonal: every agent)"""
    dynamic_min_speed_mps: float = spec(3.0, unit="m/s", gt=0, le=MAX_SPEED_LIMIT_MPS)
    """below: kinematic model"""
    approach_distance_m: float = spec(40.0, unit="m", gt=0, le=1000.0)
    """junction approaching mode"""
    ego_yield_time_s: float = spec(3.0, unit="s", ge=0, le=INTERVAL_MAX_S)
    """yield if ego reaches node sooner"""
    max_wait_s: float = spec(20.0, unit="s", gt=0, le=600.0)
    """stopped this long: arrival order rules (a choice: at most 10 min; longer is a deadlock)"""
    lane_change_time_s: float = spec(4.6, unit="s", gt=0, le=INTERVAL_MAX_S)
    """Toledo & Zohar 2007 mean 4.6 s"""
    lane_change_threshold_mps2: float = spec(0.1, unit="m/s^2", ge=0, le=DRIVER_ACCEL_MAX_MPS2)
    """MOBIL a_thr"""
    safe_decel_mps2: float = spec(4.0, unit="m/s^2", gt=0, le=DRIVER_ACCEL_MAX_MPS2)
    """MOBIL b_safe"""
    heartbeat_steps: int = spec(10, unit="steps", gt=0, le=HEARTBEAT_MAX_STEPS)
    """ghost refresh (003: N = 10)"""
    crash_timeout_s: float = spec(60.0, unit="s", gt=0, le=3600.0)
    """a crashed agent is removed this long after its crash (a choice: time to stop and look at the
    scene)"""
    aggressive: DriverProfile = AGGRESSIVE
    moderate: DriverProfile = MODERATE
    passive: DriverProfile = PASSIVE
    vehicle_file: str = spec("vehicles/medium_car.yaml")
    """the agents' car, a vehicle file like the ego's (config/vehicles): 004's single-track model
    takes its mass, yaw inertia, axles, cornering coefficients, mu, power and steering limit, the
    boxes its size"""
    zone: ZoneParams = ZoneParams()
    lights: LightParams = LightParams()

    def __post_init__(self) -> None:
        if self.share_aggressive + self.share_passive > 1.0:
            raise ValueError("share_aggressive + share_passive must be <= 1")
        if self.initial_agents > self.capacity:
            raise ValueError(f"initial_agents ({self.initial_agents}) exceeds capacity "
                             f"({self.capacity})")
