"""Junction entry of paper 004 sec. 6.3 (numba): signals, stop / give-way signs, priority.

An agent on an entry lane may enter the junction (COMMIT) only when (1) its signal allows it,
(2) its exit lane has room, (3) the ego is not in or about to reach the junction, (4) no agent on
a conflicting connector is inside and short of the conflict end, or committed and closer than
the critical gap in time, and (5) it wins
every pairwise priority test against ready agents on conflicting connectors. The test is
antisymmetric, so two agents never both win: sign rank (no sign / green beats stop, give way,
dark light); both waited > max_wait or both at stop signs: arrival order (004 stop-sign rule);
004 visibility rule (the driver who sees the other, smaller bearing angle, concedes); a left
turner yields to the opposite flow (Vienna Convention 1968, art. 18(4)); then arrival, then uid.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from vehicle_sim.core.traffic.agents import (
    A_M,
    ACTIVE,
    B_COMF,
    COMMIT,
    GO,
    GW_SPEED,
    IGNORE_SIGNS,
    LANE,
    LENGTH,
    NEXT,
    OWNED,
    RED_RUN,
    S0,
    STOP_SPEED,
    TICKET,
    UID,
    WAIT_T,
    YAW,
    YELLOW_DEC,
    S,
    U,
    X,
    Y,
)
from vehicle_sim.core.traffic.kindex import (
    C_APPROACH,
    C_EGO_YIELD,
    C_MAXWAIT,
    C_T,
    E_ON,
    E_U,
    E_X,
    E_Y,
    E_YAW,
)
from vehicle_sim.core.traffic.kpath import default_next
from vehicle_sim.core.traffic.network import (
    K_GIVEWAY,
    K_LIGHT,
    K_STOP,
    L_CLOCAL,
    L_CNODE,
    L_ENODE,
    L_LEN,
    L_NSIG,
    L_SIG0,
    L_SPEED,
    L_TURN,
    N_C0,
    N_NC,
    N_R,
    N_X,
    N_Y,
    S_KIND,
    S_LIGHT,
    S_S,
)

NONE, INSIDE, COMMITTED, READY, WAITING = 0, 1, 2, 3, 4
GREEN, YELLOW, RED, DARK = 0, 1, 2, -1
VIS_TOL_RAD = 0.1  # visibility angles closer than this are a tie
LINE_ZONE_M = 3.0  # "at the line": front bumper closer than this
CRITICAL_GAP_S = 6.5  # HCM 2010 ex. 19-10: base critical headway, through movement from minor


@njit(cache=True)
def end_control(net, lights, lane):
    """(kind, light state, stop-line s) of the sign or light governing a lane's end."""
    kind, state, s_line = -1, GREEN, net.lane_f[lane, L_LEN]
    for k in range(net.lane_i[lane, L_SIG0], net.lane_i[lane, L_SIG0] + net.lane_i[lane, L_NSIG]):
        kk = int(net.sig_f[k, S_KIND])
        if kk == K_LIGHT or kk == K_STOP or kk == K_GIVEWAY:
            kind, s_line = kk, net.sig_f[k, S_S]
            if kk == K_LIGHT:
                state = lights[int(net.sig_f[k, S_LIGHT])]
                if state == DARK:
                    kind = K_GIVEWAY  # lights outside the simulated set act as give way
    return kind, state, s_line


@njit(cache=True)
def classify(net, af, ai, lights, order, start, end, rank, ego, cfg, i, node_busy):
    """Role, node, connector, sign rank and stop position (s on lane) of agent i."""
    ln = ai[LANE, i]
    cnode = net.lane_i[ln, L_CNODE]
    if cnode >= 0:
        return INSIDE, cnode, ln, 0, -1.0
    node = net.lane_i[ln, L_ENODE]
    if node < 0 or ai[NEXT, i] < 0 or end[ln] == 0 or order[end[ln] - 1] != i:
        return NONE, -1, -1, 0, -1.0
    u = af[U, i]
    d_end = net.lane_f[ln, L_LEN] - af[S, i] - 0.5 * af[LENGTH, i]
    if d_end > max(cfg[C_APPROACH], u * u / 3.0 + u + 5.0):
        return NONE, -1, -1, 0, -1.0
    kind, state, s_line = end_control(net, lights, ln)
    d_line = s_line - af[S, i] - 0.5 * af[LENGTH, i]
    stop_s = net.lane_f[ln, L_LEN]
    sign_rank = 0 if kind < 0 or kind == K_LIGHT else 1
    allowed = True
    if kind == K_LIGHT:
        if state == GREEN:
            ai[GO, i] = -1
        else:
            if ai[GO, i] < 0:  # 004 6.3.3: decide once per yellow / red
                need = u * u / (2.0 * max(d_line, 0.1))
                go = need > af[YELLOW_DEC, i] if state == YELLOW else d_line < af[RED_RUN, i]
                ai[GO, i] = 1 if go or d_line < 0.0 else 0
            allowed = ai[GO, i] == 1
            stop_s = s_line
    elif kind == K_STOP or kind == K_GIVEWAY:
        v_line = af[STOP_SPEED, i] if kind == K_STOP else af[GW_SPEED, i]
        clear = ai[IGNORE_SIGNS, i] == 1 and node_busy[node] <= 1
        allowed = clear or (d_line < LINE_ZONE_M and u <= v_line + 0.05)
    if ai[COMMIT, i] == 1 and not (kind == K_LIGHT and state != GREEN and ai[GO, i] == 0):
        return COMMITTED, node, ai[NEXT, i], sign_rank, stop_s
    ai[COMMIT, i] = 0
    if not allowed or d_end > u * u / (2.0 * af[B_COMF, i] + 1e-9) + u + 5.0:
        return WAITING, node, ai[NEXT, i], sign_rank, stop_s
    if af[TICKET, i] < 0.0:
        af[TICKET, i] = cfg[C_T]
    if not _exit_free(net, af, ai, order, start, end, i) or _ego_blocks(net, ego, cfg, node):
        return WAITING, node, ai[NEXT, i], sign_rank, stop_s
    return READY, node, ai[NEXT, i], sign_rank, stop_s


@njit(cache=True)
def _exit_free(net, af, ai, order, start, end, i):
    out = default_next(net.lane_i, net.succ, ai[NEXT, i])
    if out < 0 or end[out] == start[out]:
        return True
    j = order[start[out]]
    return af[S, j] - 0.5 * af[LENGTH, j] > af[LENGTH, i] + af[S0, i]


@njit(cache=True)
def _ego_blocks(net, ego, cfg, node):
    if ego[E_ON] < 0.5:
        return False
    dx, dy = net.node_f[node, N_X] - ego[E_X], net.node_f[node, N_Y] - ego[E_Y]
    d = math.hypot(dx, dy)
    if d < net.node_f[node, N_R]:
        return True
    towards = dx * math.cos(ego[E_YAW]) + dy * math.sin(ego[E_YAW]) > 0.0
    return towards and d - net.node_f[node, N_R] < ego[E_U] * cfg[C_EGO_YIELD]


@njit(cache=True)
def eta(d, u, a, v_max):
    """Time [s] to cover d [m] from speed u accelerating at a up to v_max (a pessimistic ETA)."""
    if d <= 0.0:
        return 0.0
    v_max = max(v_max, u)
    d_acc = (v_max * v_max - u * u) / (2.0 * a)
    if d <= d_acc:
        return (-u + math.sqrt(u * u + 2.0 * a * d)) / a
    return (v_max - u) / a + (d - d_acc) / v_max


@njit(cache=True)
def conflict_out(net, node, ca, cb):
    """Arc length on connector ca past which it no longer conflicts with cb; -1: no conflict."""
    if ca < 0 or cb < 0:
        return -1.0
    n = net.node_i[node, N_NC]
    a, b = net.lane_i[ca, L_CLOCAL], net.lane_i[cb, L_CLOCAL]
    return net.conf[net.node_i[node, N_C0] + a * n + b]


@njit(cache=True)
def wins(net, af, ai, cfg, i, j, rank_i, rank_j, stop_i, stop_j, ci, cj):
    """True if i has priority over j (antisymmetric by construction)."""
    if rank_i != rank_j:
        return rank_i < rank_j
    long_wait = af[WAIT_T, i] > cfg[C_MAXWAIT] and af[WAIT_T, j] > cfg[C_MAXWAIT]
    if not (long_wait or (stop_i and stop_j)):
        th_i = _vis_angle(af[X, i], af[Y, i], af[YAW, i], af[X, j], af[Y, j])
        th_j = _vis_angle(af[X, j], af[Y, j], af[YAW, j], af[X, i], af[Y, i])
        if abs(th_i - th_j) > VIS_TOL_RAD:
            return th_i > th_j  # the one with the greater visibility (smaller angle) stops
        left_i, left_j = net.lane_f[ci, L_TURN] > 0.5, net.lane_f[cj, L_TURN] > 0.5
        if left_i != left_j:
            return left_j
    if af[TICKET, i] != af[TICKET, j]:
        return af[TICKET, i] < af[TICKET, j]
    return ai[UID, i] < ai[UID, j]


@njit(cache=True)
def _vis_angle(x, y, yaw, xo, yo):
    d = math.atan2(yo - y, xo - x) - yaw
    return abs(math.atan2(math.sin(d), math.cos(d)))


@njit(cache=True)
def junction_permissions(net, af, ai, lights, order, start, end, rank, ego, cfg):
    """Sets COMMIT for owned agents allowed to enter; returns (role, stop_s) arrays."""
    cap = ai.shape[1]
    n_nodes = net.node_i.shape[0] - 1
    role = np.zeros(cap, np.int64)
    node_of = -np.ones(cap, np.int64)
    conn = -np.ones(cap, np.int64)
    srank = np.zeros(cap, np.int64)
    stop_s = -np.ones(cap)
    is_stop = np.zeros(cap, np.bool_)
    busy = np.zeros(n_nodes + 1, np.int64)
    for k in range(order.shape[0]):  # approaching or inside, for "junction empty" tests
        i = order[k]
        ln = ai[LANE, i]
        nd = net.lane_i[ln, L_CNODE] if net.lane_i[ln, L_CNODE] >= 0 else net.lane_i[ln, L_ENODE]
        if nd >= 0 and (net.lane_i[ln, L_CNODE] >= 0 or
                        net.lane_f[ln, L_LEN] - af[S, i] < cfg[C_APPROACH]):
            busy[nd] += 1
    for k in range(order.shape[0]):
        i = order[k]
        r, nd, c, sr, ss = classify(net, af, ai, lights, order, start, end, rank, ego, cfg, i, busy)
        role[i], node_of[i], conn[i], srank[i], stop_s[i] = r, nd, c, sr, ss
        if r >= COMMITTED:
            kind, _, _ = end_control(net, lights, ai[LANE, i])
            is_stop[i] = kind == K_STOP
    counts = np.zeros(n_nodes + 1, np.int64)
    for i in range(cap):
        if node_of[i] >= 0:
            counts[node_of[i] + 1] += 1
    for n in range(n_nodes):
        counts[n + 1] += counts[n]
    fill = counts[:-1].copy()
    members = np.empty(counts[-1], np.int64)
    for i in range(cap):
        if node_of[i] >= 0:
            members[fill[node_of[i]]] = i
            fill[node_of[i]] += 1
    for i in range(cap):
        if role[i] != READY or ai[ACTIVE, i] != OWNED:
            continue
        nd, ok = node_of[i], True
        for k in range(counts[nd], counts[nd + 1]):
            j = members[k]
            if j == i or conflict_out(net, nd, conn[i], conn[j]) < 0.0:
                continue
            if role[j] == INSIDE:
                ok = af[S, j] - 0.5 * af[LENGTH, j] > conflict_out(net, nd, conn[j], conn[i])
            elif role[j] == COMMITTED:
                d_j = net.lane_f[ai[LANE, j], L_LEN] - af[S, j] - 0.5 * af[LENGTH, j]
                ok = eta(d_j, af[U, j], af[A_M, j], net.lane_f[ai[LANE, j], L_SPEED]) > \
                    CRITICAL_GAP_S
            elif role[j] == READY:
                ok = wins(net, af, ai, cfg, i, j, srank[i], srank[j], is_stop[i], is_stop[j],
                          conn[i], conn[j])
            if not ok:
                break
        if ok:
            ai[COMMIT, i] = 1
    return role, stop_s
