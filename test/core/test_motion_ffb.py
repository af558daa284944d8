"""Force feedback: torque law, clamping for any input, FF_CONSTANT level, update rate."""
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vehicle_sim.core.config import ConfigError, build
from vehicle_sim.core.motion.ffb import FF_LEVEL_MAX, UpdateRateLimiter, ff_level, handwheel_torque
from vehicle_sim.core.motion.params import FfbParams

P = FfbParams()
any_float = st.floats(allow_nan=True, allow_infinity=True)


@given(any_float, any_float, any_float)
def test_torque_is_clamped_and_finite_for_any_input(mz, angle, rate):
    t = handwheel_torque(P, mz, angle, rate)
    assert math.isfinite(t) and abs(t) <= min(P.safe_max_nm, P.device_max_nm)
    assert -FF_LEVEL_MAX <= ff_level(P, t) <= FF_LEVEL_MAX


@given(any_float)
def test_level_is_in_range_for_any_torque(t):
    assert -FF_LEVEL_MAX <= ff_level(P, t) <= FF_LEVEL_MAX


@given(st.floats(-20.0, 20.0).filter(lambda w: abs(w) > 1e-6))
def test_damping_and_friction_oppose_steering_velocity(rate):
    assert handwheel_torque(P, 0.0, 0.0, rate) * rate < 0.0


def test_terms_match_the_law():
    p = FfbParams(friction_nm=0.0, device_max_nm=10.0, safe_max_nm=8.0)
    assert handwheel_torque(p, 0.0, 0.0, 4.0) == pytest.approx(-4.0 * p.damping_nm_s_per_rad)
    assert handwheel_torque(p, 0.0, 1.0, 0.0) == pytest.approx(-p.centring_nm_per_rad)
    # aligning moment through the steering ratio: 30 N m / 15 = 2 N m
    assert handwheel_torque(p, 30.0, 0.0, 0.0) == pytest.approx(30.0 / p.steering_ratio)
    assert handwheel_torque(p, 1e6, 0.0, 0.0) == pytest.approx(8.0)  # safe maximum
    f = FfbParams(friction_nm=0.2)
    assert handwheel_torque(f, 0.0, 0.0, 10.0) == pytest.approx(-0.2 - 10 * f.damping_nm_s_per_rad)


def test_level_mapping_and_sign():
    assert ff_level(P, P.device_max_nm) == FF_LEVEL_MAX
    assert ff_level(P, -0.5 * P.device_max_nm) == pytest.approx(-FF_LEVEL_MAX / 2, abs=1)
    assert ff_level(FfbParams(level_sign=-1), 1.0) == -ff_level(P, 1.0)


def test_update_rate_is_bounded_and_unchanged_levels_are_not_resent():
    lim = UpdateRateLimiter(P.max_update_hz)
    sent = sum(lim.should_send(k * 1e-3, k) for k in range(1000))  # 1 kHz caller, 1 s
    assert sent <= P.max_update_hz + 1
    lim2 = UpdateRateLimiter(P.max_update_hz)
    assert lim2.should_send(0.0, 5) and not lim2.should_send(1.0, 5) and lim2.should_send(1.0, 6)


def test_safe_max_above_device_max_is_rejected():
    with pytest.raises(ConfigError, match="safe_max_nm"):
        build(FfbParams, {"safe_max_nm": 5.0, "device_max_nm": 2.0}, source="t")
    with pytest.raises(ConfigError, match="max_update_hz"):
        build(FfbParams, {"max_update_hz": 1000.0}, source="t")
