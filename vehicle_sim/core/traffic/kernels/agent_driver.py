"""Driver model of paper 004 sec. 6 for traffic agents (numba): the references of one agent
(its lane, curves, leaders, junctions, signs, crossings) and its steering, from the scalar laws of
driver_law.

The instructor's switches (AI_INSTR, 004 sec. 7: "the instructor switches off the references to
nearby vehicles"): PROVOKE skips ``others_accel`` (no leader, no agent or ego in its corridor);
RUN_RED skips the stop / give-way sign references (junction.classify lets it through lights and
signs); STOP adds a stop at the comfortable deceleration b (then holds it at rest).
"""
from __future__ import annotations

import math

from numba import njit

from vehicle_sim.core.traffic.kernels import junction as jn
from vehicle_sim.core.traffic.kernels.driver_law import (
    LEADER_RANGE_M,
    corridor_gap,
    curve_speed,
    idm,
    lookahead,
    pursuit_angle_cs,
    ref_accel,
    steer_angle,
    stop_accel,
)
from vehicle_sim.core.traffic.kernels.lane_path import default_next, eval_route
from vehicle_sim.core.traffic.kernels.layout import (
    AF_A_LAT,
    AF_A_M,
    AF_B_COMF,
    AF_CD_STEER,
    AF_CROSS_FACTOR,
    AF_D0,
    AF_DELTA_P_PREV,
    AF_GW_SPEED,
    AF_LENGTH,
    AF_S,
    AF_S0,
    AF_STOP_SPEED,
    AF_T_HW,
    AF_TS,
    AF_U,
    AF_V_FACTOR,
    AF_WIDTH,
    AF_X,
    AF_Y,
    AI_COMMIT,
    AI_IGNORE_SIGNS,
    AI_INSTR,
    AI_LANE,
    AI_NEXT,
    CFG_CELL,
    CFG_DT,
    CFG_GX0,
    CFG_GY0,
    CFG_NCX,
    CFG_NCY,
    EGO_LEN,
    EGO_ON,
    EGO_U,
    EGO_WID,
    EGO_X,
    EGO_Y,
    EGO_YAW,
    INS_PROVOKE,
    INS_RUN_RED,
    INS_STOP,
    LF_KMAX,
    LF_LEN,
    LF_SKMAX,
    LF_SPEED,
    LI_NSIG,
    LI_SIG0,
    SF_KIND,
    SF_S,
    SIG_CROSSING,
    SIG_GIVEWAY,
    SIG_STOP,
)

CONE_RANGE_M = 40.0  # short-range obstacle check (junction interiors, sibling connectors)
CONE_MARGIN_M = 0.4  # lateral margin added to the half widths
EGO_RANGE_M = 80.0


@njit(cache=True, inline="always")
def drive_accel(sc, af, ai, nb, role, stop_s, i):
    """Most restrictive reference acceleration a_r [m/s^2] of agent i (004 sec. 6.2); ``sc`` the
    step's Scene, ``nb`` its Neighbours, ``role`` / ``stop_s`` the junction roles and stop
    positions (junction.junction_permissions)."""
    net, lights, cfg = sc.net, sc.lights, sc.cfg
    ln, u, s, half = ai[AI_LANE, i], af[AF_U, i], af[AF_S, i], 0.5 * af[AF_LENGTH, i]
    u_des = af[AF_V_FACTOR, i] * net.lane_f[ln, LF_SPEED]
    a = ref_accel(u_des, u, af[AF_TS, i] * u + af[AF_D0, i])
    a = min(a, _curve_ref(net, af, ai, i, u))
    instr = ai[AI_INSTR, i]
    if instr != INS_PROVOKE:
        a = min(a, others_accel(sc, af, ai, nb, i, u_des))
    if instr == INS_STOP:
        a = min(a, -af[AF_B_COMF, i])
    if (role[i] == jn.WAITING or role[i] == jn.READY) and ai[AI_COMMIT, i] == 0:
        a = min(a, stop_accel(u, stop_s[i] - s - half - 0.3, cfg[CFG_DT], af[AF_B_COMF, i]))
        kind, _, s_line = jn.end_control(net, lights, ln)
        if (kind == SIG_STOP or kind == SIG_GIVEWAY) and instr != INS_RUN_RED:
            v_line = af[AF_STOP_SPEED, i] if kind == SIG_STOP else af[AF_GW_SPEED, i]
            if ai[AI_IGNORE_SIGNS, i] == 0 or u < v_line:
                a = min(a, ref_accel(v_line, u, s_line - s - half - 1.5))
    if ai[AI_NEXT, i] < 0:
        a = min(a, stop_accel(u, net.lane_f[ln, LF_LEN] - s - half, cfg[CFG_DT], af[AF_B_COMF, i]))
    if af[AF_CROSS_FACTOR, i] < 0.99:
        for k in range(net.lane_i[ln, LI_SIG0], net.lane_i[ln, LI_SIG0] + net.lane_i[ln, LI_NSIG]):
            d = net.sig_f[k, SF_S] - s - half
            if int(net.sig_f[k, SF_KIND]) == SIG_CROSSING and 0.0 < d < 50.0:
                a = min(a, ref_accel(af[AF_CROSS_FACTOR, i] * u_des, u, d))
    return a


@njit(cache=True, inline="always")
def _curve_ref(net, af, ai, i, u):
    a, ln, s = 1e9, ai[AI_LANE, i], af[AF_S, i]
    dist = -s
    for _ in range(2):
        if ln < 0:
            break
        u_c = curve_speed(af[AF_A_LAT, i], net.lane_f[ln, LF_KMAX])
        if u > u_c:
            a = min(a, ref_accel(u_c, u, dist + net.lane_f[ln, LF_SKMAX]))
        dist += net.lane_f[ln, LF_LEN]
        ln = ai[AI_NEXT, i] if ln == ai[AI_LANE, i] else -1
    return a


@njit(cache=True, inline="always")
def steering(net, af, ai, i, cos_yaw, sin_yaw, dt, wheelbase, max_steer):
    """(delta, delta_P) of 004 eqs. 6-8 for agent i along lane -> next; its heading as the cos
    and sin of its yaw (Neighbours.cos_yaw, sin_yaw: computed once per step)."""
    u = af[AF_U, i]
    ds = af[AF_TS, i] * u + af[AF_D0, i]
    px, py, _, k = eval_route(net.pts, net.lane_f, net.lane_i, net.succ, ai[AI_LANE, i],
                              ai[AI_NEXT, i], af[AF_S, i] + ds)
    ds, capped = lookahead(ds, k)
    if capped:  # a tight curve ahead: pursue a nearer point
        px, py, _, _ = eval_route(net.pts, net.lane_f, net.lane_i, net.succ, ai[AI_LANE, i],
                                  ai[AI_NEXT, i], af[AF_S, i] + ds)
    delta_p = pursuit_angle_cs(af[AF_X, i], af[AF_Y, i], cos_yaw, sin_yaw, px, py, wheelbase)
    delta = steer_angle(delta_p, af[AF_DELTA_P_PREV, i], dt, af[AF_CD_STEER, i], max_steer)
    return delta, delta_p


@njit(cache=True, inline="always")
def agent_idm(af, i, u0, gap, u_lead):
    """IDM with agent i's own parameters."""
    u = af[AF_U, i]
    return idm(u, u0, gap, u - u_lead, af[AF_A_M, i], af[AF_B_COMF, i], af[AF_T_HW, i],
               af[AF_S0, i])


@njit(cache=True, inline="always")
def lane_leader(net, af, ai, nb, i):
    """(gap [m], leader speed) of the nearest agent ahead along lane -> next -> successor."""
    order, start, end = nb.order, nb.start, nb.end
    ln, k = ai[AI_LANE, i], nb.rank[i]
    if k + 1 < end[ln]:
        j = order[k + 1]
        return af[AF_S, j] - af[AF_S, i] - 0.5 * (af[AF_LENGTH, i] + af[AF_LENGTH, j]), af[AF_U, j]
    dist = net.lane_f[ln, LF_LEN] - af[AF_S, i]
    nxt = ai[AI_NEXT, i]
    while nxt >= 0 and dist < LEADER_RANGE_M:
        if end[nxt] > start[nxt]:
            j = order[start[nxt]]
            return dist + af[AF_S, j] - 0.5 * (af[AF_LENGTH, i] + af[AF_LENGTH, j]), af[AF_U, j]
        dist += net.lane_f[nxt, LF_LEN]
        nxt = default_next(net.lane_i, net.succ, nxt)
    return 1e9, 0.0


@njit(cache=True, inline="always")
def others_accel(sc, af, ai, nb, i, u_des):
    """Most restrictive IDM acceleration of agent i behind other vehicles: its lane leader
    (lane_leader) and the agents and the ego in its corridor (cone_accel). The one place where an
    agent reacts to other vehicles (an agent told to ignore them would skip this call)."""
    a = 1e9
    gap, u_l = lane_leader(sc.net, af, ai, nb, i)
    if gap < 1e8:
        a = agent_idm(af, i, u_des, gap, u_l)
    return min(a, cone_accel(af, ai, i, u_des, nb, sc.cfg, sc.ego))


@njit(cache=True, inline="always")
def cone_accel(af, ai, i, u0, nb, cfg, ego):
    """Most restrictive IDM acceleration over agents (and the ego) ahead in i's corridor."""
    best = 1e9
    c, s = nb.cos_yaw[i], nb.sin_yaw[i]
    ncx, ncy = int(cfg[CFG_NCX]), int(cfg[CFG_NCY])
    cx = int((af[AF_X, i] - cfg[CFG_GX0]) / cfg[CFG_CELL])
    cy = int((af[AF_Y, i] - cfg[CFG_GY0]) / cfg[CFG_CELL])
    for gy in range(max(cy - 1, 0), min(cy + 2, ncy)):
        for gx in range(max(cx - 1, 0), min(cx + 2, ncx)):
            cell = gy * ncx + gx
            for k in range(nb.cells[cell], nb.cells[cell + 1]):
                j = nb.items[k]
                if j == i:
                    continue
                other = (af[AF_X, j], af[AF_Y, j], nb.cos_yaw[j], nb.sin_yaw[j], af[AF_U, j],
                         af[AF_LENGTH, j], af[AF_WIDTH, j])
                best = min(best, _object_accel(af, i, u0, c, s, other, CONE_RANGE_M))
    if ego[EGO_ON] > 0.5 and not _out_of_reach(af, i, c, s, ego[EGO_X], ego[EGO_Y], EGO_RANGE_M):
        other = (ego[EGO_X], ego[EGO_Y], math.cos(ego[EGO_YAW]), math.sin(ego[EGO_YAW]),
                 ego[EGO_U], ego[EGO_LEN], ego[EGO_WID])
        best = min(best, _object_accel(af, i, u0, c, s, other, EGO_RANGE_M))
    return best


@njit(cache=True, inline="always")
def _out_of_reach(af, i, c, s, x, y, range_m):
    """True if the point (x, y) is behind agent i (heading cos c, sin s) or beyond range_m
    ahead: _object_accel is then 1e9 whatever the object's heading (corridor_gap is inf
    behind), so its cos and sin need not be computed."""
    bx = c * (x - af[AF_X, i]) + s * (y - af[AF_Y, i])
    return bx <= 0.0 or bx > range_m


@njit(cache=True, inline="always")
def _object_accel(af, i, u0, c, s, other, range_m):
    """IDM reaction of agent i (heading cos c, sin s) to one object (x, y, cos and sin of its
    yaw, speed, length, width) within range_m ahead whose footprint is in i's corridor
    (driver_law.corridor_gap)."""
    xj, yj, cos_j, sin_j, uj, lj, wj = other
    dx, dy = xj - af[AF_X, i], yj - af[AF_Y, i]
    bx, by = c * dx + s * dy, -s * dx + c * dy
    if bx <= 0.0 or bx > range_m:  # _out_of_reach
        return 1e9
    cr = c * cos_j + s * sin_j  # cos of the relative heading
    gap = corridor_gap(bx, by, cr, (af[AF_LENGTH, i], af[AF_WIDTH, i]), (lj, wj), CONE_MARGIN_M)
    if gap == math.inf:
        return 1e9
    return agent_idm(af, i, u0, gap, max(0.0, uj * cr))
