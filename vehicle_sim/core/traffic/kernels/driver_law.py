"""Scalar driver laws of paper 004 sec. 6 (numba), one copy shared by the traffic agents'
kernels (agent_driver) and the ego autopilot (core.ego.autopilot).

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

from vehicle_sim.core.units import GRAVITY_MPS2

ONCOMING_COS = -0.5  # relative heading beyond 120 deg: oncoming, ignored by the cone check

# Look-ahead at most this fraction of the radius of the curve at the look-ahead point: pure
# pursuit cuts into a curve by an amount growing with L^2 / R, and 004's d_s = t_s u + d_0
# (8 m at 4 m/s) is close to the 10 m radius of a junction turn here. 0.5 keeps a turning
# agent within 1 m of its lane (bench: all agents on the single-track model, whole city).
LOOKAHEAD_RADIUS_FRACTION = 0.5


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


@njit(cache=True)
def stop_accel(u, d, dt, b):
    """Stop with the front bumper d metres ahead: 004 eq. 9 with u_r = sqrt(b d / 2), a creep
    speed that vanishes at the line (u_r = 0 alone would freeze a car stopped short of it);
    within 0.3 m of the line: stop now."""
    if d > 0.3:
        return (0.5 * b * d - u * u) / (2.0 * d)
    return -u / dt
