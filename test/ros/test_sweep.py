"""vehicle_sim_sweep: seeds run in parallel on their own domains, one table, CI exit codes."""
from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from vehicle_sim.sweep import parse_seeds

SWEEP = str(Path(sys.executable).parent / "vehicle_sim_sweep")


def sweep(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SWEEP, "--scenario", "urban", "--mode", "lockstep", "--duration", "2",
                           "--jobs", "2", "--timeout", "150", "--out", str(tmp_path), *args],
                          capture_output=True, text=True, timeout=400)


def test_a_two_seed_sweep_writes_one_row_per_seed_and_exits_0(tmp_path):
    result = sweep(tmp_path, "--seeds", "4-5", "--max-accidents", "1000")
    assert result.returncode == 0, result.stdout + result.stderr
    rows = list(csv.DictReader(open(tmp_path / "sweep.csv")))
    assert [r["seed"] for r in rows] == ["4", "5"]
    for row in rows:
        assert row["status"] == "ok" and row["exit_code"] == "0" and not row["verdict"]
        assert float(row["sim_time_s"]) >= 2.0 and float(row["distance_m"]) > 0.0
    assert (tmp_path / "sweep.png").read_bytes()[:4] == b"\x89PNG"


def test_a_criterion_no_run_can_meet_exits_1_and_names_it(tmp_path):
    result = sweep(tmp_path, "--seeds", "1", "--min-distance", "1e6")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "seed 1: drove" in result.stderr and "--min-distance" in result.stderr
    (row,) = csv.DictReader(open(tmp_path / "sweep.csv"))
    assert row["status"] == "ok" and "min-distance" in row["verdict"]


def test_a_failed_run_is_a_row_with_its_exit_code_and_log(tmp_path):
    result = sweep(tmp_path, "--seeds", "0", "--scenario", "moon_base")
    assert result.returncode == 1
    (row,) = csv.DictReader(open(tmp_path / "sweep.csv"))
    assert row["exit_code"] == "2" and row["status"] == "failed (2)"
    assert "unknown scenario 'moon_base'" in result.stderr  # the run's last log lines


@pytest.mark.parametrize(("text", "seeds"), [("0-3", [0, 1, 2, 3]), ("7", [7]),
                                             ("5,1-2,5", [1, 2, 5])])
def test_seed_lists(text, seeds):
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize("text", ["a-b", "5-1", "-3", "0-99999999"])
def test_bad_seed_lists_are_refused(text):
    with pytest.raises(ValueError, match="--seeds"):
        parse_seeds(text)
