"""Parameters of the ego autopilot and its node (one source of truth; README table).

The driver-law parameters the ego shares with the traffic agents take the traffic core's
MODERATE profile (``vehicle_sim.core.traffic.params.MODERATE``: IDM city set of Treiber &
Kesting, "Traffic Flow Dynamics" (2013), table 11.2; ITE yellow deceleration 3.0 m/s^2), read
from it, not copied: t_s, d_0, both c_d, a_m, b, T, s0, a_lat, the yellow deceleration and the
give-way speed; their bounds too (``DRIVER_*_MAX`` there, the same for every driver). Paper 004
gives the structure of the laws (eqs. 6-13) but no gains. The ego differs from the moderate
agent on purpose in one law parameter, ``stop_sign_speed_mps`` (a full stop,
core.ego.full_stop.FULL_STOP_MPS, the run report's threshold), and sets its desired speed as the
limit minus ``cruise_margin_mps`` (the agents: a factor of the limit); it has none of the
agents' red-run, sign-skipping or zebra parameters (it never runs a red light; no pedestrians
are simulated).
"""
from __future__ import annotations

from dataclasses import dataclass

from vehicle_sim.core.config import SEED_MAX, spec
from vehicle_sim.core.ego.full_stop import FULL_STOP_MPS, STOP_DONE_M, STOP_ZONE_MARGIN_M
from vehicle_sim.core.traffic.kernels.driver_law import LEADER_RANGE_M
from vehicle_sim.core.traffic.mapfile import MAX_SPEED_LIMIT_MPS
from vehicle_sim.core.traffic.params import (
    DRIVER_ACCEL_MAX_MPS2,
    DRIVER_D_GAIN_MAX_S,
    DRIVER_DISTANCE_MAX_M,
    DRIVER_TIME_MAX_S,
    MODERATE,
)


@dataclass(frozen=True)
class EgoDriverParams:
    """The ego_driver node: a route over the map and 004's driver laws on the ego vehicle."""

    map_file: str = spec("maps/urban_grid.yaml")
    """map, absolute or relative to config/"""
    vehicle_file: str = spec("vehicles/medium_car.yaml")
    """ego vehicle (forces for the pedal mapping, size, wheelbase); the same file as the dynamics
    node's"""
    seed: int = spec(0, ge=0, le=SEED_MAX)
    """seed of the route's turn choices at the nodes"""
    control_rate_hz: float = spec(50.0, unit="Hz", gt=0.0, le=1000.0)
    """VehicleControl rate, simulation time"""
    state_timeout_s: float = spec(0.5, unit="s", gt=0.0, le=5.0)
    """no vehicle/state this long (sim time): brake (at most 5 s: longer, the ego drives blind for
    tens of metres, no watchdog)"""
    lookahead_time_s: float = spec(MODERATE.lookahead_time_s, unit="s", gt=0.0,
                                   le=DRIVER_TIME_MAX_S)
    """t_s of 004 eq. 6"""
    lookahead_min_m: float = spec(MODERATE.lookahead_min_m, unit="m", gt=0.0,
                                  le=DRIVER_DISTANCE_MAX_M)
    """d_0 of 004 eq. 6 (the look-ahead t_s u + d_0 is capped at half the radius of a curve
    ahead)"""
    steer_d_gain_s: float = spec(MODERATE.steer_d_gain_s, unit="s", ge=0.0, le=DRIVER_D_GAIN_MAX_S)
    """c_d of 004 eq. 8"""
    cruise_margin_mps: float = spec(0.5, unit="m/s", ge=0.0, le=5.0)
    """cruise at the lane speed limit minus this"""
    accel_max_mps2: float = spec(MODERATE.accel_mean_mps2, unit="m/s^2", gt=0.0,
                                 le=DRIVER_ACCEL_MAX_MPS2)
    """a_m of 004 eqs. 11-12, IDM a"""
    accel_d_gain_s: float = spec(MODERATE.accel_d_gain_s, unit="s", ge=0.0, le=DRIVER_D_GAIN_MAX_S)
    """c_d/c_p of 004 eq. 10 (not given)"""
    comfort_decel_mps2: float = spec(MODERATE.comfort_decel_mps2, unit="m/s^2", gt=0.0,
                                     le=DRIVER_ACCEL_MAX_MPS2)
    """IDM b"""
    time_headway_s: float = spec(MODERATE.time_headway_s, unit="s", gt=0.0, le=DRIVER_TIME_MAX_S)
    """IDM T"""
    min_gap_m: float = spec(MODERATE.min_gap_m, unit="m", gt=0.0, le=DRIVER_DISTANCE_MAX_M)
    """IDM s0"""
    lateral_accel_mps2: float = spec(MODERATE.lateral_accel_mps2, unit="m/s^2", gt=0.0,
                                     le=DRIVER_ACCEL_MAX_MPS2)
    """curve speed sqrt(a_lat R) at a lane's sharpest point"""
    yellow_stop_decel_mps2: float = spec(MODERATE.yellow_stop_decel_mps2, unit="m/s^2", gt=0.0,
                                         le=DRIVER_ACCEL_MAX_MPS2)
    """stops at yellow if it needs less (ITE)"""
    stop_margin_m: float = spec(1.0, unit="m", ge=0.0, le=STOP_ZONE_MARGIN_M - STOP_DONE_M)
    """front bumper to stop line when stopped (a choice; farther, the run report would not count a
    stop sign's stop)"""
    stop_sign_speed_mps: float = spec(FULL_STOP_MPS, unit="m/s", gt=0.0, le=MAX_SPEED_LIMIT_MPS)
    """the stop at a stop sign is done once the ego is slower than this with its bumper within 1 m
    of its stop point; then it goes on. The default is a full stop, FULL_STOP_MPS, the run report's
    threshold: above it the report counts a rolling stop (the moderate traffic driver,
    DriverProfile, rolls through at 2 m/s)"""
    give_way_speed_mps: float = spec(MODERATE.give_way_speed_mps, unit="m/s", ge=0.0,
                                     le=MAX_SPEED_LIMIT_MPS)
    """speed at a give-way line"""
    hold_brake: float = spec(0.3, unit="-", gt=0.0, le=1.0)
    """brake pedal held at rest when asked to stop (a choice: 0.3 x 14.1 kN holds the medium car on
    a 30 % slope)"""
    horizon_m: float = spec(LEADER_RANGE_M, unit="m", gt=20.0, le=1000.0)
    """route look-ahead for lights, signs, curves and leaders (the agents' leader range,
    driver_law.LEADER_RANGE_M)"""
    corridor_margin_m: float = spec(0.4, unit="m", ge=0.0, le=5.0)
    """lateral margin of the leader corridor (driver_law; a choice: at most 5 m, more takes in the
    next lanes)"""
    max_start_distance_m: float = spec(30.0, unit="m", gt=0.0, le=1000.0)
    """start refused (brake) if no lane is this near (a choice: at most 1 km, farther is off the
    map)"""
    lockstep: bool = spec(False)
    """work on /clock ticks once each tick's inputs are in, and acknowledge them (dynamics mode
    lockstep; set by the scenario)"""
    lockstep_inputs: tuple[str, ...] = spec(())
    """in lockstep: the traffic nodes whose agents and lights each frame waits for"""

    def __post_init__(self) -> None:
        if self.give_way_speed_mps < self.stop_sign_speed_mps:
            raise ValueError(f"give_way_speed_mps {self.give_way_speed_mps} is below "
                             f"stop_sign_speed_mps {self.stop_sign_speed_mps}")
