"""Steering-wheel force feedback: handwheel torque and the evdev FF_CONSTANT level.

Torque about the steering column [N m], + turns the wheel counter-clockwise (left, REP-103):

    T = k_a M_z / i_s  -  c w  -  k theta  -  F_c tanh(w / w_f)

M_z: total self-aligning moment of the front tyres about the body z axis [N m] (as
``VehicleSnapshot.aligning_moment_nm``), i_s the steering ratio (rack and column efficiency
folded into k_a), theta / w the handwheel angle [rad] and rate [rad/s] (+ left). T is clamped to
+-min(safe_max, device_max) and mapped linearly to the FF_CONSTANT level -32767..32767
(32767 = device_max_nm). Non-finite inputs contribute no torque.
"""
from __future__ import annotations

import math

from vehicle_sim.core.motion.params import FfbParams

FF_LEVEL_MAX = 32767  # linux/input.h: struct ff_constant_effect.level is __s16


def _finite(x: float) -> float:
    return x if math.isfinite(x) else 0.0


def handwheel_torque(params: FfbParams, aligning_moment_nm: float, handwheel_angle_rad: float,
                     handwheel_rate_radps: float) -> float:
    """Clamped handwheel torque [N m] (see module docstring for the law and signs)."""
    p = params
    mz, th = _finite(aligning_moment_nm), _finite(handwheel_angle_rad)
    w = _finite(handwheel_rate_radps)
    torque = (p.aligning_gain * mz / p.steering_ratio - p.damping_nm_s_per_rad * w
              - p.centring_nm_per_rad * th
              - p.friction_nm * math.tanh(w / p.friction_smoothing_radps))
    limit = min(p.safe_max_nm, p.device_max_nm)
    if math.isnan(torque):  # opposite infinities from finite but huge inputs
        return 0.0
    return min(max(torque, -limit), limit)


def ff_level(params: FfbParams, torque_nm: float) -> int:
    """FF_CONSTANT level for a torque: round(sign * T / device_max * 32767), clamped."""
    if not math.isfinite(torque_nm):
        return 0
    x = min(max(params.level_sign * torque_nm / params.device_max_nm, -1.0), 1.0)
    return int(round(x * FF_LEVEL_MAX))


class UpdateRateLimiter:
    """Decides when to push a new FF_CONSTANT level: at most ``max_update_hz``, and only when the
    level changed (the driver keeps playing the last uploaded effect)."""

    def __init__(self, max_update_hz: float):
        self.min_period_s = 1.0 / max_update_hz
        self._last_s: float | None = None
        self._last_level: int | None = None

    def should_send(self, now_s: float, level: int) -> bool:
        """True if ``level`` should be written now; records it as sent when True."""
        if level == self._last_level:
            return False
        if self._last_s is not None and now_s - self._last_s < self.min_period_s:
            return False
        self._last_s, self._last_level = now_s, level
        return True
