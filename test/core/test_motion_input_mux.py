"""Driver input mapping (dead zone, inversion, calibration, buttons) and the command mux."""
import math

import pytest

from vehicle_sim.core.motion.input_map import InputMapper, map_axis
from vehicle_sim.core.motion.mux import CommandMux, Source
from vehicle_sim.core.motion.params import AxisParams, InputParams, MuxParams

WHEEL = AxisParams(raw_min=0.0, raw_max=1000.0, dead_zone=0.1)
PEDAL = AxisParams(raw_min=100.0, raw_max=900.0, bipolar=False, dead_zone=0.05)


def test_bipolar_calibration_and_dead_zone():
    assert map_axis(WHEEL, 0.0) == -1.0 and map_axis(WHEEL, 1000.0) == 1.0
    assert map_axis(WHEEL, 500.0) == 0.0
    assert map_axis(WHEEL, 549.0) == 0.0 and map_axis(WHEEL, 451.0) == 0.0  # |x| < 0.1
    assert map_axis(WHEEL, 600.0) == pytest.approx((0.2 - 0.1) / 0.9)  # rescaled, continuous
    assert map_axis(WHEEL, 550.0 + 1e-6) == pytest.approx(0.0, abs=1e-6)
    assert map_axis(WHEEL, -5000.0) == -1.0 and map_axis(WHEEL, math.nan) == 0.0


def test_inversion():
    inv = AxisParams(raw_min=0.0, raw_max=1000.0, invert=True, dead_zone=0.1)
    for raw in (0.0, 300.0, 600.0, 1000.0):
        assert map_axis(inv, raw) == pytest.approx(-map_axis(WHEEL, raw))
    pedal_inv = AxisParams(raw_min=100.0, raw_max=900.0, bipolar=False, invert=True)
    assert map_axis(pedal_inv, 100.0) == 1.0 and map_axis(pedal_inv, 900.0) == 0.0


def test_unipolar_pedal_with_rest_dead_zone():
    assert map_axis(PEDAL, 100.0) == 0.0 and map_axis(PEDAL, 120.0) == 0.0  # 2.5% < 5%
    assert map_axis(PEDAL, 500.0) == pytest.approx((0.5 - 0.05) / 0.95)
    assert map_axis(PEDAL, 900.0) == 1.0 and map_axis(PEDAL, 2000.0) == 1.0


def test_buttons_edges_and_levels():
    m = InputMapper(InputParams())  # gear_up bit 0, gear_down 1, handbrake 2, takeover 3
    first = m.map(0, 0, 0, 0, 0b0101)
    assert first.gear_up and first.handbrake and not first.gear_down
    held = m.map(0, 0, 0, 0, 0b0101)
    assert not held.gear_up and held.handbrake  # edge once, level while held
    m.map(0, 0, 0, 0, 0)
    assert m.map(0, 0, 0, 0, {0}).gear_up  # evdev-style set of codes
    d = m.map(32767, 0, 0, 0, 0)
    assert d.steering == pytest.approx(1.0) and d.handwheel_angle_rad == pytest.approx(
        0.5 * InputParams().handwheel_range_rad)


MUX = MuxParams(takeover_torque_nm=2.0, takeover_hold_s=0.2)


def run_mux(mux, torques, dt=0.01, t0=0.0):
    """(source, reason) after each cycle."""
    return [(mux.step(t0 + k * dt, tq), mux.source)[::-1] for k, tq in enumerate(torques)]


def test_takeover_by_torque_held_long_enough():
    mux = CommandMux(MUX)
    res = run_mux(mux, [0.0] * 10 + [2.5] * 30)
    first_driver = next(k for k, (src, _) in enumerate(res) if src is Source.DRIVER)
    assert (first_driver - 10) * 0.01 == pytest.approx(0.2, abs=0.011)
    assert res[first_driver][1] == "steering torque"
    assert res[first_driver - 1] == (Source.AUTONOMY, "")
    assert all(reason == "" for _, reason in res[first_driver + 1:])  # reported once


def test_short_spikes_do_not_take_over():
    mux = CommandMux(MUX)
    spikes = ([5.0] * 15 + [0.0]) * 10 + [math.nan] * 40  # 0.15 s spikes, NaN ignored
    assert all(src is Source.AUTONOMY for src, _ in run_mux(mux, spikes))


def test_button_takeover_and_hand_back():
    mux = CommandMux(MUX)
    assert mux.step(0.0, 0.0, takeover_button=True) == "takeover button"
    assert mux.source is Source.DRIVER
    assert all(src is Source.DRIVER for src, _ in run_mux(mux, [0.0] * 50, t0=0.01))
    assert mux.step(1.0, 0.0, handback_button=True) == "hand-back button"
    assert mux.source is Source.AUTONOMY
