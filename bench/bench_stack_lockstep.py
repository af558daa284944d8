"""Lockstep with an external stack against lockstep without one: what holding each frame for
the stack's command (core.motion.stack_sync) costs in wall time.

Per round, for the same simulated duration and seed, on loopback DDS with a domain of its own:
the reference, ``vehicle_sim_run --scenario urban --mode lockstep`` (the graph drives the ego
with its own ego_driver), then ``--scenario urban_stack --mode lockstep`` with
examples/minimal_stack.py as the ego's driver in a process of its own (its map loaded before
the run starts, as test/ros/test_minimal_stack.py does). Prints for each: the summary's
simulated seconds per wall second, the command's wall time (start-up and shutdown included) and
the ego's distance; for the stack its CPU time; then stack / reference. The two runs of a round
follow each other, so the ratio is taken in one load window; the load average is printed before
and after each round (shared machines drift 2x between runs).

Usage (the project venv): $VSIM_VENV/bin/python bench/bench_stack_lockstep.py [seconds] [rounds]
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from loopback_dds import use_loopback_dds
from proc_stats import cpu_s

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "ros"))
from stack_process import StackProcess  # noqa: E402 (test/ros: shared with test_minimal_stack)

BIN = Path(sys.executable).parent
SEED = 3
GOAL = "60,101.75"  # three sides of the block (test_minimal_stack's goal)


def simulate(scenario: str, seconds: float, folder: Path, base: dict[str, str]) -> dict:
    """One lockstep run of ``scenario``: its summary and the command's wall time [s]."""
    start = time.monotonic()
    proc = subprocess.run(
        [str(BIN / "vehicle_sim_run"), "--scenario", scenario, "--mode", "lockstep",
         "--duration", f"{seconds:g}", "--seed", str(SEED), "--record_dir", str(folder),
         "--domain_id", base["ROS_DOMAIN_ID"], "--timeout", str(30 * seconds + 120)],
        capture_output=True, text=True, env=base)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit(f"{scenario} run failed:\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}")
    summary = json.loads(next(folder.glob("summary-*.json")).read_text())
    return {"summary": summary, "wall_s": wall}


def with_stack(seconds: float, osm: Path, folder: Path, base: dict[str, str]) -> dict:
    """urban_stack in lockstep with the minimal stack; adds the stack's CPU time [s]."""
    try:
        with StackProcess(osm, GOAL) as stack:
            result = simulate("urban_stack", seconds, folder, base)
            result["stack_cpu_s"] = cpu_s(stack.pid)
    except RuntimeError as exc:  # it did not load its map
        sys.exit(str(exc))
    return result


def line(name: str, r: dict) -> str:
    s = r["summary"]
    return (f"  {name}: {s['real_time_factor']:.2f}x real time over the run, command wall time "
            f"{r['wall_s']:.1f} s; ego {s['distance_m']:.0f} m, {s['accidents']} accidents")


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    # the stack's process inherits this process's loopback profile; the runs get the
    # environment before it (the runner adds the DDS settings itself, as for a user)
    base = use_loopback_dds(150, 30)
    domain_id = base["ROS_DOMAIN_ID"]
    print(f"lockstep with an external stack: {seconds:g} s simulated, seed {SEED}, "
          f"{os.cpu_count()} CPUs, domain {domain_id}")
    with tempfile.TemporaryDirectory() as tmp:
        osm = Path(tmp) / "urban.osm"
        subprocess.run([str(BIN / "vehicle_sim_export_map"), "maps/urban_grid.yaml", "--out",
                        str(osm)], check=True, capture_output=True, timeout=120)
        for k in range(rounds):
            print(f" round {k + 1}: load average {os.getloadavg()[0]:.1f}")
            ref = simulate("urban", seconds, Path(tmp) / f"ref{k}", base)
            print(line("urban (ego_driver), lockstep", ref))
            stk = with_stack(seconds, osm, Path(tmp) / f"stack{k}", base)
            print(line("urban_stack + minimal_stack, lockstep", stk))
            print(f"  the stack's process: {stk['stack_cpu_s']:.1f} s CPU")
            rtf_ratio = stk["summary"]["real_time_factor"] / ref["summary"]["real_time_factor"]
            print(f"  stack / reference: wall time {stk['wall_s'] / ref['wall_s']:.2f}, "
                  f"real-time factor {rtf_ratio:.2f}; load average after "
                  f"{os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
