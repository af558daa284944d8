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

Instructor (AI_INSTR): RUN_RED ignores its lane's light or sign (as if none); PROVOKE enters
without looking at the exit lane, the ego or conflicting agents (it no longer sees vehicles).
A crashed agent (AI_CRASHED) takes no part (it is an obstacle on its lane only).
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from vehicle_sim.core.traffic.kernels.driver_law import stops_at_yellow
from vehicle_sim.core.traffic.kernels.lane_path import default_next
from vehicle_sim.core.traffic.kernels.layout import (
    AF_A_M,
    AF_B_COMF,
    AF_GW_SPEED,
    AF_LENGTH,
    AF_RED_RUN,
    AF_S,
    AF_S0,
    AF_STOP_SPEED,
    AF_TICKET,
    AF_U,
    AF_WAIT_T,
    AF_X,
    AF_Y,
    AF_YAW,
    AF_YELLOW_DEC,
    AI_ACTIVE,
    AI_COMMIT,
    AI_CRASHED,
    AI_GO,
    AI_IGNORE_SIGNS,
    AI_INSTR,
    AI_LANE,
    AI_NEXT,
    AI_UID,
    CFG_APPROACH,
    CFG_EGO_YIELD,
    CFG_MAXWAIT,
    CFG_T,
    EGO_ON,
    EGO_U,
    EGO_X,
    EGO_Y,
    EGO_YAW,
    INS_PROVOKE,
    INS_RUN_RED,
    LF_LEN,
    LF_SPEED,
    LF_TURN,
    LI_CLOCAL,
    LI_CNODE,
    LI_ENODE,
    LI_NSIG,
    LI_SIG0,
    NF_R,
    NF_X,
    NF_Y,
    NI_C0,
    NI_NC,
    OWNED,
    SF_KIND,
    SF_LIGHT,
    SF_S,
    SIG_GIVEWAY,
    SIG_LIGHT,
    SIG_STOP,
)
from vehicle_sim.core.traffic.light_states import DARK, GREEN, YELLOW

NONE, INSIDE, COMMITTED, READY, WAITING = 0, 1, 2, 3, 4
VIS_TOL_RAD = 0.1  # visibility angles closer than this are a tie
LINE_ZONE_M = 3.0  # "at the line": front bumper closer than this
CRITICAL_GAP_S = 6.5  # HCM 2010 ex. 19-10: base critical headway, through movement from minor

# per-agent junction claims of a step: role (NONE ... WAITING), node and connector (-1: none),
# sign rank, stop position s on its lane [m] and whether a stop sign governs it
Claims = namedtuple("Claims", "role node conn rank stop_s at_stop")


@njit(cache=True)
def end_control(net, lights, lane):
    """(kind, light state, stop-line s) of the sign or light governing a lane's end."""
    kind, state, s_line = -1, GREEN, net.lane_f[lane, LF_LEN]
    k0 = net.lane_i[lane, LI_SIG0]
    for k in range(k0, k0 + net.lane_i[lane, LI_NSIG]):
        kk = int(net.sig_f[k, SF_KIND])
        if kk == SIG_LIGHT or kk == SIG_STOP or kk == SIG_GIVEWAY:
            kind, s_line = kk, net.sig_f[k, SF_S]
            if kk == SIG_LIGHT:
                state = lights[int(net.sig_f[k, SF_LIGHT])]
                if state == DARK:
                    kind = SIG_GIVEWAY  # lights outside the simulated set act as give way
    return kind, state, s_line


@njit(cache=True, inline="always")
def classify(sc, af, ai, nb, i, node_busy):
    """Role, node, connector, sign rank and stop position (s on lane) of agent i."""
    net, cfg, order, end = sc.net, sc.cfg, nb.order, nb.end
    ln = ai[AI_LANE, i]
    cnode = net.lane_i[ln, LI_CNODE]
    if cnode >= 0:
        return INSIDE, cnode, ln, 0, -1.0
    node = net.lane_i[ln, LI_ENODE]
    if node < 0 or ai[AI_NEXT, i] < 0 or end[ln] == 0 or order[end[ln] - 1] != i:
        return NONE, -1, -1, 0, -1.0
    u = af[AF_U, i]
    d_end = net.lane_f[ln, LF_LEN] - af[AF_S, i] - 0.5 * af[AF_LENGTH, i]
    if d_end > max(cfg[CFG_APPROACH], u * u / 3.0 + u + 5.0):
        return NONE, -1, -1, 0, -1.0
    kind, state, s_line = end_control(net, sc.lights, ln)
    if ai[AI_INSTR, i] == INS_RUN_RED:
        kind, state = -1, GREEN  # told to ignore lights and signs
    d_line = s_line - af[AF_S, i] - 0.5 * af[AF_LENGTH, i]
    stop_s = net.lane_f[ln, LF_LEN]
    sign_rank = 0 if kind < 0 or kind == SIG_LIGHT else 1
    allowed = True
    if kind == SIG_LIGHT:
        if state == GREEN:
            ai[AI_GO, i] = -1
        else:
            if ai[AI_GO, i] < 0:  # 004 6.3.3: decide once per yellow / red
                if state == YELLOW:
                    go = not stops_at_yellow(u, d_line, af[AF_YELLOW_DEC, i])
                else:
                    go = d_line < af[AF_RED_RUN, i]
                ai[AI_GO, i] = 1 if go or d_line < 0.0 else 0
            allowed = ai[AI_GO, i] == 1
            stop_s = s_line
    elif kind == SIG_STOP or kind == SIG_GIVEWAY:
        v_line = af[AF_STOP_SPEED, i] if kind == SIG_STOP else af[AF_GW_SPEED, i]
        clear = ai[AI_IGNORE_SIGNS, i] == 1 and node_busy[node] <= 1
        allowed = clear or (d_line < LINE_ZONE_M and u <= v_line + 0.05)
    if ai[AI_COMMIT, i] == 1 and not (kind == SIG_LIGHT and state != GREEN and ai[AI_GO, i] == 0):
        return COMMITTED, node, ai[AI_NEXT, i], sign_rank, stop_s
    ai[AI_COMMIT, i] = 0
    if not allowed or d_end > u * u / (2.0 * af[AF_B_COMF, i] + 1e-9) + u + 5.0:
        return WAITING, node, ai[AI_NEXT, i], sign_rank, stop_s
    if af[AF_TICKET, i] < 0.0:
        af[AF_TICKET, i] = cfg[CFG_T]
    blind = ai[AI_INSTR, i] == INS_PROVOKE
    if not blind and (not _exit_free(net, af, ai, nb, i) or _ego_blocks(net, sc.ego, cfg, node)):
        return WAITING, node, ai[AI_NEXT, i], sign_rank, stop_s
    return READY, node, ai[AI_NEXT, i], sign_rank, stop_s


@njit(cache=True, inline="always")
def _exit_free(net, af, ai, nb, i):
    out = default_next(net.lane_i, net.succ, ai[AI_NEXT, i])
    if out < 0 or nb.end[out] == nb.start[out]:
        return True
    j = nb.order[nb.start[out]]
    return af[AF_S, j] - 0.5 * af[AF_LENGTH, j] > af[AF_LENGTH, i] + af[AF_S0, i]


@njit(cache=True)
def _ego_blocks(net, ego, cfg, node):
    if ego[EGO_ON] < 0.5:
        return False
    dx, dy = net.node_f[node, NF_X] - ego[EGO_X], net.node_f[node, NF_Y] - ego[EGO_Y]
    d = math.hypot(dx, dy)
    if d < net.node_f[node, NF_R]:
        return True
    towards = dx * math.cos(ego[EGO_YAW]) + dy * math.sin(ego[EGO_YAW]) > 0.0
    return towards and d - net.node_f[node, NF_R] < ego[EGO_U] * cfg[CFG_EGO_YIELD]


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
    n = net.node_i[node, NI_NC]
    a, b = net.lane_i[ca, LI_CLOCAL], net.lane_i[cb, LI_CLOCAL]
    return net.conf[net.node_i[node, NI_C0] + a * n + b]


@njit(cache=True)
def wins(net, af, ai, cfg, i, j, claim_i, claim_j):
    """True if i has priority over j (antisymmetric by construction); a claim is (sign rank,
    at a stop sign, connector) of a ready agent."""
    rank_i, stop_i, ci = claim_i
    rank_j, stop_j, cj = claim_j
    if rank_i != rank_j:
        return rank_i < rank_j
    long_wait = af[AF_WAIT_T, i] > cfg[CFG_MAXWAIT] and af[AF_WAIT_T, j] > cfg[CFG_MAXWAIT]
    if not (long_wait or (stop_i and stop_j)):
        th_i = _vis_angle(af[AF_X, i], af[AF_Y, i], af[AF_YAW, i], af[AF_X, j], af[AF_Y, j])
        th_j = _vis_angle(af[AF_X, j], af[AF_Y, j], af[AF_YAW, j], af[AF_X, i], af[AF_Y, i])
        if abs(th_i - th_j) > VIS_TOL_RAD:
            return th_i > th_j  # the one with the greater visibility (smaller angle) stops
        left_i, left_j = net.lane_f[ci, LF_TURN] > 0.5, net.lane_f[cj, LF_TURN] > 0.5
        if left_i != left_j:
            return left_j
    if af[AF_TICKET, i] != af[AF_TICKET, j]:
        return af[AF_TICKET, i] < af[AF_TICKET, j]
    return ai[AI_UID, i] < ai[AI_UID, j]


@njit(cache=True)
def _vis_angle(x, y, yaw, xo, yo):
    d = math.atan2(yo - y, xo - x) - yaw
    return abs(math.atan2(math.sin(d), math.cos(d)))


@njit(cache=True)
def junction_permissions(sc, af, ai, nb):
    """Sets COMMIT for owned agents allowed to enter; returns (role, stop_s) arrays."""
    cap = ai.shape[1]
    n_nodes = sc.net.node_i.shape[0] - 1
    claims = Claims(np.zeros(cap, np.int64), -np.ones(cap, np.int64), -np.ones(cap, np.int64),
                    np.zeros(cap, np.int64), -np.ones(cap), np.zeros(cap, np.bool_))
    _classify_agents(sc, af, ai, nb, claims, np.zeros(n_nodes + 1, np.int64))
    counts = np.zeros(n_nodes + 1, np.int64)
    for i in range(cap):
        if claims.node[i] >= 0:
            counts[claims.node[i] + 1] += 1
    for n in range(n_nodes):
        counts[n + 1] += counts[n]
    fill = counts[:-1].copy()
    members = np.empty(counts[-1], np.int64)
    for i in range(cap):
        if claims.node[i] >= 0:
            members[fill[claims.node[i]]] = i
            fill[claims.node[i]] += 1
    _grant_entries(sc.net, af, ai, sc.cfg, claims, counts, members)
    return claims.role, claims.stop_s


@njit(cache=True, _nrt=False)  # allocates nothing: no reference counting (kernels/__init__)
def _classify_agents(sc, af, ai, nb, claims, busy):
    """Each agent's claim (classify); ``busy[node]`` counts agents approaching or inside."""
    net, cfg, order = sc.net, sc.cfg, nb.order
    for k in range(order.shape[0]):  # approaching or inside, for "junction empty" tests
        i = order[k]
        ln = ai[AI_LANE, i]
        nd = net.lane_i[ln, LI_CNODE] if net.lane_i[ln, LI_CNODE] >= 0 else net.lane_i[ln, LI_ENODE]
        if nd >= 0 and (net.lane_i[ln, LI_CNODE] >= 0 or
                        net.lane_f[ln, LF_LEN] - af[AF_S, i] < cfg[CFG_APPROACH]):
            busy[nd] += 1
    for k in range(order.shape[0]):
        i = order[k]
        if ai[AI_CRASHED, i] == 1:
            continue
        r, nd, c, sr, ss = classify(sc, af, ai, nb, i, busy)
        claims.role[i], claims.node[i], claims.conn[i] = r, nd, c
        claims.rank[i], claims.stop_s[i] = sr, ss
        if r >= COMMITTED:
            kind, _, _ = end_control(net, sc.lights, ai[AI_LANE, i])
            claims.at_stop[i] = kind == SIG_STOP


@njit(cache=True, _nrt=False)  # allocates nothing: no reference counting (kernels/__init__)
def _grant_entries(net, af, ai, cfg, claims, counts, members):
    """COMMIT for each ready owned agent that passes test (4) and (5) of the module doc
    against the other claims at its node (``members[counts[n]:counts[n + 1]]``)."""
    role, node_of, conn, srank, is_stop = (claims.role, claims.node, claims.conn, claims.rank,
                                           claims.at_stop)
    for i in range(ai.shape[1]):
        if role[i] != READY or ai[AI_ACTIVE, i] != OWNED:
            continue
        nd, ok = node_of[i], True
        if ai[AI_INSTR, i] == INS_PROVOKE:
            ai[AI_COMMIT, i] = 1  # blind to conflicting agents
            continue
        for k in range(counts[nd], counts[nd + 1]):
            j = members[k]
            if j == i or conflict_out(net, nd, conn[i], conn[j]) < 0.0:
                continue
            if role[j] == INSIDE:
                ok = af[AF_S, j] - 0.5 * af[AF_LENGTH, j] > conflict_out(net, nd, conn[j], conn[i])
            elif role[j] == COMMITTED:
                d_j = net.lane_f[ai[AI_LANE, j], LF_LEN] - af[AF_S, j] - 0.5 * af[AF_LENGTH, j]
                ok = eta(d_j, af[AF_U, j], af[AF_A_M, j], net.lane_f[ai[AI_LANE, j], LF_SPEED]) > \
                    CRITICAL_GAP_S
            elif role[j] == READY:
                ok = wins(net, af, ai, cfg, i, j, (srank[i], is_stop[i], conn[i]),
                          (srank[j], is_stop[j], conn[j]))
            if not ok:
                break
        if ok:
            ai[AI_COMMIT, i] = 1
