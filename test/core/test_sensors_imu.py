"""IMU model: specific force with gravity and lever-arm terms, error model, determinism, faults."""
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from vehicle_sim.core.sensors import ImuModel, ImuParams, TrueState
from vehicle_sim.core.sensors.params import AccelNoise, GyroNoise
from vehicle_sim.core.sensors.schedule import Schedule

G = 9.80665  # standard gravity, the params default
ADIS = Path(__file__).resolve().parents[2] / "config" / "sensors" / "imu_adis16448.yaml"


def chi2_bounds(n: int, p: float = 1e-4) -> tuple[float, float]:
    """Two-sided bounds on sample std / sigma for n independent normal samples (prob. 1 - p)."""
    lo, hi = stats.chi2.ppf([p / 2, 1 - p / 2], n - 1)
    return math.sqrt(lo / (n - 1)), math.sqrt(hi / (n - 1))


def state(**kw) -> TrueState:
    return TrueState(**{k: np.asarray(v, dtype=float) for k, v in kw.items()})


def one(imu: ImuModel, s: TrueState, t: float = 0.0):
    out = imu.update(t, s)
    assert out is not None
    return out


def test_level_vehicle_at_rest_reads_plus_g_on_z():
    out = one(ImuModel(ImuParams(), seed=0), state())
    assert out.linear_acceleration_mps2 == pytest.approx([0.0, 0.0, G], abs=1e-12)
    assert out.angular_velocity_radps == pytest.approx([0.0, 0.0, 0.0], abs=1e-12)
    assert out.orientation_xyzw is None and out.orientation_cov[0, 0] == -1.0


@pytest.mark.parametrize("roll, pitch", [(0.0, 0.1), (0.2, 0.0), (0.2, -0.3)])
def test_tilted_vehicle_at_rest_sees_gravity_in_body_axes(roll, pitch):
    # REP-103: +pitch is nose down, so gravity's specific force has -g sin(pitch) on x
    f = one(ImuModel(ImuParams(), 0), state(rpy_rad=[roll, pitch, 1.0])).linear_acceleration_mps2
    expect = G * np.array([-math.sin(pitch), math.cos(pitch) * math.sin(roll),
                           math.cos(pitch) * math.cos(roll)])
    assert f == pytest.approx(expect, abs=1e-12)


def test_constant_yaw_rate_gives_centripetal_lever_arm_term():
    r, wz, vx = np.array([1.2, 0.5, 0.3]), 0.5, 10.0
    imu = ImuModel(ImuParams(lever_arm_m=tuple(r)), 0)
    # steady turn: CG acceleration omega x v = (0, wz vx, 0); no angular acceleration
    s = state(velocity_mps=[vx, 0, 0], angular_velocity_radps=[0, 0, wz],
              acceleration_mps2=[0, wz * vx, 0])
    out = one(imu, s)
    expect = [-wz ** 2 * r[0], wz * vx - wz ** 2 * r[1], G]  # a + w x (w x r) + g
    assert out.linear_acceleration_mps2 == pytest.approx(expect, abs=1e-12)
    assert out.angular_velocity_radps == pytest.approx([0, 0, wz], abs=1e-12)


def test_angular_acceleration_gives_tangential_lever_arm_term():
    imu = ImuModel(ImuParams(lever_arm_m=(2.0, 0.0, 0.0)), 0)
    out = one(imu, state(angular_acceleration_radps2=[0, 0, 3.0]))
    assert out.linear_acceleration_mps2 == pytest.approx([0.0, 6.0, G], abs=1e-12)  # alpha x r


def test_mounting_rotation_expresses_outputs_in_imu_link():
    # imu_link yawed +90 deg: its x is base_link y (left), its y is base_link -x
    imu = ImuModel(ImuParams(mounting_rpy_rad=(0.0, 0.0, math.pi / 2)), 0)
    out = one(imu, state(acceleration_mps2=[1.5, 0, 0], angular_velocity_radps=[0.2, 0, 0]))
    assert out.linear_acceleration_mps2 == pytest.approx([0.0, -1.5, G], abs=1e-12)
    assert out.angular_velocity_radps == pytest.approx([0.0, -0.2, 0.0], abs=1e-12)


def test_saturation_and_quantisation():
    p = ImuParams(accel=AccelNoise(range_mps2=20.0, resolution_mps2=0.01),
                  gyro=GyroNoise(range_radps=1.0, resolution_radps=1e-3))
    out = one(ImuModel(p, 0), state(acceleration_mps2=[30.0, -30.0, 0.123456],
                                    angular_velocity_radps=[2.0, 0.12345, 0.0]))
    assert out.linear_acceleration_mps2 == pytest.approx([20.0, -20.0, 9.93], abs=1e-9)
    assert out.angular_velocity_radps == pytest.approx([1.0, 0.123, 0.0], abs=1e-9)
    assert out.linear_acceleration_cov[0, 0] == pytest.approx(0.01 ** 2 / 12)


def test_white_noise_std_and_reported_covariance():
    dens, rate, n = 3.39e-4, 200.0, 4000
    imu = ImuModel(ImuParams(rate_hz=rate, gyro=GyroNoise(noise_density=dens)), 5)
    w = np.array([imu.update(i / rate, state()).angular_velocity_radps for i in range(n)])
    sigma = dens * math.sqrt(rate)
    lo, hi = chi2_bounds(w.size)
    assert lo < np.std(w) / sigma < hi
    assert imu.update(n / rate, state()).angular_velocity_cov == pytest.approx(
        np.eye(3) * sigma ** 2, rel=1e-9)


def test_the_reported_covariance_holds_the_bias_a_reader_sees_as_error():
    """Over many IMUs (seeds), a reading's error at rest has the variance the message reports:
    white + turn-on + Gauss-Markov (the preset's bias is 26x the white variance: an EKF given
    the white part alone over-trusted the gyro 1.9 sigma and the accelerometer 3.4)."""
    gyro = GyroNoise(noise_density=3.39e-4, turn_on_bias_sigma=8.7e-3, bias_gm_sigma=8.68e-4,
                     bias_gm_tau_s=1000.0)
    p = ImuParams(rate_hz=200.0, gyro=gyro)
    outs = [one(ImuModel(p, k), state()) for k in range(1500)]
    w = np.array([o.angular_velocity_radps for o in outs])
    reported = outs[0].angular_velocity_cov[1, 1]
    assert reported == pytest.approx(3.39e-4 ** 2 * 200 + 8.7e-3 ** 2 + 8.68e-4 ** 2, rel=1e-9)
    lo, hi = chi2_bounds(len(w))
    assert lo < np.std(w[:, 1]) / math.sqrt(reported) < hi


def test_turn_on_bias_scale_factor_and_misalignment_statistics():
    # one reading per seed: each seed is an independently manufactured IMU
    sb, ss, sm, n = 0.05, 0.01, 0.004, 1500
    p = ImuParams(accel=AccelNoise(scale_factor_sigma=ss, misalignment_sigma_rad=sm),
                  gyro=GyroNoise(turn_on_bias_sigma=sb))
    f = np.array([one(ImuModel(p, k), state()).linear_acceleration_mps2 for k in range(n)])
    w = np.array([one(ImuModel(p, k), state()).angular_velocity_radps for k in range(n)])
    lo, hi = chi2_bounds(n)
    assert lo < np.std(f[:, 2] / G - 1.0) / ss < hi  # (1 + s_z) g
    assert lo < np.std(f[:, 0] / G) / sm < hi  # m_xz g
    assert lo < np.std(w[:, 1]) / sb < hi


def test_same_seed_same_output_different_seed_differs():
    s = state(acceleration_mps2=[1.0, 0.2, 0.0], angular_velocity_radps=[0.0, 0.0, 0.3])

    def run(seed):
        imu = ImuModel.from_file(ADIS, seed)
        return np.array([imu.update(i / 200, s).linear_acceleration_mps2 for i in range(50)])

    assert np.array_equal(run(7), run(7))
    assert not np.array_equal(run(7), run(8))


def _noisy() -> ImuParams:
    return ImuParams(gyro=GyroNoise(noise_density=1e-3, bias_random_walk=1e-4),
                     accel=AccelNoise(noise_density=1e-2, turn_on_bias_sigma=0.1))


def test_bias_step_adds_exactly_and_noise_scale_multiplies_white_noise():
    s = state(acceleration_mps2=[0.5, 0.0, 0.0])
    ref, hit = ImuModel(_noisy(), 3), ImuModel(_noisy(), 3)
    hit.faults.set_bias_step(accel_mps2=[0.3, 0.0, -0.2], gyro_radps=[0.0, 0.01, 0.0])
    a, b = one(ref, s), one(hit, s)
    assert b.linear_acceleration_mps2 - a.linear_acceleration_mps2 == pytest.approx(
        [0.3, 0.0, -0.2], abs=1e-12)
    assert b.angular_velocity_radps - a.angular_velocity_radps == pytest.approx(
        [0.0, 0.01, 0.0], abs=1e-12)
    white = ImuParams(gyro=GyroNoise(noise_density=1e-3))
    ref, hit = ImuModel(white, 4), ImuModel(white, 4)
    hit.faults.set_noise_scale(3.0)
    a, b = one(ref, s), one(hit, s)
    assert b.angular_velocity_radps == pytest.approx(3.0 * a.angular_velocity_radps, rel=1e-12)
    assert b.angular_velocity_cov == pytest.approx(9.0 * a.angular_velocity_cov, rel=1e-12)
    with pytest.raises(ValueError, match="noise scale"):
        hit.faults.set_noise_scale(float("nan"))


def test_freeze_repeats_last_sample_and_dropout_gives_nothing():
    imu = ImuModel(_noisy(), 9)
    last = one(imu, state(), 0.0)
    imu.faults.freeze = True
    frozen = one(imu, state(acceleration_mps2=[5.0, 0, 0]), 0.005)
    assert frozen.stamp_s == 0.005
    assert np.array_equal(frozen.linear_acceleration_mps2, last.linear_acceleration_mps2)
    assert np.array_equal(frozen.angular_velocity_radps, last.angular_velocity_radps)
    imu.faults.clear()
    imu.faults.dropout = True
    assert imu.update(0.010, state()) is None
    imu.faults.clear()
    moving = one(imu, state(acceleration_mps2=[5.0, 0, 0]), 0.015)
    assert moving.linear_acceleration_mps2[0] == pytest.approx(5.0, abs=0.5)


def test_rate_schedule_and_bad_input():
    imu = ImuModel(ImuParams(rate_hz=200.0), 0)
    stamps = [o.stamp_s for k in range(1000) if (o := imu.update(k * 1e-3, state())) is not None]
    assert len(stamps) == 200 and np.diff(stamps) == pytest.approx(np.full(199, 5e-3), abs=1e-9)
    with pytest.raises(ValueError, match="backwards"):
        imu.update(0.5, state())
    with pytest.raises(ValueError, match="acceleration_mps2"):
        imu.update(2.0, state(acceleration_mps2=[0.0, float("nan"), 0.0]))


@pytest.mark.parametrize("rate_hz, input_hz, hours", [(200.0, 200.0, 0.5), (10.0, 100.0, 1.5),
                                                      (100.0, 1000.0, 0.7)])
def test_the_rate_schedule_does_not_drift_over_a_long_run(rate_hz, input_hz, hours):
    """Due times t0 + n period, not a running float sum: at the rate's multiples of the input
    (sim time as the nodes give it, integer ns * 1e-9) every due call samples, for hours (a
    running sum skipped a 200 Hz sample after 1109 s, a 10 Hz fix after 5094 s)."""
    s = Schedule(rate_hz)
    step_ns, every = round(1e9 / input_hz), round(input_hz / rate_hz)
    sampled = [k for k in range(round(hours * 3600 * input_hz)) if s.due(k * step_ns * 1e-9)]
    assert len(sampled) == len(range(0, round(hours * 3600 * input_hz), every))
    assert np.all(np.diff(sampled) == every)


def test_orientation_output_of_imu_link_in_enu():
    p = ImuParams(orientation_enabled=True, mounting_rpy_rad=(0.0, 0.0, 0.1))
    out = one(ImuModel(p, 0), state(rpy_rad=[0.0, 0.0, 0.3]))
    half = 0.5 * (0.3 + 0.1)  # yaws add about the common z axis
    assert out.orientation_xyzw == pytest.approx([0, 0, math.sin(half), math.cos(half)], abs=1e-12)
    assert out.orientation_cov == pytest.approx(np.zeros((3, 3)))
