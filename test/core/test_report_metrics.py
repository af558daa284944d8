"""The report's metrics on hand-made trajectories: red lights run, time-to-collision, distance;
and vehicle_sim_report refuses a file that is not a recording with one line."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from vehicle_sim.report.lanes import light_headings, load_lanes
from vehicle_sim.report.metrics import (
    ego_length_m,
    min_time_to_collision,
    path_length_m,
    red_lights_run,
)


def straight_run(speed_mps: float, t_end_s: float, dt_s: float = 0.01) -> np.ndarray:
    """State rows (t, x, y, yaw, vx, vy, r, ax, ay) driving east along y = -1.75 from x = 0."""
    t = np.arange(0.0, t_end_s + 1e-9, dt_s)
    z = np.zeros_like(t)
    return np.column_stack((t, speed_mps * t, z - 1.75, z, z + speed_mps, z, z, z, z))


def test_path_length_is_the_polyline_length():
    assert path_length_m(straight_run(10.0, 2.0)[:, 1:3]) == pytest.approx(20.0)
    assert path_length_m(np.array([[0.0, 0.0], [3.0, 4.0], [3.0, 0.0]])) == pytest.approx(9.0)


@pytest.mark.parametrize(("state_at_crossing", "expected"), [(2, 1), (0, 0), (1, 0)])
def test_a_red_light_is_run_only_when_red_at_the_stop_line(state_at_crossing, expected):
    state = straight_run(10.0, 3.0)  # crosses x = 15 at t = 1.5 s
    light = ("tl:h0_0_f0", (0, 15.0, -1.75))
    lights = [(0.0, {light[0]: light[1]}), (1.0, {light[0]: (state_at_crossing, 15.0, -1.75)})]
    runs = red_lights_run(state, lights, {light[0]: 0.0})
    assert len(runs) == expected
    if expected:
        assert runs[0]["time_s"] == pytest.approx(1.5, abs=0.011)


def test_a_red_light_of_the_opposite_lane_is_not_run():
    state = straight_run(10.0, 3.0)
    lights = [(0.0, {"tl:h0_0_b0": (2, 15.0, 1.75)})]  # 3.5 m to the left, facing west
    assert red_lights_run(state, lights, {"tl:h0_0_b0": math.pi}) == []


@pytest.mark.parametrize("vehicle_file, ego_m", [("", 4.298), ("vehicles/medium_car.yaml", 4.298),
                                                 ("vehicles/truck.yaml", 7.49)])
def test_ttc_to_a_slower_leader_ahead_in_the_lane(vehicle_file, ego_m):
    """Bumper to bumper with the recording's ego (its vehicle file; none: the default car)."""
    state = straight_run(10.0, 1.0)
    length, width = 4.0, 1.8
    # leader 30 m ahead at 4 m/s: gap 30 - (ego + leader)/2, closing 6 m/s
    leader = np.array([[7, 30.0, -1.75, 0.0, 4.0, length, width]])
    beside = np.array([[8, 10.0, 1.75, math.pi, 4.0, length, width]])  # oncoming lane
    ego, note = ego_length_m(vehicle_file)
    assert ego == pytest.approx(ego_m) and note == ""
    best = min_time_to_collision(state, [(0.0, np.vstack((leader, beside)))], ego)
    gap = 30.0 - 0.5 * (ego_m + length)
    assert best["agent"] == 7 and best["ttc_s"] == pytest.approx(gap / 6.0)
    faster = leader.copy()
    faster[0, 4] = 12.0
    assert min_time_to_collision(state, [(0.0, faster)], ego) is None  # opening gap: no TTC


def test_a_vehicle_file_not_found_here_gives_the_default_car_and_a_note():
    """A recording made with a car file of another machine is still reported."""
    ego, note = ego_length_m("/home/rig/their_car.yaml")
    assert ego == pytest.approx(4.298)
    assert "their_car.yaml" in note and "vehicles/medium_car.yaml used" in note, note


def test_the_shipped_map_gives_lane_headings_for_lights():
    lanes, spec, note = load_lanes("maps/urban_grid.yaml")
    assert not note and spec is not None and "h0_0_f0" in lanes
    end = lanes["h0_0_f0"][-1]
    headings = light_headings(lanes, [(0.0, {"tl:h0_0_f0": (2, end[0], end[1])})])
    assert headings["tl:h0_0_f0"] == pytest.approx(0.0, abs=1e-9)  # eastbound lane
    assert load_lanes("maps/no_such_map.yaml")[2].startswith("map not drawn")


def test_report_refuses_a_file_that_is_not_a_recording_with_one_line(tmp_path):
    bad = tmp_path / "junk.mcap"
    bad.write_bytes(b"\x89MCAP0\r\n" + b"\xff" * 64)
    script = Path(sys.executable).parent / "vehicle_sim_report"
    result = subprocess.run([str(script), str(bad)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "junk.mcap" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
