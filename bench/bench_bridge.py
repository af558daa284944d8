"""Bridge node under load: real process, 1 kHz VehicleState in real time, UDP frames on loopback.

Measures (run on demand, not a test):
- the platform frames' lateness: when each frame left against its absolute deadline (p50/p99/max,
  overruns; the frame sender's compiled loop, core.devices.frame_sender), from the node's
  periodic log lines (``stats_period_s``: one line per window);
- achieved platform frame rate and the largest gap between frames at the receiver;
- end-to-end delay from publishing a state sample to receiving the UDP frame that reflects it;
- a bare loop at the platform rate (same helpers, SCHED_FIFO at the platform loop's priority if
  permitted) in a child process DURING the stream, so the ratio of the two p99s compares loops
  that shared the machine; ``--busy N`` adds N busy SCHED_OTHER processes for the whole stream
  (a loaded host: a platform loop that waits for its interpreter lock shows here).

How a frame is tied to a sample: the stream carries a roll rate that flips sign every
``FLIP_MS`` (a square wave). The washout integrates the rate with the bilinear (trapezoidal)
rule, so the per-frame increment of the roll-driven leg lengths drops from +c to about 0 in the
first cycle that uses a flipped sample. The bench runs the stewart6 preset with the safety rate
limits opened and a 16-bit wire (temporary copy), so the frame follows the washout in the same
cycle; delay = receive time of that first frame - publish time of the flip sample (both
CLOCK_MONOTONIC on this machine). It includes DDS transit, the wait for the next platform cycle
(0..1 period), the cycle itself and the UDP hop.

Usage (the project venv, with rclpy): $VSIM_VENV/bin/python bench/bench_bridge.py [seconds]
[--busy N]
"""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("ROS_DOMAIN_ID", str(150 + os.getpid() % 50))

import numpy as np
import rclpy
import yaml
from proc_stats import cpu_s
from vehicle_sim.msg import VehicleState

from vehicle_sim.core.motion.params import WireParams
from vehicle_sim.core.motion.wire import decode_binary
from vehicle_sim.core.realtime import PLATFORM_LOOP_PRIORITY, Pacer, tighten_timer_slack
from vehicle_sim.nodes import qos
from vehicle_sim.paths import config_path

RATE_HZ = 500.0
STATE_HZ = 1000.0
FLIP_MS = 50
ROLL_RATE_RADPS = 0.5
STATS_S = 5.0  # the node logs its frames' lateness per window of this length
WIRE = WireParams(format="binary", bits=16)


def bench_preset(folder: Path) -> Path:
    """stewart6 preset with rate limits opened, no soft start, 16-bit binary frames."""
    data = yaml.safe_load(config_path("platforms/stewart6_generic.yaml").read_text())
    data["safety"].update(velocity_limit=[10.0] * 6, accel_limit=[1e5] * 6, soft_start_s=0.0)
    data["wire"].update(format="binary", bits=16)
    path = folder / "stewart6_bench.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


class Receiver(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.frames: list[tuple[float, bytes]] = []
        self.halt = threading.Event()

    def run(self) -> None:
        tighten_timer_slack()
        while not self.halt.is_set():
            try:
                data = self.sock.recv(256)
            except TimeoutError:
                continue
            self.frames.append((time.monotonic(), data))


def stream(pub, seconds: float) -> list[float]:
    """Publish states at 1 kHz on absolute deadlines; returns the publish times of the flips."""
    tighten_timer_slack()
    pacer, flips, sign = Pacer(1.0 / STATE_HZ), [], 1.0
    msg = VehicleState()
    msg.pose.orientation.w = 1.0
    for k in range(int(seconds * STATE_HZ)):
        pacer.wait()
        if k % FLIP_MS == 0:
            sign = -sign
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(k * 1_000_000, 10**9)
        msg.twist.angular.x = sign * ROLL_RATE_RADPS
        pub.publish(msg)
        if k % FLIP_MS == 0:
            flips.append(time.monotonic())
    return flips


def delays(frames: list[tuple[float, bytes]], flips: list[float]) -> np.ndarray:
    """Per flip: receive time of the first frame whose increment left the old-sign value."""
    t = np.array([f[0] for f in frames])
    v = np.array([decode_binary(f[1], WIRE)[1] for f in frames])
    d = np.diff(v, axis=0)  # increment carried by frame i + 1
    legs = np.sign(np.median(d[len(d) // 4: len(d) // 4 + 20], axis=0))  # roll leg pattern
    r = d @ legs
    c = np.median(np.abs(r))
    out = []
    for tf in flips[2:-1]:
        i = int(np.searchsorted(t[1:], tf))  # first increment received after the flip was sent
        if i == 0:
            continue
        for j in range(i, min(i + 50, len(r))):
            if abs(r[j] - r[i - 1]) > 0.5 * c:
                out.append(t[j + 1] - tf)
                break
    return np.array(out)


# the bare loop's child: the Pacer's lateness at RATE_HZ for the given seconds, p50/p99/max [s]
BARE = """
import json, sys
from vehicle_sim.core.realtime import (LatenessWindow, Pacer, set_realtime_priority,
                                       tighten_timer_slack)
tighten_timer_slack()
set_realtime_priority({priority})
window, pacer = LatenessWindow(capacity=1 << 20), Pacer(1.0 / {rate})
for _ in range(round({seconds} * {rate})):
    window.add(pacer.wait())
print(json.dumps(window.percentiles()))
"""


def bare_loop(seconds: float) -> subprocess.Popen:
    code = BARE.format(priority=PLATFORM_LOOP_PRIORITY, rate=RATE_HZ, seconds=seconds)
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)


def main() -> None:
    args = sys.argv[1:]
    busy_n = int(args[args.index("--busy") + 1]) if "--busy" in args else 0
    args = [a for i, a in enumerate(args) if a != "--busy" and (i == 0 or args[i - 1] != "--busy")]
    seconds = float(args[0]) if args else 20.0
    rx = Receiver()
    rx.start()
    with tempfile.TemporaryDirectory() as tmp:
        preset = bench_preset(Path(tmp))
        exe = Path(sys.executable).parent / "bridge_node"
        node = subprocess.Popen(
            [str(exe), "--ros-args", "-p", f"platform_file:={preset}", "-p",
             f"output_port:={rx.port}", "-p", f"platform_rate_hz:={RATE_HZ}", "-p",
             f"stats_period_s:={STATS_S}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)
        rclpy.init()
        bench = rclpy.create_node("bench_bridge")
        pub = bench.create_publisher(VehicleState, "vehicle/state_raw", qos.STREAM)
        while pub.get_subscription_count() == 0 or not rx.frames:
            time.sleep(0.05)
        busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(busy_n)]
        time.sleep(0.5)
        # the node's windows: one while the stream ends it
        bare = bare_loop(max(seconds - STATS_S / 2, 1.0))
        t0, n0, c0 = time.monotonic(), len(rx.frames), cpu_s(node.pid)
        flips = stream(pub, seconds)
        t1, n1, c1 = time.monotonic(), len(rx.frames), cpu_s(node.pid)
        bare_p = [float(v) for v in json.loads(bare.communicate(timeout=30)[0])]
        for b in busy:
            b.kill()
        node.send_signal(signal.SIGINT)
        log = node.communicate(timeout=20)[0]
        rx.halt.set()
        bench.destroy_node()
        rclpy.shutdown()
    frames = [f for f in rx.frames if t0 <= f[0] <= t1]
    gaps = np.diff([f[0] for f in frames])
    e2e = delays(frames, flips) * 1e3
    # validity check: the same detector half a period after each flip must find nothing soon
    control = delays(frames, [tf + 0.5e-3 * FLIP_MS for tf in flips]) * 1e3
    false = int(np.sum(control < 0.4 * FLIP_MS))
    stats = re.findall(r"platform loop \((last.*?)\): cycles \d+, (lateness .*? overruns \d+)",
                       log)
    print(f"bridge bench: {seconds:g} s of 1 kHz VehicleState, platform {RATE_HZ:g} Hz, "
          f"stewart6 IK, {busy_n} busy processes, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"  node platform frames, send lateness vs absolute deadline per {STATS_S:g} s window "
          f"(the first includes start-up and DDS discovery; overruns are cumulative):")
    for span, text in stats:
        print(f"    {span}: {text}")
    p99s = [float(m) for m in re.findall(r"p99 (\d+) us", "".join(t for _, t in stats[1:]))]
    print(f"  bare {RATE_HZ:g} Hz loop during the stream: lateness p50 {bare_p[0] * 1e6:.0f} us "
          f"p99 {bare_p[1] * 1e6:.0f} us max {bare_p[2] * 1e6:.0f} us")
    if p99s:
        print(f"  platform loop p99 ratio node/bare (mean of the windows after the first): "
              f"{np.mean(p99s) / (bare_p[1] * 1e6):.2f}")
    print(f"  node CPU while streaming: {100 * (c1 - c0) / (t1 - t0):.0f} % of one core")
    print(f"  frames received: {n1 - n0} in {t1 - t0:.2f} s = {(n1 - n0) / (t1 - t0):.1f} Hz "
          f"(target {RATE_HZ:g}); gap p50 {np.median(gaps) * 1e3:.2f} ms, p99 "
          f"{np.percentile(gaps, 99) * 1e3:.2f} ms, max {gaps.max() * 1e3:.2f} ms")
    if len(e2e):
        print(f"  end-to-end state sample -> UDP frame ({len(e2e)} of {len(flips) - 3} flips "
              f"matched): p50 {np.median(e2e):.2f} ms, p99 {np.percentile(e2e, 99):.2f} ms, "
              f"max {e2e.max():.2f} ms (cycle period {1e3 / RATE_HZ:.1f} ms); detector check: "
              f"{false} false detections at {len(control)} mid-phase instants")
    else:
        print("  end-to-end: no flip matched")


if __name__ == "__main__":
    main()
