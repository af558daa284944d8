"""Dynamics loop benchmark (run on demand; prints figures measured in this run).

1. free-running physics steps per second through SimLoop (model + watchdog + bookkeeping);
2. a real-time run at 1 kHz of the bare SimLoop for --seconds (default 30): overruns and
   wake-up lateness p50 / p99 / max against absolute deadlines;
3. the same through the real dynamics node process over DDS (publishing /clock every step,
   raw state at 1 kHz, state and odometry at 100 Hz), read from its SimStatus messages.

    python bench/bench_dynamics_loop.py [--seconds 30] [--model single_track] [--skip-node]
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.sim_loop import Hooks, SimLoop
from vehicle_sim.core.vehicle.factory import make_model
from vehicle_sim.core.vehicle.interface import Controls
from vehicle_sim.core.vehicle.params import load_vehicle
from vehicle_sim.paths import config_path


def _loop(model_kind: str, mode: str) -> SimLoop:
    params = DynamicsParams(model=model_kind, mode=mode, command_timeout_s=1e6)
    model = make_model(model_kind, load_vehicle(config_path(params.vehicle_file)), "rk4")
    loop = SimLoop(model, params)
    loop.set_command(Controls(throttle=0.3, steer_rad=0.05))
    return loop


def free_running(model_kind: str, steps: int = 50_000) -> float:
    loop = _loop(model_kind, "fast")
    for _ in range(1000):  # JIT warm-up
        loop.step()
    start = time.perf_counter()
    for _ in range(steps):
        loop.step()
    return steps / (time.perf_counter() - start)


def realtime_core(model_kind: str, seconds: float) -> None:
    loop = _loop(model_kind, "realtime")
    for _ in range(1000):
        loop.step()
    stop = threading.Event()
    statuses = []
    hooks = Hooks(after_step=lambda k, t: None, status=statuses.append)
    thread = threading.Thread(target=loop.run, args=(stop, hooks))
    thread.start()
    time.sleep(seconds)
    stop.set()
    thread.join()
    steady = statuses[1:] or statuses  # skip the first second (thread start)
    p50 = float(np.median([st.lateness_s[0] for st in steady]))
    p99 = max(st.lateness_s[1] for st in steady)
    worst = max(st.lateness_s[2] for st in steady)
    compute_p99 = max(st.compute_p99_s for st in steady)
    steps = loop.k - 1000
    print(f"bare loop, {seconds:g} s real time at 1 kHz: steps {steps} "
          f"(expected ~{seconds * 1000:.0f}), overruns {loop._pacer.overruns} "
          f"({loop._pacer.overruns / max(steps, 1):.2%})")
    print(f"  lateness median-of-p50 {p50 * 1e6:.0f} us, worst p99 {p99 * 1e6:.0f} us, "
          f"max {worst * 1e6:.0f} us; step compute p99 {compute_p99 * 1e6:.1f} us "
          f"= {compute_p99 / 1e-3:.1%} of the 1 ms budget")


def realtime_node(model_kind: str, seconds: float) -> None:
    import rclpy

    from vehicle_sim.msg import SimStatus
    from vehicle_sim.nodes import qos

    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               ROS_DOMAIN_ID=os.environ.get("ROS_DOMAIN_ID", str(150 + os.getpid() % 50)))
    os.environ.update(env)
    exe = Path(sys.executable).parent / "dynamics_node"
    proc = subprocess.Popen([str(exe), "--ros-args", "-p", f"model:={model_kind}",
                             "-p", "command_timeout_s:=1000000.0", "-p", "status_rate_hz:=1.0"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rclpy.init()
    node = rclpy.create_node("bench_dynamics")
    status: list[SimStatus] = []
    node.create_subscription(SimStatus, "sim/status", status.append, qos.EVENT)
    end = time.monotonic() + seconds + 5.0
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.1)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=10)
    node.destroy_node()
    rclpy.shutdown()
    steady = status[2:]  # skip start-up (JIT, discovery)
    if not steady:
        print("dynamics node: no SimStatus received")
        return
    p50 = np.median([s.lateness_p50 for s in steady])
    p99 = max(s.lateness_p99 for s in steady)
    worst = max(s.lateness_max for s in steady)
    rtf = np.mean([s.real_time_factor for s in steady])
    print(f"dynamics node over DDS, {len(steady)} s observed: real-time factor {rtf:.4f}, "
          f"overruns {steady[-1].overruns - steady[0].overruns}")
    print(f"  lateness median-of-p50 {p50 * 1e6:.0f} us, worst p99 {p99 * 1e6:.0f} us, "
          f"max {worst * 1e6:.0f} us; step compute p99 "
          f"{max(s.step_compute_p99 for s in steady) * 1e6:.1f} us")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--model", default="single_track")
    parser.add_argument("--skip-node", action="store_true")
    args = parser.parse_args()
    rate = free_running(args.model)
    print(f"free-running {args.model}/rk4 through SimLoop: {rate:,.0f} steps/s "
          f"= {rate / 1000:.1f}x real time at 1 kHz")
    realtime_core(args.model, args.seconds)
    if not args.skip_node:
        realtime_node(args.model, args.seconds)


if __name__ == "__main__":
    main()
