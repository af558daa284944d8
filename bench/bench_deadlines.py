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
The bridge's platform loop likewise (issue 14: within 2x of a bare loop): its lateness
from the node's periodic log line (``platform loop (last 10 s): ... p99 ... overruns N``, every
``stats_period_s`` = 10 s of the bridge's BridgeNodeParams, read from the runner's output)
against a bare loop at the bridge's rate (config/bridge.yaml: 100 Hz in the urban graph; same
helpers and priority as (a)) run before and after the graph;
each summarised per stats window (bare: one window per half), overrun rate as above.
Both loops are summarised the same way: p50 = median of the 1 s windows' p50, p99 = mean of
their p99 (the worst window is printed too), overrun rate = periods woken more than one period
late / periods. Ratios graph/bare end the output; a bare overrun rate of 0 counts as one
overrun (the ratio is then a lower bound, marked ">=").

    .venv/bin/python bench/bench_deadlines.py [--seconds 30] [--settle 10] [--bridge-rate-hz 500]

``--bridge-rate-hz 500`` runs the bridge as on a rig (its platform loop at 500 Hz on the raw
state, its frames over UDP to a socket of this bench on loopback) in a copy of the scenario, and
the bridge's bare loop at that rate. The bridge's lateness is then its frames' (the compiled
frame sender's, core.devices.frame_sender); the frames its Python loop did not make by their
deadline are printed too, with the frames this bench received.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from loopback_dds import use_loopback_dds
from proc_stats import cpu_s, descendants, node_name

PERIOD_S = 1e-3
PRIORITY = 20  # config/dynamics.yaml realtime_priority


def bare_loop(seconds: float, period_s: float = PERIOD_S, window_steps: int = 1000) -> dict:
    """The bare loop (runs in the child process): windows of ``window_steps`` periods (1 s at
    1 kHz) of lateness, overruns, steps."""
    from vehicle_sim.core.realtime import (
        LatenessWindow,
        Pacer,
        set_realtime_priority,
        tighten_timer_slack,
    )

    tighten_timer_slack()
    refused = set_realtime_priority(PRIORITY)
    window, windows = LatenessWindow(), []
    pacer = Pacer(period_s)
    steps = round(seconds / period_s)
    for k in range(1, steps + 1):
        window.add(pacer.wait())
        if k % window_steps == 0:
            windows.append(window.percentiles())
            window.clear()
    return {"windows": windows, "overruns": pacer.overruns, "steps": steps,
            "fifo": not refused}


def run_bare(seconds: float, rate_hz: float = 1.0 / PERIOD_S, window_s: float = 1.0) -> dict:
    out = subprocess.run([sys.executable, __file__, "--bare", str(seconds), "--rate",
                          str(rate_hz), "--window", str(window_s)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def bridge_rate_hz() -> float:
    """The bridge's platform loop rate in the urban graph: config/bridge.yaml's
    platform_rate_hz (100 Hz there: no platform attached), else BridgeNodeParams' 500 Hz."""
    import yaml

    from vehicle_sim.paths import config_path

    data = yaml.safe_load(config_path("bridge.yaml").read_text()) or {}
    return float(data.get("/**", {}).get("ros__parameters", {}).get("platform_rate_hz", 500.0))


def scenario_with_rig_bridge(name: str, rate_hz: float, folder: str, sink_port: int) -> str:
    """A copy of scenario ``name`` (a file in ``folder``) whose bridge runs its platform loop at
    ``rate_hz`` [Hz], reads the raw state and sends its frames to 127.0.0.1:``sink_port``, as on
    a rig (the urban graph's bridge runs at 100 Hz on the 100 Hz state: no platform attached)."""
    import yaml

    from vehicle_sim.paths import config_path, share_dir

    path = Path(name) if name.endswith(".yaml") else share_dir() / "config" / "scenarios" / \
        f"{name}.yaml"
    scenario = yaml.safe_load(path.read_text())
    params = yaml.safe_load(config_path("bridge.yaml").read_text())
    params["/**"]["ros__parameters"].update(platform_rate_hz=rate_hz, output_host="127.0.0.1",
                                             output_port=sink_port)
    bridge_file = Path(folder) / "bridge_rig.yaml"
    bridge_file.write_text(yaml.safe_dump(params))
    for node in scenario["nodes"]:
        if node["executable"] == "bridge_node":
            node["params_file"] = str(bridge_file)
            node.pop("remappings", None)
    out = Path(folder) / f"{path.stem}_rig_bridge.yaml"
    out.write_text(yaml.safe_dump(scenario))
    return str(out)


BRIDGE_STATS_S = 10.0  # BridgeNodeParams.stats_period_s: one log line per window
_BRIDGE_LINE = re.compile(r"\[bridge\].*platform loop \(last [^)]*\): cycles (\d+), lateness p50 "
                          r"(\d+) us p99 (\d+) us max (\d+) us, overruns (\d+)(?:.*?; frames "
                          r"late \d+, missed (\d+) \(made [\d.]+ ms ahead, p99 (\d+) us late\))?")


class BridgeStats(threading.Thread):
    """The bridge's platform loop log lines in the runner's output, with their arrival time:
    (monotonic [s], cycles, p50 [s], p99 [s], max [s], cumulative overruns, cumulative frames
    missed: not made within half a period of their deadline, not sent; the Python loop's p99
    wake-up lateness [s] at its making times, where force feedback and serial frames go out)."""

    def __init__(self, stream) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.lines: list[tuple[float, int, float, float, float, int, int, float]] = []

    def run(self) -> None:
        for text in self.stream:
            m = _BRIDGE_LINE.search(text)
            if m:
                c, p50, p99, worst, over, missed, made = (int(g or 0) for g in m.groups())
                self.lines.append((time.monotonic(), c, p50 * 1e-6, p99 * 1e-6, worst * 1e-6,
                                   over, missed, made * 1e-6))

    def between(self, t0: float, t1: float) -> dict:
        """The whole stats windows inside [``t0``, ``t1``] (0.5 s of slack at the start, 1 s
        of log delay at the end); counts from the line before the first of them (the first
        becomes that line if it is the node's first)."""
        inside = [i for i, w in enumerate(self.lines)
                  if w[0] - BRIDGE_STATS_S >= t0 - 0.5 and w[0] <= t1 + 1.0]
        if inside and inside[0] == 0:  # the node's first line: the base of the counts
            inside = inside[1:]
        if not inside:
            return {"windows": [], "overruns": 0, "steps": 0, "missed": 0, "made": []}
        base, last = self.lines[inside[0] - 1], self.lines[inside[-1]]
        return {"windows": [self.lines[i][2:5] for i in inside], "overruns": last[5] - base[5],
                "steps": last[1] - base[1], "missed": last[6] - base[6],
                "made": [self.lines[i][7] for i in inside]}


class FrameSink(threading.Thread):
    """A UDP socket on loopback counting the rig bridge's frames (as a rig controller would
    receive them)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received = 0
        self._done = threading.Event()
        self.start()

    def run(self) -> None:
        while not self._done.is_set():
            try:
                self.sock.recv(2048)
                self.received += 1
            except TimeoutError:
                continue

    def close(self) -> int:
        """Stop; the number of frames received."""
        self._done.set()
        self.join()
        self.sock.close()
        return self.received


def node_processes(runner_pid: int) -> dict[str, int]:
    """The runner's child processes by node name (``__node:=<name>``; the nodes of one
    vehicle_sim_compose process joined by '+'), and a node's physics process (core.loop_process)
    as ``<name>/physics``."""
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
            found["+".join(names) if names else Path(argv[0].decode()).name] = int(proc.name)
    for name, pid in list(found.items()):
        for kid in descendants(pid):
            try:
                if node_name(kid).endswith("/physics"):
                    found[f"{name}/physics"] = kid
            except (OSError, IndexError, ValueError):  # ended meanwhile
                continue
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


def run_graph(seconds: float, settle_s: float, env: dict[str, str],
              scenario: str = "urban") -> dict:
    """The ``scenario`` graph in real time; the dynamics loop's windows after ``settle_s`` of
    sim time, and each node's CPU share over the same wall window."""
    watch = StatusWatch()
    runner = str(Path(sys.executable).parent / "vehicle_sim_run")
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen([runner, "--scenario", scenario, "--duration",
                                 f"{settle_s + seconds + 3:g}", "--record_dir", tmp,
                                 "--timeout", str(4 * (settle_s + seconds) + 120)],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        bridge = BridgeStats(proc.stdout)
        bridge.start()
        while not watch.status or watch.status[-1][1].sim_time < settle_s:
            if proc.poll() is not None:
                sys.exit("the urban graph ended before it settled")
            time.sleep(0.05)
        pids = node_processes(proc.pid)
        cpu0, t0, first = {n: cpu_s(p) for n, p in pids.items()}, time.monotonic(), \
            len(watch.status)
        time.sleep(seconds)
        t1 = time.monotonic()
        cpu = {n: (cpu_s(p) - cpu0[n]) / (time.monotonic() - t0) for n, p in pids.items()}
        last = len(watch.status)
        load = os.getloadavg()[0]
        proc.wait()
        bridge.join(timeout=5.0)
    watch.close()
    window = [m for _, m in watch.status[first:last]]
    return {"windows": [(m.lateness_p50, m.lateness_p99, m.lateness_max) for m in window],
            "overruns": window[-1].overruns - window[0].overruns,
            "steps": window[-1].steps - window[0].steps, "cpu": cpu, "load": load,
            "bridge": bridge.between(t0, t1)}


def summary(r: dict) -> tuple[float, float, float, float]:
    """(p50 [s], p99 [s], worst window p99 [s], overrun rate) of a loop's result."""
    p50 = statistics.median(w[0] for w in r["windows"])
    p99s = [w[1] for w in r["windows"]]
    return p50, statistics.fmean(p99s), max(p99s), r["overruns"] / max(r["steps"], 1)


def line(name: str, r: dict, window: str = "1 s") -> str:
    p50, p99, worst, rate = summary(r)
    return (f"{name}: lateness p50 {p50 * 1e6:.0f} us, p99 {p99 * 1e6:.0f} us (worst {window} "
            f"window {worst * 1e6:.0f} us), overruns {r['overruns']} of {r['steps']} periods "
            f"({rate:.2%})")


def ratio_text(loop: dict, bare: dict) -> tuple[str, str]:
    """(overrun ratio, p99 ratio) of a loop against its bare loop, as printed."""
    _, l99, _, lrate = summary(loop)
    _, b99, _, brate = summary(bare)
    floor = bare["overruns"] == 0
    brate = max(brate, 1 / max(bare["steps"], 1))
    return f"{'>=' if floor else ''}{lrate / brate:.2f}", f"{l99 / b99:.2f}"


def bridge_ratios(bare: dict, bridge: dict, fifo: str, rate_hz: float) -> None:
    print(line(f"bare {rate_hz:g} Hz loop ({fifo}, before and after the graph)", bare,
               f"{bare['steps'] / max(len(bare['windows']), 1) / rate_hz:g} s"))
    if not bridge["windows"]:
        print("bridge platform loop: no stats line in the measured window (run --seconds >= "
              f"{2 * BRIDGE_STATS_S:g})")
        return
    print(line(f"bridge {rate_hz:g} Hz platform loop, urban graph running", bridge,
               f"{BRIDGE_STATS_S:g} s"))
    print(f"bridge frames missed (not made within half a period of their deadline): "
          f"{bridge['missed']} of "
          f"{bridge['steps']}; frames received by this bench over the whole run: "
          f"{bridge.get('received', 0)}")
    over, p99 = ratio_text(bridge, bare)
    print(f"bridge loop ratios bridge/bare: overruns {over}, p99 lateness {p99}")
    if any(bridge["made"]):
        made, b99 = statistics.fmean(bridge["made"]), summary(bare)[1]
        print(f"bridge Python loop (force feedback, serial frames, cues) at its making times: "
              f"p99 {made * 1e6:.0f} us late (mean of the windows), ratio to the bare loop "
              f"{made / b99:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=30.0, help="measured seconds per loop")
    parser.add_argument("--settle", type=float, default=10.0, help="graph start-up to skip [s]")
    parser.add_argument("--scenario", default="urban",
                        help="scenario name or file (e.g. urban without `process`: every node "
                             "a process of its own)")
    parser.add_argument("--bridge-rate-hz", type=float, default=0.0,
                        help="the bridge's platform loop at this rate on the raw state, as on a "
                             "rig (500), in a copy of the scenario; its bare loop too")
    parser.add_argument("--bare", type=float, default=0.0, help=argparse.SUPPRESS)
    parser.add_argument("--rate", type=float, default=1.0 / PERIOD_S, help=argparse.SUPPRESS)
    parser.add_argument("--window", type=float, default=1.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare:
        print(json.dumps(bare_loop(args.bare, 1.0 / args.rate,
                                   max(1, round(args.window * args.rate)))))
        return
    base = use_loopback_dds(120, 60)  # the runner adds the DDS settings itself
    import rclpy

    print(f"deadline bench: 1 kHz, {args.seconds:g} s per loop, {os.cpu_count()} CPUs, load "
          f"average {os.getloadavg()[0]:.1f}", flush=True)
    half = run_bare(args.seconds / 2)
    bridge_hz, scenario = bridge_rate_hz(), args.scenario
    folder = tempfile.mkdtemp(prefix="bench_deadlines_")
    sink = FrameSink()
    if args.bridge_rate_hz:
        bridge_hz = args.bridge_rate_hz
        scenario = scenario_with_rig_bridge(args.scenario, bridge_hz, folder, sink.port)
    half500 = run_bare(args.seconds / 2, bridge_hz, args.seconds / 2)
    rclpy.init()
    g = run_graph(args.seconds, args.settle, base, scenario)
    rclpy.shutdown()
    g["bridge"]["received"] = sink.close()
    rest = run_bare(args.seconds / 2)
    rest500 = run_bare(args.seconds / 2, bridge_hz, args.seconds / 2)
    bare = {"windows": half["windows"] + rest["windows"], "steps": half["steps"] + rest["steps"],
            "overruns": half["overruns"] + rest["overruns"]}
    bare500 = {"windows": half500["windows"] + rest500["windows"],
               "steps": half500["steps"] + rest500["steps"],
               "overruns": half500["overruns"] + rest500["overruns"]}
    fifo = "SCHED_FIFO" if half["fifo"] else "normal scheduling (SCHED_FIFO refused)"
    print(line(f"bare sleep loop ({fifo}, before and after the graph)", bare))
    print(line(f"dynamics loop, urban graph running (load average {g['load']:.1f})", g))
    total = sum(g["cpu"].values())
    print("CPU share at real time (cores): " + ", ".join(
        f"{n} {c:.2f}" for n, c in sorted(g["cpu"].items(), key=lambda x: -x[1]))
        + f"; graph total {total:.2f} of {os.cpu_count()}: {os.cpu_count() - total:.2f} free "
        f"({'>=' if os.cpu_count() - total >= 0.5 else '<'} half a core)")
    bridge_ratios(bare500, g["bridge"], fifo, bridge_hz)
    b50, b99, _, brate = summary(bare)
    g50, g99, _, grate = summary(g)
    floor = bare["overruns"] == 0
    brate = max(brate, 1 / max(bare["steps"], 1))
    print(f"overrun ratio graph/bare: {'>=' if floor else ''}{grate / brate:.2f}")
    print(f"p99 lateness ratio graph/bare: {g99 / b99:.2f}")


if __name__ == "__main__":
    main()
