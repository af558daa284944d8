"""vehicle_sim_sweep's rows and its Ctrl-C, with a stand-in for vehicle_sim_run (a Python script
that writes a summary the way the monitor does): no ROS, seconds."""
from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from vehicle_sim import sweep

FAKE_RUN = """
import json, pathlib, signal, sys, time
folder = pathlib.Path(sys.argv[sys.argv.index("--record_dir") + 1])
(folder / "started").write_text("")
stopped = []
signal.signal(signal.SIGINT, lambda *_: stopped.append(1))
end = time.monotonic() + float(sys.argv[sys.argv.index("--duration") + 1])
while not stopped and time.monotonic() < end:
    time.sleep(0.02)
if stopped:
    time.sleep(0.5)  # a runner stopping its nodes takes a moment
summary = json.dumps({"sim_time_s": 0.5 if stopped else 5.0, "distance_m": 1.0})
(folder / "summary-20250101-120000.json").write_text(SUMMARY)
print("a line of the run's log")
sys.exit(EXIT)
"""


def fake_runner(tmp_path: Path, summary: str = "summary", exit_code: int = 0) -> list[str]:
    script = tmp_path / "fake_run.py"
    script.write_text(FAKE_RUN.replace("SUMMARY", summary).replace("EXIT", str(exit_code)))
    return [sys.executable, str(script)]


def test_an_unreadable_summary_is_a_failed_row_with_its_log(tmp_path, monkeypatch, capsys):
    """Issue: a 0-byte summary (a full disk) raised JSONDecodeError out of the sweep, which then
    wrote no sweep.csv at all."""
    command = fake_runner(tmp_path, summary='""', exit_code=1)
    monkeypatch.setattr(sweep, "run_command", lambda o, seed, folder, d: [
        *command, "--record_dir", str(folder), "--duration", str(o.duration)])
    out = tmp_path / "out"
    assert sweep.main(["--out", str(out), "--duration", "0.1", "--seeds", "3-4"]) == 1
    rows = list(csv.DictReader(open(out / "sweep.csv")))
    assert [(r["exit_code"], r["status"]) for r in rows] == [
        ("1", "failed (unreadable summary: summary-20250101-120000.json: Expecting value: "
              "line 1 column 1 (char 0))")] * 2
    assert "  seed 4 | a line of the run's log" in capsys.readouterr().err


DRIVER = """
import sys
from vehicle_sim import sweep
sweep.run_command = lambda o, seed, folder, d: [*COMMAND, "--record_dir", str(folder),
                                                "--duration", "30"]
sys.exit(sweep.main(["--seeds", "0-7", "--jobs", "2", "--duration", "30", "--out", OUT]))
"""


@pytest.fixture
def sweep_of_8(tmp_path):
    """A sweep of 8 seeds of 30 s, 2 at a time, in a session of its own, once its first 2 runs
    have started; whatever of it is left after the test is killed (SIGKILL to its group)."""
    out = tmp_path / "out"
    driver = tmp_path / "driver.py"
    driver.write_text(textwrap.dedent(DRIVER).replace("COMMAND", repr(fake_runner(tmp_path)))
                      .replace("OUT", repr(str(out))))
    proc = subprocess.Popen([sys.executable, str(driver)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(Path(sweep.__file__).parents[1])})
    deadline = time.monotonic() + 20.0
    while len(list(out.glob("seed-*/started"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    yield proc, out
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.communicate()


def test_ctrl_c_stops_the_running_seeds_starts_no_other_and_writes_their_table(sweep_of_8):
    """Issue: Ctrl-C left the executor's block, whose shutdown then ran every queued seed, and
    the sweep ended in a traceback without a table; a run stopped by the SIGINT, which exits 0
    with a summary, would have been "ok"."""
    proc, out = sweep_of_8
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C at a terminal: the whole foreground group
    stdout, stderr = proc.communicate(timeout=20.0)
    assert proc.returncode == 130, stdout + stderr
    assert stderr.strip() == (f"vehicle_sim_sweep: interrupted: 0 runs finished, 2 stopped, 6 "
                              f"not started; table: {out / 'sweep.csv'}, {out / 'sweep.png'}")
    rows = list(csv.DictReader(open(out / "sweep.csv")))
    assert [(r["seed"], r["status"], r["sim_time_s"]) for r in rows] == [
        ("0", "interrupted", "0.5"), ("1", "interrupted", "0.5")]
    assert len(list(out.glob("seed-*/started"))) == 2, "a queued seed started after Ctrl-C"


def test_a_sigint_to_the_sweep_alone_stops_its_runs_too(sweep_of_8):
    """A kill -INT of the sweep's pid (not its group): the runs get no signal from a terminal,
    the sweep sends them theirs (they last 30 s)."""
    proc, out = sweep_of_8
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)  # not to its group
    stdout, stderr = proc.communicate(timeout=25.0)
    assert proc.returncode == 130 and time.monotonic() - sent < 10.0, stdout + stderr
    assert len(list(csv.DictReader(open(out / "sweep.csv")))) == 2


def test_a_second_ctrl_c_while_the_runs_stop_still_writes_the_table(sweep_of_8):
    """An impatient user: Ctrl-C twice. The second one, while the stopped runs end, is taken
    as the first (it raised inside the handler and the sweep ended without a table)."""
    proc, out = sweep_of_8
    os.killpg(proc.pid, signal.SIGINT)
    time.sleep(0.2)  # the runs are stopping
    os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=20.0)
    assert proc.returncode == 130 and "Traceback" not in stderr, stdout + stderr
    assert len(list(csv.DictReader(open(out / "sweep.csv")))) == 2
