"""Scalar driver laws of paper 004 sec. 6 (numba), one copy shared by the traffic agents'
kernels (agent_driver) and the ego autopilot (core.ego.autopilot). Each caller brings its own
route (the agents' lane -> next lane, the ego's Route) and its own search for other vehicles.

- Steering (004 eqs. 6-8): look-ahead d_s = t_s u + d_0 along the route, at most half the
  radius of the curve there (``lookahead``); delta_P = atan(h / R) with R the arc through the
  CG, tangent to u, passing through the look-ahead point (``pursuit_angle``: pure pursuit,
  R = (px^2 + py^2) / (2 py) in the body frame); delta = delta_P + c_d d(delta_P)/dt
  (``steer_angle``).
- Speed (004 eqs. 9-13): each reference (u_r, d_r) gives a_r = (u_r^2 - u^2) / (2 d_r)
  (``ref_accel``); the most restrictive (smallest) a_r is applied through the accelerator / brake
  laws (``pedal_accel``). Curves: u_r = sqrt(a_lat / k) at a lane's sharpest point
  (``curve_speed``); stop lines: ``stop_accel``; at a yellow light: ``stops_at_yellow``.
- Car following: the leader reference is the IDM acceleration (Treiber, Hennecke & Helbing 2000,
  Phys. Rev. E 62, 1805): a [1 - (u/u0)^4 - (s*/s)^2], s* = s0 + max(0, u T + u du/(2 sqrt(a b)))
  (``idm``), on the bumper gap to the nearest object whose footprint is in one's corridor
  (``corridor_gap``).
"""
from __future__ import annotations

import math

from numba import njit

from vehicle_sim.core.units import GRAVITY_MPS2

ONCOMING_COS = -0.5  # relative heading beyond 120 deg: oncoming, not in one's corridor
CURVE_MIN_CURVATURE_1PM = 1e-3  # straighter lanes (radius > 1 km) set no curve speed
MIN_LOOKAHEAD_M = 1.0  # the capped look-ahead is never shorter than this
# How far ahead along its route a driver looks for a leader [m] (the agents' lane_leader, the
# ego's default horizon_m). A choice (004 gives none): at the 13.9 m/s city limit the IDM's
# desired gap to a stopped car is ~95 m (s0 + u T + u^2 / (2 sqrt(a b))), within this range.
LEADER_RANGE_M = 150.0

# Look-ahead at most this fraction of the radius of the curve at the look-ahead point: pure
# pursuit cuts into a curve by an amount growing with L^2 / R, and 004's d_s = t_s u + d_0
# (8 m at 4 m/s) is close to the 10 m radius of a junction turn here. 0.5 keeps a turning
# agent within 1 m of its lane (bench: all agents on the single-track model, whole city).
LOOKAHEAD_RADIUS_FRACTION = 0.5


@njit(cache=True)
def idm(u, u0, gap, du, a, b, T, s0):
    """IDM acceleration [m/s^2] at speed u, desired u0, bumper gap [m], approach rate
    du = u - u_l."""
    s_star = s0 + max(0.0, u * T + u * du / (2.0 * math.sqrt(a * b)))
    free = (u / u0) ** 4 if u0 > 0.1 else 1.0
    return a * (1.0 - free - (s_star / max(gap, 0.1)) ** 2)


@njit(cache=True)
def ref_accel(u_r, u, d_r):
    """004 eq. 9: a_r = (u_r^2 - u^2) / (2 d_r); d_r <= 0.2 m asks for u_r at once."""
    return (u_r * u_r - u * u) / (2.0 * max(d_r, 0.2))


@njit(cache=True)
def pedal_accel(a_r, a_r_prev, dt, a_m, cd_over_cp, mu):
    """Vehicle acceleration [m/s^2] from 004 eqs. 10-13: pedal = c_p a_r + c_d da_r/dt, x mu g.

    Accelerator: c_p = 1/(mu g) if a_r < a_m else a_m / (mu g a_r) (eqs. 11-12), so c_p a_r mu g
    = min(a_r, a_m), plus the derivative term (c_d/c_p) c_p mu g (a_r - a_r_prev) / dt (none
    when c_d = 0 or dt <= 0). Brake (eq. 13): brake = a_r / (mu g). Pedals clipped to [0, 1]:
    the result to [-mu g, mu g]. Worked in accelerations, so with c_d = 0 it is min(a_r, a_m)
    or max(a_r, -mu g) exactly. The one copy of the law: traffic agents (kernels.step) and the
    ego autopilot; a_r_prev is the previous step's a_r (unclipped).
    """
    mug = mu * GRAVITY_MPS2
    if a_r >= 0.0:
        a = min(a_r, a_m)
        if cd_over_cp > 0.0 and dt > 0.0:
            cp_mug = 1.0 if a_r < a_m else a_m / a_r
            a += cd_over_cp * cp_mug * (a_r - a_r_prev) / dt
        return min(max(a, 0.0), mug)
    return max(a_r, -mug)


@njit(cache=True, inline="always")
def stops_at_yellow(u, d, decel):
    """004 sec. 6.3.3's yellow-light decision: True (stop) if stopping from speed u [m/s] within
    d metres (at least 0.1 m) needs a deceleration u^2 / (2 d) of at most ``decel`` [m/s^2]
    (the driver's yellow_stop_decel_mps2); False: go on."""
    return u * u / (2.0 * max(d, 0.1)) <= decel


@njit(cache=True)
def stop_accel(u, d, dt, b):
    """Stop with the front bumper d metres ahead: 004 eq. 9 with u_r = sqrt(b d / 2), a creep
    speed that vanishes at the line (u_r = 0 alone would freeze a car stopped short of it);
    within 0.3 m of the line: stop now."""
    if d > 0.3:
        return (0.5 * b * d - u * u) / (2.0 * d)
    return -u / dt


@njit(cache=True, inline="always")
def lookahead(ds_m, curvature_1pm):
    """(look-ahead [m], capped): 004 eq. 6's d_s unless the curve of curvature k [1/m] at the
    look-ahead point is tighter than d_s allows (|k| d_s > LOOKAHEAD_RADIUS_FRACTION): then
    LOOKAHEAD_RADIUS_FRACTION / |k| (at least MIN_LOOKAHEAD_M), a point the caller evaluates
    anew."""
    if abs(curvature_1pm) * ds_m > LOOKAHEAD_RADIUS_FRACTION:
        return max(LOOKAHEAD_RADIUS_FRACTION / abs(curvature_1pm), MIN_LOOKAHEAD_M), True
    return ds_m, False


@njit(cache=True, inline="always")
def pursuit_angle(x, y, yaw, px, py, wheelbase_m):
    """delta_P [rad] of 004 eq. 7 from the CG pose (x, y [m], yaw [rad]) towards the look-ahead
    point (px, py) [m]: atan(wheelbase / R), R the arc tangent to the heading through it."""
    return pursuit_angle_cs(x, y, math.cos(yaw), math.sin(yaw), px, py, wheelbase_m)


@njit(cache=True, inline="always")
def pursuit_angle_cs(x, y, c, s, px, py, wheelbase_m):
    """pursuit_angle with the heading given by its cos c and sin s (the traffic kernels have
    them from the step's Neighbours)."""
    dx, dy = px - x, py - y
    bx, by = c * dx + s * dy, -s * dx + c * dy
    kappa = 2.0 * by / max(bx * bx + by * by, 1e-6)
    return math.atan(wheelbase_m * kappa)


@njit(cache=True, inline="always")
def steer_angle(delta_p, delta_p_prev, dt, d_gain_s, max_steer_rad):
    """004 eq. 8: delta = delta_P + c_d d(delta_P)/dt over the step dt [s] (no rate term when
    dt <= 0), clamped to +-max_steer_rad."""
    rate_term = d_gain_s * (delta_p - delta_p_prev) / dt if dt > 0.0 else 0.0
    return min(max(delta_p + rate_term, -max_steer_rad), max_steer_rad)


@njit(cache=True, inline="always")
def curve_speed(lateral_accel_mps2, curvature_1pm):
    """Curve speed [m/s] sqrt(a_lat / k) at curvature k [1/m]; inf on near-straight lanes."""
    if curvature_1pm > CURVE_MIN_CURVATURE_1PM:
        return math.sqrt(lateral_accel_mps2 / curvature_1pm)
    return math.inf


@njit(cache=True, inline="always")
def corridor_gap(along_m, lateral_m, cos_rel, own_size, other_size, margin_m):
    """Bumper gap [m] to an object ahead, inf unless it is in one's corridor.

    (along_m, lateral_m): the object's centre in one's frame (body or route); cos_rel: cosine of
    its heading relative to one's own (below ONCOMING_COS: oncoming, it keeps to its own lanes;
    turns cross them at junctions); own_size / other_size: (length, width) [m]. Its footprint,
    projected on one's axes, must be ahead and within half one's width plus ``margin_m``.
    """
    if cos_rel < ONCOMING_COS:
        return math.inf
    length, width = other_size
    sin_rel = math.sqrt(max(0.0, 1.0 - cos_rel * cos_rel))
    half_lat = 0.5 * (length * sin_rel + width * abs(cos_rel))
    half_lon = 0.5 * (length * abs(cos_rel) + width * sin_rel)
    if along_m <= 0.0 or abs(lateral_m) > 0.5 * own_size[1] + half_lat + margin_m:
        return math.inf
    return along_m - 0.5 * own_size[0] - half_lon
