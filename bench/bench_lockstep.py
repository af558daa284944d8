"""The whole urban graph in batch modes: how much faster than real time, lockstep vs fast.

Runs ``vehicle_sim_run --scenario <name> --mode lockstep`` and then ``--mode fast`` for the same
simulated duration and seed (real processes, real DDS on loopback, every node of the scenario),
and prints per mode: simulated seconds per wall second over the run (the monitor's figure, from
the dynamics node's first step to the end) and the wall time of the whole command (start-up and
shutdown included). Lockstep waits every ``lockstep_frame_steps`` physics steps for the peers
(config/dynamics.yaml); fast does not wait and is not repeatable.

Usage (the project venv): $VSIM_VENV/bin/python bench/bench_lockstep.py [seconds] [scenario]
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(mode: str, seconds: float, scenario: str, folder: Path) -> tuple[dict, float]:
    runner = str(Path(sys.executable).parent / "vehicle_sim_run")
    start = time.monotonic()
    result = subprocess.run(
        [runner, "--scenario", scenario, "--mode", mode, "--duration", f"{seconds:g}", "--seed",
         "3", "--record_dir", str(folder), "--domain_id", str(180 + os.getpid() % 40),
         "--timeout", str(20 * seconds + 120)], capture_output=True, text=True)
    wall = time.monotonic() - start
    if result.returncode != 0:
        sys.exit(f"{mode} run failed:\n{result.stdout[-3000:]}{result.stderr[-2000:]}")
    return json.loads(next(folder.glob("summary-*.json")).read_text()), wall


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
    scenario = sys.argv[2] if len(sys.argv) > 2 else "urban"
    print(f"urban graph batch bench: scenario {scenario}, {seconds:g} s simulated, seed 3, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("lockstep", "fast"):
            folder = Path(tmp) / mode
            summary, wall = run(mode, seconds, scenario, folder)
            rows[mode] = summary["real_time_factor"]
            print(f"  {mode:8s}: {summary['real_time_factor']:.2f}x real time over the run, "
                  f"command wall time {wall:.1f} s; ego {summary['distance_m']:.0f} m, "
                  f"{summary['traffic_agents_max']} agents max, "
                  f"{summary['accidents']} accidents")
    print(f"  lockstep / fast: {rows['lockstep'] / rows['fast']:.2f}")


if __name__ == "__main__":
    main()
