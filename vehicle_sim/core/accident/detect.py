"""Contact detection between vehicle boxes (paper 004 sec. 7.1) and impact parts (paper 002).

Frame: the planar map frame (ENU, x east, y north) [m]; headings [rad] from +x, counter-clockwise.
A body is a rectangle length x width centred on its reference point (the CG for the ego and the
traffic agents; the box is taken as centred there, a simplification of a few decimetres).

- Broad phase (004): bounding spheres, centre distance < r_a + r_b with r = hypot(l, w) / 2;
  narrow phase: oriented boxes by the separating-axis test. Both come from
  :func:`vehicle_sim.core.traffic.collisions.overlapping_pairs` (a grid keeps it O(n)), on the
  bodies as columns (``detect_arrays``); the geometry below runs for the candidate pairs only.
- Contact point (004: "at the middle of the overlap"): the area centroid of the intersection
  polygon of the two rectangles (Sutherland-Hodgman clipping); for boxes that only touch, that
  of the first box grown by a few millimetres, near the middle of the touching edge
  (``box_geometry.box_overlap_centre``: the point the crash world's forces act at too).
- Contact normal: the separating axis of least penetration, oriented from actor to victim.
- Parts (002: front, rear, leftside, rightside, unknown): the face of each box nearest to the
  contact point (in the body frame: distance L/2 - |x| to the front/rear face, W/2 - |y| to the
  side); when both distances differ by less than ``part_margin_m`` the hit is at a corner, and
  the part is the face the contact normal leaves through (the direction towards the other body
  in the body frame: mostly along x, front or rear, else a side); without a normal, unknown.
- Actor: the body approaching the other faster along the normal (the one that hits); impact
  speed = max(0, (v_actor - v_victim) . n) with the velocities of the contact point
  (v + omega x r); relative velocity = v_actor - v_victim at the contact point. The velocities
  are those of the update before the first overlap when the detector saw both bodies then (the
  crash physics may already have exchanged momentum when the overlap is sampled).
- Episodes: a pair is reported once when its boxes first overlap; the episode ends after the
  boxes have been apart for ``release_s`` of simulation time.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vehicle_sim.core import frames
from vehicle_sim.core.accident import detect_arrays
from vehicle_sim.core.accident.detect_arrays import (
    LENGTH,
    WIDTH,
    Bodies,
    NameIds,
    StaticBoxes,
    bad_rows,
    body_pairs,
    static_pairs,
)
from vehicle_sim.core.box_geometry import box_corners, box_overlap_centre, half_extent

PART_FRONT, PART_REAR, PART_LEFTSIDE, PART_RIGHTSIDE, PART_UNKNOWN = range(5)  # AccidentEvent
PART_NAMES = ("front", "rear", "leftside", "rightside", "unknown")


@dataclass(frozen=True)
class Body:
    """A vehicle box: centre x_m, y_m [m], yaw_rad, length_m, width_m [m]; velocity of the
    centre vx_mps, vy_mps in the MAP frame [m/s]; yaw_rate_radps [rad/s]."""

    name: str
    x_m: float
    y_m: float
    yaw_rad: float
    length_m: float
    width_m: float
    vx_mps: float = 0.0
    vy_mps: float = 0.0
    yaw_rate_radps: float = 0.0


@dataclass(frozen=True)
class Contact:
    """One collision as in paper 002 (actor, victim, parts, position) plus its kinematics."""

    t_ns: int  # simulation time of first contact
    actor: str
    victim: str
    actor_part: int  # PART_*
    victim_part: int
    impact_speed_mps: float  # closing speed along the contact normal, >= 0
    relative_velocity_mps: tuple[float, float]  # actor minus victim at the contact point, map
    position_m: tuple[float, float]  # contact point, map


def corners(b: Body) -> np.ndarray:
    """(4, 2) corners counter-clockwise: front-left, rear-left, rear-right, front-right [m]."""
    return box_corners(b.x_m, b.y_m, b.yaw_rad, b.length_m, b.width_m)


def separation(a: Body, b: Body) -> tuple[float, np.ndarray]:
    """Separating-axis test: (penetration depth [m], unit normal from a towards b).

    Depth <= 0 means the boxes are apart (then the normal is that of the largest gap)."""
    d = np.array([b.x_m - a.x_m, b.y_m - a.y_m])
    best, normal = math.inf, np.array([1.0, 0.0])
    for h in (a.yaw_rad, a.yaw_rad + 0.5 * math.pi, b.yaw_rad, b.yaw_rad + 0.5 * math.pi):
        axis = np.array([math.cos(h), math.sin(h)])
        proj = float(d @ axis)
        depth = (half_extent(a.length_m, a.width_m, a.yaw_rad, h)
                 + half_extent(b.length_m, b.width_m, b.yaw_rad, h) - abs(proj))
        if depth < best:
            best, normal = depth, axis if proj >= 0.0 else -axis
    return best, normal


def overlap_centre(a: Body, b: Body) -> np.ndarray | None:
    """The middle [m] of the overlap of the two boxes, None when they neither overlap nor touch
    (box_geometry.box_overlap_centre: the area centroid; for a touch, that of a's box grown by
    TOUCH_GROW_M, the point the crash world pushes at)."""
    return box_overlap_centre(a.x_m, a.y_m, a.yaw_rad, a.length_m, a.width_m, corners(b))


def impact_part(b: Body, point: np.ndarray, margin_m: float,
                toward: np.ndarray | None = None) -> int:
    """PART_* of body ``b`` hit at ``point`` (map frame); ``toward``: the contact normal
    pointing from ``b`` to the other body (map), for a corner hit (see the module docstring)."""
    c, s = math.cos(b.yaw_rad), math.sin(b.yaw_rad)
    dx, dy = point[0] - b.x_m, point[1] - b.y_m
    px, py = c * dx + s * dy, -s * dx + c * dy
    to_end, to_side = 0.5 * b.length_m - abs(px), 0.5 * b.width_m - abs(py)
    if to_side - to_end > margin_m:
        return PART_FRONT if px > 0.0 else PART_REAR
    if to_end - to_side > margin_m:
        return PART_LEFTSIDE if py > 0.0 else PART_RIGHTSIDE
    if toward is None:
        return PART_UNKNOWN
    nx, ny = c * toward[0] + s * toward[1], -s * toward[0] + c * toward[1]
    if abs(nx) >= abs(ny):
        return PART_FRONT if nx > 0.0 else PART_REAR
    return PART_LEFTSIDE if ny > 0.0 else PART_RIGHTSIDE


def point_velocity(b: Body, point: np.ndarray) -> np.ndarray:
    """Velocity [m/s] of the material point of ``b`` at ``point`` (map x, y): the rigid-body
    law v + omega x r of core.frames in the plane."""
    r = (point[0] - b.x_m, point[1] - b.y_m, 0.0)
    return frames.point_velocity((b.vx_mps, b.vy_mps, 0.0), (0.0, 0.0, b.yaw_rate_radps), r)[:2]


def contact(a: Body, b: Body, t_ns: int, part_margin_m: float,
            before: tuple[Body, Body] | None = None) -> Contact | None:
    """The collision of two bodies at time t_ns [ns], or None if their boxes do not overlap.
    ``before``: the two bodies at the sample before, apart: their velocities decide the actor
    and the impact speed (crash physics may have changed them by the time the boxes overlap)."""
    depth, n = separation(a, b)
    if depth < 0.0:
        return None
    point = overlap_centre(a, b)
    if point is None:
        point = np.array([0.5 * (a.x_m + b.x_m), 0.5 * (a.y_m + b.y_m)])
    ka, kb = before if before is not None else (a, b)
    va, vb = point_velocity(ka, point), point_velocity(kb, point)
    if float(vb @ -n) > float(va @ n):  # b approaches a faster: b is the actor
        a, b, va, vb, n = b, a, vb, va, -n
    rel = va - vb
    return Contact(t_ns=int(t_ns), actor=a.name, victim=b.name,
                   actor_part=impact_part(a, point, part_margin_m, n),
                   victim_part=impact_part(b, point, part_margin_m, -n),
                   impact_speed_mps=max(0.0, float(rel @ n)),
                   relative_velocity_mps=(float(rel[0]), float(rel[1])),
                   position_m=(float(point[0]), float(point[1])))


def warm_up() -> None:
    """Compile (or load from the cache) the broad phases and the narrow phase's kernels
    (box_geometry: separation's half extents, the overlap centroid) now, not at the first
    contact."""
    detect_arrays.warm_up()
    contact(Body("a", 0.0, 0.0, 0.0, 4.0, 2.0), Body("b", 3.0, 0.5, 0.3, 4.0, 2.0), 0, 0.1)


class AccidentDetector:
    """Reports each contact episode of a pair of bodies once (see the module docstring).

    Bodies come as columns (:meth:`update_arrays`, ``detect_arrays.Bodies``: the broad phases
    run on the arrays, a ``Body`` is made only for a candidate pair) or as a list of ``Body``
    (:meth:`update`, turned into columns); a detector takes one of the two kinds (the ids
    :meth:`update` gives its bodies are its own)."""

    def __init__(self, release_s: float = 0.5, part_margin_m: float = 0.1):
        if not release_s > 0.0 or not 0.0 <= part_margin_m < 1.0:
            raise ValueError(f"need release_s > 0 and 0 <= part_margin_m < 1, got {release_s}, "
                             f"{part_margin_m}")
        self.release_ns = round(release_s * 1e9)
        self.part_margin_m = part_margin_m
        self._last_seen: dict[tuple[str, str], int] = {}  # pair -> last t_ns in contact
        self._before: Bodies | None = None  # the bodies of the previous update
        self._statics = StaticBoxes()
        self._names = NameIds()  # update(): an id per name

    warm_up = staticmethod(warm_up)  # numba compile, not at the first contact

    def reset(self) -> None:
        """Forget every episode and previous sample (a new run)."""
        self._last_seen.clear()
        self._before = None

    @property
    def active_pairs(self) -> set[tuple[str, str]]:
        """Pairs (names sorted) whose contact episode is still open."""
        return set(self._last_seen)

    def update(self, t_ns: int, bodies: list[Body], only_with: str | None = None,
               statics: list[Body] = ()) -> list[Contact]:
        """New contacts among ``bodies`` and between them and ``statics`` (fixed bodies, e.g.
        the map's objects, checked in a pass of their own: a building's size would coarsen the
        vehicles' grid) at sim time t_ns [ns] (names must be unique, the statics' too).

        only_with: if given, only pairs that include the body of that name are checked.
        """
        return self.update_arrays(t_ns, self._names.columns(bodies), only_with, statics)

    def update_arrays(self, t_ns: int, bodies: Bodies, only_with: str | None = None,
                      statics: list[Body] = ()) -> list[Contact]:
        """:meth:`update` with the bodies as columns."""
        state = bodies.state
        bad = bad_rows(state)
        if len(bad):
            b = _body(bodies, int(bad[0]))
            raise ValueError(f"body {b.name!r}: non-finite value or empty box: {b}")
        diagonal = np.hypot(state[LENGTH], state[WIDTH])
        new: list[Contact] = []
        for i, j in body_pairs(state, diagonal).tolist():
            names = bodies.name(i), bodies.name(j)
            if only_with is None or only_with in names:
                self._check(new, t_ns, _body(bodies, i, names[0]), _body(bodies, j, names[1]),
                            (bodies, i, j))
        for i, s in static_pairs(state, diagonal, self._statics.of(statics)).tolist():
            name = bodies.name(i)
            if only_with is None or only_with in (name, statics[s].name):
                self._check(new, t_ns, _body(bodies, i, name), statics[s], (bodies, i, None))
        self._last_seen = {k: t for k, t in self._last_seen.items()
                           if t_ns - t < self.release_ns}
        self._before = Bodies(bodies.ids.copy(), bodies.name_of, state.copy())
        return new

    def _check(self, new: list[Contact], t_ns: int, a: Body, b: Body,
               rows: tuple[Bodies, int, int] | None) -> None:
        """Contact of a candidate pair; a new episode goes to ``new``. ``rows``: the pair's
        rows (j None: ``b`` is a static object); their previous sample, if any, decides the
        actor and the impact speed."""
        key = tuple(sorted((a.name, b.name)))
        before = None if key in self._last_seen else self._previous(*rows, b)
        c = contact(a, b, t_ns, self.part_margin_m, before)
        if c is None:
            return
        if key not in self._last_seen:
            new.append(c)
        self._last_seen[key] = int(t_ns)

    def _previous(self, bodies: Bodies, i: int, j: int | None, static: Body
                  ) -> tuple[Body, Body] | None:
        """Bodies i and j (j None: the static object ``static``, which does not move) at the
        previous update, None unless both were in it."""
        prev = self._before
        if prev is None:
            return None
        pi = prev.row_of(int(bodies.ids[i]))
        if j is None:
            return None if pi is None else (_body(prev, pi), static)
        pj = prev.row_of(int(bodies.ids[j]))
        return None if pi is None or pj is None else (_body(prev, pi), _body(prev, pj))


def _body(bodies: Bodies, row: int, name: str | None = None) -> Body:
    """Row ``row`` of the columns as a Body (its name given when known)."""
    return Body(bodies.name(row) if name is None else name, *bodies.values(row))


LINE_WALL_M = 0.5  # thickness of a barrier given as a line (as in the crash world's geometry)


def static_body(obj) -> Body:
    """A map static object (mapfile.StaticObject) as a box named static/<id>: a tree or pole
    (or an object with a radius only) as the square around its circle, a line footprint as a
    LINE_WALL_M wall along it, a polygon footprint as its axis-aligned bounding box (the
    buildings of the shipped maps are axis-aligned)."""
    name = f"static/{obj.id}"
    pts = np.asarray(obj.footprint, dtype=float).reshape(-1, 2)
    if len(pts) == 2:
        d = pts[1] - pts[0]
        mid = 0.5 * (pts[0] + pts[1])
        return Body(name, float(mid[0]), float(mid[1]), math.atan2(d[1], d[0]),
                    max(float(np.hypot(*d)), LINE_WALL_M), LINE_WALL_M)
    if len(pts) >= 3:
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        mid = 0.5 * (lo + hi)
        return Body(name, float(mid[0]), float(mid[1]), 0.0, float(hi[0] - lo[0]),
                    float(hi[1] - lo[1]))
    side = 2.0 * max(obj.radius_m, 0.05)
    return Body(name, obj.x_m, obj.y_m, 0.0, side, side)
