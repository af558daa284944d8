"""Benchmark of the traffic node as a process: whole-city traffic at 20 Hz on a real-time /clock.

Run (installed package, own ROS domain):
    scripts/setup.sh; .venv/bin/python bench/bench_traffic_node.py [N ...] [--seconds S]
        [--compute-ahead both|on|off]   (the node's compute_ahead; both: a run each, on first)

For each agent count N (default 1000 and 5000) a grid city with ~12.5 agents per block (as
bench_traffic.py) is written to a temporary map, the traffic node is started in whole-city
mode (no control zone, no ego, no markers) and this script publishes /clock every 1 ms in real
time (like the dynamics node) for ``--seconds`` of sim time (default 20). Reported:
- achieved step rate: TrafficAgentArray messages received per second of sim time vs 20 Hz, and
  steps whose stamp never arrived (skipped by catch-up or lost on the best-effort stream);
- latency: wall time from the /clock tick that made a step due to the receipt of its agents;
- in this process, on the same city: core step time, message build time (traffic_msgs), CDR size
  and rclpy publish time of the TrafficAgentArray;
- the node's own debug log of core / output compute times (p50/p99 over 200 steps).
"""
from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import rclpy
import yaml
from rclpy.serialization import serialize_message
from rosgraph_msgs.msg import Clock
from vehicle_sim.msg import TrafficAgentArray

from loopback_dds import use_loopback_dds
from vehicle_sim.core.traffic.gridgen import GridSpec, generate
from vehicle_sim.core.traffic.mapfile import map_from_dict
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.traffic.params import TrafficParams, ZoneParams
from vehicle_sim.core.traffic.sim import TrafficSim
from vehicle_sim.nodes import qos
from vehicle_sim.nodes import traffic_msgs as tm
from vehicle_sim.nodes.conversions import stamp

AGENTS_PER_BLOCK = 12.5
DT_NS = 50_000_000  # 20 Hz
TICK_NS = 1_000_000  # /clock every 1 ms, like the dynamics node
DURATION_S = 20.0


def write_city(n: int, folder: Path) -> tuple[Path, Path, dict]:
    blocks = max(2, math.ceil(math.sqrt(n / AGENTS_PER_BLOCK)))
    data = generate(GridSpec(blocks_x=blocks, blocks_y=blocks, avenue_row=blocks // 2,
                             decorate=False))
    map_path, params_path = folder / f"city_{n}.yaml", folder / f"city_{n}_params.yaml"
    map_path.write_text(yaml.safe_dump(data, sort_keys=False))
    params_path.write_text(yaml.safe_dump({"capacity": n + 64, "initial_agents": n,
                                           "zone": {"enabled": False}}))
    return map_path, params_path, data


def cdr_stamp_ns(raw: bytes) -> int:
    sec, nanosec = np.frombuffer(raw, dtype="<i4", count=2, offset=4)
    return int(sec) * 1_000_000_000 + int(np.uint32(nanosec))


def in_process(n: int, data: dict, node) -> dict[str, float]:
    """Core step, message build, CDR size and publish time on the same city, this process."""
    sim = TrafficSim(Network(map_from_dict(data)), TrafficParams(
        capacity=n + 64, initial_agents=n, zone=ZoneParams(enabled=False)), seed=0)
    pub = node.create_publisher(TrafficAgentArray, "bench/agents", qos.STREAM)
    encoder = tm.AgentEncoder(sim.network.lane_names)
    times = np.zeros((50, 5))  # core, encode, publish bytes, build objects, publish objects
    for k in range(60):
        t0 = time.perf_counter()
        sim.step(DT_NS * 1e-9)
        t1 = time.perf_counter()
        a = sim.agents(include_ghosts=True)
        owner = np.zeros(len(a["uid"]), dtype=np.int64)
        raw = encoder.encode(a, owner, k * DT_NS, "map")
        t2 = time.perf_counter()
        pub.publish(raw)
        t3 = time.perf_counter()
        msg = tm.agents_msg(a, owner, sim.network.lane_names, k * DT_NS, "map")
        t4 = time.perf_counter()
        pub.publish(msg)
        t5 = time.perf_counter()
        if k >= 10:
            times[k - 10] = np.diff([t0, t1, t2, t3, t4, t5])
    node.destroy_publisher(pub)
    med = 1e3 * np.median(times, axis=0)
    return {"agents": sim.n_agents, "core_ms": med[0], "encode_ms": med[1],
            "publish_raw_ms": med[2], "build_ms": med[3], "publish_ms": med[4],
            "bytes": len(raw), "bytes_ref": len(serialize_message(msg))}


def run_node(n: int, map_path: Path, params_path: Path, node, duration_s: float = DURATION_S,
             ahead: bool = True) -> dict[str, float]:
    exe = Path(sys.executable).parent / "traffic_node"
    proc = subprocess.Popen([str(exe), "--ros-args", "-p", "use_sim_time:=true",
                             "-p", f"compute_ahead:={str(ahead).lower()}",
                             "-p", f"map_file:={map_path}", "-p", f"params_file:={params_path}",
                             "-p", "publish_markers:=false", "--log-level", "traffic:=debug"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    received: dict[int, float] = {}
    clock = node.create_publisher(Clock, "/clock", qos.STREAM)
    # raw CDR (no deserialisation in the clock loop): stamp = int32 sec, uint32 nanosec after
    # the 4-byte encapsulation header
    sub = node.create_subscription(TrafficAgentArray, "traffic/agents", lambda raw: received
                                   .setdefault(cdr_stamp_ns(raw), time.perf_counter()),
                                   qos.STREAM, raw=True)
    t_start = time.perf_counter()
    while clock.get_subscription_count() < 1 or sub.get_publisher_count() < 1:
        rclpy.spin_once(node, timeout_sec=0.05)
        if time.perf_counter() - t_start > 120:
            raise RuntimeError("traffic node did not start")
    startup = time.perf_counter() - t_start
    due: dict[int, float] = {}
    t0, k = time.perf_counter(), 0
    while k * TICK_NS < duration_s * 1e9:
        k += 1
        deadline = t0 + k * TICK_NS * 1e-9  # absolute deadlines: /clock in real time
        while time.perf_counter() < deadline:
            rclpy.spin_once(node, timeout_sec=max(0.0, deadline - time.perf_counter()))
        clock.publish(Clock(clock=stamp(k * TICK_NS)))
        if k * TICK_NS % DT_NS == 0:
            due[k * TICK_NS] = time.perf_counter()
    end = time.perf_counter() + 1.0
    while time.perf_counter() < end:
        rclpy.spin_once(node, timeout_sec=0.05)
    wall = time.perf_counter() - t0
    proc.send_signal(2)
    log = proc.communicate(timeout=20)[0]
    node.destroy_publisher(clock)
    node.destroy_subscription(sub)
    lat = [received[t] - due[t] for t in due if t in received]
    timing = [line.split("]: ", 1)[1] for line in log.splitlines() if "core step p50" in line]
    skipped = int(timing[-1].split(" steps skipped")[0].rsplit(" ", 1)[1]) if timing else -1
    return {"startup_s": startup, "rtf": duration_s / wall, "steps": len(due),
            "received": len(received.keys() & due.keys()),
            "lat_p50_ms": 1e3 * np.median(lat) if lat else math.nan,
            "lat_p99_ms": 1e3 * np.percentile(lat, 99) if lat else math.nan,
            "node_log": timing[-1] if timing else "(no timing line)", "skipped": skipped}


def report(agents: int, seconds: float, r: dict[str, float], ahead: bool) -> None:
    rate = r["received"] / seconds
    print(f"\nN={agents}, compute_ahead {str(ahead).lower()}: node start {r['startup_s']:.1f} s; "
          f"/clock achieved RTF {r['rtf']:.2f}")
    print(f"  step rate {rate:.1f} Hz of sim time vs 20 Hz ({rate / 20:.0%}); "
          f"{r['steps'] - r['received']} of {r['steps']} steps not received, of which the "
          f"node skipped {r['skipped']} (behind sim time) by its last timing report")
    print(f"  latency tick->agents received p50 {r['lat_p50_ms']:.1f} ms, p99 "
          f"{r['lat_p99_ms']:.1f} ms")
    print(f"  node log: {r['node_log']}")
    print(f"  load average after the run {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("counts", type=int, nargs="*", default=[1000, 5000], help="agents")
    parser.add_argument("--seconds", type=float, default=DURATION_S, help="sim time per count")
    parser.add_argument("--compute-ahead", choices=("both", "on", "off"), default="both",
                        help="the node's compute_ahead: both = one run each, on then off")
    args = parser.parse_args()
    counts, seconds = args.counts, args.seconds
    settings = {"both": (True, False), "on": (True,), "off": (False,)}[args.compute_ahead]
    # an own DDS domain with a run's DDS set-up, loopback only (read at rclpy.init; the node
    # process inherits it)
    use_loopback_dds(100, 50)
    rclpy.init()
    node = rclpy.create_node("bench_traffic_node")
    print(f"ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID', '0')}, /clock 1 kHz real time for "
          f"{seconds:g} s sim, traffic 20 Hz, whole-city mode, no ego; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        for n in counts:
            map_path, params_path, data = write_city(n, Path(tmp))
            ip = in_process(n, data, node)
            for ahead in settings:
                r = run_node(n, map_path, params_path, node, seconds, ahead)
                report(ip["agents"], seconds, r, ahead)
            print(f"  in-process (median): core step {ip['core_ms']:.2f} ms; TrafficAgentArray "
                  f"{ip['bytes'] / 1e3:.0f} kB CDR ({ip['bytes'] / ip['agents']:.0f} B/agent): "
                  f"numpy encode {ip['encode_ms']:.2f} ms + publish bytes "
                  f"{ip['publish_raw_ms']:.2f} ms (node path) vs message objects "
                  f"{ip['build_ms']:.1f} ms + publish {ip['publish_ms']:.1f} ms; budget 50 ms")
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
