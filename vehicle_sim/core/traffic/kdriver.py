"""Driver model of paper 004 sec. 6 for traffic agents (numba).

- Steering (004 eqs. 6-8): look-ahead d_s = t_s u + d_0 along the route, at most half the
  radius of the curve there (LOOKAHEAD_RADIUS_FRACTION: tight junction turns); delta_P = atan(h / R)
  with R the arc through the CG, tangent to u, passing through the look-ahead point (pure
  pursuit, R = (px^2 + py^2) / (2 py) in the body frame); delta = delta_P + c_d d(delta_P)/dt.
- Speed (004 eqs. 9-13): each reference (u_r, d_r) gives a_r = (u_r^2 - u^2) / (2 d_r); the
  most restrictive (smallest) a_r is applied through the accelerator / brake laws.
- Car following: the leader reference is the IDM acceleration (Treiber, Hennecke & Helbing 2000,
  Phys. Rev. E 62, 1805): a [1 - (u/u0)^4 - (s*/s)^2], s* = s0 + max(0, u T + u du/(2 sqrt(a b))).
"""
from __future__ import annotations

import math

from numba import njit

from vehicle_sim.core.traffic.agents import (
    A_M,
    B_COMF,
    CD_STEER,
    D0,
    DELTA_P_PREV,
    LANE,
    LENGTH,
    NEXT,
    S0,
    T_HW,
    TS,
    WIDTH,
    YAW,
    S,
    U,
    X,
    Y,
)
from vehicle_sim.core.traffic.kindex import (
    C_CELL,
    C_GX0,
    C_GY0,
    C_NCX,
    C_NCY,
    E_LEN,
    E_ON,
    E_U,
    E_WID,
    E_X,
    E_Y,
    E_YAW,
)
from vehicle_sim.core.traffic.kpath import default_next, eval_route
from vehicle_sim.core.traffic.network import L_LEN
from vehicle_sim.core.units import GRAVITY_MPS2

CONE_RANGE_M = 40.0  # short-range obstacle check (junction interiors, sibling connectors)
CONE_MARGIN_M = 0.4  # lateral margin added to the half widths
EGO_RANGE_M = 80.0
ONCOMING_COS = -0.5  # relative heading beyond 120 deg: oncoming, ignored by the cone check
LEADER_RANGE_M = 150.0


@njit(cache=True)
def idm(u, u0, gap, du, a, b, T, s0):
    """IDM acceleration [m/s^2] at speed u, desired u0, bumper gap [m], approach rate du = u - u_l."""
    s_star = s0 + max(0.0, u * T + u * du / (2.0 * math.sqrt(a * b)))
    free = (u / u0) ** 4 if u0 > 0.1 else 1.0
    return a * (1.0 - free - (s_star / max(gap, 0.1)) ** 2)


@njit(cache=True)
def ref_accel(u_r, u, d_r):
    """004 eq. 9: a_r = (u_r^2 - u^2) / (2 d_r); d_r <= 0.2 m asks for u_r at once."""
    return (u_r * u_r - u * u) / (2.0 * max(d_r, 0.2))


@njit(cache=True)
def pedal_accel(a_r, a_r_prev, dt, a_m, cd_over_cp, mu):
    """Vehicle acceleration from 004 eqs. 10-13: pedal = c_p a_r + c_d da_r/dt, then x mu g.

    Accelerator: c_p = 1/(mu g) if a_r < a_m else a_m / (mu g a_r) (eqs. 11-12).
    Brake (eq. 13): brake = a_r / (mu g). Pedals clipped to [0, 1].
    """
    mug = mu * GRAVITY_MPS2
    if a_r >= 0.0:
        cp = 1.0 / mug if a_r < a_m else a_m / (mug * a_r)
        pedal = cp * a_r + cd_over_cp * cp * (a_r - a_r_prev) / dt
        return min(max(pedal, 0.0), 1.0) * mug
    brake = -a_r / mug
    return -min(max(brake, 0.0), 1.0) * mug


# Look-ahead at most this fraction of the radius of the curve at the look-ahead point: pure
# pursuit cuts into a curve by an amount growing with L^2 / R, and 004's d_s = t_s u + d_0
# (8 m at 4 m/s) is close to the 10 m radius of a junction turn here. 0.5 keeps a turning
# agent within 1 m of its lane (bench: all agents on the single-track model, whole city).
LOOKAHEAD_RADIUS_FRACTION = 0.5


@njit(cache=True)
def steering(net, af, ai, i, dt, wheelbase, max_steer):
    """(delta, delta_P) of 004 eqs. 6-8 for agent i along lane -> next."""
    u = af[U, i]
    ds = af[TS, i] * u + af[D0, i]
    px, py, _, k = eval_route(net.pts, net.lane_f, net.lane_i, net.succ, ai[LANE, i],
                              ai[NEXT, i], af[S, i] + ds)
    if abs(k) * ds > LOOKAHEAD_RADIUS_FRACTION:  # a tight curve ahead: pursue a nearer point
        ds = max(LOOKAHEAD_RADIUS_FRACTION / abs(k), 1.0)
        px, py, _, _ = eval_route(net.pts, net.lane_f, net.lane_i, net.succ, ai[LANE, i],
                                  ai[NEXT, i], af[S, i] + ds)
    c, s = math.cos(af[YAW, i]), math.sin(af[YAW, i])
    dx, dy = px - af[X, i], py - af[Y, i]
    bx, by = c * dx + s * dy, -s * dx + c * dy
    kappa = 2.0 * by / max(bx * bx + by * by, 1e-6)
    delta_p = math.atan(wheelbase * kappa)
    delta = delta_p + af[CD_STEER, i] * (delta_p - af[DELTA_P_PREV, i]) / dt
    return min(max(delta, -max_steer), max_steer), delta_p


@njit(cache=True)
def agent_idm(af, i, u0, gap, u_lead):
    """IDM with agent i's own parameters."""
    u = af[U, i]
    return idm(u, u0, gap, u - u_lead, af[A_M, i], af[B_COMF, i], af[T_HW, i], af[S0, i])


@njit(cache=True)
def lane_leader(net, af, ai, order, start, end, rank, i):
    """(gap [m], leader speed) of the nearest agent ahead along lane -> next -> successor."""
    ln, k = ai[LANE, i], rank[i]
    if k + 1 < end[ln]:
        j = order[k + 1]
        return af[S, j] - af[S, i] - 0.5 * (af[LENGTH, i] + af[LENGTH, j]), af[U, j]
    dist = net.lane_f[ln, L_LEN] - af[S, i]
    nxt = ai[NEXT, i]
    while nxt >= 0 and dist < LEADER_RANGE_M:
        if end[nxt] > start[nxt]:
            j = order[start[nxt]]
            return dist + af[S, j] - 0.5 * (af[LENGTH, i] + af[LENGTH, j]), af[U, j]
        dist += net.lane_f[nxt, L_LEN]
        nxt = default_next(net.lane_i, net.succ, nxt)
    return 1e9, 0.0


@njit(cache=True)
def cone_accel(af, ai, i, u0, cells, items, cfg, ego):
    """Most restrictive IDM acceleration over agents (and the ego) ahead in i's corridor."""
    best = 1e9
    c, s = math.cos(af[YAW, i]), math.sin(af[YAW, i])
    ncx, ncy = int(cfg[C_NCX]), int(cfg[C_NCY])
    cx = int((af[X, i] - cfg[C_GX0]) / cfg[C_CELL])
    cy = int((af[Y, i] - cfg[C_GY0]) / cfg[C_CELL])
    for gy in range(max(cy - 1, 0), min(cy + 2, ncy)):
        for gx in range(max(cx - 1, 0), min(cx + 2, ncx)):
            cell = gy * ncx + gx
            for k in range(cells[cell], cells[cell + 1]):
                j = items[k]
                if j == i:
                    continue
                a = _corridor(af[X, i], af[Y, i], c, s, af[LENGTH, i], af[WIDTH, i], af[X, j],
                              af[Y, j], af[YAW, j], af[U, j], af[LENGTH, j], af[WIDTH, j],
                              CONE_RANGE_M, af, i, u0)
                best = min(best, a)
    if ego[E_ON] > 0.5:
        a = _corridor(af[X, i], af[Y, i], c, s, af[LENGTH, i], af[WIDTH, i], ego[E_X], ego[E_Y],
                      ego[E_YAW], ego[E_U], ego[E_LEN], ego[E_WID], EGO_RANGE_M, af, i, u0)
        best = min(best, a)
    return best


@njit(cache=True)
def _corridor(xi, yi, c, s, li, wi, xj, yj, yawj, uj, lj, wj, rng, af, i, u0):
    """IDM reaction to one object if its footprint (projected on i's axes) is in i's corridor."""
    dx, dy = xj - xi, yj - yi
    bx, by = c * dx + s * dy, -s * dx + c * dy
    cr = c * math.cos(yawj) + s * math.sin(yawj)  # cos of the relative heading
    if cr < ONCOMING_COS:
        return 1e9  # oncoming traffic keeps to its own lanes (turns cross them at junctions)
    sr = math.sqrt(max(0.0, 1.0 - cr * cr))
    half_lat = 0.5 * (lj * sr + wj * abs(cr))
    half_lon = 0.5 * (lj * abs(cr) + wj * sr)
    if bx <= 0.0 or bx > rng or abs(by) > 0.5 * wi + half_lat + CONE_MARGIN_M:
        return 1e9
    return agent_idm(af, i, u0, bx - 0.5 * li - half_lon, max(0.0, uj * cr))
