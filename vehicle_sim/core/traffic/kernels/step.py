"""One traffic step over all agents (numba): neighbour indices, junction permissions, every
owned agent's driver model (agent_driver), lane changes (lane_change), then its vehicle model
(agent_vehicle). A crashed agent (AI_CRASHED) is neither driven nor moved here (an outside
integrator moves it, crashed.py) but stays in the neighbour indices: an obstacle for the others.
An instructed agent (AI_INSTR, instructor.py) makes no overtaking lane change; FULL_BRAKE asks
for more than the tyres give, so the brake law (004 eq. 13) saturates at -mu g."""
from __future__ import annotations

import numpy as np
from numba import njit

from vehicle_sim.core.traffic.kernels import junction as jn
from vehicle_sim.core.traffic.kernels.agent_driver import drive_accel, steering
from vehicle_sim.core.traffic.kernels.agent_vehicle import integrate
from vehicle_sim.core.traffic.kernels.driver_law import pedal_accel
from vehicle_sim.core.traffic.kernels.lane_change import try_change
from vehicle_sim.core.traffic.kernels.layout import (
    AF_A_M,
    AF_AR_PREV,
    AF_CD_ACC,
    AI_ACTIVE,
    AI_CRASHED,
    AI_INSTR,
    CFG_DT,
    INS_FULL_BRAKE,
    INS_NONE,
    OWNED,
    VP_A,
    VP_B,
    VP_MU,
    VP_SMAX,
)
from vehicle_sim.core.traffic.kernels.neighbours import Scene, neighbour_index

FULL_BRAKE_REF_MPS2 = -100.0  # beyond any tyre: the brake pedal saturates at 1 (-mu g)


@njit(cache=True, inline="always")
def _driven(ai, i):
    """An owned agent the kernel drives (not crashed)."""
    return ai[AI_ACTIVE, i] == OWNED and ai[AI_CRASHED, i] == 0


@njit(cache=True)
def step_kernel(net, af, ai, vp, lights, ego, cfg):
    """Advance every OWNED agent by cfg[CFG_DT]; GHOST agents are obstacles only."""
    n_lanes = net.lane_f.shape[0]
    sc = Scene(net, lights, ego, cfg)
    nb = neighbour_index(af, ai, cfg, n_lanes)
    role, stop_s = jn.junction_permissions(sc, af, ai, nb)
    cap = ai.shape[1]
    _move_agents(sc, af, ai, vp, nb, role, stop_s,
                 (np.zeros(cap), np.zeros(cap), np.zeros(cap), np.zeros(n_lanes, np.bool_)))


@njit(cache=True, _nrt=False)  # allocates nothing: no reference counting (kernels/__init__)
def _move_agents(sc, af, ai, vp, nb, role, stop_s, scratch):
    """Drive, change lanes, then integrate every driven agent; ``scratch`` holds zeroed
    per-agent acceleration, steer and pursuit-steer arrays and the per-lane ``touched`` flags."""
    net, ego, cfg = sc.net, sc.ego, sc.cfg
    acc, dlt, dlp, touched = scratch
    order = nb.order
    dt = cfg[CFG_DT]
    for k in range(order.shape[0]):
        i = order[k]
        if not _driven(ai, i):
            continue
        a_r = drive_accel(sc, af, ai, nb, role, stop_s, i)
        if ai[AI_INSTR, i] == INS_FULL_BRAKE:
            a_r = FULL_BRAKE_REF_MPS2
        acc[i] = pedal_accel(a_r, af[AF_AR_PREV, i], dt, af[AF_A_M, i], af[AF_CD_ACC, i], vp[VP_MU])
        af[AF_AR_PREV, i] = a_r
        dlt[i], dlp[i] = steering(net, af, ai, i, nb.cos_yaw[i], nb.sin_yaw[i], dt,
                                  vp[VP_A] + vp[VP_B], vp[VP_SMAX])
    for k in range(order.shape[0]):
        i = order[k]
        if _driven(ai, i) and ai[AI_INSTR, i] == INS_NONE:  # overtaking on start-of-step nb
            try_change(net, af, ai, nb, cfg, i, af[AF_AR_PREV, i], touched)
    for k in range(order.shape[0]):
        i = order[k]
        if _driven(ai, i):
            integrate(net, af, ai, vp, ego, cfg, i, acc[i], dlt[i], dlp[i])
