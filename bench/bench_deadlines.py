"""Deadlines of the 1 kHz physics loop with the whole urban graph running, against a bare loop.

In ONE run of this script, on the same machine:
(a) bare: a child process running a bare Python sleep loop at 1 kHz paced by the same helpers
    as the dynamics node (core.realtime: Pacer on absolute deadlines, 1 us timer slack,
    SCHED_FIFO priority 20 as config/dynamics.yaml if permitted), nothing else, before and
    after the graph;
(b) graph: ``vehicle_sim_run --scenario urban`` in real time; the dynamics loop's lateness from
    its SimStatus messages (each covers one 1 s window: p50, p99, max, cumulative overruns and
    steps), after ``--settle`` seconds of start-up;
and each node process's CPU share at real time over the same window (/proc utime + stime).
Both loops are summarised the same way: p50 = median of the 1 s windows' p50, p99 = mean of
their p99 (the worst window is printed too), overrun rate = periods woken more than one period
late / periods. Ratios graph/bare end the output; a bare overrun rate of 0 counts as one
overrun (the ratio is then a lower bound, marked ">=").

    .venv/bin/python bench/bench_deadlines.py [--seconds 30] [--settle 10]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

PERIOD_S = 1e-3
PRIORITY = 20  # config/dynamics.yaml realtime_priority
TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


def bare_loop(seconds: float) -> dict:
    """The bare loop (runs in the child process): 1 s windows of lateness, overruns, steps."""
    from vehicle_sim.core.realtime import (
        LatenessWindow,
        Pacer,
        set_realtime_priority,
        tighten_timer_slack,
    )

    tighten_timer_slack()
    refused = set_realtime_priority(PRIORITY)
    window, windows = LatenessWindow(), []
    pacer = Pacer(PERIOD_S)
    steps = round(seconds / PERIOD_S)
    for k in range(1, steps + 1):
        window.add(pacer.wait())
        if k % 1000 == 0:
            windows.append(window.percentiles())
            window.clear()
    return {"windows": windows, "overruns": pacer.overruns, "steps": steps,
            "fifo": not refused}


def run_bare(seconds: float) -> dict:
    out = subprocess.run([sys.executable, __file__, "--bare", str(seconds)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process [s]."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * TICK_S


def node_processes(runner_pid: int) -> dict[str, int]:
    """The runner's child processes by node name (``__node:=<name>``)."""
    found = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == runner_pid:
            names = [a.decode().split(":=", 1)[1] for a in argv if a.startswith(b"__node:=")]
            found[names[0] if names else Path(argv[0].decode()).name] = int(proc.name)
    return found


class StatusWatch:
    """sim/status of the dynamics node, received in this process."""

    def __init__(self) -> None:
        import rclpy
        from vehicle_sim.msg import SimStatus

        from vehicle_sim.nodes import qos

        self.node = rclpy.create_node("bench_deadlines")
        self.status: list[tuple[float, SimStatus]] = []
        self.node.create_subscription(SimStatus, "sim/status",
                                      lambda m: self.status.append((time.monotonic(), m)),
                                      qos.EVENT)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        import rclpy

        while not self._stop.is_set():
            rclpy.spin_once(self.node, timeout_sec=0.05)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.node.destroy_node()


def run_graph(seconds: float, settle_s: float, env: dict[str, str]) -> dict:
    """The urban graph in real time; the dynamics loop's windows after ``settle_s`` of sim
    time, and each node's CPU share over the same wall window."""
    watch = StatusWatch()
    runner = str(Path(sys.executable).parent / "vehicle_sim_run")
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen([runner, "--scenario", "urban", "--duration",
                                 f"{settle_s + seconds + 3:g}", "--record_dir", tmp,
                                 "--timeout", str(4 * (settle_s + seconds) + 120)],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not watch.status or watch.status[-1][1].sim_time < settle_s:
            if proc.poll() is not None:
                sys.exit("the urban graph ended before it settled")
            time.sleep(0.05)
        pids = node_processes(proc.pid)
        cpu0, t0, first = {n: cpu_seconds(p) for n, p in pids.items()}, time.monotonic(), \
            len(watch.status)
        time.sleep(seconds)
        cpu = {n: (cpu_seconds(p) - cpu0[n]) / (time.monotonic() - t0) for n, p in pids.items()}
        last = len(watch.status)
        load = os.getloadavg()[0]
        proc.wait()
    watch.close()
    window = [m for _, m in watch.status[first:last]]
    return {"windows": [(m.lateness_p50, m.lateness_p99, m.lateness_max) for m in window],
            "overruns": window[-1].overruns - window[0].overruns,
            "steps": window[-1].steps - window[0].steps, "cpu": cpu, "load": load}


def summary(r: dict) -> tuple[float, float, float, float]:
    """(p50 [s], p99 [s], worst window p99 [s], overrun rate) of a loop's result."""
    p50 = statistics.median(w[0] for w in r["windows"])
    p99s = [w[1] for w in r["windows"]]
    return p50, statistics.fmean(p99s), max(p99s), r["overruns"] / max(r["steps"], 1)


def line(name: str, r: dict) -> str:
    p50, p99, worst, rate = summary(r)
    return (f"{name}: lateness p50 {p50 * 1e6:.0f} us, p99 {p99 * 1e6:.0f} us (worst 1 s "
            f"window {worst * 1e6:.0f} us), overruns {r['overruns']} of {r['steps']} periods "
            f"({rate:.2%})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=30.0, help="measured seconds per loop")
    parser.add_argument("--settle", type=float, default=10.0, help="graph start-up to skip [s]")
    parser.add_argument("--bare", type=float, default=0.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare:
        print(json.dumps(bare_loop(args.bare)))
        return
    from vehicle_sim import graph

    base = dict(os.environ)  # the runner adds the DDS settings itself
    base["ROS_DOMAIN_ID"] = base.get("ROS_DOMAIN_ID") or str(120 + os.getpid() % 60)
    base.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    os.environ.update(graph.dds_environment("LOCALHOST", base), ROS_DOMAIN_ID=base[
        "ROS_DOMAIN_ID"])
    import rclpy

    print(f"deadline bench: 1 kHz, {args.seconds:g} s per loop, {os.cpu_count()} CPUs, load "
          f"average {os.getloadavg()[0]:.1f}", flush=True)
    half = run_bare(args.seconds / 2)
    rclpy.init()
    g = run_graph(args.seconds, args.settle, base)
    rclpy.shutdown()
    rest = run_bare(args.seconds / 2)
    bare = {"windows": half["windows"] + rest["windows"], "steps": half["steps"] + rest["steps"],
            "overruns": half["overruns"] + rest["overruns"]}
    fifo = "SCHED_FIFO" if half["fifo"] else "normal scheduling (SCHED_FIFO refused)"
    print(line(f"bare sleep loop ({fifo}, before and after the graph)", bare))
    print(line(f"dynamics loop, urban graph running (load average {g['load']:.1f})", g))
    total = sum(g["cpu"].values())
    print("CPU share at real time (cores): " + ", ".join(
        f"{n} {c:.2f}" for n, c in sorted(g["cpu"].items(), key=lambda x: -x[1]))
        + f"; graph total {total:.2f} of {os.cpu_count()}: {os.cpu_count() - total:.2f} free "
        f"({'>=' if os.cpu_count() - total >= 0.5 else '<'} half a core)")
    b50, b99, _, brate = summary(bare)
    g50, g99, _, grate = summary(g)
    floor = bare["overruns"] == 0
    brate = max(brate, 1 / max(bare["steps"], 1))
    print(f"overrun ratio graph/bare: {'>=' if floor else ''}{grate / brate:.2f}")
    print(f"p99 lateness ratio graph/bare: {g99 / b99:.2f}")


if __name__ == "__main__":
    main()
