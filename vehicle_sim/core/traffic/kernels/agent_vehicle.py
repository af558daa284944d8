"""Vehicle model of the traffic agents (numba), with level of detail.

Agents within ``lod_radius`` of the ego and faster than ``dynamic_min_speed`` use 004's
small-angle single-track model (eqs. 1-5) with linear tyres F_y = C alpha (C = C_S F_z), the
lateral states (v, r) integrated by backward Euler (the model is stiff at urban speeds: the
pole -(C_f + C_r)/(m u) reaches -70 1/s at 3 m/s) and u, pose by forward Euler. Others move
kinematically along their lane centre (as MITSIM / AIMSUN-type models, 004 sec. 5).
Longitudinal force F_x = m a_pedal on the front axle (x-drive, front brakes), a drive force at
most min(F_max, P / u) (004: constant-power automatic gearbox; core.vehicle.drive_law).
"""
from __future__ import annotations

import math

from numba import njit

from vehicle_sim.core.traffic.kernels.exits import choose_exit, hash_uniform
from vehicle_sim.core.traffic.kernels.lane_path import eval_lane, project
from vehicle_sim.core.traffic.kernels.layout import (
    AF_ACCEL,
    AF_DELTA,
    AF_DELTA_P_PREV,
    AF_LAT_OFF,
    AF_LENGTH,
    AF_R,
    AF_S,
    AF_TICKET,
    AF_U,
    AF_V,
    AF_WAIT_T,
    AF_WIDTH,
    AF_X,
    AF_Y,
    AF_YAW,
    AI_COMMIT,
    AI_DYN,
    AI_GO,
    AI_HOPS,
    AI_LANE,
    AI_NEXT,
    AI_REMOVE,
    AI_UID,
    CFG_DT,
    CFG_DYNMIN,
    CFG_LC_TIME,
    CFG_LOD,
    CFG_SEED,
    DYN_KINEMATIC,
    EGO_ON,
    EGO_X,
    EGO_Y,
    LF_LEN,
    LI_CNODE,
    VP_A,
    VP_B,
    VP_CF,
    VP_CR,
    VP_FMAX,
    VP_IZ,
    VP_M,
    VP_P,
)
from vehicle_sim.core.vehicle.drive_law import full_drive_force_n


@njit(cache=True)
def integrate(net, af, ai, vp, ego, cfg, i, acc, delta, delta_p):
    """Vehicle model step of agent i (single-track near the ego, kinematic elsewhere)."""
    dt, u = cfg[CFG_DT], af[AF_U, i]
    dx, dy, lod = af[AF_X, i] - ego[EGO_X], af[AF_Y, i] - ego[EGO_Y], cfg[CFG_LOD]
    # hypot >= max(|dx|, |dy|): the box test skips the hypot call for the far agents
    near = ego[EGO_ON] > 0.5 and abs(dx) < lod and abs(dy) < lod and math.hypot(dx, dy) < lod
    af[AF_ACCEL, i], af[AF_DELTA_P_PREV, i] = acc, delta_p
    if near and u > cfg[CFG_DYNMIN]:
        if ai[AI_DYN, i] == DYN_KINEMATIC:
            af[AF_V, i], af[AF_R, i] = 0.0, 0.0
        ai[AI_DYN, i] = 1
        af[AF_DELTA, i] = delta
        single_track(af, vp, i, acc, delta, dt)
        s_new, lat = project(net.pts, net.lane_i, ai[AI_LANE, i], af[AF_S, i] + u * dt, af[AF_X, i],
                             af[AF_Y, i])
        while s_new > net.lane_f[ai[AI_LANE, i], LF_LEN] and ai[AI_NEXT, i] >= 0:
            advance_lane(net, af, ai, cfg, i)
            s_new, lat = project(net.pts, net.lane_i, ai[AI_LANE, i], 0.0, af[AF_X, i], af[AF_Y, i])
        af[AF_S, i], af[AF_LAT_OFF, i] = s_new, lat
    else:
        ai[AI_DYN, i] = DYN_KINEMATIC
        u_new = max(0.0, u + acc * dt)
        s_new = af[AF_S, i] + 0.5 * (u + u_new) * dt
        af[AF_U, i], af[AF_V, i], af[AF_R, i] = u_new, 0.0, 0.0
        while s_new > net.lane_f[ai[AI_LANE, i], LF_LEN] and ai[AI_NEXT, i] >= 0:
            s_new -= net.lane_f[ai[AI_LANE, i], LF_LEN]
            advance_lane(net, af, ai, cfg, i)
        af[AF_S, i] = s_new
        off = af[AF_LAT_OFF, i]
        rate = af[AF_WIDTH, i] * 2.0 / cfg[CFG_LC_TIME] * dt
        af[AF_LAT_OFF, i] = 0.0 if abs(off) <= rate else off - math.copysign(rate, off)
        x, y, h, kap = eval_lane(net.pts, net.lane_i, ai[AI_LANE, i], s_new)
        af[AF_X, i] = x - af[AF_LAT_OFF, i] * math.sin(h)
        af[AF_Y, i] = y + af[AF_LAT_OFF, i] * math.cos(h)
        af[AF_YAW, i] = h
        af[AF_DELTA, i] = math.atan((vp[VP_A] + vp[VP_B]) * kap)
    if af[AF_S, i] > net.lane_f[ai[AI_LANE, i], LF_LEN] - af[AF_LENGTH, i] and ai[AI_NEXT, i] < 0:
        ai[AI_REMOVE, i] = 1
    af[AF_WAIT_T, i] = af[AF_WAIT_T, i] + dt if af[AF_U, i] < 0.1 else 0.0


@njit(cache=True)
def single_track(af, vp, i, acc, delta, dt):
    """004 eqs. 1-5 (small angles, linear tyres): backward Euler on (v, r), forward on u, pose."""
    m, iz, a, b, cf, cr = vp[VP_M], vp[VP_IZ], vp[VP_A], vp[VP_B], vp[VP_CF], vp[VP_CR]
    u, v, r = af[AF_U, i], af[AF_V, i], af[AF_R, i]
    fx = m * acc
    if acc > 0.0:
        fx = min(fx, full_drive_force_n(vp[VP_FMAX], vp[VP_P], u))
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
    yaw = af[AF_YAW, i] + dt * rr
    af[AF_X, i] += dt * (u1 * math.cos(yaw) - v1 * math.sin(yaw))
    af[AF_Y, i] += dt * (u1 * math.sin(yaw) + v1 * math.cos(yaw))
    af[AF_YAW, i] = math.atan2(math.sin(yaw), math.cos(yaw))
    af[AF_U, i], af[AF_V, i], af[AF_R, i] = u1, v1, rr


@njit(cache=True)
def advance_lane(net, af, ai, cfg, i):
    """Move agent i onto its chosen next lane and draw the exit after it (004 percentages)."""
    ln = ai[AI_NEXT, i]
    ai[AI_LANE, i] = ln
    ai[AI_COMMIT, i], ai[AI_GO, i] = 0, -1
    if net.lane_i[ln, LI_CNODE] < 0:
        af[AF_TICKET, i] = -1.0
    ai[AI_NEXT, i] = choose_exit(net, ln, hash_uniform(int(cfg[CFG_SEED]), ai[AI_UID, i],
                                                       ai[AI_HOPS, i]))
    ai[AI_HOPS, i] += 1
