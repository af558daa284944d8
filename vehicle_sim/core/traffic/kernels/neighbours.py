"""Per-step neighbour indices: agents sorted along lanes (leaders) and a uniform grid (cone
checks). Both are O(n log n) / O(n) so step cost grows (near-)linearly with the agent count."""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from vehicle_sim.core.traffic.kernels.layout import (
    AF_S,
    AF_X,
    AF_Y,
    AF_YAW,
    AI_ACTIVE,
    AI_LANE,
    CFG_CELL,
    CFG_GX0,
    CFG_GY0,
    CFG_NCX,
    CFG_NCY,
    FREE,
)

LANE_SORT_MAX = 64  # lane_order insertion-sorts lanes up to this many agents (else argsort)

# per-step neighbour index: agents sorted by (lane, s) with per-lane [start, end) slices and
# each agent's rank in ``order`` (lane_order); the grid's cell slices and items (grid_index);
# cos and sin of each agent's yaw (yaw_cos_sin)
Neighbours = namedtuple("Neighbours", "order start end rank cells items cos_yaw sin_yaw")
# what every agent of a step reads: the network (network.Net), light states, ego row, cfg row
Scene = namedtuple("Scene", "net lights ego cfg")


@njit(cache=True)
def neighbour_index(af, ai, cfg, n_lanes):
    """The step's Neighbours of the active agents."""
    order, start, end, rank = lane_order(af, ai, n_lanes)
    cells, items, _ = grid_index(af, ai, cfg)
    cos_yaw, sin_yaw = yaw_cos_sin(af, ai)
    return Neighbours(order, start, end, rank, cells, items, cos_yaw, sin_yaw)


@njit(cache=True)
def lane_order(af, ai, n_lanes):
    """Active agents sorted by (lane, s); per-lane [start, end) slices; each agent's rank."""
    cap = ai.shape[1]
    n = 0
    for i in range(cap):
        if ai[AI_ACTIVE, i] != FREE:
            n += 1
    idx = np.empty(n, np.int64)
    key = np.empty(n)
    n = 0
    for i in range(cap):
        if ai[AI_ACTIVE, i] != FREE:
            idx[n] = i
            key[n] = ai[AI_LANE, i] * 1.0e6 + af[AF_S, i]
            n += 1
    order = _sorted_by_key(idx, key, ai, n_lanes)
    start = np.zeros(n_lanes, np.int64)
    end = np.zeros(n_lanes, np.int64)
    rank = -np.ones(cap, np.int64)
    for k in range(n):
        i = order[k]
        rank[i] = k
        ln = ai[AI_LANE, i]
        if end[ln] == 0:
            start[ln] = k
        end[ln] = k + 1
    return order, start, end, rank


@njit(cache=True)
def _sorted_by_key(idx, key, ai, n_lanes):
    """``idx[np.argsort(key)]`` for the keys lane * 1e6 + s of lane_order, cheaper: a counting
    sort by lane, then an insertion sort within each lane (a few agents each). With distinct
    keys the sorted order is unique, so it is argsort's; on a tie, a NaN or a lane holding more
    than LANE_SORT_MAX agents the result is argsort's own."""
    n = idx.shape[0]
    first = np.zeros(n_lanes + 1, np.int64)  # lane ln's positions: [first[ln], first[ln + 1])
    for p in range(n):
        first[ai[AI_LANE, idx[p]] + 1] += 1
    for ln in range(n_lanes):
        if first[ln + 1] > LANE_SORT_MAX:
            return idx[np.argsort(key)]
        first[ln + 1] += first[ln]
    pos = np.empty(n, np.int64)  # indices into idx and key, sorted
    fill = first[:-1].copy()
    for p in range(n):
        ln = ai[AI_LANE, idx[p]]
        q = fill[ln]
        fill[ln] += 1
        while q > first[ln] and key[pos[q - 1]] > key[p]:
            pos[q] = pos[q - 1]
            q -= 1
        pos[q] = p
    for k in range(1, n):
        if not key[pos[k - 1]] < key[pos[k]]:
            return idx[np.argsort(key)]
    return idx[pos]


@njit(cache=True)
def grid_index(af, ai, cfg):
    """Counting sort of active agents into square cells; returns (cell_start, items, cell_of)."""
    cap = ai.shape[1]
    ncx, ncy = int(cfg[CFG_NCX]), int(cfg[CFG_NCY])
    cell_of = -np.ones(cap, np.int64)
    counts = np.zeros(ncx * ncy + 1, np.int64)
    for i in range(cap):
        if ai[AI_ACTIVE, i] != FREE:
            c = cell_id(af[AF_X, i], af[AF_Y, i], cfg)
            cell_of[i] = c
            counts[c + 1] += 1
    for c in range(ncx * ncy):
        counts[c + 1] += counts[c]
    fill = counts[:-1].copy()
    items = np.empty(counts[-1], np.int64)
    for i in range(cap):
        c = cell_of[i]
        if c >= 0:
            items[fill[c]] = i
            fill[c] += 1
    return counts, items, cell_of


@njit(cache=True)
def yaw_cos_sin(af, ai):
    """cos and sin of every active agent's yaw (0 for free slots). The cone checks need them
    for each of ~6 neighbours per agent: once per agent here instead of once per pair."""
    cap = ai.shape[1]
    cos_yaw = np.zeros(cap)
    sin_yaw = np.zeros(cap)
    for i in range(cap):
        if ai[AI_ACTIVE, i] != FREE:
            cos_yaw[i], sin_yaw[i] = math.cos(af[AF_YAW, i]), math.sin(af[AF_YAW, i])
    return cos_yaw, sin_yaw


@njit(cache=True)
def cell_id(x, y, cfg):
    """Cell of a point, clamped to the grid."""
    ncx, ncy = int(cfg[CFG_NCX]), int(cfg[CFG_NCY])
    cx = min(max(math.floor((x - cfg[CFG_GX0]) / cfg[CFG_CELL]), 0), ncx - 1)
    cy = min(max(math.floor((y - cfg[CFG_GY0]) / cfg[CFG_CELL]), 0), ncy - 1)
    return cy * ncx + cx
