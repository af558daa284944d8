"""The run summary (core.run_summary): the run's real-time factor, and a summary file that cannot
be written costs only the file, never the text."""
import errno
import json
import os
import time
from pathlib import Path

import pytest

from vehicle_sim.core.run_summary import RunSummary, write_summary


def status(s: RunSummary, rtf: float, sim_s: float, command_timeout: bool = False) -> None:
    s.add_status(steps=0, overruns=0, rtf=rtf, lateness_p99_s=0.0,
                 command_timeout=command_timeout, rejected=0, sim_s=sim_s)


def test_command_timeouts_count_the_watchdog_braking_after_commands_had_come():
    """Before the first command the watchdog brakes too (the start of a run, counted as a
    timeout before); a run with no command at all says so instead of counting."""
    s = RunSummary()
    for t, timeout in ((0.0, True), (1.0, False), (2.0, True), (3.0, True), (4.0, False)):
        status(s, 1.0, t, command_timeout=timeout)
    assert s.command_timeouts == 2 and not s.never_commanded()
    idle = RunSummary()
    assert not idle.never_commanded(), "no status at all: nothing is known"
    for t in (0.0, 1.0, 2.0):
        status(idle, 1.0, t, command_timeout=True)
    assert idle.command_timeouts == 0 and idle.never_commanded()
    assert "_commanded" not in idle.as_dict()


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


def test_a_full_disk_leaves_no_partial_summary(tmp_path, monkeypatch):
    """Issue: a full disk left a 0-byte summary-*.json (vehicle_sim_sweep failed on it) while the
    log said "not written". The write is all or nothing: no summary file, no temporary file."""
    def full_disk(path, text, *args, **kwargs):
        with open(path, "w") as f:
            f.write(text[:10])  # what fitted
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(Path, "write_text", full_disk)
    text = write_summary(RunSummary(sim_time_s=5.0), str(tmp_path), [], {})
    assert "not written" in text and "No space left on device" in text
    assert list(tmp_path.iterdir()) == []


def test_summaries_of_the_same_second_do_not_overwrite_each_other(tmp_path, monkeypatch):
    """Issue: two runs ending in one second in one folder wrote the same summary-<time>.json."""
    monkeypatch.setattr(time, "strftime", lambda *_: "20250101-120000")
    for sim_s in (1.0, 2.0, 3.0):
        write_summary(RunSummary(sim_time_s=sim_s), str(tmp_path), [], {})
    pid = os.getpid()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["summary-20250101-120000-%d-2.json" % pid,
                     "summary-20250101-120000-%d.json" % pid, "summary-20250101-120000.json"]
    times = {json.loads((tmp_path / n).read_text())["sim_time_s"] for n in names}
    assert times == {1.0, 2.0, 3.0}
