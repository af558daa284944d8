"""Soak bench (issue 13): the urban graph at real time for 10 minutes, watched from outside.

Starts ``vehicle_sim_run --mode realtime`` (every node of the scenario as its own process, DDS on
loopback, its own ROS_DOMAIN_ID) and every ``--sample`` seconds reads the resident memory (VmRSS,
/proc) of each node process; a small rclpy node in this process follows the run:
- ``sim/status``: the dynamics loop's overrun counter (cumulative) -> overruns per minute, and the
  achieved real-time factor;
- ``/clock`` and ``vehicle/state``: how far a state is behind the newest clock when it arrives
  (a growing queue anywhere between the physics loop and a reader shows up here);
- ``traffic/agents``: how far the traffic node's newest array is behind the newest vehicle state
  (the traffic node falling behind the physics: the graph's one producer-consumer backlog).
Reports per node the memory growth from the first minute after ``--warmup`` to the last minute
(goal <= 5 %), per minute the overruns and the lags, and the load average before and after.

Usage: ``source scripts/setup.sh && $VSIM_VENV/bin/python bench/bench_soak.py [--duration 600]``
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rosgraph_msgs.msg import Clock
from vehicle_sim.msg import SimStatus, TrafficAgentArray, VehicleState

from vehicle_sim import graph
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.conversions import to_ns


def descendants(root: int) -> list[int]:
    """Every process below ``root`` (by the parent ids in /proc/<pid>/stat)."""
    children: dict[int, list[int]] = defaultdict(list)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            children[int(stat.rsplit(")", 1)[1].split()[1])].append(int(entry.name))
    found, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found.append(pid)
            todo.append(pid)
    return found


def node_rss_kib(root: int) -> dict[str, tuple[int, int]]:
    """{node name: (pid, VmRSS [KiB])} of the ROS nodes the runner started (named by
    ``__node:=``)."""
    out = {}
    for pid in descendants(root):
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        name = next((a[len(b"__node:="):].decode() for a in args if a.startswith(b"__node:=")),
                    None)
        rss = next((int(line.split()[1]) for line in status.splitlines()
                    if line.startswith("VmRSS:")), None)
        if name and rss is not None:
            out[name] = (pid, rss)
    return out


class Watcher:
    """Follows sim/status, /clock, vehicle/state and traffic/agents (runs in its own thread)."""

    def __init__(self) -> None:
        self.node = rclpy.create_node("soak_watcher")
        self.status: list[tuple[float, int, float]] = []  # (wall, overruns, achieved RTF)
        self.state_lag: list[tuple[float, float]] = []  # (wall, newest clock - state stamp [s])
        self.agents_lag: list[tuple[float, float]] = []  # (wall, newest state - agents [s])
        self._clock_ns = self._state_ns = None
        n = self.node
        n.create_subscription(SimStatus, "sim/status", self._on_status, qos.EVENT)
        n.create_subscription(Clock, "/clock", self._on_clock, qos.STREAM)
        n.create_subscription(VehicleState, "vehicle/state", self._on_state, qos.STATE)
        n.create_subscription(TrafficAgentArray, "traffic/agents", self._on_agents, qos.AGENTS_IN)

    def _on_status(self, msg: SimStatus) -> None:
        if not msg.paused:
            self.status.append((time.monotonic(), msg.overruns, msg.real_time_factor))

    def _on_clock(self, msg: Clock) -> None:
        self._clock_ns = to_ns(msg.clock)

    def _on_state(self, msg: VehicleState) -> None:
        self._state_ns = to_ns(msg.header.stamp)
        if self._clock_ns is not None:
            self.state_lag.append((time.monotonic(), (self._clock_ns - self._state_ns) * 1e-9))

    def _on_agents(self, msg: TrafficAgentArray) -> None:
        if self._state_ns is not None:
            lag = (self._state_ns - to_ns(msg.header.stamp)) * 1e-9
            self.agents_lag.append((time.monotonic(), lag))


def per_minute(rows: list[tuple[float, float]], t0: float, minutes: int) -> list[np.ndarray]:
    values = [[] for _ in range(minutes)]
    for wall, value in rows:
        m = int((wall - t0) // 60.0)
        if 0 <= m < minutes:
            values[m].append(value)
    return [np.asarray(v) for v in values]


def memory_table(rss: dict[str, list[tuple[float, int, int]]], t0: float, warmup_s: float,
                 end_s: float) -> list[str]:
    head = f"  {'node':18s} {'pids':>4s} {'RSS after warm-up':>18s} {'RSS at end':>11s} "
    lines = [head + f"{'growth':>7s}"]
    for name, rows in sorted(rss.items()):
        first = [kib for wall, _, kib in rows if warmup_s <= wall - t0 < warmup_s + 60.0]
        last = [kib for wall, _, kib in rows if wall - t0 >= end_s - 60.0]
        pids = len({pid for _, pid, _ in rows})
        if not first or not last:
            lines.append(f"  {name:18s} {pids:4d} (not running through the whole window)")
            continue
        a, b = float(np.median(first)), float(np.median(last))
        lines.append(f"  {name:18s} {pids:4d} {a / 1024:15.1f} MB {b / 1024:8.1f} MB "
                     f"{100.0 * (b - a) / a:+6.1f}%")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--duration", type=float, default=600.0, help="simulated = wall seconds")
    ap.add_argument("--warmup", type=float, default=60.0, help="seconds before memory counts")
    ap.add_argument("--sample", type=float, default=5.0, help="RSS sampling period [s]")
    ap.add_argument("--scenario", default="urban")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--domain_id", type=int, default=140 + os.getpid() % 60)
    opt = ap.parse_args(argv)
    if opt.duration < opt.warmup + 120.0:
        ap.error("--duration must leave two minutes after --warmup")
    os.environ["ROS_DOMAIN_ID"] = str(opt.domain_id)
    base = dict(os.environ)  # the runner's: it adds the DDS settings itself (a profile set
    # here would count as the user's own, and its nodes would not get the loopback one)
    os.environ.update(graph.dds_environment("LOCALHOST", os.environ))  # this process: loopback
    load_before = os.getloadavg()
    runner = str(Path(sys.executable).parent / "vehicle_sim_run")
    command = [runner, "--scenario", opt.scenario, "--mode", "realtime", "--duration",
               f"{opt.duration:g}", "--seed", str(opt.seed), "--domain_id", str(opt.domain_id),
               "--discovery_range", "LOCALHOST", "--timeout", f"{opt.duration + 120:g}"]
    rclpy.init()
    watcher = Watcher()
    executor = SingleThreadedExecutor()
    executor.add_node(watcher.node)
    threading.Thread(target=executor.spin, daemon=True).start()
    rss: dict[str, list[tuple[float, int, int]]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "run.log"
        with log.open("w") as out:
            proc = subprocess.Popen(command + ["--record_dir", tmp], stdout=out,
                                    stderr=subprocess.STDOUT, env=base)
            t0 = time.monotonic()
            while proc.poll() is None:
                now = time.monotonic()
                for name, (pid, kib) in node_rss_kib(proc.pid).items():
                    rss[name].append((now, pid, kib))
                time.sleep(opt.sample)
        end_s = time.monotonic() - t0
        tail = log.read_text()[-3000:]
    executor.shutdown()
    watcher.node.destroy_node()
    rclpy.shutdown()
    load_after = os.getloadavg()
    print(f"soak: {' '.join(['vehicle_sim_run', *command[1:]])}")
    print(f"  {os.cpu_count()} CPUs, load average (1/5/15 min) before "
          f"{'/'.join(f'{x:.1f}' for x in load_before)}, after "
          f"{'/'.join(f'{x:.1f}' for x in load_after)}; ran {end_s:.0f} s wall, runner exit "
          f"{proc.returncode}")
    if proc.returncode != 0:
        print(tail)
    print(f"memory per node: median RSS over the first minute after a {opt.warmup:g} s warm-up "
          "vs the last minute (goal <= +5 %)")
    print("\n".join(memory_table(rss, t0, opt.warmup, end_s)))
    minutes = int(end_s // 60.0)
    status = sorted(watcher.status)
    overruns = per_minute([(w, float(o)) for w, o, _ in status], t0, minutes)
    rtf = per_minute([(w, r) for w, _, r in status], t0, minutes)
    lags = per_minute(watcher.state_lag, t0, minutes)
    agents = per_minute(watcher.agents_lag, t0, minutes)
    print("per minute: dynamics overruns, achieved RTF, state lag behind /clock and traffic "
          "lag behind the state (p50 / max) [ms]")
    prev = 0.0
    for m in range(minutes):
        runs = f"{overruns[m][-1] - prev:8.0f}" if overruns[m].size else f"{'-':>8s}"
        prev = overruns[m][-1] if overruns[m].size else prev
        rate = f"{np.mean(rtf[m]):5.2f}" if rtf[m].size else "    -"
        lag = " / ".join(f"{1e3 * np.median(v):6.1f} / {1e3 * np.max(v):6.1f}" if v.size
                         else "     - /      -" for v in (lags[m], agents[m]))
        print(f"  min {m + 1:2d}: {runs} overruns, RTF {rate}, lags {lag}")
    total = status[-1][1] if status else 0
    print(f"overruns in total {total} ({total / max(end_s / 60.0, 1e-9):.1f} per minute); "
          f"{len(watcher.state_lag)} states and {len(watcher.agents_lag)} agent arrays seen")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
