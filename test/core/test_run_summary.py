"""The run summary (core.run_summary): the run's real-time factor, and a summary file that cannot
be written costs only the file, never the text."""
import json

import pytest

from vehicle_sim.core.run_summary import RunSummary, write_summary


def status(s: RunSummary, rtf: float, sim_s: float) -> None:
    s.add_status(steps=0, overruns=0, rtf=rtf, lateness_p99_s=0.0, command_timeout=False,
                 rejected=0, sim_s=sim_s)


def test_the_real_time_factor_is_the_runs_mean_not_the_last_windows():
    s = RunSummary()
    status(s, 0.5, 1.0)
    assert s.real_time_factor == 0.5  # one status: its window's
    status(s, 0.5, 2.0)  # a slow second (2 s of wall time), then 8 s in 2 s
    status(s, 0.0, 2.0)  # paused: no time of the run
    status(s, 4.0, 10.0)
    assert s.real_time_factor == pytest.approx(9.0 / 4.0)


def test_a_record_dir_that_cannot_be_written_keeps_the_summary_text(tmp_path):
    s = RunSummary(sim_time_s=5.0)
    (tmp_path / "file").write_text("")
    text = write_summary(s, str(tmp_path / "file" / "runs"), [], {})
    assert "sim_time_s: 5.000" in text and "not written" in text and "Not a directory" in text
    text = write_summary(s, str(tmp_path / "runs"), [], {})
    (path,) = (tmp_path / "runs").glob("summary-*.json")
    assert f"written to: {path}" in text.replace("  ", "")
    assert json.loads(path.read_text())["sim_time_s"] == 5.0
