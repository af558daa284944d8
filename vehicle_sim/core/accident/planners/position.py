"""Paper 002's position planner: start and end distances of the vehicles on their approaches.

002 sec. 4.2: a vehicle starts 20 m from the centre of the (cross)road; a second and a third
vehicle with the same initial direction start at 26 m and 32 m (at most three per approach);
the vehicle nearest the centre gets the farthest end point, so that all travel about the same
distance. A vehicle heading East starts on the West road (and so on). The lane is
``lane_offset_m`` right of the road axis (right-hand traffic). A template may give a start
distance; then start boxes must not overlap each other or a static object.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from vehicle_sim.core.accident.detect import Body, separation
from vehicle_sim.core.accident.planners.params import PlannerParams
from vehicle_sim.core.accident.planners.preplanner import Scene, SceneVehicle
from vehicle_sim.core.config import ConfigError

HEADING_RAD = {"east": 0.0, "north": 0.5 * math.pi, "west": math.pi, "south": -0.5 * math.pi}


@dataclass(frozen=True)
class StartPose:
    """Where a vehicle starts: centre (x, y) [m] ENU, heading [rad]; distances from the centre
    of the road at the start and at the end of its run [m]."""

    x_m: float
    y_m: float
    yaw_rad: float
    start_distance_m: float
    end_distance_m: float


def lane_point(yaw_rad: float, along_m: float, offset_m: float) -> tuple[float, float]:
    """Point ``along_m`` along the heading from the centre, ``offset_m`` to its right [m]."""
    c, s = math.cos(yaw_rad), math.sin(yaw_rad)
    return along_m * c + offset_m * s, along_m * s - offset_m * c


def place(scene: Scene, p: PlannerParams) -> dict[str, StartPose]:
    """Start pose of every vehicle (see the module docstring); ConfigError on overcrowding."""
    poses: dict[str, StartPose] = {}
    for direction in HEADING_RAD:
        group = [v for v in scene.vehicles if v.direction == direction]
        if len(group) > p.max_per_approach:
            raise ConfigError(scene.source, f"{group[-1].key}.direction",
                              f"{len(group)} vehicles heading {direction}; 002 places at most "
                              f"{p.max_per_approach} per approach")
        dists = _start_distances(group, p)
        order = sorted(range(len(group)), key=lambda k: dists[k])
        for rank, k in enumerate(order):
            v = group[k]
            yaw = HEADING_RAD[direction]
            x, y = lane_point(yaw, -dists[k], p.lane_offset_m)
            end = p.first_distance_m + p.spacing_m * (len(group) - 1 - rank)
            poses[v.id] = StartPose(x, y, yaw, dists[k], end)
    _check_overlaps(scene, poses)
    return poses


def _start_distances(group: list[SceneVehicle], p: PlannerParams) -> list[float]:
    """Given distances stay; the others take 20, 26, 32 m in listed order (skipping taken)."""
    free = [p.first_distance_m + p.spacing_m * k for k in range(p.max_per_approach)]
    out = []
    for v in group:
        if v.start_distance_m > 0.0:
            out.append(v.start_distance_m)
        else:
            out.append(free.pop(0))
    return out


def start_body(v: SceneVehicle, pose: StartPose) -> Body:
    """The vehicle's box at its start pose."""
    return Body(v.id, pose.x_m, pose.y_m, pose.yaw_rad, v.length_m, v.width_m)


def _check_overlaps(scene: Scene, poses: dict[str, StartPose]) -> None:
    bodies = [start_body(v, poses[v.id]) for v in scene.vehicles]
    bodies += [Body(o.id, o.x_m, o.y_m, 0.0, 2.0 * o.radius_m, 2.0 * o.radius_m)
               for o in scene.objects if o.kind == "tree"]
    keys = {v.id: v.key for v in scene.vehicles}
    for i, a in enumerate(bodies):
        for b in bodies[i + 1:]:
            if separation(a, b)[0] > 0.0:
                key = keys.get(a.name) or keys.get(b.name)
                raise ConfigError(scene.source, f"{key}.start_distance_m",
                                  f"start positions of {a.name!r} and {b.name!r} overlap")
