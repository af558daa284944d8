"""Overlap detection between traffic agents, as 004 sec. 7.1: bounding spheres first, then
oriented boxes (separating-axis test). Used to verify collision-free traffic; O(n) via a grid."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from vehicle_sim.core.box_geometry import bounding_radius, half_extent


@njit(cache=True)
def _box_overlap(x1, y1, h1, l1, w1, x2, y2, h2, l2, w2):
    """Separating-axis test of two oriented rectangles (centre, heading, length, width)."""
    dx, dy = x2 - x1, y2 - y1
    for h in (h1, h1 + 0.5 * math.pi, h2, h2 + 0.5 * math.pi):
        ax, ay = math.cos(h), math.sin(h)
        if abs(dx * ax + dy * ay) > half_extent(l1, w1, h1, h) + half_extent(l2, w2, h2, h):
            return False
    return True


@njit(cache=True)
def cell_starts(sorted_cells, n_cells):
    """CSR offsets of sorted cell indices: (n_cells + 1,), entry c = the first position whose
    cell is >= c (np.searchsorted(sorted_cells, np.arange(n_cells + 1)), one linear pass
    instead of a binary search per cell: a sparse city has thousands of cells per agent)."""
    starts = np.empty(n_cells + 1, np.int64)
    c = 0
    for k in range(sorted_cells.shape[0]):
        while c <= sorted_cells[k]:
            starts[c] = k
            c += 1
    starts[c:] = sorted_cells.shape[0]
    return starts


@njit(cache=True)
def overlapping_pairs(x, y, yaw, length, width, cell_m):
    """(k, 2) index pairs of overlapping boxes among n agents (arrays of equal length)."""
    n = x.shape[0]
    out = np.empty((0, 2), np.int64)
    if n < 2:
        return out
    x0, y0 = x.min(), y.min()
    nx = int((x.max() - x0) / cell_m) + 1
    ny = int((y.max() - y0) / cell_m) + 1
    cell = ((y - y0) // cell_m).astype(np.int64) * nx + ((x - x0) // cell_m).astype(np.int64)
    order = np.argsort(cell)
    starts = cell_starts(cell[order], nx * ny)
    pairs = []
    for i in range(n):
        cx, cy = int((x[i] - x0) // cell_m), int((y[i] - y0) // cell_m)
        ri = bounding_radius(length[i], width[i])
        for gy in range(max(cy - 1, 0), min(cy + 2, ny)):
            for gx in range(max(cx - 1, 0), min(cx + 2, nx)):
                c = gy * nx + gx
                for k in range(starts[c], starts[c + 1]):
                    j = order[k]
                    if j <= i:
                        continue
                    rj = bounding_radius(length[j], width[j])
                    if math.hypot(x[j] - x[i], y[j] - y[i]) > ri + rj:
                        continue  # bounding spheres apart
                    if _box_overlap(x[i], y[i], yaw[i], length[i], width[i],
                                    x[j], y[j], yaw[j], length[j], width[j]):
                        pairs.append((i, j))
    if len(pairs) == 0:
        return out
    res = np.empty((len(pairs), 2), np.int64)
    for k in range(len(pairs)):
        res[k, 0], res[k, 1] = pairs[k]
    return res


def collisions(agents: dict[str, np.ndarray]) -> np.ndarray:
    """Overlapping pairs (uids) among the agents returned by ``TrafficSim.agents()``."""
    pairs = overlapping_pairs(agents["x"], agents["y"], agents["yaw"], agents["length"],
                              agents["width"], 10.0)
    return agents["uid"][pairs] if len(pairs) else np.zeros((0, 2), dtype=np.int64)
