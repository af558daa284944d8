"""Paper 002's accident planner: cut each trajectory near its collision and add the approach.

002 sec. 5.2, circle intersection: with the collision point c, a circle of radius r = r_init
grows by s until r_max; the first polyline segment that lies (partially) inside it and all
later segments are removed. None found up to r_max: the vehicle "can never reach" c.
002 sec. 5.3, collision placement (a vehicle collides with the middle of its part): the last
kept point P and c define the vehicle's centre at the collision --
front / rear: on the circle of radius length/2 about c, on the line P-c, between P and c (front)
or beyond c (rear); left / right side: the tangent point from P to the circle of radius width/2
about c, c on the vehicle's left (right). The vehicle heads from P to its centre.
At a vehicle's FIRST collision (a choice, refining 002's straight dotted segment P-centre): the
heading is that of its planned path near c (a car hits in its direction of travel; on 002's
slanted segment the leading corner of the front hits first, a corner impact), the centre is c
moved back by length/2 (front), on by length/2 (rear), right or left by width/2 (left / right
side), and the removed part is replaced by the vehicle's own path from P on, shifted sideways
onto the centre by a cosine ramp (zero slope at both ends): a turn stays a turn, and the
approach has no kink for the servo to cut.
002 sec. 6, several collisions: a vehicle already placed goes straight from its last collision
centre to the next one (no new cut). 002 sec. 7, static objects are cylinders: c lies on the
cylinder, on the line from P to its centre; a standing vehicle (chain [stop]) or one held after
a collision gives c as the middle of its hit part. A victim part ``unknown`` is taken from where
the actor comes from in the victim's frame (a choice).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from vehicle_sim.core.accident.planners.params import PlannerParams
from vehicle_sim.core.accident.planners.placement import (
    circle_cut,
    part_middle,
    path_heading,
    place_aligned,
    place_part,
    segment_distance,
)
from vehicle_sim.core.accident.planners.preplanner import Scene, SceneCollision, SceneVehicle
from vehicle_sim.core.config import ConfigError


@dataclass
class Track:
    """A vehicle's trajectory while the accident planner works on it (points [m], tags: -1 a
    normal point, k the centre at collision k)."""

    vehicle: SceneVehicle
    base: np.ndarray
    points: list = field(default_factory=list)
    tags: list = field(default_factory=list)
    cut: bool = False
    yaw_rad: float = 0.0  # heading at the last point

    @property
    def standing(self) -> bool:
        return len(self.base) < 2


@dataclass(frozen=True)
class Placement:
    """Where collision k happens: contact point c and both centres and headings [m, rad]."""

    index: int
    contact_m: tuple[float, float]
    actor_pose: tuple[float, float, float]
    victim_pose: tuple[float, float, float] | None  # None for a static object


def plan_collisions(scene: Scene, tracks: dict[str, Track], p: PlannerParams) -> list[Placement]:
    """Run 002's accident planner over the collisions in order; tracks are completed in place."""
    objects = {o.id: o for o in scene.objects}
    out = []
    for col in scene.collisions:
        key = f"collisions[{col.index}]"
        actor = tracks[col.actor]
        if actor.standing:
            raise ConfigError(scene.source, f"{key}.actor", f"{col.actor!r} stands still "
                              "(chain [stop]) and can never reach its collision")
        victim = tracks.get(col.victim)
        c = _contact_point(scene, col, actor, victim, objects, p)
        actor_pose = _advance(scene, col, actor, c, col.actor_part, p)
        victim_pose = None
        if victim is not None:
            part = col.victim_part if col.victim_part != "unknown" else \
                _part_seen(victim, actor_pose)
            victim_pose = _advance(scene, col, victim, c, part, p)
        out.append(Placement(col.index, (float(c[0]), float(c[1])), actor_pose, victim_pose))
    return out


def _held_pose(t: Track) -> tuple[float, float, float] | None:
    """Pose of a vehicle that stands (chain [stop]) or is held after a collision, else None."""
    if t.standing or (t.cut and t.tags and t.tags[-1] >= 0):
        return float(t.points[-1][0]), float(t.points[-1][1]), t.yaw_rad
    return None


def _contact_point(scene: Scene, col: SceneCollision, actor: Track, victim: Track | None,
                   objects: dict, p: PlannerParams) -> np.ndarray:
    key = f"collisions[{col.index}]"
    if victim is None:  # a static object: c on its cylinder, towards the actor's last point
        o = objects[col.victim]
        centre = np.array([o.x_m, o.y_m])
        _ensure_cut(scene, col, actor, centre, p)
        d = centre - actor.points[-1]
        return centre - o.radius_m * d / max(float(np.linalg.norm(d)), 1e-9)
    if col.position_m is not None:
        return np.array(col.position_m, dtype=float)
    held = _held_pose(victim)
    if held is None or col.victim_part == "unknown":
        raise ConfigError(scene.source, f"{key}.position_m", f"needed: the victim "
                          f"{col.victim!r} is moving (or its part is unknown)")
    return part_middle(held, col.victim_part, victim.vehicle.length_m, victim.vehicle.width_m)


def _ensure_cut(scene: Scene, col: SceneCollision, t: Track, c: np.ndarray,
                p: PlannerParams) -> None:
    if t.cut:
        return
    kept = circle_cut(t.base, c, p)
    if kept is None:
        near = min(segment_distance(a, b, c) for a, b in zip(t.base[:-1], t.base[1:], strict=True))
        raise ConfigError(scene.source, f"collisions[{col.index}]",
                          f"{t.vehicle.id!r} can never reach its collision at ({c[0]:.1f}, "
                          f"{c[1]:.1f}): its path passes {near:.1f} m away (r_max "
                          f"{p.r_max_m} m)")
    t.points, t.tags, t.cut = list(kept), [-1] * len(kept), True
    if len(kept) >= 2:
        d = kept[-1] - kept[-2]
        t.yaw_rad = math.atan2(d[1], d[0])
    else:
        d = t.base[1] - t.base[0]
        t.yaw_rad = math.atan2(d[1], d[0])


def _advance(scene: Scene, col: SceneCollision, t: Track, c: np.ndarray, part: str,
             p: PlannerParams) -> tuple[float, float, float]:
    """Append the vehicle's centre at collision col (held vehicles stay where they are)."""
    key = f"collisions[{col.index}]"
    held = _held_pose(t)
    if held is not None and col.victim == t.vehicle.id and (
            col.position_m is None or t.standing):
        if float(np.linalg.norm(part_middle(held, part, t.vehicle.length_m,
                                            t.vehicle.width_m) - c)) > 1.0:
            raise ConfigError(scene.source, f"{key}.position_m", f"{t.vehicle.id!r} stands "
                              f"at ({held[0]:.1f}, {held[1]:.1f}); its {part} is not there")
        t.points.append(t.points[-1].copy())
        t.tags.append(col.index)
        return held
    first = not t.cut
    _ensure_cut(scene, col, t, c, p)
    placed = _aligned(t, c, part, p) if first else \
        place_part(t.points[-1], c, part, t.vehicle.length_m, t.vehicle.width_m)
    if placed is None:
        raise ConfigError(scene.source, key, f"{t.vehicle.id!r} starts too close to its "
                          f"collision at ({c[0]:.1f}, {c[1]:.1f}) to reach it with its {part}")
    centre, yaw = placed
    turn = abs(math.remainder(yaw - t.yaw_rad, 2.0 * math.pi))
    if turn > p.max_turn_rad:
        raise ConfigError(scene.source, key, f"{t.vehicle.id!r} would turn "
                          f"{math.degrees(turn):.0f} deg to reach it (more than "
                          f"{math.degrees(p.max_turn_rad):.0f}): collisions out of time order "
                          f"or unreachable driving forward")
    t.points.append(centre)
    t.tags.append(col.index)
    t.yaw_rad = yaw
    return float(centre[0]), float(centre[1]), yaw


STRAIGHT_RUN_FRACTION = 0.4  # of the run-in to the first collision driven straight (a choice)


def _aligned(t: Track, c: np.ndarray, part: str, p: PlannerParams
             ) -> tuple[np.ndarray, float] | None:
    """Centre and heading at a vehicle's first collision, reached along its own path shifted
    sideways by a cosine ramp (see the docstring); None when the centre is not ahead of the
    last kept point."""
    yaw = path_heading(t.base, c)
    centre = place_aligned(c, part, yaw, t.vehicle.length_m, t.vehicle.width_m)
    s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(t.base, axis=0), axis=1))])
    s_p = s[len(t.points) - 1]
    k = int(np.argmin([segment_distance(a, b, centre)
                       for a, b in zip(t.base[:-1], t.base[1:], strict=True)]))
    ab = t.base[k + 1] - t.base[k]
    frac = min(max(float((centre - t.base[k]) @ ab) / float(ab @ ab), 0.0), 1.0)
    s_c = s[k] + frac * (s[k + 1] - s[k])
    if s_c <= s_p + 1e-6:
        return None
    offset = centre - (t.base[k] + frac * ab)
    # the ramp ends STRAIGHT_RUN_FRACTION before the centre: the servo settles its heading
    # before the contact (a ramp ending at the contact left ~0.1 rad of yaw: a corner hit)
    s_e = s_p + (1.0 - STRAIGHT_RUN_FRACTION) * (s_c - s_p)
    n = max(1, math.ceil((s_c - s_p) / p.point_spacing_m))
    for j in range(1, n):
        sj = s_p + (s_c - s_p) * j / n
        q = np.array([np.interp(sj, s, t.base[:, 0]), np.interp(sj, s, t.base[:, 1])])
        ramp = min((sj - s_p) / max(s_e - s_p, 1e-9), 1.0)
        t.points.append(q + offset * 0.5 * (1.0 - math.cos(math.pi * ramp)))
        t.tags.append(-1)
    d = centre - t.points[-1]
    t.yaw_rad = math.atan2(d[1], d[0])
    return centre, yaw


def _part_seen(victim: Track, actor_pose: tuple[float, float, float]) -> str:
    """The victim's part facing the actor's centre (victim heading: its last or base one)."""
    held = _held_pose(victim)
    if held is not None:
        x, y, yaw = held
    else:
        d = victim.base[1] - victim.base[0]
        x, y, yaw = victim.base[0][0], victim.base[0][1], math.atan2(d[1], d[0])
    dx, dy = actor_pose[0] - x, actor_pose[1] - y
    lx, ly = math.cos(yaw) * dx + math.sin(yaw) * dy, -math.sin(yaw) * dx + math.cos(yaw) * dy
    if abs(lx) >= abs(ly):
        return "front" if lx > 0.0 else "rear"
    return "leftside" if ly > 0.0 else "rightside"
