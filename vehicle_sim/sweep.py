"""vehicle_sim_sweep: one scenario over many seeds, in parallel, as one table (CSV and PNG).

Each seed is a vehicle_sim_run process with its own ROS_DOMAIN_ID (the runs cannot see each
other) and loopback discovery, its summary and log in <out>/seed-<n>/. A run that fails is a row
with its exit code, and its last log lines are printed; the exit code is 1 when any run failed
or broke a criterion given on the command line (e.g. --max-accidents 0), so CI can use it. Ctrl-C
starts no further run and stops the running ones (SIGINT: each runner ends its nodes and writes
its summary); the table then holds the runs that ended, those stopped marked "interrupted", and
the exit code is 130.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from pathlib import Path

from tqdm import tqdm

from vehicle_sim.progress import on_terminal

MAX_SEEDS = 10_000
MAX_SEED = 2**31 - 1
LOG_TAIL_LINES = 15
INTERRUPTED = 130  # exit code after Ctrl-C (128 + SIGINT, as a shell's)
COLUMNS = ("seed", "exit_code", "status", "sim_time_s", "distance_m", "max_speed_mps",
           "accidents", "traffic_agents_max", "real_time_factor", "overruns",
           "lateness_p99_max_s", "command_timeouts", "wall_time_s")


def parse_seeds(text: str) -> list[int]:
    """'0-49', '7' or '0,3,10-12' -> sorted unique seeds; ValueError names the bad part."""
    seeds: set[int] = set()
    for part in text.split(","):
        lo, sep, hi = part.strip().partition("-")
        try:
            a, b = int(lo), int(hi) if sep else int(lo)
        except ValueError:
            raise ValueError(f"--seeds: {part!r} is not N or N-M") from None
        if not 0 <= a <= b <= MAX_SEED:
            raise ValueError(f"--seeds: {part!r} is not a range of seeds in 0..{MAX_SEED}")
        if b - a + 1 + len(seeds) > MAX_SEEDS:
            raise ValueError(f"--seeds: more than {MAX_SEEDS} runs")
        seeds.update(range(a, b + 1))
    return sorted(seeds)


def run_command(options: argparse.Namespace, seed: int, folder: Path, domain: int) -> list[str]:
    runner = Path(sys.executable).parent / "vehicle_sim_run"
    return [str(runner), "--scenario", options.scenario, "--seed", str(seed), "--mode",
            options.mode, "--duration", str(options.duration), "--record_dir", str(folder),
            "--record", "true" if options.record else "false", "--domain_id", str(domain),
            "--discovery_range", "LOCALHOST", "--timeout", str(options.timeout)]


class Runs:
    """The sweep's running runner processes, and its stop (Ctrl-C): once stopped, no run starts
    (a queued seed that the executor had already handed to a thread included)."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self._lock = threading.Lock()  # a start and the stop are one after the other
        self._procs: dict[int, subprocess.Popen] = {}

    def start(self, seed: int, command: list[str], log) -> subprocess.Popen | None:
        """The run of ``seed`` started with its output to ``log``; None after the stop."""
        with self._lock:
            if self.stop.is_set():
                return None
            self._procs[seed] = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                                 stdin=subprocess.DEVNULL)
            return self._procs[seed]

    def ended(self, seed: int) -> None:
        with self._lock:
            self._procs.pop(seed, None)

    def interrupt(self) -> int:
        """Stop: no further start, SIGINT to each running run (a Ctrl-C at a terminal sent it
        one already, a kill of the sweep alone did not; the runner takes a second one as the
        first). Returns how many were running."""
        with self._lock:
            self.stop.set()
            procs = list(self._procs.values())
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        return len(procs)


def run_seed(options: argparse.Namespace, seed: int, domains: queue.Queue,
             runs: Runs) -> dict | None:
    """One run; returns its table row (the summary's values, or the failure), None when the
    sweep was stopped before it started. A run that ended after the stop is "interrupted"
    (its summary is of a part of the run, not a result)."""
    folder = options.out / f"seed-{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "run.log"
    domain = domains.get()
    started = time.time()  # a reused --out folder keeps older summaries: only this run's count
    try:
        with open(log, "w") as out:
            proc = runs.start(seed, run_command(options, seed, folder, domain), out)
            code = None if proc is None else proc.wait()
    finally:
        domains.put(domain)
        runs.ended(seed)
    if code is None:
        return None
    row = {"seed": seed, "exit_code": code, "status": "ok" if code == 0 else f"failed ({code})"}
    _add_summary(row, folder, started)
    if runs.stop.is_set() and code in (0, INTERRUPTED, -signal.SIGINT):  # (a failure stays)
        row["status"] = "interrupted"
    if row["status"] != "ok":
        row["log_tail"] = log.read_text(errors="replace").splitlines()[-LOG_TAIL_LINES:]
    return row


def _add_summary(row: dict, folder: Path, started: float) -> None:
    """The values of the run's summary (the newest in ``folder`` since ``started``) into
    ``row``; a run that exited 0 without one, or whose summary does not read as a JSON object
    (a 0-byte file of a full disk raised out of the sweep, which then wrote no table), fails."""
    summaries = sorted(p for p in folder.glob("summary-*.json")
                       if p.stat().st_mtime >= started - 1.0)
    if not summaries:
        if row["exit_code"] == 0:
            row["status"] = "failed (no summary)"
        return
    try:
        summary = json.loads(summaries[-1].read_text())
        if not isinstance(summary, dict):
            raise ValueError(f"a JSON {type(summary).__name__}, not an object")
    except (OSError, ValueError) as exc:  # (json.JSONDecodeError and UnicodeError are)
        row["status"] = f"failed (unreadable summary: {summaries[-1].name}: {exc})"
        return
    row.update({k: summary.get(k, "") for k in COLUMNS if k in summary})


def judge(row: dict, options: argparse.Namespace) -> str:
    """Why the row breaks a criterion of the command line, '' when it does not."""
    if row["status"] != "ok":
        return row["status"]
    if options.max_accidents is not None and int(row.get("accidents", 0)) > options.max_accidents:
        return f"{row['accidents']} accidents > --max-accidents {options.max_accidents}"
    if options.min_distance is not None and \
            float(row.get("distance_m", 0.0)) < options.min_distance:
        return f"drove {float(row.get('distance_m', 0.0)):.1f} m < --min-distance " \
               f"{options.min_distance:g} m"
    return ""


def write_table(rows: list[dict], out: Path) -> tuple[Path, Path]:
    csv_path, png_path = out / "sweep.csv", out / "sweep.png"
    with open(csv_path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=(*COLUMNS, "verdict"), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(3, 1, figsize=(max(6.0, 0.25 * len(rows)), 7), sharex=True)
    seeds = [str(r["seed"]) for r in rows]
    for ax, key, label in ((axes[0], "distance_m", "distance [m]"),
                           (axes[1], "accidents", "accidents"),
                           (axes[2], "real_time_factor", "real-time factor")):
        values = [float(r.get(key) or 0.0) for r in rows]
        colours = ["tab:blue" if not r["verdict"] else "tab:red" for r in rows]
        ax.bar(seeds, values, color=colours)
        ax.set_ylabel(label)
        ax.grid(axis="y", alpha=0.3)
    axes[-1].set_xlabel("seed (red: failed or broke a criterion)")
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)
    plt.close(fig)
    return csv_path, png_path


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="vehicle_sim_sweep", description=__doc__.split("\n")[0])
    p.add_argument("--scenario", default="urban", help="scenario name or file (as the runner)")
    p.add_argument("--seeds", default="0-19", help="seeds: N, N-M or a comma list (0-19)")
    p.add_argument("--mode", default="lockstep", choices=("realtime", "fast", "lockstep"))
    p.add_argument("--duration", type=float, default=60.0, help="simulated seconds per run")
    p.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 1) // 2),
                   help="runs at the same time (default: half the cores)")
    p.add_argument("--max-accidents", type=int, default=None,
                   help="a run with more accidents breaks the sweep (exit 1)")
    p.add_argument("--min-distance", type=float, default=None,
                   help="a run whose ego drove less [m] breaks the sweep (exit 1)")
    p.add_argument("--record", action="store_true", help="record each run (and its report)")
    p.add_argument("--timeout", type=float, default=0.0,
                   help="wall-clock limit [s] of each run (default 10 x duration + 120)")
    p.add_argument("--out", type=Path, default=Path("runs/sweep"), help="output folder")
    options = p.parse_args(argv)
    if not 0.0 < options.duration <= 86400.0:
        p.error("--duration: must be in (0, 86400] s of simulated time")
    if options.max_accidents is not None and options.max_accidents < 0:
        p.error("--max-accidents: must be >= 0")
    if options.min_distance is not None and not 0.0 <= options.min_distance < float("inf"):
        p.error("--min-distance: must be a finite distance >= 0 m")
    if not 1 <= options.jobs <= 64:
        p.error("--jobs: must be in 1..64")
    if options.timeout <= 0.0:
        options.timeout = 10.0 * options.duration + 120.0
    try:
        options.seed_list = parse_seeds(options.seeds)
    except ValueError as exc:
        p.error(str(exc))
    return options


def main(argv: list[str] | None = None) -> int:
    options = parse(argv)
    options.out.mkdir(parents=True, exist_ok=True)
    rows, stopped = run_all(options)
    broken = 0
    for row in rows:
        row["verdict"] = judge(row, options)
        broken += bool(row["verdict"])
        if row["verdict"] and not stopped:
            print(f"seed {row['seed']}: {row['verdict']}", file=sys.stderr)
            for line in row.get("log_tail", []):
                print(f"  seed {row['seed']} | {line}", file=sys.stderr)
    csv_path, png_path = write_table(rows, options.out)
    if stopped:
        cut = sum(r["status"] == "interrupted" for r in rows)
        print(f"vehicle_sim_sweep: interrupted: {len(rows) - cut} runs finished, {cut} stopped, "
              f"{len(options.seed_list) - len(rows)} not started; table: {csv_path}, "
              f"{png_path}", file=sys.stderr)
        return INTERRUPTED
    print(f"{len(rows)} runs, {broken} failed or broke a criterion; table: {csv_path}, "
          f"{png_path}")
    return 1 if broken else 0


def run_all(options: argparse.Namespace) -> tuple[list[dict], bool]:
    """Each seed's row, by seed, and whether Ctrl-C stopped the sweep: then the queued seeds
    are cancelled and the running ones stopped (before, leaving the executor's block waited
    for every queued seed to run, and the sweep ended in a traceback without a table)."""
    jobs = min(options.jobs, len(options.seed_list))
    base = int(os.environ.get("ROS_DOMAIN_ID", "") or 1 + os.getpid() % 60)
    domains: queue.Queue = queue.Queue()
    for j in range(jobs):  # distinct domains in 1..101, one per concurrent run
        domains.put(1 + (base + j) % 101)
    runs, stopped = Runs(), False
    futures: list[tuple[int, Future]] = []
    with ThreadPoolExecutor(max_workers=jobs) as pool, \
            tqdm(total=len(options.seed_list), desc="runs", unit="run",
                 disable=not on_terminal()) as bar:
        try:
            for s in options.seed_list:
                futures.append((s, pool.submit(run_seed, options, s, domains, runs)))
            for _ in as_completed([f for _, f in futures]):
                bar.update(1)
        except KeyboardInterrupt:
            stopped = True
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C: the same
            try:
                runs.interrupt()
                pool.shutdown(wait=True, cancel_futures=True)  # the running ones end on SIGINT
            finally:
                signal.signal(signal.SIGINT, previous)
    rows = [r for r in (_row(seed, f) for seed, f in futures) if r is not None]
    return sorted(rows, key=lambda r: r["seed"]), stopped


def _row(seed: int, future: Future) -> dict | None:
    """A finished seed's row; None for one cancelled or never started; a run_seed that raised
    is that seed's failed row (the table is still written)."""
    if future.cancelled():
        return None
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001 (any: the other seeds' rows are kept)
        return {"seed": seed, "exit_code": "", "status": f"failed (sweep: {exc})",
                "log_tail": []}


if __name__ == "__main__":
    sys.exit(main())
