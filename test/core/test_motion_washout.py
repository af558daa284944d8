"""Classical washout: tilt coordination, washout to neutral, rotational high-pass (REP-103)."""
import math

import numpy as np
import pytest

from vehicle_sim.core.config import ConfigError, build
from vehicle_sim.core.motion.cueing import head_cues
from vehicle_sim.core.motion.params import CueingParams, WashoutParams
from vehicle_sim.core.motion.washout import ClassicalWashout
from vehicle_sim.core.units import GRAVITY_MPS2

G = GRAVITY_MPS2


def run(washout, f, w, seconds):
    n = round(seconds * washout.params.rate_hz)
    return np.array([washout.step(np.asarray(f, float), np.asarray(w, float)) for _ in range(n)])


def test_sustained_surge_ends_as_nose_up_tilt_with_translation_washed_out():
    p = WashoutParams()
    wo = ClassicalWashout(p)
    a = 2.0  # m/s^2 forward, held
    out = run(wo, [a, 0.0, G], [0.0, 0.0, 0.0], 40.0)
    a_scaled = p.trans_scale[0] * a
    # REP-103: + pitch is nose down; the backward push of a forward acceleration needs nose up
    assert out[-1, 4] == pytest.approx(-math.asin(a_scaled / G), abs=1e-6)
    assert out[-1, 0] == pytest.approx(0.0, abs=1e-5)  # translational channel back to neutral
    assert np.abs(out[:, 0]).max() > 0.01  # but it did move first
    assert np.abs(out[-1, [1, 2, 3, 5]]).max() < 1e-9
    pitch_rate = np.abs(np.diff(out[:, 4])) * p.rate_hz
    assert pitch_rate.max() <= p.tilt_rate_limit_radps * (1 + 1e-9)


def test_sustained_lateral_acceleration_rolls_left_side_up():
    p = WashoutParams()
    out = run(ClassicalWashout(p), [0.0, 3.0, G], [0.0, 0.0, 0.0], 40.0)
    assert out[-1, 3] == pytest.approx(math.asin(p.trans_scale[1] * 3.0 / G), abs=1e-6)
    assert out[-1, 1] == pytest.approx(0.0, abs=1e-5)
    assert np.abs(np.diff(out[:, 3])).max() * p.rate_hz <= p.tilt_rate_limit_radps * (1 + 1e-9)


def test_second_order_translational_filter_leaves_a_over_wn_squared():
    p = WashoutParams(trans_hp_order=2)
    out = run(ClassicalWashout(p), [2.0, 0.0, G], [0.0, 0.0, 0.0], 30.0)
    # position = a_s / (s^2 + 2 zeta wn s + wn^2): final value a_s / wn^2
    assert out[-1, 0] == pytest.approx(1.0 / p.trans_hp_omega_radps ** 2, abs=1e-6)


def test_heave_cue_washes_out():
    out = run(ClassicalWashout(WashoutParams()), [0.0, 0.0, G + 2.0], [0.0, 0.0, 0.0], 40.0)
    assert np.abs(out[:, 2]).max() > 0.01 and out[-1, 2] == pytest.approx(0.0, abs=1e-5)


def test_rotational_high_pass_returns_to_zero_under_constant_yaw_rate():
    out = run(ClassicalWashout(WashoutParams()), [0.0, 0.0, G], [0.0, 0.0, 0.5], 30.0)
    assert np.abs(out[:, 5]).max() > 0.05  # onset is cued
    assert out[-1, 5] == pytest.approx(0.0, abs=1e-6)
    assert np.abs(out[-1, :5]).max() < 1e-9


def test_nonfinite_input_is_ignored_and_reset_returns_to_neutral():
    wo = ClassicalWashout(WashoutParams())
    run(wo, [1.0, 1.0, G], [0.1, 0.1, 0.1], 1.0)
    pose = wo.step(np.array([np.nan, np.inf, G]), np.array([np.nan, 0.0, 0.0]))
    assert np.all(np.isfinite(pose)) and wo.nonfinite_inputs == 2
    wo.reset()
    assert np.abs(wo.step(np.array([0.0, 0.0, G]), np.zeros(3))).max() == 0.0


@pytest.mark.parametrize("name", ["trans_hp_omega_radps", "trans_hp_break_radps",
                                  "tilt_lp_omega_radps", "rot_hp_omega_radps"])
def test_filter_bandwidth_near_nyquist_is_rejected(name):
    """Each corner of the discretised filters, the third-order break too."""
    slow = {"rate_hz": 10.0, "trans_hp_omega_radps": 1.0, "trans_hp_break_radps": 0.5,
            "tilt_lp_omega_radps": 1.0, "rot_hp_omega_radps": 1.0}
    build(WashoutParams, slow, source="t")
    with pytest.raises(ConfigError, match=f"{name} must be below half the Nyquist"):
        build(WashoutParams, {**slow, name: 20.0}, source="t")


def test_head_specific_force_at_rest_and_under_yaw_rate_and_on_a_slope():
    g = CueingParams(head_position_m=(1.0, 0.0, 0.0))
    f, w = head_cues(g, np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3))
    assert f == pytest.approx([0.0, 0.0, G], abs=1e-12)
    r = 0.5  # rad/s yaw: centripetal -r^2 x at the head
    f, w = head_cues(g, np.zeros(3), np.array([0, 0, r]), np.zeros(3), np.zeros(3))
    assert f == pytest.approx([-r * r, 0.0, G], abs=1e-12) and w == pytest.approx([0, 0, r])
    f, _ = head_cues(g, np.zeros(3), np.zeros(3), np.array([0, 0, 2.0]), np.zeros(3))
    assert f == pytest.approx([0.0, 2.0, G], abs=1e-12)  # alpha x r
    theta = 0.1  # nose down on a downhill slope: gravity pulls forward -> f_x = -g sin(theta)
    f, _ = head_cues(CueingParams(), np.zeros(3), np.zeros(3), np.zeros(3),
                     np.array([0.0, theta, 0.7]))
    assert f == pytest.approx([-G * math.sin(theta), 0.0, G * math.cos(theta)], abs=1e-12)
