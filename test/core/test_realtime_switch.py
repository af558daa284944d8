"""The GIL switch interval of a process with a real-time loop: only ever shortened, and a bad
value is refused with a message naming it."""
from __future__ import annotations

import sys

import pytest

from vehicle_sim.core.realtime import LOOP_SWITCH_INTERVAL_S, shorten_switch_interval


@pytest.fixture
def restore_interval():
    before = sys.getswitchinterval()
    yield
    sys.setswitchinterval(before)


def test_the_interval_is_shortened_to_a_fraction_of_a_1khz_period_and_never_lengthened(
        restore_interval):
    sys.setswitchinterval(0.005)  # CPython's default
    assert shorten_switch_interval() == pytest.approx(LOOP_SWITCH_INTERVAL_S, rel=0.01)
    assert LOOP_SWITCH_INTERVAL_S <= 0.25e-3, "a fraction of the 1 ms step"
    sys.setswitchinterval(1e-5)  # the process chose shorter already: kept
    assert shorten_switch_interval() == pytest.approx(1e-5, rel=0.01)


@pytest.mark.parametrize("bad", [0.0, -1e-3, float("nan"), float("inf")])
def test_a_bad_interval_is_refused_naming_the_value(bad, restore_interval):
    before = sys.getswitchinterval()
    with pytest.raises(ValueError, match="switch interval"):
        shorten_switch_interval(bad)
    assert sys.getswitchinterval() == before
