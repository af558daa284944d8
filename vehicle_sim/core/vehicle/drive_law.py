"""Paper 004's constant-power automatic drive, F = throttle * min(F_max, P / |u|): its full-throttle
force, the one law of the ego's planar models, the traffic agents' single-track kernel and the
stack controller's inverse model. A module of its own: the traffic kernels call it, and their
numba cache then depends on this file alone (core.traffic NUMBA_SHARED)."""
from __future__ import annotations

from numba import njit


@njit(cache=True)
def full_drive_force_n(max_force_n, max_power_w, speed_mps):
    """Drive force at full throttle [N]: F_max [N], or P [W] / |u| [m/s] where that is less."""
    if abs(speed_mps) * max_force_n > max_power_w:
        return max_power_w / abs(speed_mps)
    return max_force_n
