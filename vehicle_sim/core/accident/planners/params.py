"""Parameters of paper 002's planners (values 002 gives are cited; the others are choices)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from vehicle_sim.core.config import spec


@dataclass(frozen=True)
class PlannerParams:
    """Position, trajectory and accident planner parameters (lengths in m, angles in rad)."""

    first_distance_m: float = spec(20.0, unit="m", gt=0.0, le=200.0)
    """002: first vehicle of an approach, from the centre"""
    spacing_m: float = spec(6.0, unit="m", gt=0.0, le=50.0)
    """002: the 2nd and 3rd vehicles at 26 and 32 m"""
    max_per_approach: int = spec(3, ge=1, le=3)
    """002: at most three vehicles per approach"""
    lane_offset_m: float = spec(1.75, unit="m", ge=0.0, le=10.0)
    """lane centre right of the road axis (half a 3.5 m lane, the lanes of config/maps; right-hand
    traffic)"""
    junction_half_m: float = spec(7.0, unit="m", gt=0.0, le=50.0)
    """turn arcs start this far before the centre (a choice: two 3.5 m lanes per road)"""
    point_spacing_m: float = spec(1.0, unit="m", gt=0.0, le=10.0)
    """polyline point spacing on straights and curves"""
    arc_step_rad: float = spec(math.radians(5.0), unit="rad", gt=0.0, le=0.5)
    """002: turns as points on a circular arc, this far apart"""
    exit_run_m: float = spec(20.0, unit="m", gt=0.0, le=200.0)
    """straight run after a turn or after the crossroad (a choice)"""
    overtake_length_m: float = spec(30.0, unit="m", gt=0.0, le=200.0)
    """length of 002's trigonometric overtaking curve (a choice: ~3 s at 10 m/s)"""
    lane_change_length_m: float = spec(20.0, unit="m", gt=0.0, le=200.0)
    """length of a lane change (a choice: ~2 s at 10 m/s)"""
    r_init_m: float = spec(15.0, unit="m", gt=0.0, le=50.0)
    """002's r_init (a choice: more than half the longest vehicle, 3.75 m for the truck, so the kept
    end lies outside the placement circle; and room for the sideways ramp onto the placement: ~10 m
    for a car, so an offset under a metre turns it by < 5 deg, which the servo follows)"""
    r_step_m: float = spec(0.5, unit="m", gt=0.0, le=10.0)
    """002's step s (a choice)"""
    r_max_m: float = spec(25.0, unit="m", gt=0.0, le=100.0)
    """002's r_max (a choice: a path passing farther than this from a collision point cannot reach
    it; r_init + 10 m)"""
    max_turn_rad: float = spec(math.radians(90.0), unit="rad", gt=0.0, le=math.pi)
    """largest heading change onto a collision (forward driving)"""
    max_speed_mps: float = spec(30.0, unit="m/s", gt=0.0, le=100.0)
    """largest planned speed of any vehicle (bounds the plan)"""
