"""Stop signs in the report: the stop lines of the shipped map and the "not stopped at" rule on
hand-made trajectories (a speed profile integrated along a straight lane): the full-stop speed
the ego autopilot stops below too, a zone from the ego's length; and its place in the summary
JSON."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from vehicle_sim.core.ego.full_stop import FULL_STOP_MPS, STOP_ZONE_MARGIN_M
from vehicle_sim.core.ego.params import EgoDriverParams
from vehicle_sim.report.data import Recording
from vehicle_sim.report.lanes import load_lanes, stop_lines
from vehicle_sim.report.metrics import (
    ego_length_m,
    stop_signs_not_stopped,
    stop_zone_m,
    summarize,
)

LINE = {"stop:h0_0_f0": (15.0, -1.75, 0.0)}  # an eastbound lane's stop line at x = 15 m
CAR_M = ego_length_m("")[0]  # the default ego, 4.3 m
TRUCK_M = ego_length_m("vehicles/truck.yaml")[0]  # 7.5 m


def drive(speeds_mps: list[tuple[float, float]], dt_s: float = 0.01) -> np.ndarray:
    """State rows (t, x, y, yaw, vx, ...) east along y = -1.75 from x = 0 through the piecewise
    linear speed profile [(t, v), ...]."""
    t = np.arange(0.0, speeds_mps[-1][0] + 1e-9, dt_s)
    v = np.interp(t, [p[0] for p in speeds_mps], [p[1] for p in speeds_mps])
    x = np.concatenate(([0.0], np.cumsum(0.5 * (v[1:] + v[:-1]) * dt_s)))
    z = np.zeros_like(t)
    return np.column_stack((t, x, z - 1.75, z, v, z, z, z, z))


def test_the_shipped_map_has_stop_lines_at_the_lane_ends_with_their_headings():
    lanes, spec, note = load_lanes("maps/urban_grid.yaml")
    lines = stop_lines(lanes, spec)
    assert not note and "stop1_2:h2_0_f0" in lines and "stop3_2:v3_1_f0" in lines
    x, y, heading = lines["stop1_2:h2_0_f0"]
    end = lanes["h2_0_f0"][-1]
    assert (x, y) == pytest.approx((end[0], end[1]), abs=0.5)  # distance_from_end_m 0
    assert heading == pytest.approx(end[2], abs=1e-6)
    assert all(k.split(":")[0].startswith("stop") for k in lines)  # lights are not stop signs
    assert stop_lines({}, None) == {}


def test_driving_through_at_speed_is_a_violation():
    found = stop_signs_not_stopped(drive([(0.0, 10.0), (3.0, 10.0)]), LINE, CAR_M)
    assert len(found) == 1
    assert found[0]["time_s"] == pytest.approx(1.5, abs=0.02)
    assert found[0]["min_speed_in_zone_mps"] == pytest.approx(10.0)


def test_a_full_stop_just_before_the_line_is_not():
    # 5 m/s, braking at 2.5 m/s^2 from x = 8 m: stops at x = 13 m (2 m before), waits, goes on
    state = drive([(0.0, 5.0), (1.6, 5.0), (3.6, 0.0), (4.6, 0.0), (7.0, 4.0)])
    stop_x = state[np.argmax(state[:, 4] == 0.0), 1]
    assert 15.0 - stop_zone_m(CAR_M) < stop_x < 15.0
    assert stop_signs_not_stopped(state, LINE, CAR_M) == []


def test_a_stop_far_before_the_line_then_rolling_through_is_a_violation():
    state = drive([(0.0, 5.0), (0.6, 5.0), (1.6, 0.0), (2.6, 0.0), (4.0, 3.0), (8.0, 3.0)])
    assert state[np.argmax(state[:, 4] == 0.0), 1] < 15.0 - stop_zone_m(TRUCK_M)
    found = stop_signs_not_stopped(state, LINE, TRUCK_M)
    assert len(found) == 1 and found[0]["min_speed_in_zone_mps"] > 2.0


def test_the_opposite_lanes_line_and_a_parallel_street_do_not_count():
    state = drive([(0.0, 10.0), (3.0, 10.0)])
    assert stop_signs_not_stopped(state, {"stop:h0_1_b0": (15.0, 1.75, math.pi)}, CAR_M) == []
    assert stop_signs_not_stopped(state, {"stop:far": (15.0, 30.0, 0.0)}, CAR_M) == []


@pytest.mark.parametrize(("lowest_mps", "flagged"), [(0.2, True), (FULL_STOP_MPS + 1e-3, True),
                                                     (FULL_STOP_MPS, False), (0.05, False)])
def test_a_full_stop_is_the_egos_own_stop_speed(lowest_mps, flagged):
    """One constant: the ego autopilot's stop is done below FULL_STOP_MPS, the report's
    threshold; slowing to 0.2 m/s at the line (the ego's old 0.3 m/s law) is a rolling stop."""
    assert EgoDriverParams().stop_sign_speed_mps == FULL_STOP_MPS
    # 5 m/s, braking from x = 8 m to lowest_mps at x ~ 13 m, 0.4 s there, goes on
    state = drive([(0.0, 5.0), (1.6, 5.0), (3.6, lowest_mps), (4.0, lowest_mps), (6.0, 4.0)])
    assert 15.0 - stop_zone_m(CAR_M) < state[np.argmin(state[:, 4]), 1] < 15.0
    assert bool(stop_signs_not_stopped(state, LINE, CAR_M)) == flagged


def test_the_zone_is_half_the_egos_length_and_a_margin():
    """A stop with the centre 6 m before the line: a 7.5 m truck's front bumper is 2.25 m
    short of it (a stop), a 4.3 m car's 3.85 m (too far back, then rolling through)."""
    assert stop_zone_m(TRUCK_M) == pytest.approx(0.5 * TRUCK_M + STOP_ZONE_MARGIN_M)
    assert stop_zone_m(CAR_M) == pytest.approx(0.5 * CAR_M + STOP_ZONE_MARGIN_M)
    state = drive([(0.0, 5.0), (0.8, 5.0), (2.8, 0.0), (3.8, 0.0), (5.8, 4.0), (7.0, 4.0)])
    assert state[np.argmax(state[:, 4] == 0.0), 1] == pytest.approx(15.0 - 6.0, abs=0.01)
    assert stop_signs_not_stopped(state, LINE, TRUCK_M) == []
    assert len(stop_signs_not_stopped(state, LINE, CAR_M)) == 1
    for vehicle_file, found in (("vehicles/truck.yaml", []), ("", ["stop:h0_0_f0"]),
                                ("/elsewhere/truck.yaml", ["stop:h0_0_f0"])):  # default car
        rec = Recording(path=Path("synthetic.mcap"), state=state, vehicle_file=vehicle_file)
        assert [v["sign"] for v in summarize(rec, {}, LINE)["stop_signs_not_stopped"]] == found


def test_the_summary_json_lists_them():
    rec = Recording(path=Path("synthetic.mcap"), state=drive([(0.0, 10.0), (3.0, 10.0)]))
    summary = summarize(rec, {}, LINE)
    assert [v["sign"] for v in summary["stop_signs_not_stopped"]] == ["stop:h0_0_f0"]
    assert summarize(rec, {})["stop_signs_not_stopped"] == []
