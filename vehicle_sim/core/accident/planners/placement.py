"""Geometry of paper 002's accident planner: circle intersection (sec. 5.2) and collision
placement on the middle of a part (sec. 5.3, Figures 10-12, 15). Points in metres, ENU."""
from __future__ import annotations

import math

import numpy as np

from vehicle_sim.core.accident.planners.params import PlannerParams


def segment_distance(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
    """Distance [m] from point c to the segment a-b."""
    ab = b - a
    t = 0.0 if not ab.any() else min(max(float((c - a) @ ab) / float(ab @ ab), 0.0), 1.0)
    return float(np.linalg.norm(a + t * ab - c))


def circle_cut(poly: np.ndarray, c: np.ndarray, p: PlannerParams) -> np.ndarray | None:
    """002's circle intersection: the kept points t_1..t_i, or None when r reaches r_max."""
    r = p.r_init_m
    while r <= p.r_max_m + 1e-9:
        for i in range(len(poly) - 1):
            if segment_distance(poly[i], poly[i + 1], c) < r:
                return poly[:i + 1].copy()
        r += p.r_step_m
    return None


def place_part(last: np.ndarray, c: np.ndarray, part: str, length_m: float,
               width_m: float) -> tuple[np.ndarray, float] | None:
    """Centre [m] and heading [rad] of a vehicle coming from ``last`` that touches c with the
    middle of ``part`` (002 sec. 5.3); None when ``last`` is inside the placement circle."""
    d = c - last
    dist = float(np.linalg.norm(d))
    radius = 0.5 * (length_m if part in ("front", "rear") else width_m)
    if dist <= radius + 1e-6:
        return None
    u = d / dist
    if part in ("front", "rear"):
        centre = c - radius * u if part == "front" else c + radius * u
        return centre, math.atan2(u[1], u[0])
    alpha = math.asin(radius / dist) * (-1.0 if part == "leftside" else 1.0)
    ca, sa = math.cos(alpha), math.sin(alpha)
    heading = np.array([ca * u[0] - sa * u[1], sa * u[0] + ca * u[1]])
    centre = last + math.sqrt(dist * dist - radius * radius) * heading
    return centre, math.atan2(heading[1], heading[0])


def place_aligned(c: np.ndarray, part: str, yaw_rad: float, length_m: float,
                  width_m: float) -> np.ndarray:
    """Centre [m] of a vehicle heading yaw_rad whose ``part``'s middle is at c."""
    return c - (part_middle((0.0, 0.0, yaw_rad), part, length_m, width_m))


def path_heading(poly: np.ndarray, c: np.ndarray) -> float:
    """Heading [rad] of the polyline segment nearest to c."""
    d = [segment_distance(a, b, c) for a, b in zip(poly[:-1], poly[1:], strict=True)]
    k = int(np.argmin(d))
    v = poly[k + 1] - poly[k]
    return math.atan2(v[1], v[0])


def part_middle(pose: tuple[float, float, float], part: str, length_m: float,
                width_m: float) -> np.ndarray:
    """Middle of a part of a box at pose (x, y, yaw) (002's four points of a stopped car)."""
    x, y, yaw = pose
    fw, left = np.array([math.cos(yaw), math.sin(yaw)]), np.array([-math.sin(yaw), math.cos(yaw)])
    offsets = {"front": 0.5 * length_m * fw, "rear": -0.5 * length_m * fw,
               "leftside": 0.5 * width_m * left, "rightside": -0.5 * width_m * left}
    return np.array([x, y]) + offsets[part]
