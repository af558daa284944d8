"""Wheel and tyre outputs of the planar models' snapshots (single-track, kinematic), numba: the
snapshot kernels call them (single_track.st_snapshot_vector), Python callers too.

No wheel-spin DOF: a free wheel rolls (slip 0); an axle whose brake force saturated at mu Fz is
locked (spin 0, slip -sgn(v)). Drive-side saturation (wheel spin) is not reported.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

# Slip ratio (w R - v) / max(|v|, floor): the floor [m/s] only avoids dividing by ~0 at rest.
SLIP_SPEED_FLOOR_MPS = 0.5


@njit(cache=True)
def brake_locked(fx, demand, limit, speed):
    """True when an axle's brake force fx [N] saturated at the limit mu Fz [N] against the
    motion (speed [m/s]) with a brake demand [N]."""
    return demand > 0.0 and speed != 0.0 and fx * speed < 0.0 and abs(fx) >= limit * (1 - 1e-9)


@njit(cache=True)
def wheel_spin_slip(v, locked, radius_m):
    """(spin [rad/s], slip ratio) of a wheel rolling at v [m/s] (0 spin when locked)."""
    spin = 0.0 if locked else v / radius_m
    return spin, (spin * radius_m - v) / max(abs(v), SLIP_SPEED_FLOOR_MPS)


@njit(cache=True)
def wheel_outputs(v_front, v_rear, locked_f, locked_r, radius_m):
    """(wheel spin [rad/s], slip ratio) FL FR RL RR from axle rolling speeds [m/s]."""
    spin, slip = np.zeros(4), np.zeros(4)
    for i in range(4):
        if i < 2:
            spin[i], slip[i] = wheel_spin_slip(v_front, locked_f, radius_m)
        else:
            spin[i], slip[i] = wheel_spin_slip(v_rear, locked_r, radius_m)
    return spin, slip


@njit(cache=True)
def aligning_moment(fy, tan_alpha, c_alpha, fy_max, trail0_m):
    """Self-aligning moment about body z [N m] = -t * Fy, trail t from the brush model.

    t = t0 * 3 (1 - l)^3 / (3 - 3 l + l^2) with l = C |tan a| / (3 Fy_max) clipped to 1
    (Pacejka, Tyre and Vehicle Dynamics, ch. 3 brush model: t0 = a/3 at zero slip, 0 when the
    whole contact slides). The force acts behind the contact centre, so Mz opposes Fy.
    The cube is math.pow(., 3.0), the C pow() Python's ** calls: numba's ** 3 multiplies and
    differs in the last bit.
    """
    if fy_max <= 0.0:
        return 0.0
    lam = min(c_alpha * abs(tan_alpha) / (3.0 * fy_max), 1.0)
    trail = trail0_m * 3.0 * math.pow(1.0 - lam, 3.0) / (3.0 - 3.0 * lam + lam * lam)
    return -trail * fy
