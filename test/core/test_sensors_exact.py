"""The sensor models' float and one-point paths against the array code they replaced, bit for bit
in the same run: numpy's rint and products, pymap3d's ENU -> geodetic, the IMU against an array
form of its error model, and the block draws against one draw per call."""
import math

import numpy as np
import pymap3d
import pytest

from vehicle_sim.core.sensors import ImuModel, ImuParams, TrueState
from vehicle_sim.core.sensors.enu_geodetic import MIRRORED_VERSION, EnuToGeodetic
from vehicle_sim.core.sensors.frames import FixedMatrix, read_state, rpy_to_matrix
from vehicle_sim.core.sensors.noise import TriadBias, white_sigma
from vehicle_sim.core.sensors.params import AccelNoise, GyroNoise
from vehicle_sim.core.sensors.triad import rint


def bits(*values) -> bytes:
    return b"".join(np.asarray(v, dtype=float).tobytes() for v in values)


def test_rint_is_numpy_rint_with_halves_signed_zeros_and_non_finite():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(20000) * 10.0 ** rng.uniform(-3, 17, 20000),
                        np.arange(-40, 41) / 2.0, [-0.0, 0.0, -0.4, 0.4, np.inf, -np.inf,
                                                   np.nan, 2.0 ** 52 + 1, -(2.0 ** 53)]])
    assert bits([rint(v) for v in x.tolist()]) == bits(np.rint(x))


def test_fixed_matrix_product_is_numpys_bit_for_bit():
    rng = np.random.default_rng(1)
    vectors = [rng.standard_normal(3) * 10.0 ** rng.uniform(-310, 300) for _ in range(3000)]
    vectors += [np.array(v) for v in ([0.0, -0.0, 1.0], [-0.0, -0.0, -0.0], [1e-320, 2.0, 3.0],
                                      [np.inf, 1.0, 1.0], [np.nan, 1.0, 2.0])]
    for m in (np.eye(3), rpy_to_matrix(0.0, 0.0, 0.0).T, rpy_to_matrix(0.1, -0.2, 0.3).T,
              np.eye(3) + 1e-3 * rng.standard_normal((3, 3))):
        fixed = FixedMatrix(m)
        with np.errstate(invalid="ignore", over="ignore"):
            assert all(fixed.times(v.copy()).tobytes() == (m @ v).tobytes() for v in vectors)


def test_one_normal_block_is_the_stream_of_separate_draws():
    """What ImuModel.update relies on: standard_normal(a + b) gives standard_normal(a) then
    standard_normal(b), and leaves the generator in the same state."""
    block, split = np.random.default_rng(5), np.random.default_rng(5)
    for sizes in ([3, 3, 3, 3], [3, 3, 3, 3, 3], [6, 3], [3]) * 200:
        joined = block.standard_normal(sum(sizes))
        assert joined.tobytes() == np.concatenate([split.standard_normal(n)
                                                   for n in sizes]).tobytes()
    assert block.bit_generator.state == split.bit_generator.state


@pytest.mark.skipif(pymap3d.__version__ != MIRRORED_VERSION, reason="pymap3d does the work")
@pytest.mark.parametrize("origin", [(0.0, 0.0, 0.0), (48.137, 11.575, 520.0),
                                    (-33.9, 151.2, 30.0), (60.0, -120.0, 5000.0),
                                    (1e-7, 179.9999, -50.0), (89.9, 10.0, 0.0)])
def test_enu_to_geodetic_is_pymap3d_bit_for_bit(origin):
    ell = pymap3d.Ellipsoid.from_name("wgs84")
    fast = EnuToGeodetic(*origin, ell)
    rng = np.random.default_rng(2)
    done = 0
    for _ in range(3000):
        e, n, u = (rng.standard_normal(3) * 10.0 ** rng.uniform(-3, 5)).tolist()
        got = fast.convert(e, n, u)
        if got is None:
            continue
        done += 1
        ref = pymap3d.enu2geodetic(e, n, u, *origin, ell=ell, deg=True)
        assert bits(got) == bits([float(v) for v in ref]), (e, n, u)
    assert done > 0 or origin[0] > 89.0  # near a pole every point goes to pymap3d


class ArrayImu:
    """The IMU of before the float path, in numpy arrays (one draw per noise term)."""

    def __init__(self, p: ImuParams, seed: int):
        self.p, self.rng = p, np.random.default_rng(seed)
        self.r_bi = rpy_to_matrix(*p.mounting_rpy_rad)
        self.triads = [self._triad(p.gyro, p.gyro.range_radps, p.gyro.resolution_radps),
                       self._triad(p.accel, p.accel.range_mps2, p.accel.resolution_mps2)]

    def _triad(self, n, range_, lsb):
        bias = TriadBias(n.bias_random_walk, n.bias_gm_sigma, n.bias_gm_tau_s,
                         n.turn_on_bias_sigma, self.rng)
        off = n.misalignment_sigma_rad * self.rng.standard_normal((3, 3))
        np.fill_diagonal(off, 0.0)
        return n, range_, lsb, bias, np.eye(3) + np.diag(
            n.scale_factor_sigma * self.rng.standard_normal(3)) + off

    def sample(self, s: TrueState, dt_s: float, scale: float):
        _, rpy, _, w, a, alpha = read_state(s)
        r = np.asarray(self.p.lever_arm_m, dtype=float)
        f = (a + np.cross(alpha, r) + np.cross(w, np.cross(w, r))
             + self.p.gravity_mps2 * rpy_to_matrix(*rpy)[2, :])
        out = []
        for x, (n, range_, lsb, bias, m) in zip((self.r_bi.T @ f, self.r_bi.T @ w),
                                                self.triads[::-1], strict=True):
            sigma = scale * white_sigma(n.noise_density, dt_s)
            y = m @ x + bias.step(dt_s, self.rng)
            if sigma > 0.0:
                y = y + sigma * self.rng.standard_normal(3)
            y = np.minimum(np.maximum(y, -range_), range_)
            out.append(np.round(y / lsb) * lsb if lsb > 0.0 else y)
        return out


@pytest.mark.parametrize("lsb", [0.0, 1e-3])
def test_imu_is_the_array_form_bit_for_bit(lsb):
    p = ImuParams(rate_hz=100.0, lever_arm_m=(0.3, -0.2, 0.5),
                  gyro=GyroNoise(noise_density=3e-4, bias_random_walk=4e-5, bias_gm_sigma=9e-4,
                                 bias_gm_tau_s=500.0, turn_on_bias_sigma=8e-3,
                                 scale_factor_sigma=1e-3, misalignment_sigma_rad=3e-4,
                                 range_radps=0.3, resolution_radps=lsb),
                  accel=AccelNoise(noise_density=4e-3, bias_random_walk=6e-3, bias_gm_sigma=0.07,
                                   bias_gm_tau_s=300.0, turn_on_bias_sigma=0.2,
                                   misalignment_sigma_rad=3e-4, range_mps2=12.0,
                                   resolution_mps2=10 * lsb))
    imu, ref = ImuModel(p, 7), ArrayImu(p, 7)
    t_prev = -0.01  # the first sample's dt is the period
    for k in range(400):
        t = k * 0.01
        s = TrueState(*(np.array(v) for v in (
            [t, 0.0, 0.0], [0.05 * math.sin(t), 0.03 * math.cos(3 * t), t],
            [10.0, 0.1, 0.0], [0.2 * math.sin(5 * t), 0.0, 0.3], [1.0, 3.0 * math.sin(t), -0.0],
            [0.0, 0.5, -0.1 * t])))
        if k == 200:
            imu.faults.set_noise_scale(0.0)
        out = imu.update(t, s)
        acc, gyr = ref.sample(s, t - t_prev if k else 0.01, imu.faults.noise_scale)
        t_prev = t
        assert bits(out.linear_acceleration_mps2, out.angular_velocity_radps) == bits(acc, gyr), k
