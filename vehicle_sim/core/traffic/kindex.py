"""Per-step neighbour indices: agents sorted along lanes (leaders) and a uniform grid (cone
checks). Both are O(n log n) / O(n) so step cost grows (near-)linearly with the agent count."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from vehicle_sim.core.traffic.agents import ACTIVE, FREE, LANE, S, X, Y

# cfg columns shared by the kernels (filled by sim.TrafficSim)
(C_DT, C_T, C_LOD, C_DYNMIN, C_APPROACH, C_EGO_YIELD, C_MAXWAIT, C_LC_TIME, C_LC_THR, C_BSAFE,
 C_SEED, C_GX0, C_GY0, C_CELL, C_NCX, C_NCY) = range(16)
N_CFG = 16
# ego columns
E_X, E_Y, E_YAW, E_U, E_ON, E_LEN, E_WID = range(7)
N_EGO = 7


@njit(cache=True)
def lane_order(af, ai, n_lanes):
    """Active agents sorted by (lane, s); per-lane [start, end) slices; each agent's rank."""
    cap = ai.shape[1]
    n = 0
    for i in range(cap):
        if ai[ACTIVE, i] != FREE:
            n += 1
    idx = np.empty(n, np.int64)
    key = np.empty(n)
    n = 0
    for i in range(cap):
        if ai[ACTIVE, i] != FREE:
            idx[n] = i
            key[n] = ai[LANE, i] * 1.0e6 + af[S, i]
            n += 1
    order = idx[np.argsort(key)]
    start = np.zeros(n_lanes, np.int64)
    end = np.zeros(n_lanes, np.int64)
    rank = -np.ones(cap, np.int64)
    for k in range(n):
        i = order[k]
        rank[i] = k
        ln = ai[LANE, i]
        if end[ln] == 0:
            start[ln] = k
        end[ln] = k + 1
    return order, start, end, rank


@njit(cache=True)
def grid_index(af, ai, cfg):
    """Counting sort of active agents into square cells; returns (cell_start, items, cell_of)."""
    cap = ai.shape[1]
    ncx, ncy = int(cfg[C_NCX]), int(cfg[C_NCY])
    cell_of = -np.ones(cap, np.int64)
    counts = np.zeros(ncx * ncy + 1, np.int64)
    for i in range(cap):
        if ai[ACTIVE, i] != FREE:
            c = cell_id(af[X, i], af[Y, i], cfg)
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
def cell_id(x, y, cfg):
    """Cell of a point, clamped to the grid."""
    ncx, ncy = int(cfg[C_NCX]), int(cfg[C_NCY])
    cx = min(max(math.floor((x - cfg[C_GX0]) / cfg[C_CELL]), 0), ncx - 1)
    cy = min(max(math.floor((y - cfg[C_GY0]) / cfg[C_CELL]), 0), ncy - 1)
    return cy * ncx + cx


@njit(cache=True)
def hash_uniform(seed, uid, hops):
    """Deterministic uniform [0, 1) from (seed, agent uid, lane count) by splitmix64."""
    z = (np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(uid) * np.uint64(0xBF58476D1CE4E5B9)
         + np.uint64(hops) * np.uint64(0x94D049BB133111EB) + np.uint64(0x632BE59BD9B4E019))
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return float(z >> np.uint64(11)) / 9007199254740992.0
