"""Cold start of the urban graph: time to the first /clock and traffic steps skipped at start.

For each run this script starts ``vehicle_sim_run --scenario urban`` (what scripts/run.sh runs
after its set-up) for a short simulated duration, and measures in the same run:
- the wall time from starting the runner to the first /clock this process receives;
- the simulated time at which the first traffic/agents message arrived here (inf: not in the
  run): a node that compiles while simulated time runs starts late;
- the traffic node's "traffic behind sim time by N steps: skipping S" warnings (the node falls
  behind when it compiles numba kernels while simulated time runs) and the steps they skipped;
- the reference: the wall time from starting a bare rclpy process that publishes /clock at once
  to its first /clock here (Python start, rclpy import and DDS discovery alone), and the ratio.

Cache states: ``warm`` = the install's numba cache after ``python -m vehicle_sim.warm`` (what
scripts/setup.sh leaves), ``cold`` = an empty ``NUMBA_CACHE_DIR`` for every node (a fresh
install without the warm-up). Runs alternate cold / warm; min and median are printed with the
load average, as the machine may be shared.

    .venv/bin/python bench/bench_cold_start.py [--runs 3] [--duration 40]
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BEHIND = re.compile(r"traffic behind sim time by (\d+) steps: skipping (\d+)")
BARE_CLOCK = """
import rclpy
from rosgraph_msgs.msg import Clock
rclpy.init()
node = rclpy.create_node("bare_clock")
pub = node.create_publisher(Clock, "/clock", 10)
while rclpy.ok():
    pub.publish(Clock())
    rclpy.spin_once(node, timeout_sec=0.001)
"""


class ClockWatch:
    """A node of this process that notes the wall time of the first /clock after ``arm()``, the
    newest simulated time, and the simulated time at which the first traffic arrived."""

    def __init__(self) -> None:
        import rclpy
        from rclpy.qos import qos_profile_sensor_data
        from rosgraph_msgs.msg import Clock
        from vehicle_sim.msg import TrafficAgentArray

        from vehicle_sim.nodes import qos

        self.node = rclpy.create_node("bench_cold_start")
        self.arm()
        self.node.create_subscription(Clock, "/clock", self._on_clock, qos_profile_sensor_data)
        self.node.create_subscription(TrafficAgentArray, "traffic/agents", self._on_agents,
                                      qos.LARGE_STREAM, raw=True)  # no decoding: only when
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _on_clock(self, msg) -> None:
        self.sim_s = msg.clock.sec + msg.clock.nanosec * 1e-9
        if self.first is None:
            self.first = time.monotonic()

    def _on_agents(self, raw: bytes) -> None:
        if self.traffic_at_s is None and self.first is not None:
            self.traffic_at_s = self.sim_s

    def _spin(self) -> None:
        import rclpy

        while not self._stop.is_set():
            rclpy.spin_once(self.node, timeout_sec=0.01)

    def arm(self) -> None:
        self.first: float | None = None
        self.sim_s = 0.0
        self.traffic_at_s: float | None = None

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.node.destroy_node()


def bare_reference(watch: ClockWatch, env: dict[str, str]) -> float:
    """Seconds from starting a bare /clock publisher process to its first /clock here."""
    watch.arm()
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", BARE_CLOCK], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while watch.first is None and time.monotonic() - start < 60.0:
        time.sleep(0.005)
    proc.terminate()
    proc.wait(timeout=10)
    return (watch.first or float("nan")) - start


def graph_run(watch: ClockWatch, env: dict[str, str], duration_s: float, out: Path
              ) -> tuple[float, float, int, int, str]:
    """(seconds to the first /clock, simulated time of the first traffic, behind warnings,
    steps they skipped, runner exit line)."""
    runner = str(Path(sys.executable).parent / "vehicle_sim_run")
    watch.arm()
    start = time.monotonic()
    result = subprocess.run([runner, "--scenario", "urban", "--duration", f"{duration_s:g}",
                             "--record_dir", str(out), "--timeout", str(10 * duration_s + 120)],
                            env=env, capture_output=True, text=True)
    first = (watch.first or float("nan")) - start
    found = [tuple(map(int, m.groups())) for m in BEHIND.finditer(result.stdout)]
    ended = next((line.strip() for line in result.stdout.splitlines()
                  if "ended because" in line), f"exit {result.returncode}")
    if "starting without" in result.stdout:  # the clock owner gave up waiting for a node
        ended += "; the physics started without: " + result.stdout.split(
            "starting without ", 1)[1].split("\n", 1)[0]
    traffic_at = watch.traffic_at_s if watch.traffic_at_s is not None else float("inf")
    return first, traffic_at, len(found), sum(skip for _, skip in found), ended


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--duration", type=float, default=40.0, help="simulated seconds a run "
                        "(longer than a cold compile, or the run ends before it)")
    args = parser.parse_args()
    from vehicle_sim import graph

    base = dict(os.environ)  # the runner's environment: it adds the DDS settings itself
    base["ROS_DOMAIN_ID"] = base.get("ROS_DOMAIN_ID") or str(120 + os.getpid() % 60)
    base.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    env = dict(base)  # this process and the bare reference: what the runner gives its nodes
    env.update(graph.dds_environment("LOCALHOST", base))
    os.environ.update(env)
    import rclpy

    print(f"cold start bench: urban graph, {args.duration:g} s simulated per run, {args.runs} "
          f"runs per cache state, {os.cpu_count()} CPUs, ROS_DOMAIN_ID={env['ROS_DOMAIN_ID']}")
    # (not from a source tree: `-m` puts the working folder first on the path)
    warm = subprocess.run([sys.executable, "-m", "vehicle_sim.warm"], env=env,
                          capture_output=True, text=True, cwd=tempfile.gettempdir())
    print("  warm-up (python -m vehicle_sim.warm): "
          + ("; ".join(warm.stdout.split("\n")).strip("; ") or warm.stderr[-500:]))
    rclpy.init()
    watch = ClockWatch()
    rows: dict[str, list[tuple[float, float, float, int]]] = {"cold": [], "warm": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            for state in ("cold", "warm"):
                run_env = dict(base)
                if state == "cold":
                    run_env["NUMBA_CACHE_DIR"] = str(Path(tmp) / f"numba-{i}")
                ref = bare_reference(watch, env)
                first, traffic_at, warnings, skipped, ended = graph_run(
                    watch, run_env, args.duration, Path(tmp) / f"{state}-{i}")
                rows[state].append((first, ref, traffic_at, skipped))
                print(f"  run {i + 1} {state}: first /clock {first:.1f} s (bare rclpy "
                      f"{ref:.2f} s, ratio {first / ref:.1f}); first traffic at sim time "
                      f"{traffic_at:.2f} s; traffic behind-sim-time "
                      f"warnings {warnings}, steps skipped >= {skipped}; load average "
                      f"{os.getloadavg()[0]:.1f}; {ended}", flush=True)
    watch.close()
    rclpy.shutdown()
    for state, r in rows.items():
        firsts, ratios = [x[0] for x in r], [x[0] / x[1] for x in r]
        print(f"{state}: first /clock min {min(firsts):.1f} s, median "
              f"{statistics.median(firsts):.1f} s (ratio to the bare rclpy process min "
              f"{min(ratios):.1f}, median {statistics.median(ratios):.1f}); first traffic at "
              f"sim time median {statistics.median(x[2] for x in r):.2f} s, max "
              f"{max(x[2] for x in r):.2f} s; steps skipped median "
              f"{statistics.median(x[3] for x in r):.0f}, max {max(x[3] for x in r)}")


if __name__ == "__main__":
    main()
