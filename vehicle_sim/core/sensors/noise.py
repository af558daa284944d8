"""Discrete noise processes of the sensor models, and an overlapping Allan deviation to check them.

Continuous-to-discrete formulas (conventions.md, "Sensor noise models"):
- white noise of density N sampled every dt: sigma_d = N / sqrt(dt) (Kalibr);
- bias random walk of density K: b_k+1 = b_k + K sqrt(dt) w_k (Kalibr);
- first-order Gauss-Markov with stationary sigma s and correlation time tau:
  x_k+1 = phi x_k + s sqrt(1 - exp(-2 dt / tau)) w_k, phi = exp(-dt / tau) (gz-sensors).
Every draw comes from the numpy Generator passed in (determinism).
"""
from __future__ import annotations

import math

import numpy as np


def white_sigma(density: float, dt_s: float) -> float:
    """Per-sample sigma of white noise with continuous density ``density`` [u/sqrt(Hz)]."""
    return density / math.sqrt(dt_s)


def random_walk_sigma(density: float, dt_s: float) -> float:
    """Per-step increment sigma of a random walk with density ``density`` [u/s/sqrt(Hz)]."""
    return density * math.sqrt(dt_s)


def gauss_markov_coeffs(sigma: float, tau_s: float, dt_s: float) -> tuple[float, float]:
    """(phi, sigma_d) of a first-order Gauss-Markov process; (0, 0) when disabled."""
    if sigma <= 0.0 or tau_s <= 0.0:
        return 0.0, 0.0
    return math.exp(-dt_s / tau_s), sigma * math.sqrt(-math.expm1(-2.0 * dt_s / tau_s))


class GaussMarkov:
    """Vector first-order Gauss-Markov process, started from its stationary distribution."""

    def __init__(self, sigma: float, tau_s: float, size: int, rng: np.random.Generator):
        self.sigma, self.tau_s = float(sigma), float(tau_s)
        on = sigma > 0.0 and tau_s > 0.0
        self.value = sigma * rng.standard_normal(size) if on else np.zeros(size)

    def step(self, dt_s: float, rng: np.random.Generator) -> np.ndarray:
        """Advance by dt_s [s] and return the new value (same units as sigma)."""
        phi, sigma_d = gauss_markov_coeffs(self.sigma, self.tau_s, dt_s)
        if sigma_d > 0.0:
            self.value = phi * self.value + sigma_d * rng.standard_normal(self.value.size)
        return self.value


class TriadBias:
    """Bias of a 3-axis sensor: turn-on constant + random walk + Gauss-Markov drift."""

    def __init__(self, random_walk: float, gm_sigma: float, gm_tau_s: float,
                 turn_on_sigma: float, rng: np.random.Generator):
        self.random_walk = float(random_walk)
        self.turn_on = turn_on_sigma * rng.standard_normal(3)
        self.walk = np.zeros(3)
        self.drift = GaussMarkov(gm_sigma, gm_tau_s, 3, rng)

    def step(self, dt_s: float, rng: np.random.Generator) -> np.ndarray:
        """Advance the time-varying parts by dt_s [s]; return the total bias (3,)."""
        if self.random_walk > 0.0:
            step = random_walk_sigma(self.random_walk, dt_s)
            self.walk = self.walk + step * rng.standard_normal(3)
        return self.turn_on + self.walk + self.drift.step(dt_s, rng)

    def value(self) -> np.ndarray:
        """Current total bias (3,) without advancing."""
        return self.turn_on + self.walk + self.drift.value


def allan_deviation(y: np.ndarray, dt_s: float, cluster_sizes: np.ndarray) -> np.ndarray:
    """Overlapping Allan deviation of rate samples ``y`` (N,) or (N, k) at tau = m dt_s.

    Uses the integrated signal theta (IEEE Std 952-1997, annex C):
    avar(tau) = sum (theta[i+2m] - 2 theta[i+m] + theta[i])^2 / (2 tau^2 (N + 1 - 2m)).
    Returns an array (len(cluster_sizes),) or (len(cluster_sizes), k).
    """
    y = np.asarray(y, dtype=float)
    theta = np.concatenate([np.zeros((1,) + y.shape[1:]), np.cumsum(y, axis=0) * dt_s])
    n = theta.shape[0]
    out = []
    for m in np.asarray(cluster_sizes, dtype=int):
        if m < 1 or 2 * m >= n:
            raise ValueError(f"cluster size {m} outside 1..{(n - 1) // 2} for {n - 1} samples")
        d = theta[2 * m:] - 2.0 * theta[m:n - m] + theta[:n - 2 * m]
        tau = m * dt_s
        out.append(np.sqrt(np.sum(d * d, axis=0) / (2.0 * tau * tau * (n - 2 * m))))
    return np.array(out)
