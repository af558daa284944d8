"""Numba scans along an explicit route, a list of lanes as the ego's ``core.ego.route.Route``
keeps (the agents' kernels follow lane -> next lane instead): the route sampled into a polyline,
and the nearest traffic agent in its corridor (the ego autopilot's leader, 004 sec. 6).

Frame: the map frame (ENU) [m, rad]. They give, bit for bit, what the route's Python readers
(``Route.point_ahead``) and the numpy search they replaced gave: the same operations in the same
order (test_ego_autopilot compares them).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from vehicle_sim.core.traffic.kernels.driver_law import corridor_gap
from vehicle_sim.core.traffic.kernels.lane_path import eval_lane
from vehicle_sim.core.traffic.kernels.layout import LF_LEN


@njit(cache=True)
def route_points(pts, lane_f, lane_i, lanes, s_m, ahead_m):
    """(n, 4) rows x, y [m], heading [rad], distance ahead [m] of the points ``ahead_m`` [m]
    (n,) ahead of arc length ``s_m`` on ``lanes[0]`` along the route ``lanes`` (linear beyond
    the last lane's end)."""
    out = np.empty((ahead_m.shape[0], 4))
    last = lanes.shape[0] - 1
    for n in range(ahead_m.shape[0]):
        s = s_m + ahead_m[n]
        for i in range(lanes.shape[0]):
            length = lane_f[lanes[i], LF_LEN]
            if s <= length or i == last:
                x, y, h, _ = eval_lane(pts, lane_i, lanes[i], s)
                out[n, 0], out[n, 1], out[n, 2], out[n, 3] = x, y, h, ahead_m[n]
                break
            s -= length
    return out


@njit(cache=True)
def _nearest_point(line, x, y):
    """Index of the first row of ``line`` nearest to (x, y) [m]."""
    best_j, best_d2 = 0, math.inf
    for j in range(line.shape[0]):
        dx, dy = x - line[j, 0], y - line[j, 1]
        d2 = dx * dx + dy * dy
        if d2 < best_d2:
            best_j, best_d2 = j, d2
    return best_j


@njit(cache=True)
def corridor_leader(agents, line, x0, y0, range_m, own_size, margin_m):
    """(row of ``agents``, or -1; its bumper gap [m], inf if none; cosine of its heading
    relative to the route there) of the agent nearest ahead in the route's corridor.

    agents: (n, 6) rows x, y [m], yaw [rad], speed [m/s], length, width [m]; only those within
    ``range_m`` of (x0, y0) [m] (the route's current point) count. line: ``route_points`` of
    the route. Each agent is placed on the route at its nearest line point (distance ahead along
    the line's heading, lateral offset across it); driver_law.corridor_gap decides the rest with
    the ego's own_size (length, width) [m] and ``margin_m``. Ties: the first row.
    """
    best_k, best_gap, best_cr = -1, math.inf, 1.0
    for k in range(agents.shape[0]):
        ax, ay = agents[k, 0], agents[k, 1]
        if not math.hypot(ax - x0, ay - y0) < range_m:
            continue
        j = _nearest_point(line, ax, ay)
        h = line[j, 2]
        dx, dy = ax - line[j, 0], ay - line[j, 1]
        along = line[j, 3] + dx * math.cos(h) + dy * math.sin(h)
        lat = -dx * math.sin(h) + dy * math.cos(h)
        cr = math.cos(agents[k, 2] - h)
        gap = corridor_gap(along, lat, cr, own_size, (agents[k, 4], agents[k, 5]), margin_m)
        if gap < best_gap:
            best_k, best_gap, best_cr = k, gap, cr
    return best_k, best_gap, best_cr
