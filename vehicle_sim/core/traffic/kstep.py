"""One traffic step over all agents (numba): driver model, then vehicle model with LOD.

Agents within ``lod_radius`` of the ego and faster than ``dynamic_min_speed`` use 004's
small-angle single-track model (eqs. 1-5) with linear tyres F_y = C alpha (C = C_S F_z), the
lateral states (v, r) integrated by backward Euler (the model is stiff at urban speeds: the
pole -(C_f + C_r)/(m u) reaches -70 1/s at 3 m/s) and u, pose by forward Euler. Others move
kinematically along their lane centre (as MITSIM / AIMSUN-type models, 004 sec. 5).
Longitudinal force F_x = m a_pedal on the front axle (x-drive, front brakes), limited to P / u
(004: constant-power automatic gearbox, hyperbolic).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from vehicle_sim.core.traffic import kdriver as kd
from vehicle_sim.core.traffic import kjunction as kj
from vehicle_sim.core.traffic import klane
from vehicle_sim.core.traffic.agents import (
    A_LAT,
    A_M,
    ACCEL,
    ACTIVE,
    AR_PREV,
    B_COMF,
    CD_ACC,
    COMMIT,
    CROSS_FACTOR,
    DELTA,
    DELTA_P_PREV,
    DYN,
    GO,
    GW_SPEED,
    HOPS,
    IGNORE_SIGNS,
    LANE,
    LAT_OFF,
    LENGTH,
    NEXT,
    OWNED,
    REMOVE,
    STOP_SPEED,
    TICKET,
    UID,
    V_FACTOR,
    WAIT_T,
    WIDTH,
    YAW,
    R,
    S,
    U,
    V,
    X,
    Y,
)
from vehicle_sim.core.traffic.kindex import (
    C_DT,
    C_DYNMIN,
    C_LC_TIME,
    C_LOD,
    C_SEED,
    E_ON,
    E_X,
    E_Y,
    grid_index,
    hash_uniform,
    lane_order,
)
from vehicle_sim.core.traffic.kpath import eval_lane, project
from vehicle_sim.core.traffic.network import (
    K_CROSSING,
    K_GIVEWAY,
    K_STOP,
    L_CNODE,
    L_KMAX,
    L_LEN,
    L_NSIG,
    L_NSUCC,
    L_SIG0,
    L_SKMAX,
    L_SPEED,
    L_SUCC0,
    S_KIND,
    S_S,
)

# vp columns (vehicle parameters packed once by sim.TrafficSim)
V_M, V_IZ, V_A, V_B, V_CF, V_CR, V_MU, V_P, V_SMAX = range(9)
N_VP = 9
KIN = 0


@njit(cache=True)
def step_kernel(net, af, ai, vp, lights, ego, cfg):
    """Advance every OWNED agent by cfg[C_DT]; GHOST agents are obstacles only."""
    n_lanes = net.lane_f.shape[0]
    order, start, end, rank = lane_order(af, ai, n_lanes)
    cells, items, _ = grid_index(af, ai, cfg)
    role, stop_s = kj.junction_permissions(net, af, ai, lights, order, start, end, rank, ego, cfg)
    cap = ai.shape[1]
    acc = np.zeros(cap)
    dlt = np.zeros(cap)
    dlp = np.zeros(cap)
    dt = cfg[C_DT]
    for k in range(order.shape[0]):
        i = order[k]
        if ai[ACTIVE, i] != OWNED:
            continue
        a_r = drive_accel(net, af, ai, lights, order, start, end, rank, cells, items, cfg, ego,
                          role, stop_s, i)
        acc[i] = kd.pedal_accel(a_r, af[AR_PREV, i], dt, af[A_M, i], af[CD_ACC, i], vp[V_MU])
        af[AR_PREV, i] = a_r
        dlt[i], dlp[i] = kd.steering(net, af, ai, i, dt, vp[V_A] + vp[V_B], vp[V_SMAX])
    touched = np.zeros(n_lanes, np.bool_)
    for k in range(order.shape[0]):
        i = order[k]
        if ai[ACTIVE, i] == OWNED:  # overtaking decisions on start-of-step neighbours
            klane.try_change(net, af, ai, order, start, end, cfg, i, af[AR_PREV, i], touched)
    for k in range(order.shape[0]):
        i = order[k]
        if ai[ACTIVE, i] == OWNED:
            integrate(net, af, ai, vp, ego, cfg, i, acc[i], dlt[i], dlp[i])


@njit(cache=True)
def drive_accel(net, af, ai, lights, order, start, end, rank, cells, items, cfg, ego, role,
                stop_s, i):
    """Most restrictive reference acceleration a_r [m/s^2] of agent i (004 sec. 6.2)."""
    ln, u, s, half = ai[LANE, i], af[U, i], af[S, i], 0.5 * af[LENGTH, i]
    u_des = af[V_FACTOR, i] * net.lane_f[ln, L_SPEED]
    a = kd.ref_accel(u_des, u, af[kd.TS, i] * u + af[kd.D0, i])
    a = min(a, _curve_ref(net, af, ai, i, u))
    gap, u_l = kd.lane_leader(net, af, ai, order, start, end, rank, i)
    if gap < 1e8:
        a = min(a, kd.agent_idm(af, i, u_des, gap, u_l))
    a = min(a, kd.cone_accel(af, ai, i, u_des, cells, items, cfg, ego))
    if (role[i] == kj.WAITING or role[i] == kj.READY) and ai[COMMIT, i] == 0:
        a = min(a, stop_accel(u, stop_s[i] - s - half - 0.3, cfg[C_DT], af[B_COMF, i]))
        kind, _, s_line = kj.end_control(net, lights, ln)
        if kind == K_STOP or kind == K_GIVEWAY:
            v_line = af[STOP_SPEED, i] if kind == K_STOP else af[GW_SPEED, i]
            if ai[IGNORE_SIGNS, i] == 0 or u < v_line:
                a = min(a, kd.ref_accel(v_line, u, s_line - s - half - 1.5))
    if ai[NEXT, i] < 0:
        a = min(a, stop_accel(u, net.lane_f[ln, L_LEN] - s - half, cfg[C_DT], af[B_COMF, i]))
    if af[CROSS_FACTOR, i] < 0.99:
        for k in range(net.lane_i[ln, L_SIG0], net.lane_i[ln, L_SIG0] + net.lane_i[ln, L_NSIG]):
            d = net.sig_f[k, S_S] - s - half
            if int(net.sig_f[k, S_KIND]) == K_CROSSING and 0.0 < d < 50.0:
                a = min(a, kd.ref_accel(af[CROSS_FACTOR, i] * u_des, u, d))
    return a


@njit(cache=True)
def stop_accel(u, d, dt, b):
    """Stop with the front bumper d metres ahead: 004 eq. 9 with u_r = sqrt(b d / 2), a creep
    speed that vanishes at the line (u_r = 0 alone would freeze a car stopped short of it);
    within 0.3 m of the line: stop now."""
    if d > 0.3:
        return (0.5 * b * d - u * u) / (2.0 * d)
    return -u / dt


@njit(cache=True)
def _curve_ref(net, af, ai, i, u):
    a, ln, s = 1e9, ai[LANE, i], af[S, i]
    dist = -s
    for _ in range(2):
        if ln < 0:
            break
        k = net.lane_f[ln, L_KMAX]
        if k > 1e-3:
            u_c = math.sqrt(af[A_LAT, i] / k)
            if u > u_c:
                a = min(a, kd.ref_accel(u_c, u, dist + net.lane_f[ln, L_SKMAX]))
        dist += net.lane_f[ln, L_LEN]
        ln = ai[NEXT, i] if ln == ai[LANE, i] else -1
    return a


@njit(cache=True)
def integrate(net, af, ai, vp, ego, cfg, i, acc, delta, delta_p):
    """Vehicle model step of agent i (single-track near the ego, kinematic elsewhere)."""
    dt, u = cfg[C_DT], af[U, i]
    near = ego[E_ON] > 0.5 and math.hypot(af[X, i] - ego[E_X], af[Y, i] - ego[E_Y]) < cfg[C_LOD]
    af[ACCEL, i], af[DELTA_P_PREV, i] = acc, delta_p
    if near and u > cfg[C_DYNMIN]:
        if ai[DYN, i] == KIN:
            af[V, i], af[R, i] = 0.0, 0.0
        ai[DYN, i] = 1
        af[DELTA, i] = delta
        single_track(af, vp, i, acc, delta, dt)
        s_new, lat = project(net.pts, net.lane_i, ai[LANE, i], af[S, i] + u * dt, af[X, i], af[Y, i])
        while s_new > net.lane_f[ai[LANE, i], L_LEN] and ai[NEXT, i] >= 0:
            advance_lane(net, af, ai, cfg, i)
            s_new, lat = project(net.pts, net.lane_i, ai[LANE, i], 0.0, af[X, i], af[Y, i])
        af[S, i], af[LAT_OFF, i] = s_new, lat
    else:
        ai[DYN, i] = KIN
        u_new = max(0.0, u + acc * dt)
        s_new = af[S, i] + 0.5 * (u + u_new) * dt
        af[U, i], af[V, i], af[R, i] = u_new, 0.0, 0.0
        while s_new > net.lane_f[ai[LANE, i], L_LEN] and ai[NEXT, i] >= 0:
            s_new -= net.lane_f[ai[LANE, i], L_LEN]
            advance_lane(net, af, ai, cfg, i)
        af[S, i] = s_new
        off = af[LAT_OFF, i]
        rate = af[WIDTH, i] * 2.0 / cfg[C_LC_TIME] * dt
        af[LAT_OFF, i] = 0.0 if abs(off) <= rate else off - math.copysign(rate, off)
        x, y, h, kap = eval_lane(net.pts, net.lane_i, ai[LANE, i], s_new)
        af[X, i] = x - af[LAT_OFF, i] * math.sin(h)
        af[Y, i] = y + af[LAT_OFF, i] * math.cos(h)
        af[YAW, i] = h
        af[DELTA, i] = math.atan((vp[V_A] + vp[V_B]) * kap)
    if af[S, i] > net.lane_f[ai[LANE, i], L_LEN] - af[LENGTH, i] and ai[NEXT, i] < 0:
        ai[REMOVE, i] = 1
    af[WAIT_T, i] = af[WAIT_T, i] + dt if af[U, i] < 0.1 else 0.0


@njit(cache=True)
def single_track(af, vp, i, acc, delta, dt):
    """004 eqs. 1-5 (small angles, linear tyres): backward Euler on (v, r), forward on u, pose."""
    m, iz, a, b, cf, cr = vp[V_M], vp[V_IZ], vp[V_A], vp[V_B], vp[V_CF], vp[V_CR]
    u, v, r = af[U, i], af[V, i], af[R, i]
    fx = m * acc
    if acc > 0.0:
        fx = min(fx, vp[V_P] / max(u, 1.0))
    a11, a12 = -(cf + cr) / (m * u), (-a * cf + b * cr) / (m * u) - u
    a21, a22 = (-a * cf + b * cr) / (iz * u), -(a * a * cf + b * b * cr) / (iz * u)
    r1 = v + dt * (cf * delta + delta * fx) / m
    r2 = r + dt * a * cf * delta / iz
    m11, m12, m21, m22 = 1.0 - dt * a11, -dt * a12, -dt * a21, 1.0 - dt * a22
    det = m11 * m22 - m12 * m21
    v1 = (r1 * m22 - m12 * r2) / det
    rr = (m11 * r2 - m21 * r1) / det
    fyf = cf * (delta - (a * rr + v1) / u)
    u1 = max(0.0, u + dt * (v1 * rr + (fx - delta * fyf) / m))
    yaw = af[YAW, i] + dt * rr
    af[X, i] += dt * (u1 * math.cos(yaw) - v1 * math.sin(yaw))
    af[Y, i] += dt * (u1 * math.sin(yaw) + v1 * math.cos(yaw))
    af[YAW, i] = math.atan2(math.sin(yaw), math.cos(yaw))
    af[U, i], af[V, i], af[R, i] = u1, v1, rr


@njit(cache=True)
def advance_lane(net, af, ai, cfg, i):
    """Move agent i onto its chosen next lane and draw the exit after it (004 percentages)."""
    ln = ai[NEXT, i]
    ai[LANE, i] = ln
    ai[COMMIT, i], ai[GO, i] = 0, -1
    if net.lane_i[ln, L_CNODE] < 0:
        af[TICKET, i] = -1.0
    ai[NEXT, i] = choose_exit(net, ln, hash_uniform(int(cfg[C_SEED]), ai[UID, i], ai[HOPS, i]))
    ai[HOPS, i] += 1


@njit(cache=True)
def choose_exit(net, lane, x):
    """Successor whose cumulative probability bracket holds x in [0, 1); -1 at a dead end."""
    k0, n = net.lane_i[lane, L_SUCC0], net.lane_i[lane, L_NSUCC]
    for k in range(k0, k0 + n):
        if x < net.succ_cum[k]:
            return net.succ[k]
    return net.succ[k0 + n - 1] if n > 0 else -1
