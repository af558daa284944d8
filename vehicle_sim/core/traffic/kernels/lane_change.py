"""Overtaking lane changes (numba), 004 sec. 6.3.1: a driver held below its objective speed by
the leader moves to an adjacent same-direction lane only if the minimum safety distance holds.

Minimum safety distance (our choice; 004 gives no formula): the IDM desired gap s* of Treiber,
Hennecke & Helbing (2000) to the new leader and, for the new follower, s* to us; plus MOBIL's
safety criterion (Kesting, Treiber & Helbing 2007, Transp. Res. Rec. 1999: 86-94) that the new
follower need not brake harder than b_safe. Incentive: MOBIL with politeness 0, a_new - a_old >
a_thr. No lane change in or near junctions (004 sec. 6.3.2) nor into bus lanes.
"""
from __future__ import annotations

import math

from numba import njit

from vehicle_sim.core.traffic.kernels.agent_driver import agent_idm
from vehicle_sim.core.traffic.kernels.exits import choose_exit, hash_uniform
from vehicle_sim.core.traffic.kernels.lane_path import project
from vehicle_sim.core.traffic.kernels.layout import (
    AF_A_M,
    AF_B_COMF,
    AF_LAT_OFF,
    AF_LENGTH,
    AF_S,
    AF_S0,
    AF_T_HW,
    AF_U,
    AF_V_FACTOR,
    AF_X,
    AF_Y,
    AI_HOPS,
    AI_LANE,
    AI_NEXT,
    AI_UID,
    CFG_APPROACH,
    CFG_BSAFE,
    CFG_LC_THR,
    CFG_SEED,
    LF_LEN,
    LF_SPEED,
    LI_BUS,
    LI_CNODE,
    LI_LEFT,
    LI_RIGHT,
)

LC_END_MARGIN_M = 20.0  # beyond the approach zone: no lane change this close to a junction
LC_START_MARGIN_M = 15.0  # nor just after leaving one


@njit(cache=True)
def s_star(af, j, u_lead):
    """IDM desired gap [m] of agent j behind a leader at u_lead (Treiber 2000)."""
    u = af[AF_U, j]
    return af[AF_S0, j] + max(0.0, u * af[AF_T_HW, j] + u * (u - u_lead) /
                           (2.0 * math.sqrt(af[AF_A_M, j] * af[AF_B_COMF, j])))


@njit(cache=True, inline="always")
def lane_neighbours(af, nb, lane, s):
    """(follower, leader) agent indices around arc length s on a lane (-1 if none)."""
    order, start, end = nb.order, nb.start, nb.end
    lo, hi = start[lane], end[lane]
    while lo < hi:  # first position with s_j > s
        mid = (lo + hi) // 2
        if af[AF_S, order[mid]] <= s:
            lo = mid + 1
        else:
            hi = mid
    lead = order[lo] if lo < end[lane] else -1
    foll = order[lo - 1] if lo - 1 >= start[lane] else -1
    return foll, lead


@njit(cache=True, inline="always")
def try_change(net, af, ai, nb, cfg, i, a_old, touched):
    """Move agent i to a better adjacent lane if safe; returns True if it changed.

    ``touched[lane]`` marks lanes changed from or into this step: the sorted neighbour lists
    are stale there, so no second change involves them in the same step.
    """
    ln = ai[AI_LANE, i]
    if net.lane_i[ln, LI_CNODE] >= 0 or abs(af[AF_LAT_OFF, i]) > 0.2 or touched[ln]:
        return False
    if af[AF_S, i] < LC_START_MARGIN_M:
        return False
    if net.lane_f[ln, LF_LEN] - af[AF_S, i] < cfg[CFG_APPROACH] + LC_END_MARGIN_M:
        return False
    u_des = af[AF_V_FACTOR, i] * net.lane_f[ln, LF_SPEED]
    if a_old > agent_idm(af, i, u_des, 1e9, 0.0) - cfg[CFG_LC_THR]:
        return False  # not held back by a leader
    for side in (LI_LEFT, LI_RIGHT):
        tgt = net.lane_i[ln, side]
        if tgt < 0 or net.lane_i[tgt, LI_BUS] == 1 or touched[tgt]:
            continue
        s = af[AF_S, i] * net.lane_f[tgt, LF_LEN] / net.lane_f[ln, LF_LEN]
        foll, lead = lane_neighbours(af, nb, tgt, s)
        a_new = agent_idm(af, i, u_des, 1e9, 0.0)
        if lead >= 0:
            gap = af[AF_S, lead] - s - 0.5 * (af[AF_LENGTH, i] + af[AF_LENGTH, lead])
            if gap < s_star(af, i, af[AF_U, lead]):
                continue
            a_new = agent_idm(af, i, u_des, gap, af[AF_U, lead])
        if foll >= 0:
            gap = s - af[AF_S, foll] - 0.5 * (af[AF_LENGTH, i] + af[AF_LENGTH, foll])
            u0f = af[AF_V_FACTOR, foll] * net.lane_f[tgt, LF_SPEED]
            if gap < s_star(af, foll, af[AF_U, i]) or \
                    agent_idm(af, foll, u0f, gap, af[AF_U, i]) < -cfg[CFG_BSAFE]:
                continue
        if a_new - a_old <= cfg[CFG_LC_THR]:
            continue
        s_new, lat = project(net.pts, net.lane_i, tgt, s, af[AF_X, i], af[AF_Y, i])
        ai[AI_LANE, i], af[AF_S, i], af[AF_LAT_OFF, i] = tgt, s_new, lat
        ai[AI_NEXT, i] = choose_exit(net, tgt, hash_uniform(int(cfg[CFG_SEED]), ai[AI_UID, i],
                                                            ai[AI_HOPS, i]))
        ai[AI_HOPS, i] += 1
        touched[ln], touched[tgt] = True, True
        return True
    return False

