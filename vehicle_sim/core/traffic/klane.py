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

from vehicle_sim.core.traffic import kdriver as kd
from vehicle_sim.core.traffic.agents import (
    A_M,
    B_COMF,
    HOPS,
    LANE,
    LAT_OFF,
    LENGTH,
    NEXT,
    S0,
    T_HW,
    UID,
    V_FACTOR,
    S,
    U,
    X,
    Y,
)
from vehicle_sim.core.traffic.kindex import C_APPROACH, C_BSAFE, C_LC_THR, C_SEED, hash_uniform
from vehicle_sim.core.traffic.kpath import project
from vehicle_sim.core.traffic.network import (
    L_BUS,
    L_CNODE,
    L_LEFT,
    L_LEN,
    L_NSUCC,
    L_RIGHT,
    L_SPEED,
    L_SUCC0,
)

LC_END_MARGIN_M = 20.0  # beyond the approach zone: no lane change this close to a junction
LC_START_MARGIN_M = 15.0  # nor just after leaving one


@njit(cache=True)
def s_star(af, j, u_lead):
    """IDM desired gap [m] of agent j behind a leader at u_lead (Treiber 2000)."""
    u = af[U, j]
    return af[S0, j] + max(0.0, u * af[T_HW, j] + u * (u - u_lead) /
                           (2.0 * math.sqrt(af[A_M, j] * af[B_COMF, j])))


@njit(cache=True)
def neighbours(af, order, start, end, lane, s):
    """(follower, leader) agent indices around arc length s on a lane (-1 if none)."""
    lo, hi = start[lane], end[lane]
    while lo < hi:  # first position with s_j > s
        mid = (lo + hi) // 2
        if af[S, order[mid]] <= s:
            lo = mid + 1
        else:
            hi = mid
    lead = order[lo] if lo < end[lane] else -1
    foll = order[lo - 1] if lo - 1 >= start[lane] else -1
    return foll, lead


@njit(cache=True)
def try_change(net, af, ai, order, start, end, cfg, i, a_old, touched):
    """Move agent i to a better adjacent lane if safe; returns True if it changed.

    ``touched[lane]`` marks lanes changed from or into this step: the sorted neighbour lists
    are stale there, so no second change involves them in the same step.
    """
    ln = ai[LANE, i]
    if net.lane_i[ln, L_CNODE] >= 0 or abs(af[LAT_OFF, i]) > 0.2 or touched[ln]:
        return False
    if af[S, i] < LC_START_MARGIN_M:
        return False
    if net.lane_f[ln, L_LEN] - af[S, i] < cfg[C_APPROACH] + LC_END_MARGIN_M:
        return False
    u_des = af[V_FACTOR, i] * net.lane_f[ln, L_SPEED]
    if a_old > kd.agent_idm(af, i, u_des, 1e9, 0.0) - cfg[C_LC_THR]:
        return False  # not held back by a leader
    for side in (L_LEFT, L_RIGHT):
        tgt = net.lane_i[ln, side]
        if tgt < 0 or net.lane_i[tgt, L_BUS] == 1 or touched[tgt]:
            continue
        s = af[S, i] * net.lane_f[tgt, L_LEN] / net.lane_f[ln, L_LEN]
        foll, lead = neighbours(af, order, start, end, tgt, s)
        a_new = kd.agent_idm(af, i, u_des, 1e9, 0.0)
        if lead >= 0:
            gap = af[S, lead] - s - 0.5 * (af[LENGTH, i] + af[LENGTH, lead])
            if gap < s_star(af, i, af[U, lead]):
                continue
            a_new = kd.agent_idm(af, i, u_des, gap, af[U, lead])
        if foll >= 0:
            gap = s - af[S, foll] - 0.5 * (af[LENGTH, i] + af[LENGTH, foll])
            u0f = af[V_FACTOR, foll] * net.lane_f[tgt, L_SPEED]
            if gap < s_star(af, foll, af[U, i]) or \
                    kd.agent_idm(af, foll, u0f, gap, af[U, i]) < -cfg[C_BSAFE]:
                continue
        if a_new - a_old <= cfg[C_LC_THR]:
            continue
        s_new, lat = project(net.pts, net.lane_i, tgt, s, af[X, i], af[Y, i])
        ai[LANE, i], af[S, i], af[LAT_OFF, i] = tgt, s_new, lat
        ai[NEXT, i] = _exit(net, tgt, hash_uniform(int(cfg[C_SEED]), ai[UID, i], ai[HOPS, i]))
        ai[HOPS, i] += 1
        touched[ln], touched[tgt] = True, True
        return True
    return False


@njit(cache=True)
def _exit(net, lane, x):
    """Successor bracketing x in the cumulative exit probabilities (as kstep.choose_exit)."""
    k0, n = net.lane_i[lane, L_SUCC0], net.lane_i[lane, L_NSUCC]
    for k in range(k0, k0 + n):
        if x < net.succ_cum[k]:
            return net.succ[k]
    return net.succ[k0 + n - 1] if n > 0 else -1
