"""Numba helpers on sampled lane paths (``network.Net.pts`` rows x, y, heading, s, curvature,
turn to the next point: layout.PT_*)."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from vehicle_sim.core.traffic.kernels.layout import (
    LF_LEN,
    LI_NP,
    LI_NSUCC,
    LI_P0,
    LI_SUCC0,
    PT_HEADING,
    PT_TURN,
)


@njit(cache=True)
def seg_index(pts, p0, n, s):
    """Index k (p0 <= k < p0 + n - 1) of the segment holding arc length s (clamped)."""
    lo, hi = p0, p0 + n - 2
    if s <= pts[lo, 3]:
        return lo
    if s >= pts[hi, 3]:
        return hi
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if pts[mid, 3] <= s:
            lo = mid
        else:
            hi = mid - 1
    return lo


@njit(cache=True)
def eval_lane(pts, lane_i, lane, s):
    """(x, y, heading, curvature) at arc length s of a lane; linear beyond its ends."""
    p0, n = lane_i[lane, LI_P0], lane_i[lane, LI_NP]
    k = seg_index(pts, p0, n, s)
    ds = pts[k + 1, 3] - pts[k, 3]
    t = (s - pts[k, 3]) / ds if ds > 1e-12 else 0.0
    dx, dy = pts[k + 1, 0] - pts[k, 0], pts[k + 1, 1] - pts[k, 1]
    x = pts[k, 0] + t * dx
    y = pts[k, 1] + t * dy
    h = pts[k, 2] + t * pts[k, PT_TURN]  # exact tangent on arcs
    return x, y, math.atan2(math.sin(h), math.cos(h)), pts[k + 1, 4]


@njit(cache=True)
def lane_points(pts, lane_i, lanes, s):
    """(x, y) rows of eval_lane at each (lanes[i], s[i])."""
    xy = np.empty((len(lanes), 2))
    for i in range(len(lanes)):
        x, y, _, _ = eval_lane(pts, lane_i, lanes[i], s[i])
        xy[i, 0], xy[i, 1] = x, y
    return xy


@njit(cache=True)
def fill_turns(pts, lane_i):
    """Fill the PT_TURN column: each segment's heading change, wrapped, which eval_lane reads
    for every point it evaluates (two trigonometric calls and an atan2 saved each time)."""
    for lane in range(lane_i.shape[0]):
        p0, n = lane_i[lane, LI_P0], lane_i[lane, LI_NP]
        if n == 0:  # a lane without points: nothing to fill, and no write before p0
            continue
        for k in range(p0, p0 + n - 1):
            dh = pts[k + 1, PT_HEADING] - pts[k, PT_HEADING]
            pts[k, PT_TURN] = math.atan2(math.sin(dh), math.cos(dh))
        pts[p0 + n - 1, PT_TURN] = 0.0


@njit(cache=True)
def project(pts, lane_i, lane, s_guess, x, y):
    """Arc length and signed lateral offset (+ left) of (x, y) near s_guess on a lane."""
    p0, n = lane_i[lane, LI_P0], lane_i[lane, LI_NP]
    k0 = seg_index(pts, p0, n, s_guess)
    best_d2, best_s, best_lat = 1e30, s_guess, 0.0
    for k in range(max(p0, k0 - 2), min(p0 + n - 1, k0 + 3)):
        dx, dy = pts[k + 1, 0] - pts[k, 0], pts[k + 1, 1] - pts[k, 1]
        L2 = dx * dx + dy * dy
        if L2 < 1e-12:
            continue
        t = ((x - pts[k, 0]) * dx + (y - pts[k, 1]) * dy) / L2
        if k > p0:
            t = max(t, 0.0)
        if k < p0 + n - 2:
            t = min(t, 1.0)
        px, py = pts[k, 0] + t * dx, pts[k, 1] + t * dy
        d2 = (x - px) ** 2 + (y - py) ** 2
        if d2 < best_d2:
            L = math.sqrt(L2)
            best_d2 = d2
            best_s = pts[k, 3] + t * L
            best_lat = ((x - pts[k, 0]) * (-dy) + (y - pts[k, 1]) * dx) / L
    return best_s, best_lat


@njit(cache=True)
def default_next(lane_i, succ, lane):
    """First successor of a lane or -1 (connectors have exactly one)."""
    if lane_i[lane, LI_NSUCC] == 0:
        return -1
    return succ[lane_i[lane, LI_SUCC0]]


@njit(cache=True)
def eval_route(pts, lane_f, lane_i, succ, lane, nxt, s):
    """Point at arc length s along lane -> nxt -> default successor (clamped at a dead end)."""
    while s > lane_f[lane, LF_LEN] and nxt >= 0:
        s -= lane_f[lane, LF_LEN]
        lane, nxt = nxt, default_next(lane_i, succ, nxt)
    return eval_lane(pts, lane_i, lane, s)
