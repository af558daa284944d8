"""Broad phase of the crash world (004 sec. 7.1-7.2: bounding spheres first, sub-models only for
pairs that may touch), as numba kernels over packed arrays; O(n) via uniform grids.

- Vehicle-vehicle: core.traffic.collisions.overlapping_pairs (grid + bounding spheres + oriented
  boxes) on the boxes inflated by how far each may move within the step.
- Vehicle-static: the static objects' axis-aligned bounding boxes are binned once into a grid
  (``StaticGrid``, a CSR list per cell: a building spans many cells); a query circle visits the
  cells its bounding square covers and keeps the boxes its square overlaps (boxes, not circles:
  a 76 m building's bounding circle would reach over the street beside it).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from vehicle_sim.core.box_geometry import bounding_radius
from vehicle_sim.core.traffic.collisions import overlapping_pairs


@dataclass(frozen=True)
class StaticGrid:
    """Static bounding boxes (xmin, ymin, xmax, ymax [m]) binned in square cells of ``cell_m``."""

    boxes: np.ndarray  # (m, 4)
    origin_m: np.ndarray  # (2,) lower-left corner
    cell_m: float
    shape: tuple[int, int]  # (nx, ny)
    starts: np.ndarray  # (nx * ny + 1,) CSR offsets
    items: np.ndarray  # static indices


def build_static_grid(boxes: np.ndarray, cell_m: float = 20.0) -> StaticGrid:
    """Bin boxes (m, 4) into a grid; every cell a box touches lists it."""
    boxes = np.asarray(boxes, dtype=float).reshape(-1, 4)
    if len(boxes) == 0:
        return StaticGrid(boxes, np.zeros(2), cell_m, (1, 1), np.zeros(2, np.int64),
                          np.zeros(0, np.int64))
    lo, hi = boxes[:, :2].min(axis=0), boxes[:, 2:].max(axis=0)
    nx, ny = (int((hi - lo)[k] // cell_m) + 1 for k in (0, 1))
    buckets: list[list[int]] = [[] for _ in range(nx * ny)]
    for i, (x0, y0, x1, y1) in enumerate(boxes):
        for gy in range(int((y0 - lo[1]) // cell_m), int((y1 - lo[1]) // cell_m) + 1):
            for gx in range(int((x0 - lo[0]) // cell_m), int((x1 - lo[0]) // cell_m) + 1):
                buckets[gy * nx + gx].append(i)
    starts = np.zeros(nx * ny + 1, np.int64)
    starts[1:] = np.cumsum([len(b) for b in buckets])
    items = np.array([i for b in buckets for i in b], dtype=np.int64)
    return StaticGrid(boxes, lo, float(cell_m), (nx, ny), starts, items)


@njit(cache=True)
def _static_hits(qx, qy, qr, boxes, x0, y0, cell, nx, ny, starts, items):
    out = []
    for q in range(qx.shape[0]):
        gx0 = max(int((qx[q] - qr[q] - x0) // cell), 0)
        gx1 = min(int((qx[q] + qr[q] - x0) // cell), nx - 1)
        gy0 = max(int((qy[q] - qr[q] - y0) // cell), 0)
        gy1 = min(int((qy[q] + qr[q] - y0) // cell), ny - 1)
        for gy in range(gy0, gy1 + 1):
            for gx in range(gx0, gx1 + 1):
                c = gy * nx + gx
                for k in range(starts[c], starts[c + 1]):
                    s = items[k]
                    if boxes[s, 0] <= qx[q] + qr[q] and qx[q] - qr[q] <= boxes[s, 2] and \
                            boxes[s, 1] <= qy[q] + qr[q] and qy[q] - qr[q] <= boxes[s, 3]:
                        out.append((q, s))
    res = np.empty((len(out), 2), np.int64)
    for k in range(len(out)):
        res[k, 0], res[k, 1] = out[k]
    return res


def static_candidates(grid: StaticGrid, x: np.ndarray, y: np.ndarray, r: np.ndarray
                      ) -> np.ndarray:
    """(k, 2) unique (query index, static index) pairs: the query circle's bounding square
    overlaps the static's box."""
    if len(grid.items) == 0 or len(x) == 0:
        return np.zeros((0, 2), np.int64)
    pairs = _static_hits(x, y, r, grid.boxes, grid.origin_m[0], grid.origin_m[1], grid.cell_m,
                         grid.shape[0], grid.shape[1], grid.starts, grid.items)
    return np.unique(pairs, axis=0) if len(pairs) > 1 else pairs


def vehicle_candidates(pose: np.ndarray, size: np.ndarray, reach_m: np.ndarray) -> np.ndarray:
    """(k, 2) index pairs of boxes (pose (n, 3) x y yaw, size (n, 2) length width) that overlap
    once each is grown by its reach [m] on every side."""
    if len(pose) < 2:
        return np.zeros((0, 2), np.int64)
    length = size[:, 0] + 2.0 * reach_m
    width = size[:, 1] + 2.0 * reach_m
    cell = max(1.0, float(np.hypot(length, width).max()))
    return overlapping_pairs(np.ascontiguousarray(pose[:, 0]), np.ascontiguousarray(pose[:, 1]),
                             np.ascontiguousarray(pose[:, 2]), length, width, cell)


@njit(cache=True)
def agents_near(pose, vel, size, stamp_ns, t_ns, max_extra_ns, ex, ey, radius, reach):
    """Rows of agents (pose (n, 3) x y yaw, vel (n, 3) vx vy r, size (n, 2) length width) whose
    bounding circle, moved at their velocity to t_ns (age clipped to [0, max_extra_ns]), is
    within ``reach`` [m] of the ego's (centre (ex, ey), ``radius`` [m]): the ego's crash broad
    phase, every physics step (one call instead of a dozen numpy temporaries; the same
    arithmetic, elementwise)."""
    out = np.empty(pose.shape[0], np.int64)
    n = 0
    for i in range(pose.shape[0]):
        age = min(max(t_ns - stamp_ns[i], 0), max_extra_ns) * 1e-9
        dx = pose[i, 0] + vel[i, 0] * age - ex
        dy = pose[i, 1] + vel[i, 1] * age - ey
        if np.hypot(dx, dy) <= bounding_radius(size[i, 0], size[i, 1]) + radius + reach:
            out[n] = i
            n += 1
    return out[:n]
