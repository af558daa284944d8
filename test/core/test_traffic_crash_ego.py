"""Where the traffic's crash world puts the ego (traffic_crashes.ego_at_step_start): the bodies
are at the start of the step, so the ego goes there too, whatever the stamp of the state the
traffic node stepped with (at the step's end when computed at its tick, at its start when
computed ahead)."""
from __future__ import annotations

import math

import pytest

from vehicle_sim.core.accident.traffic_crashes import ego_at_step_start

T_NS, DT_S = 1_050_000_000, 0.05  # the step from 1.00 to 1.05 s
EGO = (10.0, 5.0, math.pi / 2, 14.0)  # heading north at 14 m/s


@pytest.mark.parametrize("stamp_ns, back_m", [
    (None, 0.7),  # no stamp: the state of the step's end
    (1_050_000_000, 0.7),  # at the step's end (computed at its tick)
    (1_060_000_000, 0.7),  # newer still: at most one step back
    (1_025_000_000, 0.35),  # midway
    (1_000_000_000, 0.0),  # at the step's start (computed ahead): where it is
    (900_000_000, 0.0),  # older (a delayed link): not extrapolated
])
def test_the_ego_is_moved_back_to_the_steps_start_by_its_age_never_forward(stamp_ns, back_m):
    x, y, yaw, speed = ego_at_step_start(EGO, T_NS, DT_S, stamp_ns)
    assert (x, yaw, speed) == pytest.approx(EGO[0:1] + EGO[2:], abs=1e-12)
    assert y == pytest.approx(EGO[1] - back_m, abs=1e-9)
