"""The whole urban graph in batch modes: how much faster than real time, lockstep vs fast, and
the lockstep engine (the scenario's cores in one process, ROS at the edges: ``--engine true``;
the scenario's ground truth beside it in a process of its own, as a reader of its edges)
against both.

Runs ``vehicle_sim_run --scenario <name> --mode lockstep``, then ``--mode fast``, then
``--engine true --mode lockstep`` twice, the second time with a reader of every topic a stack
reads (the engine builds only what is read: with them, every edge), for the same simulated
duration and seed (real processes, real DDS on loopback, every node of the scenario; the engine:
its cores in one process and the ground truth beside it), and prints per mode: simulated
seconds per wall second over the run (the summary's figure) and the wall time of the whole
command (start-up and shutdown included);
for lockstep and the engine also where the time goes: each process's CPU time per lockstep
frame (sampled from /proc) against the wall time per frame, after the first 2 s of sim time.
Lockstep waits every ``lockstep_frame_steps`` physics steps for the peers
(config/dynamics.yaml); fast does not wait and is not repeatable.

Usage (the project venv): $VSIM_VENV/bin/python bench/bench_lockstep.py [seconds] [scenario]
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from proc_stats import NodeSampler

FRAME_S = 0.020  # lockstep_frame_steps 20 at 1 kHz (config/dynamics.yaml)
WARM_S = 2.0  # simulated seconds left out of the per-frame costs (start-up, compilation)


class ClockWindow:
    """Watches /clock on the run's domain: the wall and sim time when sim time first passes
    WARM_S (the sampler is marked then) and at the last tick."""

    def __init__(self, domain_id: int, sampler: NodeSampler, readers: bool = False):
        import rclpy
        from rosgraph_msgs.msg import Clock

        from vehicle_sim.nodes import qos
        self.rclpy, self.sampler = rclpy, sampler
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node("bench_lockstep_clock", context=self.context)
        self.node.create_subscription(Clock, "/clock", self._on_clock, qos.STREAM)
        self.received = 0
        if readers:  # what a stack reads: every edge is built and sent (raw: no decoding here)
            for msg_type, topic in stack_topics():
                self.node.create_subscription(msg_type, topic, self._on_any, qos.STREAM,
                                              raw=True)
        self.start: tuple[float, float] | None = None
        self.last: tuple[float, float] | None = None
        self.executor = rclpy.executors.SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        from rclpy.executors import ExternalShutdownException
        try:
            while self.context.ok():
                self.executor.spin_once(timeout_sec=0.1)
        except ExternalShutdownException:
            pass  # close() shut the context down

    def _on_any(self, _msg) -> None:
        self.received += 1

    def _on_clock(self, msg) -> None:
        now, sim_s = time.monotonic(), msg.clock.sec + msg.clock.nanosec * 1e-9
        if self.start is None and sim_s >= WARM_S:
            self.start = (now, sim_s)
            self.sampler.mark()
        self.last = (now, sim_s)

    def close(self) -> tuple[float, float]:
        """(wall, sim) seconds between the warm mark and the last tick."""
        self.rclpy.shutdown(context=self.context)
        self.thread.join(timeout=2.0)
        if self.start is None or self.last is None:
            return 0.0, 0.0
        return self.last[0] - self.start[0], self.last[1] - self.start[1]


def stack_topics() -> list[tuple[type, str]]:
    """The outputs a stack in the loop reads (types and topics of the dynamics, sensor and
    traffic nodes; the engine publishes the same)."""
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import Imu, NavSatFix
    from vehicle_sim.msg import TrafficAgentArray, TrafficLightArray, VehicleState
    out = [(VehicleState, "vehicle/state"), (VehicleState, "vehicle/state_raw"),
           (Odometry, "odom"), (Imu, "imu/data"), (NavSatFix, "gnss/fix"),
           (TrafficAgentArray, "traffic/agents"), (TrafficLightArray, "traffic/lights")]
    try:
        from tf2_msgs.msg import TFMessage
        out.append((TFMessage, "/tf"))
    except ImportError:
        pass
    return out


def run(mode: str, seconds: float, scenario: str, folder: Path, readers: bool = False) -> dict:
    runner = str(Path(sys.executable).parent / "vehicle_sim_run")
    domain_id = 180 + os.getpid() % 40
    start = time.monotonic()
    engine = ["--engine", "true"] if mode == "engine" else []
    mode = "lockstep" if mode == "engine" else mode
    proc = subprocess.Popen(
        [runner, *engine, "--scenario", scenario, "--mode", mode, "--duration", f"{seconds:g}",
         "--seed",
         "3", "--record_dir", str(folder), "--domain_id", str(domain_id),
         "--timeout", str(20 * seconds + 120)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    sampler = NodeSampler(proc.pid, period_s=0.2)
    sampler.start()
    window = ClockWindow(domain_id, sampler, readers)
    out, err = proc.communicate()
    sampler.done.set()
    wall = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit(f"{mode} run failed:\n{out[-3000:]}{err[-2000:]}")
    summary = json.loads(next(folder.glob("summary-*.json")).read_text())
    window_wall_s, window_sim_s = window.close()
    return {"summary": summary, "wall_s": wall, "cpu": sampler.cpu_by_node(since_mark=True),
            "received": window.received,
            "window_wall_s": window_wall_s, "window_sim_s": window_sim_s}


def print_frame_costs(result: dict) -> None:
    """CPU per node per lockstep frame against the wall time per frame, after WARM_S."""
    if result["window_sim_s"] <= 0.0:
        print("  where the time goes: no /clock seen after the warm-up")
        return
    frames = result["window_sim_s"] / FRAME_S
    wall_ms = result["window_wall_s"] / frames * 1e3
    print(f"  where the time goes, per {FRAME_S * 1e3:.0f} ms frame after {WARM_S:g} s of sim "
          f"time ({frames:.0f} frames, {result['window_sim_s'] / result['window_wall_s']:.2f}x "
          f"real time): wall {wall_ms:.2f} ms")
    cpu = result["cpu"]
    for name, seconds in sorted(cpu.items(), key=lambda kv: -kv[1]):
        print(f"    {name:18s} {seconds / frames * 1e3:7.2f} ms CPU")
    print(f"    {'all nodes':18s} {sum(cpu.values()) / frames * 1e3:7.2f} ms CPU "
          f"(two cores give {2 * wall_ms:.2f} ms)")


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
    scenario = sys.argv[2] if len(sys.argv) > 2 else "urban"
    print(f"urban graph batch bench: scenario {scenario}, {seconds:g} s simulated, seed 3, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("lockstep", "fast", "engine", "engine + readers"):
            folder = Path(tmp) / mode.replace(" + ", "_")
            result = run(mode.split(" ")[0], seconds, scenario, folder,
                         readers=mode.endswith("readers"))
            summary, wall = result["summary"], result["wall_s"]
            rows[mode] = summary["real_time_factor"]
            print(f"  {mode}: {summary['real_time_factor']:.2f}x real time over the run, "
                  f"command wall time {wall:.1f} s; ego {summary['distance_m']:.0f} m, "
                  f"{summary['traffic_agents_max']} agents max, "
                  f"{summary['accidents']} accidents")
            if mode != "fast":
                print_frame_costs(result)
            if mode.endswith("readers"):
                print(f"  a reader of {len(stack_topics())} stack topics (raw, in this process) "
                      f"received {result['received']} messages")
    if rows["fast"] > 0:
        print(f"  lockstep / fast: {rows['lockstep'] / rows['fast']:.2f}")
    if rows["lockstep"] > 0:
        print(f"  engine / lockstep graph: {rows['engine'] / rows['lockstep']:.2f}; with the "
              f"stack's readers: {rows['engine + readers'] / rows['lockstep']:.2f}")


if __name__ == "__main__":
    main()
