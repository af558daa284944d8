"""Classical washout motion cueing (Reid & Nahon 1985, UTIAS Report 296).

Input: specific force f [m/s^2] and angular velocity w [rad/s] at the driver's head, in base_link
axes (see ``cueing.head_cues``). Output: platform pose (x, y, z [m], roll, pitch, yaw [rad]) in
the platform neutral frame (REP-103 axes), before the safety layer and kinematics.

Channels (all discretised at ``rate_hz`` with the bilinear transform, scipy.signal):
- scale and clip f - (0, 0, g) and w first;
- translational: position = HP(s) / s^2 applied to the scaled specific force, HP of order 2
  (s^2 / (s^2 + 2 zeta wn s + wn^2)) or 3 (times s / (s + wb)); order 3 washes a sustained
  step back to zero displacement, order 2 leaves a / wn^2;
- tilt coordination: second-order low-pass of the scaled f_x, f_y; the gravity vector seen on a
  platform tilted by roll phi, pitch theta is g (-sin theta, sin phi cos theta, ...), so
  theta = -asin(f_x / g) (REP-103: positive pitch is nose down, a forward push needs nose up)
  and phi = asin(f_y / g); the tilt angle moves at most ``tilt_rate_limit_radps``;
- rotational: body rates -> Euler rates, angle = HP2(s) / s * rate (zero for a constant rate).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.signal import cont2discrete

from vehicle_sim.core.motion.params import WashoutParams
from vehicle_sim.core.motion.small_vectors import clamp
from vehicle_sim.core.units import GRAVITY_MPS2


class DiscreteFilter:
    """A continuous transfer function num(s)/den(s) discretised by the bilinear transform,
    applied independently to ``channels`` signals (transposed direct form II)."""

    def __init__(self, num: list[float], den: list[float], dt_s: float, channels: int):
        bd, ad, _ = cont2discrete((num, den), dt_s, method="bilinear")
        b, a = np.ravel(bd).astype(float), np.ravel(ad).astype(float)
        b = np.concatenate([np.zeros(len(a) - len(b)), b])
        self.b, self.a = b / a[0], a / a[0]
        self._z = np.zeros((len(a) - 1, channels))

    def reset(self) -> None:
        """Zero the filter state (output 0 for zero input)."""
        self._z[:] = 0.0

    def step(self, x: np.ndarray) -> np.ndarray:
        """Filter one sample per channel; returns a new array."""
        b, a, z = self.b, self.a, self._z
        y = b[0] * x + z[0]
        n = z.shape[0]
        for i in range(n - 1):
            z[i] = b[i + 1] * x - a[i + 1] * y + z[i + 1]
        z[n - 1] = b[n] * x - a[n] * y
        return y


def _second_order(wn: float, zeta: float) -> list[float]:
    return [1.0, 2.0 * zeta * wn, wn * wn]


def euler_rates(roll_rad: float, pitch_rad: float, omega_radps: np.ndarray) -> np.ndarray:
    """Roll, pitch, yaw rates from body angular velocity (ZYX Euler kinematics)."""
    sr, cr = math.sin(roll_rad), math.cos(roll_rad)
    cp, tp = math.cos(pitch_rad), math.tan(pitch_rad)
    p, q, r = omega_radps
    return np.array([p + (q * sr + r * cr) * tp, q * cr - r * sr, (q * sr + r * cr) / cp])


class ClassicalWashout:
    """Classical washout filter with its state; call ``step`` once per platform cycle."""

    def __init__(self, params: WashoutParams, gravity_mps2: float = GRAVITY_MPS2):
        self.params, self.g = params, gravity_mps2
        self.dt_s = 1.0 / params.rate_hz
        p = params
        den = _second_order(p.trans_hp_omega_radps, p.trans_hp_zeta)
        if p.trans_hp_order == 3:  # s^3 / (D (s + wb)) / s^2 = s / (D (s + wb))
            den, num = list(np.polymul(den, [1.0, p.trans_hp_break_radps])), [1.0, 0.0]
        else:  # s^2 / D / s^2 = 1 / D
            num = [1.0]
        self._trans = DiscreteFilter(num, den, self.dt_s, 3)
        wt = p.tilt_lp_omega_radps
        self._tilt_lp = DiscreteFilter([wt * wt], _second_order(wt, p.tilt_lp_zeta), self.dt_s, 2)
        self._rot = DiscreteFilter([1.0, 0.0], _second_order(p.rot_hp_omega_radps, p.rot_hp_zeta),
                                   self.dt_s, 3)
        self._rest = np.array([0.0, 0.0, gravity_mps2])  # [m/s^2] specific force at rest
        self._no_rate = np.zeros(3)  # [rad/s]
        # per axis: translational scale [-], limit [m/s^2]; rotational scale [-], limit [rad/s]
        self._channels = tuple(np.asarray(v, dtype=float) for v in (
            p.trans_scale, p.trans_limit_mps2, p.rot_scale, p.rot_limit_radps))
        self.tilt_rad = np.zeros(2)  # roll, pitch from tilt coordination
        self.rot_rad = np.zeros(3)  # roll, pitch, yaw from the rotational high-pass
        self.nonfinite_inputs = 0

    def reset(self) -> None:
        """Return every filter and the tilt to neutral."""
        for f in (self._trans, self._tilt_lp, self._rot):
            f.reset()
        self.tilt_rad[:] = 0.0
        self.rot_rad[:] = 0.0

    def step(self, specific_force_mps2: np.ndarray, omega_radps: np.ndarray) -> np.ndarray:
        """Pose (x, y, z [m], roll, pitch, yaw [rad]) for one cycle.

        Non-finite input components are replaced by their at-rest value (no cue) and counted
        in ``nonfinite_inputs``, so one bad sample cannot poison the filter states.
        """
        rest, (t_scale, t_limit, r_scale, r_limit) = self._rest, self._channels
        f = self._finite(specific_force_mps2, rest) - rest
        f_s = clamp(t_scale * f, -t_limit, t_limit)
        w_s = clamp(r_scale * self._finite(omega_radps, self._no_rate), -r_limit, r_limit)
        position = self._trans.step(f_s)
        self._update_tilt(self._tilt_lp.step(f_s[:2]))
        rates = euler_rates(self.rot_rad[0] + self.tilt_rad[0], self.rot_rad[1] + self.tilt_rad[1],
                            w_s)
        self.rot_rad = self._rot.step(rates)
        return np.array([position[0], position[1], position[2],
                         self.rot_rad[0] + self.tilt_rad[0], self.rot_rad[1] + self.tilt_rad[1],
                         self.rot_rad[2]])

    def _update_tilt(self, f_lp: np.ndarray) -> None:
        p = self.params
        s_max = math.sin(p.tilt_max_rad)
        target = np.array([math.asin(min(max(f_lp[1] / self.g, -s_max), s_max)),
                           -math.asin(min(max(f_lp[0] / self.g, -s_max), s_max))])
        dmax = p.tilt_rate_limit_radps * self.dt_s
        self.tilt_rad = self.tilt_rad + clamp(target - self.tilt_rad, -dmax, dmax)

    def _finite(self, v: np.ndarray, rest: np.ndarray) -> np.ndarray:
        v = np.array(v, dtype=float).reshape(3)
        bad = ~np.isfinite(v)
        if bad.any():
            self.nonfinite_inputs += 1
            v[bad] = rest[bad]
        return v
