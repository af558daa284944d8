"""Error model of one 3-axis inertial sensor (gyro or accelerometer), stepped in Python floats.

Per sample (imu.py): y = sat(quant(M x + b + step + n)), b = turn-on + random walk + Gauss-Markov
drift (noise.TriadBias), n white with sigma_d = scale N / sqrt(dt).

Why floats: the array form built a dozen 3-element arrays per sample (~60 us per IMU sample, most
of it numpy call overhead). The float form does the same IEEE-754 operations on the same values
in the same order as numpy's element-wise ones did (add, multiply, min/max, round half to even),
so every output is bit for bit the array form's; the matrix product M x stays a numpy product
(BLAS, whose summation order a Python sum would not repeat). bench/sensor_trace.py compares the
two over every path.

Random draws: at start those of TriadBias and the misalignment matrix, in their order. Per
sample the caller draws one block of standard normals for everything the sample needs (numpy's
Generator gives the same values for ``standard_normal(a + b)`` as for ``standard_normal(a)`` then
``standard_normal(b)``: each normal takes its own bits of the stream, nothing is buffered) and
hands this triad its part: random-walk increments (3, if on), drift (3, if on), white noise (3,
if sigma > 0), the order of the per-call draws they replace.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from vehicle_sim.core.sensors.frames import FixedMatrix
from vehicle_sim.core.sensors.noise import (TriadBias, gauss_markov_coeffs, random_walk_sigma,
                                            white_sigma)
from vehicle_sim.core.sensors.params import AccelNoise, GyroNoise

_EYE3 = np.eye(3)


class TriadPlan(NamedTuple):
    """What one sample of a triad needs: the discrete sigmas after dt_s and its draws."""

    walk_sigma: float  # random-walk increment sigma (0 when off)
    phi: float  # drift's exp(-dt / tau)
    drift_sigma: float  # drift's driving sigma (0 when off)
    white_sigma: float  # white noise sigma, times the fault noise scale
    draws: int  # standard normals this sample takes
    covariance: np.ndarray  # (3, 3) diagonal (Triad.plan; copy it to hand out)


class Triad:
    """One 3-axis sensor with its drawn-at-start constants and its bias state (floats)."""

    def __init__(self, p: GyroNoise | AccelNoise, range_: float, lsb: float,
                 rng: np.random.Generator):
        self.p, self.range, self.lsb = p, range_, lsb
        bias = TriadBias(p.bias_random_walk, p.bias_gm_sigma, p.bias_gm_tau_s,
                         p.turn_on_bias_sigma, rng)
        off = p.misalignment_sigma_rad * rng.standard_normal((3, 3))
        np.fill_diagonal(off, 0.0)
        self.matrix = np.eye(3) + np.diag(p.scale_factor_sigma * rng.standard_normal(3)) + off
        self._matrix = FixedMatrix(self.matrix)
        self._walk_density = bias.random_walk
        self._drift_sigma, self._drift_tau_s = bias.drift.sigma, bias.drift.tau_s
        # the bias a reader without a bias estimate sees as error: its stationary variance
        # (the random walk's grows without bound and is left out)
        self._bias_var = p.turn_on_bias_sigma ** 2 + bias.drift.sigma ** 2
        self.turn_on = bias.turn_on.tolist()
        self.walk = bias.walk.tolist()
        self.drift = bias.drift.value.tolist()

    def plan(self, dt_s: float, scale: float) -> TriadPlan:
        """The sigmas of a sample dt_s [s] after the previous one, white noise times scale; the
        reported covariance is the error's variance as a reader without a bias estimate
        sees it (conventions: "fill diagonal covariances from the noise model"): white^2 +
        LSB^2 / 12 + turn-on sigma^2 + Gauss-Markov sigma^2 (as the GNSS fix's holds its
        Gauss-Markov part); an EKF given the white part alone over-trusts it 2-3 sigma."""
        walk_on = self._walk_density > 0.0
        walk = random_walk_sigma(self._walk_density, dt_s) if walk_on else 0.0
        phi, sigma_d = gauss_markov_coeffs(self._drift_sigma, self._drift_tau_s, dt_s)
        sigma = scale * white_sigma(self.p.noise_density, dt_s)
        return TriadPlan(walk, phi, sigma_d, sigma, 3 * (walk_on + (sigma_d > 0.0) + (sigma > 0.0)),
                         _EYE3 * (sigma * sigma + self.lsb * self.lsb / 12.0 + self._bias_var))

    def measure(self, x: np.ndarray, plan: TriadPlan, z: list[float], k: int,
                step) -> tuple[np.ndarray, np.ndarray]:
        """(reading (3,), covariance (3, 3)) of the true value x (3,), drawing z[k:k + draws];
        ``step``: the fault's constant offset (3,)."""
        y0, y1, y2 = self._matrix.times(x).tolist()
        if self._walk_density > 0.0:
            s, (w0, w1, w2) = plan.walk_sigma, self.walk
            self.walk = [w0 + s * z[k], w1 + s * z[k + 1], w2 + s * z[k + 2]]
            k += 3
        if plan.drift_sigma > 0.0:
            phi, s, (d0, d1, d2) = plan.phi, plan.drift_sigma, self.drift
            self.drift = [phi * d0 + s * z[k], phi * d1 + s * z[k + 1], phi * d2 + s * z[k + 2]]
            k += 3
        (t0, t1, t2), (w0, w1, w2), (d0, d1, d2) = self.turn_on, self.walk, self.drift
        s0, s1, s2 = floats3(step)
        y0, y1, y2 = y0 + (t0 + w0 + d0) + s0, y1 + (t1 + w1 + d1) + s1, y2 + (t2 + w2 + d2) + s2
        sigma = plan.white_sigma
        if sigma > 0.0:
            y0, y1, y2 = y0 + sigma * z[k], y1 + sigma * z[k + 1], y2 + sigma * z[k + 2]
        lo, hi = -self.range, self.range  # np.minimum(np.maximum(y, lo), hi); NaN stays NaN
        y0 = lo if y0 < lo else (hi if y0 > hi else y0)
        y1 = lo if y1 < lo else (hi if y1 > hi else y1)
        y2 = lo if y2 < lo else (hi if y2 > hi else y2)
        lsb = self.lsb
        if lsb > 0.0:  # np.round(y / lsb) * lsb
            y0, y1, y2 = rint(y0 / lsb) * lsb, rint(y1 / lsb) * lsb, rint(y2 / lsb) * lsb
        return np.array([y0, y1, y2]), plan.covariance.copy()


def rint(v: float) -> float:
    """np.rint of one float: nearest integer, halves to even, the sign of a zero kept."""
    if v - v != 0.0:  # inf or NaN, returned as they are
        return v
    r = float(round(v))
    return r if r else math.copysign(0.0, v)


def floats3(v) -> tuple[float, float, float]:
    """Three Python floats of a float64 (3,) array (anything else through np.asarray, as numpy's
    element-wise ops would convert it)."""
    if type(v) is not np.ndarray or v.dtype != np.float64 or v.shape != (3,):
        v = np.broadcast_to(np.asarray(v, dtype=float), (3,))
    a, b, c = v.tolist()
    return a, b, c
