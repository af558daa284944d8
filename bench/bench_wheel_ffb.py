"""Wheel force feedback under load: real bridge_node, a uinput FF wheel, 1 kHz VehicleState.

Measures (run on demand, not a test; needs /dev/uinput, e.g. inside scripts/vm_uinput.sh):
- FF upload rate achieved vs the platform loop rate (the bridge writes FF_CONSTANT from its
  500 Hz loop), and the intervals between uploads p50/p99/max;
- end-to-end delay from publishing the state sample that flips the aligning moment to the FF
  upload (EVIOCSFF seen by the uinput side) carrying the new level, p50/p99/max;
- platform loop wake-up lateness and overruns from the node's periodic log lines.

Set-up: a virtual wheel (python-evdev UInput with FF_CONSTANT) whose FF thread serves
UI_FF_UPLOAD / UI_FF_ERASE and records (time.monotonic(), level). The handwheel stays at centre
(angle 0, rate 0), so the damping, centring and friction terms of the law in
vehicle_sim/core/motion/ffb.py are 0 and the level is k_a M_z / i_s mapped to -32767..32767; an
unmapped button toggles every KEEP_S to keep the wheel input fresh (input_timeout_s) without
moving it. The bridge only uploads a level that changed (UpdateRateLimiter), so two phases:
  1. square wave: M_z = +-MZ_NM flipping every FLIP_MS -> delay of each flip;
  2. sawtooth: M_z ramps by a different value at every state sample -> every platform cycle has
     a new level -> upload rate and intervals.
The node's ffb_rate_hz (which replaces the preset's ffb.max_update_hz) is raised to 500, its
limit, so the limiter does not cap the rate below the loop rate. Times are CLOCK_MONOTONIC of
one machine (the guest when run through scripts/vm_uinput.sh: figures then include the
emulation/virtualisation overhead).
Without a writable /dev/uinput the bench measures the same loop up to the level handed to the
device writer: MotionCue.steering_torque at 500 Hz, with a UDP rig keeping the input fresh.

Usage: scripts/vm_uinput.sh <venv> -- python bench/bench_wheel_ffb.py [seconds]
"""
from __future__ import annotations

import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from itertools import pairwise
from pathlib import Path

DEVICE = os.access("/dev/uinput", os.R_OK | os.W_OK)
if DEVICE:
    try:
        from evdev import AbsInfo, UInput, ecodes
    except ImportError:
        print("bench_wheel_ffb: python-evdev is missing (pip install evdev, or the [rig] extra)",
              file=sys.stderr)
        sys.exit(2)
else:
    print("bench_wheel_ffb: no writable /dev/uinput here: measuring the force loop up to the "
          "level handed to the device writer (MotionCue.steering_torque at 500 Hz, rig input "
          "by UDP). The device write itself: scripts/vm_uinput.sh <venv> -- python "
          "bench/bench_wheel_ffb.py", file=sys.stderr)

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("ROS_DOMAIN_ID", str(150 + os.getpid() % 50))

import numpy as np
import rclpy
import rclpy.executors
import yaml
from vehicle_sim.msg import MotionCue, VehicleState

from vehicle_sim.core.motion.params import FfbParams
from vehicle_sim.core.motion.wire import RigInput, encode_input_packet
from vehicle_sim.core.realtime import Pacer, tighten_timer_slack
from vehicle_sim.nodes import qos
from vehicle_sim.paths import config_path

RATE_HZ = 500.0
STATE_HZ = 1000.0
FLIP_MS = 50      # square-wave half period, in state samples (1 ms each)
MZ_NM = 15.0      # |M_z|: 15 N m / ratio 15 = 1 N m at the wheel, inside safe_max_nm (2 N m)
STATS_S = 5.0     # the node logs loop lateness per window of this length
KEEP_S = 0.02     # button toggle period, well inside the input timeout (0.1 s default)
KEEP_BTN = ecodes.BTN_9 if DEVICE else 9  # not one of the mapped buttons


def bench_preset(folder: Path) -> Path:
    data = yaml.safe_load(config_path("platforms/stewart6_generic.yaml").read_text())
    data["ffb"]["max_update_hz"] = RATE_HZ
    path = folder / "stewart6_ffb_bench.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


class Wheel:
    """uinput FF wheel: records every FF_CONSTANT upload; keeps its input fresh."""

    def __init__(self):
        axis, pedal = AbsInfo(0, -32767, 32767, 0, 0, 0), AbsInfo(0, 0, 65535, 0, 0, 0)
        events = {ecodes.EV_ABS: [(ecodes.ABS_X, axis), (ecodes.ABS_Y, pedal),
                                  (ecodes.ABS_Z, pedal), (ecodes.ABS_RZ, pedal)],
                  ecodes.EV_KEY: [ecodes.BTN_0, ecodes.BTN_1, KEEP_BTN],
                  ecodes.EV_FF: [ecodes.FF_CONSTANT]}
        self.ui = UInput(events, name="vehicle_sim bench wheel", max_effects=4)
        self.uploads: list[tuple[float, int]] = []
        self.halt = threading.Event()
        self.threads = [threading.Thread(target=self._serve, daemon=True),
                        threading.Thread(target=self._keep_fresh, daemon=True)]
        for t in self.threads:
            t.start()

    @property
    def path(self) -> str:
        return self.ui.device.path

    def _serve(self) -> None:
        tighten_timer_slack()
        ui = self.ui
        while not self.halt.is_set():
            if not select.select([ui.fd], [], [], 0.1)[0]:
                continue
            event = ui.read_one()
            if event is None or event.type != ecodes.EV_UINPUT:
                continue
            if event.code == ecodes.UI_FF_UPLOAD:
                upload = ui.begin_upload(event.value)
                self.uploads.append((time.monotonic(), upload.effect.u.ff_constant_effect.level))
                upload.retval = 0
                ui.end_upload(upload)
            elif event.code == ecodes.UI_FF_ERASE:
                erase = ui.begin_erase(event.value)
                erase.retval = 0
                ui.end_erase(erase)

    def _keep_fresh(self) -> None:
        down = 0
        while not self.halt.wait(KEEP_S):
            down ^= 1
            self.ui.write(ecodes.EV_KEY, KEEP_BTN, down)
            self.ui.syn()

    def close(self) -> None:
        self.halt.set()
        for t in self.threads:
            t.join()
        self.ui.close()


class CueProbe:
    """No device: the torque each platform cycle computes, from motion/cue at the loop rate,
    recorded as (receive time, FF level the writer would get); a UDP rig keeps the input fresh
    with the wheel centred."""

    def __init__(self, bench, port: int):
        self.uploads: list[tuple[float, int]] = []
        self.ffb = FfbParams()
        bench.create_subscription(MotionCue, "motion/cue", self._on_cue, qos.STREAM)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.port, self.seq, self.halt = port, 0, threading.Event()
        self.threads = [threading.Thread(target=self._keep_fresh, daemon=True),
                        threading.Thread(target=self._spin, args=(bench,), daemon=True)]
        for t in self.threads:
            t.start()

    def _spin(self, bench) -> None:
        executor = rclpy.executors.SingleThreadedExecutor()
        executor.add_node(bench)
        while not self.halt.is_set():
            executor.spin_once(timeout_sec=0.05)
        executor.remove_node(bench)

    def _on_cue(self, msg: MotionCue) -> None:
        level = round(msg.steering_torque / self.ffb.device_max_nm * 32767)
        if not self.uploads or self.uploads[-1][1] != level:  # as the writer: changes only
            self.uploads.append((time.monotonic(), level))

    def _keep_fresh(self) -> None:
        while not self.halt.wait(KEEP_S):
            self.seq = (self.seq + 1) & 0xFFFF
            self.sock.sendto(encode_input_packet(RigInput(self.seq, 0, 0, 0, 0, 0.0, 0)),
                             ("127.0.0.1", self.port))

    def close(self) -> None:
        self.halt.set()
        for t in self.threads:
            t.join()
        self.sock.close()


def stream(pub, seconds: float, mz_of_k) -> list[tuple[float, float]]:
    """Publish states at 1 kHz on absolute deadlines; returns (publish time, M_z) per sample."""
    tighten_timer_slack()
    pacer, out, msg = Pacer(1.0 / STATE_HZ), [], VehicleState()
    msg.pose.orientation.w = 1.0
    for k in range(int(seconds * STATE_HZ)):
        pacer.wait()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(k * 1_000_000, 10**9)
        msg.aligning_moment = mz_of_k(k)
        pub.publish(msg)
        out.append((time.monotonic(), msg.aligning_moment))
    return out


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(x: np.ndarray, scale: float = 1e3) -> str:
    if len(x) == 0:
        return "none"
    return (f"p50 {np.median(x) * scale:.2f} ms, p99 {np.percentile(x, 99) * scale:.2f} ms, "
            f"max {x.max() * scale:.2f} ms")


def flip_delays(sent: list[tuple[float, float]], uploads: list[tuple[float, int]]) -> np.ndarray:
    """Per flip of M_z: first upload after the flip's publish time whose level has the new sign."""
    t_up = np.array([u[0] for u in uploads])
    lv = np.array([u[1] for u in uploads])
    out = []
    for (t0, m0), (t1, m1) in pairwise(sent):
        if np.sign(m0) == np.sign(m1):
            continue
        i = int(np.searchsorted(t_up, t1))
        j = next((j for j in range(i, min(i + 200, len(lv))) if np.sign(lv[j]) == np.sign(m1)),
                 None)
        if j is not None:
            out.append(t_up[j] - t1)
    return np.array(out)


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
    port = free_port()
    wheel = Wheel() if DEVICE else None
    ffb = FfbParams()
    expect = round(MZ_NM / ffb.steering_ratio / ffb.device_max_nm * 32767)
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(sys.executable).parent / "bridge_node"
        node = subprocess.Popen(
            [str(exe), "--ros-args", "-p", f"platform_file:={bench_preset(Path(tmp))}", "-p",
             "output_port:=0", "-p", f"platform_rate_hz:={RATE_HZ}", "-p",
             f"ffb_rate_hz:={RATE_HZ}", "-p",
             f"stats_period_s:={STATS_S}", "-p",
             f"evdev_device:={wheel.path}" if wheel else f"input_port:={port}", "-p",
             f"cue_rate_hz:={RATE_HZ}"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        rclpy.init()
        bench = rclpy.create_node("bench_wheel_ffb")
        pub = bench.create_publisher(VehicleState, "vehicle/state_raw", qos.STREAM)
        if wheel is None:
            wheel = CueProbe(bench, port)
        deadline = time.monotonic() + 120.0
        while pub.get_subscription_count() == 0 or not wheel.uploads:
            if node.poll() is not None or time.monotonic() > deadline:
                print(node.communicate()[0])
                sys.exit("bench_wheel_ffb: the bridge did not start or did not open the wheel")
            time.sleep(0.05)
        time.sleep(0.5)
        half = seconds / 2
        n0 = len(wheel.uploads)
        square = stream(pub, half, lambda k: MZ_NM if (k // FLIP_MS) % 2 else -MZ_NM)
        n1 = len(wheel.uploads)
        period = int(STATE_HZ)  # sawtooth: -MZ..+MZ over 1 s, a new value every sample
        ramp = stream(pub, half, lambda k: MZ_NM * (2.0 * (k % period) / period - 1.0))
        t2 = time.monotonic()
        time.sleep(0.1)
        node.send_signal(signal.SIGINT)
        log = node.communicate(timeout=30)[0]
        if not DEVICE:
            wheel.close()
        bench.destroy_node()
        rclpy.shutdown()
    if DEVICE:
        wheel.close()
    up_sq = wheel.uploads[n0:n1]
    up_ramp = [u for u in wheel.uploads[n1:] if ramp[0][0] <= u[0] <= t2]
    delays = flip_delays(square, up_sq)
    flips = sum(1 for a, b in pairwise(square) if np.sign(a[1]) != np.sign(b[1]))
    levels = sorted({lv for _, lv in up_sq[len(up_sq) // 2:]})
    span = up_ramp[-1][0] - up_ramp[0][0] if len(up_ramp) > 1 else float("nan")
    gaps = np.diff([u[0] for u in up_ramp])
    stats = re.findall(r"platform loop \((last.*?|at exit)\): cycles \d+, (lateness .*? "
                       r"overruns \d+)", log)
    where = "FF uploads seen by uinput" if DEVICE else "levels in motion/cue (no device)"
    print(f"wheel FFB bench ({where}): {seconds:g} s of 1 kHz VehicleState, platform "
          f"{RATE_HZ:g} Hz, "
          f"ffb.max_update_hz {RATE_HZ:g}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"  square wave M_z +-{MZ_NM:g} N m every {FLIP_MS} ms ({half:g} s): {len(up_sq)} "
          f"uploads; levels seen {levels[:6]} (expected +-{expect}, 0 at start)")
    print(f"  end-to-end state sample -> FF upload with the new level ({len(delays)} of {flips} "
          f"flips matched): {pct(delays)} (cycle period {1e3 / RATE_HZ:.1f} ms)")
    if len(gaps):
        print(f"  sawtooth M_z ({half:g} s, new level every sample): {len(up_ramp)} uploads = "
              f"{(len(up_ramp) - 1) / span:.1f} Hz (target {RATE_HZ:g}); interval {pct(gaps)}")
    else:
        print("  sawtooth: no FF upload seen")
    print(f"  node platform loop, wake-up lateness vs absolute deadline per {STATS_S:g} s window "
          "(the first includes start-up; overruns are cumulative):")
    for window, text in stats:
        print(f"    {window}: {text}")
    if DEVICE and "force feedback FF_CONSTANT" not in log:
        print("  WARNING: the node did not report an FF_CONSTANT wheel; its log:\n" + log)


if __name__ == "__main__":
    main()
