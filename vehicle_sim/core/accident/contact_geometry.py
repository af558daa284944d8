"""Contact geometry of the crash model: a headless pybullet world of collision shapes.

What pybullet does here (and only this): it holds the shapes (vehicles as boxes length x width x
height, trees and poles as cylinders, barriers and buildings as boxes or, for a footprint polygon,
the convex hull of the footprint extruded upwards; a footprint that is a line a wall of
WALL_THICKNESS_M) and runs the narrow phase on the pairs we ask
about: ``getClosestPoints(a, b, distance=0)`` gives the witness points, the contact normal and the
signed distance (negative = penetration) of convex shapes (GJK/EPA). We read the normal (from A
to B, projected on the ground plane), the penetration depth [m] >= 0 and the contact point
(between the witness points; for two vehicle boxes 004's "middle of the overlap", the area
centroid of the overlap polygon of detect.overlap_centre).

What is ours: the broad phase (a numba grid over bounding circles, crash_world/broad_phase), the
forces (crash_model: 004's spring-dampers with Figure 12's R_o) and the integration of the planar
rigid bodies (crash_world). Why not pybullet's solver: it resolves contacts as an LCP/impulse
problem with its own restitution and no notion of a crush stiffness, while 004 prescribes a
spring-damper crash model with measured damping per vehicle class and impact part; we need those
forces (and only the pairs in contact, 004 sec. 7.2), so pybullet never steps a simulation here.

Each ContactGeometry owns its own pybullet client (p.connect(p.DIRECT), never the GUI), so
several worlds in one process do not share state. Statics are added once; vehicle boxes come
from a pool per box size and are posed per query (resetBasePositionAndOrientation).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pybullet as pb

from vehicle_sim.core.accident import detect
from vehicle_sim.core.box_geometry import box_overlap_centre

# A footprint that is a line (two points, or collinear ones) is a wall this thick [m], centred on
# the line (a choice: a concrete safety barrier is ~0.6 m wide at its base, 0.2 m at the top).
WALL_THICKNESS_M = 0.5


@dataclass(frozen=True)
class StaticShape:
    """A static object as the crash world sees it: centre (x_m, y_m) and axis-aligned bounding
    box (xmin, ymin, xmax, ymax) [m] for the broad phase, name and kind for the reports."""

    name: str
    kind: str
    x_m: float
    y_m: float
    box_m: tuple[float, float, float, float]


@dataclass(frozen=True)
class ContactGeom:
    """Narrow-phase result: point (map) [m], unit normal from A to B, signed distance [m]
    (negative = penetrating; the penetration depth is ``depth_m``)."""

    point_m: np.ndarray
    normal: np.ndarray
    distance_m: float

    @property
    def depth_m(self) -> float:
        """Penetration depth [m] >= 0."""
        return max(0.0, -self.distance_m)


class ContactGeometry:
    """pybullet DIRECT world of the statics plus a pool of vehicle boxes (see module doc)."""

    def __init__(self, statics, vehicle_height_m: float = 1.5, static_height_m: float = 3.0):
        """statics: iterable of mapfile.StaticObject (tree, pole: cylinder of radius_m; barrier,
        building: the footprint's convex hull, or a cylinder of radius_m without a footprint)."""
        self._cid = pb.connect(pb.DIRECT)
        self._h = float(vehicle_height_m)
        self._hs = float(static_height_m)
        self._shapes: dict[tuple[int, int], int] = {}  # box size [mm] -> collision shape
        self._pool: dict[tuple[int, int], list[int]] = {}  # box size [mm] -> multibodies
        self.statics: list[StaticShape] = []
        self._static_ids: list[int] = []
        self._hulls: list[np.ndarray | None] = []  # footprint hull (CCW) or None (cylinder)
        for s in statics:
            self._add_static(s)

    def close(self) -> None:
        """Disconnect the pybullet client (the object is unusable afterwards)."""
        if self._cid >= 0:
            pb.disconnect(physicsClientId=self._cid)
            self._cid = -1

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: pybullet may be gone already
            pass

    def _add_static(self, s) -> None:
        cid, hs = self._cid, self._hs
        pts = np.asarray(s.footprint, dtype=float).reshape(-1, 2)
        hull = convex_hull(pts) if len(pts) >= 3 else pts
        if len(pts) >= 2 and polygon_area(hull) < 1e-6:  # a line: a wall of WALL_THICKNESS_M
            hull = segment_box(pts)
        if len(pts) >= 2:
            centre = hull.mean(axis=0)
            verts = [[x - centre[0], y - centre[1], z] for x, y in hull for z in (0.0, hs)]
            shape = pb.createCollisionShape(pb.GEOM_MESH, vertices=verts, physicsClientId=cid)
            pos = [centre[0], centre[1], 0.0]
            box = (*hull.min(axis=0), *hull.max(axis=0))
            self._hulls.append(hull)
        else:
            shape = pb.createCollisionShape(pb.GEOM_CYLINDER, radius=s.radius_m, height=hs,
                                            physicsClientId=cid)
            pos, r = [s.x_m, s.y_m, 0.5 * hs], float(s.radius_m)
            centre = (s.x_m, s.y_m)
            box = (s.x_m - r, s.y_m - r, s.x_m + r, s.y_m + r)
            self._hulls.append(None)
        body = pb.createMultiBody(baseMass=0, baseCollisionShapeIndex=shape, basePosition=pos,
                                  physicsClientId=cid)
        self._static_ids.append(body)
        self.statics.append(StaticShape(s.id, s.kind, float(centre[0]), float(centre[1]),
                                        tuple(float(v) for v in box)))

    def _box(self, length_m: float, width_m: float, slot: int) -> int:
        """The slot-th pooled body of this box size (created on first use)."""
        key = (round(length_m * 1000), round(width_m * 1000))
        if key not in self._shapes:
            self._shapes[key] = pb.createCollisionShape(
                pb.GEOM_BOX, halfExtents=[0.5 * length_m, 0.5 * width_m, 0.5 * self._h],
                physicsClientId=self._cid)
            self._pool[key] = []
        pool = self._pool[key]
        while len(pool) <= slot:
            pool.append(pb.createMultiBody(baseMass=0, baseCollisionShapeIndex=self._shapes[key],
                                           basePosition=[0.0, 0.0, -1e4 - 10.0 * len(pool)],
                                           physicsClientId=self._cid))
        return pool[slot]

    def _posed(self, b: detect.Body, slot: int) -> int:
        body = self._box(b.length_m, b.width_m, slot)
        half = 0.5 * b.yaw_rad
        pb.resetBasePositionAndOrientation(body, [b.x_m, b.y_m, 0.5 * self._h],
                                           [0.0, 0.0, math.sin(half), math.cos(half)],
                                           physicsClientId=self._cid)
        return body

    def _closest(self, a: int, b: int, reach_m: float) -> ContactGeom | None:
        pts = pb.getClosestPoints(a, b, reach_m, physicsClientId=self._cid)
        if not pts:
            return None
        q = min(pts, key=lambda r: r[8])
        n = np.array([-q[7][0], -q[7][1]])  # pybullet's normal points from B to A
        norm = math.hypot(n[0], n[1])
        if norm < 1e-9:
            return None
        point = 0.5 * (np.array(q[5][:2]) + np.array(q[6][:2]))
        return ContactGeom(point_m=point, normal=n / norm, distance_m=float(q[8]))

    def vehicle_pair(self, a: detect.Body, b: detect.Body, reach_m: float = 0.0
                     ) -> ContactGeom | None:
        """Contact of two vehicle boxes (None when further apart than reach_m [m]); when they
        overlap, the point is 004's middle of the overlap (detect.overlap_centre)."""
        g = self._closest(self._posed(a, 0), self._posed(b, 1), reach_m)
        if g is None or g.distance_m > 0.0:
            return g
        centre = _touch_centre(a, detect.corners(b))
        if centre is not None:
            g = ContactGeom(point_m=np.asarray(centre, dtype=float), normal=g.normal,
                            distance_m=g.distance_m)
        return g

    def vehicle_static(self, a: detect.Body, static_index: int, reach_m: float = 0.0
                       ) -> ContactGeom | None:
        """Contact of a vehicle box with static object ``static_index`` (None when further
        apart than reach_m [m]); against a footprint the point is the middle of the overlap
        (as for two vehicles), against a cylinder pybullet's (between its witness points)."""
        g = self._closest(self._posed(a, 0), self._static_ids[static_index], reach_m)
        hull = self._hulls[static_index]
        if g is None or g.distance_m > 0.0 or hull is None:
            return g
        centre = _touch_centre(a, hull)
        if centre is None:
            return g
        return ContactGeom(point_m=np.asarray(centre, dtype=float), normal=g.normal,
                           distance_m=g.distance_m)


def convex_hull(points: np.ndarray) -> np.ndarray:
    """Counter-clockwise convex hull of (k, 2) points (Andrew's monotone chain)."""
    pts = sorted(map(tuple, np.asarray(points, dtype=float)))

    def half(seq):
        out: list[tuple[float, float]] = []
        for p in seq:
            while len(out) >= 2 and ((out[-1][0] - out[-2][0]) * (p[1] - out[-2][1]) -
                                     (out[-1][1] - out[-2][1]) * (p[0] - out[-2][0])) <= 0.0:
                out.pop()
            out.append(p)
        return out

    lower, upper = half(pts), half(reversed(pts))
    return np.array(lower[:-1] + upper[:-1])


def polygon_area(poly: np.ndarray) -> float:
    """Absolute area [m^2] of a polygon ((k, 2) vertices in order)."""
    if len(poly) < 3:
        return 0.0
    x, y = poly[:, 0], poly[:, 1]
    return 0.5 * abs(float((x * np.roll(y, -1) - np.roll(x, -1) * y).sum()))


def segment_box(points: np.ndarray) -> np.ndarray:
    """Counter-clockwise corners of the WALL_THICKNESS_M box along the two farthest points."""
    d = np.hypot(*(points[:, None, :] - points[None, :, :]).transpose(2, 0, 1))
    i, j = np.unravel_index(int(np.argmax(d)), d.shape)
    p, q = points[i], points[j]
    along = (q - p) / max(float(d[i, j]), 1e-9)
    side = 0.5 * WALL_THICKNESS_M * np.array([-along[1], along[0]])
    return np.array([p - side, q - side, q + side, p + side])


def _touch_centre(a: detect.Body, other_ccw: np.ndarray) -> np.ndarray | None:
    """Middle of the overlap of box ``a`` with the other polygon, a touch included
    (box_geometry.box_overlap_centre, as the accident detector reports it: a touch, or a touch
    pybullet reports within its tolerance of boxes a few millimetres apart, through the box
    grown by TOUCH_GROW_M; else None, and pybullet's witness point, possibly a corner, is
    taken)."""
    return box_overlap_centre(a.x_m, a.y_m, a.yaw_rad, a.length_m, a.width_m, other_ccw)
