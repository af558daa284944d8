"""Stop signs in the report: the stop lines of the shipped map and the "not stopped at" rule on
hand-made trajectories (a speed profile integrated along a straight lane), and its place in the
summary JSON."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from vehicle_sim.report.data import Recording
from vehicle_sim.report.lanes import load_lanes, stop_lines
from vehicle_sim.report.metrics import STOP_ZONE_M, stop_signs_not_stopped, summarize

LINE = {"stop:h0_0_f0": (15.0, -1.75, 0.0)}  # an eastbound lane's stop line at x = 15 m


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
    found = stop_signs_not_stopped(drive([(0.0, 10.0), (3.0, 10.0)]), LINE)
    assert len(found) == 1
    assert found[0]["time_s"] == pytest.approx(1.5, abs=0.02)
    assert found[0]["min_speed_in_zone_mps"] == pytest.approx(10.0)


def test_a_full_stop_just_before_the_line_is_not():
    # 5 m/s, braking at 2.5 m/s^2 from x = 8 m: stops at x = 13 m (2 m before), waits, goes on
    state = drive([(0.0, 5.0), (1.6, 5.0), (3.6, 0.0), (4.6, 0.0), (7.0, 4.0)])
    stop_x = state[np.argmax(state[:, 4] == 0.0), 1]
    assert 15.0 - STOP_ZONE_M < stop_x < 15.0
    assert stop_signs_not_stopped(state, LINE) == []


def test_a_stop_far_before_the_line_then_rolling_through_is_a_violation():
    state = drive([(0.0, 5.0), (0.6, 5.0), (1.6, 0.0), (2.6, 0.0), (4.0, 3.0), (8.0, 3.0)])
    assert state[np.argmax(state[:, 4] == 0.0), 1] < 15.0 - STOP_ZONE_M
    found = stop_signs_not_stopped(state, LINE)
    assert len(found) == 1 and found[0]["min_speed_in_zone_mps"] > 2.0


def test_the_opposite_lanes_line_and_a_parallel_street_do_not_count():
    state = drive([(0.0, 10.0), (3.0, 10.0)])
    assert stop_signs_not_stopped(state, {"stop:h0_1_b0": (15.0, 1.75, math.pi)}) == []
    assert stop_signs_not_stopped(state, {"stop:far": (15.0, 30.0, 0.0)}) == []


def test_the_summary_json_lists_them():
    rec = Recording(path=Path("synthetic.mcap"), state=drive([(0.0, 10.0), (3.0, 10.0)]))
    summary = summarize(rec, {}, LINE)
    assert [v["sign"] for v in summary["stop_signs_not_stopped"]] == ["stop:h0_0_f0"]
    assert summarize(rec, {})["stop_signs_not_stopped"] == []
