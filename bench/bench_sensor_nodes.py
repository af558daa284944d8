"""Latency and rates of the imu and gps nodes as real processes (run with the ROS venv:
``source <(scripts/setup.sh ...)``; then ``python bench/bench_sensor_nodes.py [seconds]``).

The bench plays the dynamics node: it publishes vehicle/state_raw at 1 kHz of sim time paced in
real time on absolute deadlines, remembering the wall time each state was sent (keyed by its sim
stamp). The imu node runs at 400 Hz (rate_hz override of the ADIS16448 preset), the gps node at
10 Hz (consumer preset, 0.1 s modelled latency). Latency = wall time of receipt in this process
minus wall time the driving state was sent: for the IMU the sampled state itself, for GNSS the
state at stamp + latency_s that released the fix (the modelled latency is reported apart).
Figures are this machine's, this run's (2 shared cores: other jobs distort them).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import rclpy
from proc_stats import cpu_s
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu, NavSatFix
from vehicle_sim.msg import VehicleState

from vehicle_sim.nodes import qos
from vehicle_sim.nodes.conversions import quaternion_from_rpy, stamp, to_ns
from vehicle_sim.paths import executable

STEP_NS = 1_000_000  # 1 kHz physics
GNSS_LATENCY_NS = 100_000_000  # latency_s of config/sensors/gnss_consumer.yaml
RX = QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT)


def percentiles_ms(values_ns: list[int]) -> str:
    if not values_ns:
        return "no samples"
    v = np.asarray(values_ns) * 1e-6
    return (f"p50 {np.percentile(v, 50):.3f} ms, p99 {np.percentile(v, 99):.3f} ms, "
            f"max {v.max():.3f} ms (n={v.size})")


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    procs = {
        "imu": subprocess.Popen([str(executable("imu_node")), "--ros-args", "-p", "rate_hz:=400.0"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT),
        "gps": subprocess.Popen([str(executable("gps_node")), "--ros-args", "-p", "rate_hz:=10.0"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)}
    rclpy.init()
    node = rclpy.create_node("bench_sensor_nodes")
    sent: dict[int, int] = {}  # sim stamp [ns] -> wall time sent [ns]
    rx: dict[str, list[tuple[int, int]]] = {"imu": [], "gps": []}  # (sim stamp, wall rx) [ns]
    node.create_subscription(Imu, "imu/data", lambda m: rx["imu"].append(
        (to_ns(m.header.stamp), time.perf_counter_ns())), RX)
    node.create_subscription(NavSatFix, "gnss/fix", lambda m: rx["gps"].append(
        (to_ns(m.header.stamp), time.perf_counter_ns())), RX)
    pub = node.create_publisher(VehicleState, "vehicle/state_raw", qos.STREAM)
    try:
        deadline = time.monotonic() + 30.0
        while (pub.get_subscription_count() < 2 or node.count_publishers("imu/data") < 1
               or node.count_publishers("gnss/fix") < 1):
            rclpy.spin_once(node, timeout_sec=0.05)
            if time.monotonic() > deadline:
                raise SystemExit("nodes did not match within 30 s")
        time.sleep(1.0)  # let both sides finish discovery
        cpu0 = {k: cpu_s(p.pid) for k, p in procs.items()}
        late_ns = drive(node, pub, sent, round(seconds * 1000))
        end = time.perf_counter_ns() + 300_000_000  # collect the last fixes
        while time.perf_counter_ns() < end:
            rclpy.spin_once(node, timeout_sec=0.01)
        cpu = {k: cpu_s(p.pid) - cpu0[k] for k, p in procs.items()}
    finally:
        for p in procs.values():
            p.send_signal(2)
        for p in procs.values():
            p.wait(timeout=10)
        node.destroy_node()
        rclpy.shutdown()
    report(seconds, sent, rx, late_ns, cpu)


def drive(node, pub, sent: dict[int, int], steps: int) -> list[int]:
    """Publish `steps` level, stationary states on absolute 1 ms deadlines; spin in between.
    Returns the send lateness vs the deadline [ns]."""
    state = VehicleState(child_frame_id="base_link", model="bench")
    state.header.frame_id = "odom"
    state.pose.orientation = quaternion_from_rpy(0.0, 0.0, 0.0)
    t0 = time.perf_counter_ns()
    late = []
    for k in range(steps):
        due = t0 + k * STEP_NS
        while (now := time.perf_counter_ns()) < due:
            rclpy.spin_once(node, timeout_sec=max(0.0, (due - now) * 1e-9 - 50e-6))
        sim_ns = (k + 1) * STEP_NS
        state.header.stamp = stamp(sim_ns)
        sent[sim_ns] = time.perf_counter_ns()
        pub.publish(state)
        late.append(sent[sim_ns] - due)
    return late


def report(seconds: float, sent: dict[int, int], rx: dict, late_ns: list[int],
           cpu: dict[str, float]) -> None:
    print(f"drove vehicle/state_raw at 1 kHz sim time, real time, {seconds:g} s "
          f"({len(sent)} states); send lateness vs deadline: {percentiles_ms(late_ns)}")
    for name, offset_ns, nominal_hz in (("imu", 0, 400.0), ("gps", GNSS_LATENCY_NS, 10.0)):
        samples = rx[name]
        lat = [t_rx - sent[s + offset_ns] for s, t_rx in samples if s + offset_ns in sent]
        stamps = [s for s, _ in samples]
        span_sim = (stamps[-1] - stamps[0]) * 1e-9 if len(stamps) > 1 else float("nan")
        span_wall = (samples[-1][1] - samples[0][1]) * 1e-9 if len(samples) > 1 else float("nan")
        print(f"{name}: {len(samples)} messages, rate {(len(stamps) - 1) / span_sim:.2f} Hz sim "
              f"time / {(len(samples) - 1) / span_wall:.2f} Hz wall (nominal {nominal_hz:g}); "
              f"expected {seconds * nominal_hz:.0f}; CPU {100 * cpu[name] / seconds:.1f} % "
              f"of one core")
        gaps = np.diff(stamps) // 1_000_000
        values, counts = np.unique(gaps, return_counts=True)
        print(f"  sim-time gaps between messages [ms]: "
              f"{dict(zip(values.tolist(), counts.tolist()))}")
        extra = " (after the modelled 100 ms latency)" if offset_ns else ""
        print(f"  state sent -> {name} received{extra}: {percentiles_ms(lat)}")


if __name__ == "__main__":
    main()
