"""Building footprints and GNSS outage zones: polygons in the local ENU frame (x east, y north).

The road-map module supplies footprints; scenarios supply outage zones. Both are
``GnssZones(buildings=(Polygon(...), ...), outages=(...))`` and can be loaded from YAML with
``config.load(GnssZones, path)`` (each polygon: ``vertices_m: [[x, y], ...]``).
Inside/outside uses the even-odd rule; a point exactly on an edge may fall either way.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vehicle_sim.core.config import spec
from vehicle_sim.core.frames import ODOM_MAX_M


@dataclass(frozen=True)
class Polygon:
    """A simple polygon, vertices (x, y) [m] in the local frame, open (last != first needed)."""

    vertices_m: tuple[tuple[float, float], ...] = spec(unit="m", ge=-ODOM_MAX_M, le=ODOM_MAX_M)
    _xy: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        xy = np.asarray(self.vertices_m, dtype=float)
        if xy.ndim != 2 or xy.shape[1] != 2 or xy.shape[0] < 3:
            raise ValueError("a polygon needs at least 3 (x, y) vertices")
        if not np.all(np.isfinite(xy)):
            raise ValueError("polygon vertices must be finite")
        x, y = xy[:, 0], xy[:, 1]
        if abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) <= 1e-12:
            raise ValueError("polygon has zero area")
        object.__setattr__(self, "_xy", xy)

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        """(xmin, ymin, xmax, ymax) [m]."""
        lo, hi = self._xy.min(axis=0), self._xy.max(axis=0)
        return float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1])

    def contains(self, x: float, y: float) -> bool:
        """True if (x, y) [m] is inside (even-odd ray casting)."""
        xi, yi = self._xy[:, 0], self._xy[:, 1]
        xj, yj = np.roll(xi, 1), np.roll(yi, 1)
        crosses = (yi > y) != (yj > y)
        with np.errstate(divide="ignore", invalid="ignore"):
            x_cut = xi + (y - yi) * (xj - xi) / (yj - yi)
        return bool(np.count_nonzero(crosses & (x < x_cut)) % 2)

    def distance_m(self, x: float, y: float) -> float:
        """Distance [m] from (x, y) to the polygon; 0 inside."""
        if self.contains(x, y):
            return 0.0
        a = self._xy
        d = np.roll(a, -1, axis=0) - a
        p = np.array([x, y]) - a
        t = np.clip(np.sum(p * d, axis=1) / np.sum(d * d, axis=1), 0.0, 1.0)
        return float(np.sqrt(np.min(np.sum((p - t[:, None] * d) ** 2, axis=1))))


def _bboxes(polys: tuple[Polygon, ...]) -> np.ndarray:
    return np.array([p.bbox for p in polys]).reshape(-1, 4)


@dataclass(frozen=True)
class GnssZones:
    """Where GNSS degrades: building footprints (urban multipath) and outage zones (no fix)."""

    buildings: tuple[Polygon, ...] = ()
    outages: tuple[Polygon, ...] = ()
    _bb: np.ndarray = field(init=False, repr=False, compare=False)
    _ob: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_bb", _bboxes(self.buildings))
        object.__setattr__(self, "_ob", _bboxes(self.outages))

    def in_outage(self, x: float, y: float) -> bool:
        """True if (x, y) [m] lies inside any outage polygon."""
        return any(self.outages[i].contains(x, y) for i in _candidates(self._ob, x, y, 0.0))

    def near_building(self, x: float, y: float, distance_m: float) -> bool:
        """True if (x, y) [m] is inside or within distance_m [m] of any building footprint."""
        return any(self.buildings[i].distance_m(x, y) <= distance_m
                   for i in _candidates(self._bb, x, y, distance_m))


def _candidates(bb: np.ndarray, x: float, y: float, margin: float) -> np.ndarray:
    """Indices of boxes (xmin, ymin, xmax, ymax) within margin [m] of (x, y)."""
    if bb.shape[0] == 0:
        return np.zeros(0, dtype=int)
    hit = ((bb[:, 0] - margin <= x) & (x <= bb[:, 2] + margin)
           & (bb[:, 1] - margin <= y) & (y <= bb[:, 3] + margin))
    return np.flatnonzero(hit)
