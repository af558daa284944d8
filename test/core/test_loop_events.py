"""The physics process's events as bytes (core.loop_events): a step and its state come back
whole, every field in its place and type; other events as the tuples they were."""
from __future__ import annotations

import numpy as np
import pytest

from vehicle_sim.core.loop_events import decode, event, step_event
from vehicle_sim.core.vehicle.interface import SNAPSHOT_SIZE, VehicleSnapshot


def _distinct_snapshot() -> VehicleSnapshot:
    """Every value different, so a field read from another's place shows."""
    values = iter(np.arange(1.0, SNAPSHOT_SIZE + 1) * 1.5)
    s = VehicleSnapshot()
    for name, value in vars(s).items():
        if isinstance(value, np.ndarray):
            setattr(s, name, np.array([next(values) for _ in value]))
        else:
            setattr(s, name, float(next(values)))
    s.gear = -1
    return s


def test_a_step_with_its_state_comes_back_whole():
    s = _distinct_snapshot()
    kind, k, t_ns, back = decode(step_event(2**40 + 3, 2**62 + 7, s))
    assert (kind, k, t_ns) == ("step", 2**40 + 3, 2**62 + 7)  # integers exact past 2**53
    for name, value in vars(s).items():
        got = getattr(back, name)
        assert type(got) is type(value), name
        assert np.array_equal(got, value), name
    assert back.gear == -1


def test_a_step_without_a_state_and_other_events():
    assert decode(step_event(5, 5_000_000, None)) == ("step", 5, 5_000_000, None)
    assert decode(event(("diverged", 7, "x is [nan]"))) == ("diverged", 7, "x is [nan]")
    with pytest.raises(ValueError, match="unknown physics process event"):
        decode(b"Qgarbage")


def test_a_cut_step_event_is_one_clear_error():
    whole = step_event(5, 5_000_000, _distinct_snapshot())
    with pytest.raises(ValueError, match="under a header"):
        decode(whole[:10])
    with pytest.raises(ValueError, match=f"snapshot is {SNAPSHOT_SIZE} float64, got 3"):
        decode(whole[:24 + 3 * 8])
