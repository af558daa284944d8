"""Noise processes: discrete formulas, stationary statistics, and the Allan deviation of the IMU."""
import math

import numpy as np
import pytest
from scipy import stats

from vehicle_sim.core.sensors import ImuModel, ImuParams, TrueState
from vehicle_sim.core.sensors.noise import (GaussMarkov, allan_deviation, gauss_markov_coeffs,
                                            random_walk_sigma, white_sigma)
from vehicle_sim.core.sensors.params import AccelNoise, GyroNoise


def chi2_bounds(n: int, p: float = 1e-4) -> tuple[float, float]:
    """Two-sided bounds on sample std / sigma for n independent normal samples (prob. 1 - p)."""
    lo, hi = stats.chi2.ppf([p / 2, 1 - p / 2], n - 1)
    return math.sqrt(lo / (n - 1)), math.sqrt(hi / (n - 1))


def test_discrete_formulas_match_conventions():
    assert white_sigma(4e-3, 0.01) == pytest.approx(4e-2, rel=1e-12)  # N / sqrt(dt)
    assert random_walk_sigma(6e-3, 0.01) == pytest.approx(6e-4, rel=1e-12)  # K sqrt(dt)
    phi, sd = gauss_markov_coeffs(2.0, 10.0, 10.0)  # dt = tau
    assert phi == pytest.approx(math.exp(-1.0), rel=1e-12)
    assert sd == pytest.approx(2.0 * math.sqrt(1.0 - math.exp(-2.0)), rel=1e-12)
    assert gauss_markov_coeffs(0.0, 10.0, 0.1) == (0.0, 0.0)


def test_gauss_markov_keeps_stationary_sigma_and_correlation():
    sigma, tau, dt, n = 1.5, 2.0, 0.5, 40000
    gm = GaussMarkov(sigma, tau, n, np.random.default_rng(3))  # n independent processes
    rng = np.random.default_rng(4)
    for _ in range(5):
        x0 = gm.value.copy()
        x1 = gm.step(dt, rng).copy()
    lo, hi = chi2_bounds(n)
    assert lo < np.std(x1) / sigma < hi
    # lag-one correlation exp(-dt/tau); std error of a correlation ~ 1/sqrt(n), 5 sigma bound
    assert np.corrcoef(x0, x1)[0, 1] == pytest.approx(math.exp(-dt / tau), abs=5 / math.sqrt(n))


def test_allan_deviation_of_a_ramp_is_analytic():
    # y = c t gives theta = c t^2 / 2 and avar(tau) = c^2 tau^2 / 2 exactly
    c, dt = 0.3, 0.1
    y = c * dt * (np.arange(1000) + 0.5)  # sample i is the mean rate over [i dt, (i+1) dt]
    m = np.array([1, 10, 100])
    assert allan_deviation(y, dt, m) == pytest.approx(c * m * dt / math.sqrt(2), rel=1e-9)
    with pytest.raises(ValueError, match="cluster size"):
        allan_deviation(y, dt, np.array([600]))


def _fit_white_and_walk(av: np.ndarray, taus: np.ndarray, length_s: float) -> tuple[float, float]:
    """Weighted least squares of avar = N^2 / tau + K^2 tau / 3 (IEEE Std 952 Table C.2)."""
    a = np.c_[1.0 / taus, taus / 3.0]
    w = 1.0 / (av * np.sqrt(taus / length_s + 1e-5))  # avar rel. uncertainty ~ sqrt(tau / T)
    c = np.linalg.lstsq(a * w[:, None], av * w, rcond=None)[0]
    return math.sqrt(c[0]), math.sqrt(c[1])


def test_allan_deviation_of_static_imu_recovers_density_and_random_walk():
    # Crossover tau_c = sqrt(3) N / K ~ 0.6 s so a 600 s record holds ~1000 tau_c (runs ~5 s).
    n_g, k_g, n_a, k_a, rate, n = 3.39e-4, 1.0e-3, 4.0e-3, 1.2e-2, 100.0, 60000
    p = ImuParams(rate_hz=rate, gyro=GyroNoise(noise_density=n_g, bias_random_walk=k_g),
                  accel=AccelNoise(noise_density=n_a, bias_random_walk=k_a))
    imu, state = ImuModel(p, seed=11), TrueState()
    gyro, acc = np.empty((n, 3)), np.empty((n, 3))
    for i in range(n):
        s = imu.update(i / rate, state)
        gyro[i], acc[i] = s.angular_velocity_radps, s.linear_acceleration_mps2
    acc[:, 2] -= p.gravity_mps2
    dt = 1.0 / rate
    ms = np.unique(np.logspace(0, math.log10(n / 10), 40).astype(int))
    taus = ms * dt
    for y, dens, walk in ((gyro, n_g, k_g), (acc, n_a, k_a)):
        av = np.mean(allan_deviation(y, dt, ms) ** 2, axis=1)  # pooled over the 3 axes
        n_fit, k_fit = _fit_white_and_walk(av, taus, n * dt)
        assert n_fit == pytest.approx(dens, rel=0.10)
        assert k_fit == pytest.approx(walk, rel=0.10)
        tau_c = math.sqrt(3) * dens / walk
        ad = np.sqrt(av)
        short, long_ = taus <= tau_c / 10, taus >= 10 * tau_c
        assert np.polyfit(np.log(taus[short]), np.log(ad[short]), 1)[0] == pytest.approx(-0.5,
                                                                                        abs=0.05)
        assert np.polyfit(np.log(taus[long_]), np.log(ad[long_]), 1)[0] == pytest.approx(0.5,
                                                                                        abs=0.25)
