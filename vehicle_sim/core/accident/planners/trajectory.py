"""Paper 002's trajectory planner: each event chain becomes a polyline (ENU, metres).

002 sec. 4.3: "A trajectory is basically a polyline ... A turn is approximated by a number of
points lying on a circle arc. Overtaking is modeled by using a goniometrical function."

- driving_forward: straight along the heading to the vehicle's end distance past the centre
  (position planner), or ``exit_run_m`` on when already past it;
- turn_left / turn_right (at the crossroad, before its centre): straight to
  ``junction_half_m`` before the centre, a circular arc onto the crossing road's lane of the
  new direction (radius J - o right, J + o left, o the lane's right offset), then straight on;
- overtake: a lateral excursion of one lane to the left, y(s) = w (1 - cos(2 pi s / L)) / 2
  over L = ``overtake_length_m`` (w = 2 lane offsets, one lane);
- change_lane_left / change_lane_right: y(s) = +-w (1 - cos(pi s / L)) / 2 over
  ``lane_change_length_m``;
- stop: the polyline ends (a chain of only ``stop`` is a standing vehicle: one point).
"""
from __future__ import annotations

import math

import numpy as np

from vehicle_sim.core.accident.planners.params import PlannerParams
from vehicle_sim.core.accident.planners.position import StartPose
from vehicle_sim.core.accident.planners.preplanner import SceneVehicle
from vehicle_sim.core.config import ConfigError


class _Pen:
    """The end of the polyline being drawn: point [m], heading [rad] and the points so far."""

    def __init__(self, pose: StartPose):
        self.points = [np.array([pose.x_m, pose.y_m])]
        self.yaw = pose.yaw_rad

    @property
    def at(self) -> np.ndarray:
        return self.points[-1]

    def dir(self) -> np.ndarray:
        return np.array([math.cos(self.yaw), math.sin(self.yaw)])

    def right(self) -> np.ndarray:
        return np.array([math.sin(self.yaw), -math.cos(self.yaw)])

    def along(self) -> float:
        return float(self.at @ self.dir())

    def straight(self, length_m: float, spacing_m: float) -> None:
        n = max(1, math.ceil(length_m / spacing_m))
        start, d = self.at.copy(), self.dir()
        self.points += [start + d * length_m * k / n for k in range(1, n + 1)]

    def lateral(self, length_m: float, shift, spacing_m: float) -> None:
        """A curve along the heading, shifted left by shift(s / L) [m] (shift(0) = 0)."""
        n = max(2, math.ceil(length_m / spacing_m))
        start, d, left = self.at.copy(), self.dir(), -self.right()
        self.points += [start + d * length_m * k / n + left * shift(k / n)
                        for k in range(1, n + 1)]

    def arc(self, radius_m: float, left: bool, step_rad: float) -> None:
        sign = 1.0 if left else -1.0
        centre = self.at + sign * radius_m * -self.right()
        n = max(2, math.ceil(0.5 * math.pi / step_rad))
        a0 = self.yaw - sign * 0.5 * math.pi  # angle of the pen seen from the centre
        self.points += [centre + radius_m * np.array([math.cos(a0 + sign * 0.5 * math.pi * k / n),
                                                      math.sin(a0 + sign * 0.5 * math.pi * k / n)])
                        for k in range(1, n + 1)]
        self.yaw += sign * 0.5 * math.pi


def plan_polyline(v: SceneVehicle, pose: StartPose, p: PlannerParams, source: str,
                  road: str) -> np.ndarray:
    """(n, 2) polyline [m] of a vehicle's event chain from its start pose."""
    pen = _Pen(pose)
    lane_w = 2.0 * p.lane_offset_m
    for k, event in enumerate(v.events):
        if event == "stop":
            break
        if event == "driving_forward":
            along = pen.along()
            target = pose.end_distance_m if along < pose.end_distance_m - 1.0 else \
                along + p.exit_run_m
            pen.straight(target - along, p.point_spacing_m)
        elif event in ("turn_left", "turn_right"):
            _turn(pen, event == "turn_left", pose, p, f"{v.key}.events[{k}]", source, road)
        elif event == "overtake":
            pen.lateral(p.overtake_length_m,
                        lambda s: lane_w * 0.5 * (1.0 - math.cos(2.0 * math.pi * s)),
                        p.point_spacing_m)
        else:
            sign = 1.0 if event == "change_lane_left" else -1.0
            pen.lateral(p.lane_change_length_m,
                        lambda s, sign=sign: sign * lane_w * 0.5 * (1.0 - math.cos(math.pi * s)),
                        p.point_spacing_m)
    return np.array(pen.points)


def _turn(pen: _Pen, left: bool, pose: StartPose, p: PlannerParams, key: str, source: str,
          road: str) -> None:
    along = pen.along()
    if road != "crossroad" or along > -p.junction_half_m + 1e-6:
        raise ConfigError(source, key, "a turn needs the crossroad ahead (this vehicle is "
                                       f"{along + p.junction_half_m:.1f} m past the turn start)")
    pen.straight(-p.junction_half_m - along, p.point_spacing_m)
    offset = float(pen.at @ pen.right())
    radius = p.junction_half_m + offset if left else p.junction_half_m - offset
    if radius <= 0.5:
        raise ConfigError(source, key, f"turn radius {radius:.2f} m: the lane is too far right")
    pen.arc(radius, left, p.arc_step_rad)
    along = pen.along()
    target = pose.end_distance_m if along < pose.end_distance_m - 1.0 else along + p.exit_run_m
    pen.straight(target - along, p.point_spacing_m)
