"""The bridge node as a real process: real DDS, real UDP sockets on 127.0.0.1.

Platform frames are decoded with the core decoder; input packets are built with the core encoder
(the rig firmware's side of the documented format).
"""
from __future__ import annotations

import ast
import math
import os
import re
import secrets
import select
import socket
import struct
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from std_srvs.srv import SetBool
from vehicle_sim.msg import (
    FaultCommand,
    FaultStatus,
    MotionCue,
    SimStatus,
    VehicleControl,
    VehicleState,
)

from test.ros.fifo_levels import fifo_levels, fifo_permitted
from vehicle_sim.core.config import load
from vehicle_sim.core.motion.node_params import BridgeNodeParams
from vehicle_sim.core.motion.params import PlatformParams
from vehicle_sim.core.motion.wire import RigInput, decode_binary, encode_input_packet, frame_bytes
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.conversions import rpy_from_quaternion
from vehicle_sim.paths import config_path

PRESET = "platforms/stewart6_generic.yaml"
PLATFORM = BridgeNodeParams().apply_to(load(PlatformParams, config_path(PRESET)))
QUANTUM = 1.0 / ((1 << PLATFORM.wire.bits) - 1)
NAN = float("nan")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Thread(threading.Thread):
    """Runs ``body()`` every ``period_s`` until stopped."""

    def __init__(self, period_s: float, body):
        super().__init__(daemon=True)
        self.period_s, self.body, self.halt = period_s, body, threading.Event()
        self.start()

    def run(self) -> None:
        while not self.halt.wait(self.period_s):
            self.body()

    def stop(self) -> None:
        self.halt.set()
        if self.is_alive():
            self.join()


STARTED: list = []  # every thread a test starts, stopped at teardown even when it fails


@pytest.fixture(autouse=True)
def stop_threads():
    yield
    while STARTED:
        STARTED.pop().stop()


def spin_for(node, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        node.test_executor.spin_once(timeout_sec=0.02)


SO_TIMESTAMPNS = 35  # Linux <asm-generic/socket.h> (Python's socket module does not name it)


class Rig:
    """UDP peer standing for the platform controller: keeps every frame it receives."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        # the kernel's receive time of each frame (loopback: when it was sent), which a busy
        # test process reading late cannot shift
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.port = self.sock.getsockname()[1]
        self.frames: list[bytes] = []
        self.arrived_ns: list[int] = []  # CLOCK_REALTIME [ns], one per frame
        self.halt = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.halt.is_set():
            try:
                data, ancillary, _flags, _addr = self.sock.recvmsg(4096, 64)
            except TimeoutError:
                continue
            stamp = next((c for level, kind, c in ancillary if level == socket.SOL_SOCKET
                          and kind == SO_TIMESTAMPNS), None)
            sec, nsec = struct.unpack("qq", stamp[:16]) if stamp else (0, time.time_ns())
            self.arrived_ns.append(sec * 1_000_000_000 + nsec)
            self.frames.append(data)

    def values(self, start: int = 0) -> np.ndarray:
        """Decoded actuator values (0..1) of frames[start:]; a malformed frame raises."""
        return np.array([decode_binary(f, PLATFORM.wire)[1] for f in self.frames[start:]])

    def close(self) -> None:
        self.halt.set()
        self.thread.join()
        self.sock.close()


class StateStream:
    """Streams VehicleState on vehicle/state_raw at 200 Hz with increasing sim-time stamps."""

    def __init__(self, node, accel=(-5.0, 2.0, 0.0), omega=(0.0, 0.0, 0.2)):
        self.pub = node.create_publisher(VehicleState, "vehicle/state_raw", qos.STREAM)
        self.accel, self.omega = accel, omega
        self.aligning_nm = 0.0
        self.t_ns = 0
        self.stamps: set[int] = set()
        self.thread: Thread | None = None

    def _publish(self) -> None:
        self.t_ns += 5_000_000
        msg = VehicleState()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(self.t_ns, 10**9)
        msg.pose.orientation.w = 1.0
        a, w = self.accel, self.omega
        msg.linear_acceleration.x, msg.linear_acceleration.y, msg.linear_acceleration.z = a
        msg.twist.angular.x, msg.twist.angular.y, msg.twist.angular.z = w
        msg.aligning_moment = self.aligning_nm
        self.stamps.add(self.t_ns)
        self.pub.publish(msg)

    def start(self) -> None:
        self.thread = Thread(0.005, self._publish)
        STARTED.append(self.thread)

    def stop(self) -> None:
        self.thread.stop()


@pytest.fixture
def rig():
    r = Rig()
    yield r
    r.close()


SOURCES_IN = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)


class Watch:
    """Subscriptions of the test node to what the bridge publishes."""

    def __init__(self, node):
        self.cues: list[MotionCue] = []
        self.controls: list[VehicleControl] = []
        self.sources: list[str] = []
        node.create_subscription(MotionCue, "motion/cue", self.cues.append, qos.STREAM)
        node.create_subscription(VehicleControl, "vehicle/control", self.controls.append,
                                 qos.COMMAND)
        # every change (a reader of depth 1 lost one between two spins of a loaded host); the
        # writer's keep-last 1 still gives a late joiner only the current source
        node.create_subscription(String, "bridge/active_source",
                                 lambda m: self.sources.append(m.data), SOURCES_IN)

    def state(self) -> int:
        return self.cues[-1].state if self.cues else -1


def at_neutral(rig: Rig, neutral: np.ndarray, frames: int = 20) -> bool:
    v = rig.values(max(0, len(rig.frames) - frames))
    return len(v) == frames and bool(np.all(np.abs(v - neutral) <= QUANTUM + 1e-12))


def moved(rig: Rig, neutral: np.ndarray, start: int, quanta: int = 20) -> bool:
    v = rig.values(start)
    return len(v) > 0 and bool(np.max(np.abs(v - neutral)) > quanta * QUANTUM)


def start_bridge(ros_node, start_node, rig, **params):
    proc = start_node("bridge_node", params={"output_port": rig.port, "platform_file": PRESET,
                                             **params})
    ros_node.spin_until(lambda: len(rig.frames) > 10, what="first platform frames")
    return proc, rig.values(0)[0]  # the node starts at neutral


def test_frames_stay_within_limits_and_park_on_pause_and_on_state_loss(ros_node, start_node, rig):
    proc, neutral = start_bridge(ros_node, start_node, rig)
    watch, stream = Watch(ros_node), StateStream(ros_node)
    status = ros_node.create_publisher(SimStatus, "sim/status", qos.EVENT)
    ros_node.spin_until(lambda: stream.pub.get_subscription_count() > 0, what="state match")
    stream.start()
    ros_node.spin_until(lambda: watch.state() == MotionCue.STATE_RUNNING, what="soft start done")
    ros_node.spin_until(lambda: len(watch.cues) > 400, what="cues while running")
    stream.accel, stream.omega = (5e4, -1e9, NAN), (math.inf, NAN, -1e6)  # garbage state
    spin_for(ros_node, 1.5)
    stream.accel, stream.omega = (-5.0, 2.0, 0.0), (0.0, 0.0, 0.2)
    values = rig.values()  # every frame so far decodes (length, CRC) ...
    assert np.all((values >= 0.0) & (values <= 1.0))  # ... and stays within the leg stroke
    assert np.max(np.abs(values - neutral)) > 50 * QUANTUM, "the platform must have moved"
    limit = np.asarray(PLATFORM.safety.pose_limit)
    for cue in watch.cues:
        p = cue.platform_pose.position
        pose = (p.x, p.y, p.z, *rpy_from_quaternion(cue.platform_pose.orientation))
        assert np.all(np.abs(pose) <= limit + 1e-9), pose
        assert all(PLATFORM.stewart.leg_min_m - 1e-9 <= x <= PLATFORM.stewart.leg_max_m + 1e-9
                   for x in cue.actuator_positions)
    stamped = {c.header.stamp.sec * 10**9 + c.header.stamp.nanosec for c in watch.cues[-50:]}
    assert stamped <= stream.stamps, "cue stamps must be the sim time of the states"
    assert any(c.limited for c in watch.cues), "a 1e9 m/s^2 cue exceeds the pose limits"

    status.publish(SimStatus(paused=True))  # the state stream goes on: the pause alone parks
    ros_node.spin_until(lambda: at_neutral(rig, neutral) and
                        watch.state() == MotionCue.STATE_NEUTRAL, what="parked on pause")
    status.publish(SimStatus(paused=False))
    mark = len(rig.frames)
    ros_node.spin_until(lambda: moved(rig, neutral, mark), what="moving again after the pause")
    stream.stop()
    ros_node.spin_until(lambda: at_neutral(rig, neutral), what="parked without states")
    assert watch.state() in (MotionCue.STATE_NEUTRAL, MotionCue.STATE_PARKING)
    values = rig.values()
    assert np.all((values >= 0.0) & (values <= 1.0))
    # each frame leaves once (core.devices.frame_sender): its sequence byte never repeats; one
    # not made by its deadline leaves a gap, never the previous frame again
    seqs = np.array([decode_binary(f, PLATFORM.wire)[0] for f in rig.frames])
    assert np.all(np.diff(seqs) % 256 != 0), "a frame was sent twice"
    out = proc.stop()
    sent = int(re.findall(r"platform loop \(at exit\).*?frames sent (\d+)", out)[-1])
    assert sent >= len(rig.frames), out


def test_estop_service_latches_neutral_until_cleared_at_rest(ros_node, start_node, rig):
    _proc, neutral = start_bridge(ros_node, start_node, rig)
    watch, stream = Watch(ros_node), StateStream(ros_node)
    estop = ros_node.create_client(SetBool, "bridge/estop")
    ros_node.spin_until(lambda: stream.pub.get_subscription_count() > 0 and
                        estop.service_is_ready(), what="state match and e-stop service")

    def call(*data: bool) -> list[SetBool.Response]:
        futures = [estop.call_async(SetBool.Request(data=d)) for d in data]
        ros_node.spin_until(lambda: all(f.done() for f in futures), what="e-stop responses")
        return [f.result() for f in futures]

    stream.start()
    ros_node.spin_until(lambda: watch.state() == MotionCue.STATE_RUNNING and
                        moved(rig, neutral, len(rig.frames) - 5, quanta=300),
                        what="platform running, 300 quanta (>= 1.5 cm of leg) from neutral")
    # latch, then at once try to release: the rig is still far from neutral (>= 0.1 s away at
    # the preset's velocity limits), so the release must be refused
    n = len(watch.controls)
    latched, early = call(True, False)
    assert latched.success and not early.success and "not cleared" in early.message
    # the vehicle too: full brake on vehicle/control, source "estop", with no source driving
    ros_node.spin_until(lambda: watch.sources[-1:] == ["estop"] and any(
        c.brake == 1.0 and c.throttle == 0.0 for c in watch.controls[n:]),
        what="full brake from the e-stop")
    ros_node.spin_until(lambda: at_neutral(rig, neutral), what="neutral after e-stop")
    spin_for(ros_node, 1.0)  # states keep coming: the latch holds
    assert at_neutral(rig, neutral, frames=200) and watch.state() == MotionCue.STATE_ESTOP
    (cleared,) = call(False)
    assert cleared.success and "cleared" in cleared.message
    ros_node.spin_until(lambda: watch.state() == MotionCue.STATE_STARTING, what="soft start")
    ros_node.spin_until(lambda: watch.sources[-1] != "estop", what="the e-stop source released")
    stream.stop()


def packet(seq: int, steer=0, throttle=0, brake=0, clutch=0, buttons=0, torque=0.0,
           key: bytes | None = None) -> bytes:
    return encode_input_packet(RigInput(seq, steer, throttle, brake, clutch, torque, buttons), key)


class RigInputSender:
    """The steering rig: sends input packets at 100 Hz from 127.0.0.1 (signed with ``key``)."""

    def __init__(self, port: int, key: bytes | None = None, seq: int = 0, **fields):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.setblocking(False)
        self.port, self.key, self.fields, self.seq = port, key, fields, seq
        self.thread = Thread(0.01, self.send)
        STARTED.append(self)

    def send(self) -> None:
        self.seq += 1
        self.sock.sendto(packet(self.seq, key=self.key, **self.fields), ("127.0.0.1", self.port))

    def stop(self) -> None:
        self.thread.stop()
        if self.sock.fileno() >= 0:
            self.sock.close()


def rig_socket_received(sock: socket.socket) -> list[bytes]:
    """What a rig's socket holds, less DDS: its ephemeral port can be one of the run's Fast DDS
    unicast ports (7400 + 250 x ROS_DOMAIN_ID + ..., inside the kernel's ephemeral range for the
    test domains), where the graph's participants send their RTPS discovery."""
    out = []
    while True:
        try:
            data = sock.recv(65536)
        except BlockingIOError:
            return out
        if not data.startswith(b"RTPS"):
            out.append(data)


def pedal(raw: int) -> float:
    """The documented unipolar mapping with the preset's pedal calibration (input_map)."""
    a = PLATFORM.inputs.throttle
    u = (raw - a.raw_min) / (a.raw_max - a.raw_min)
    return 0.0 if u <= a.dead_zone else (u - a.dead_zone) / (1.0 - a.dead_zone)


def test_rig_packets_drive_and_bad_packets_are_counted_without_effect(ros_node, start_node, rig):
    port = free_port()
    proc, _ = start_bridge(ros_node, start_node, rig, input_port=port)
    watch = Watch(ros_node)
    ros_node.spin_until(lambda: watch.sources == ["none"], what="latched source 'none'")
    sender = RigInputSender(port, steer=16384, throttle=32768, brake=6553, clutch=0)
    ros_node.spin_until(lambda: len(watch.controls) > 20, what="driver commands")
    assert watch.sources[-1] == "driver"  # no autonomy stack: the rig drives, once engaged:
    held = watch.controls[-1]  # a brake under ENGAGE_BRAKE (0.08) is not engaging
    assert (held.throttle, held.brake) == (0.0, 1.0)
    # the brake, the throttle released, engages; the wheel centred marks the commands of those
    # packets (a held command steers as the driver does)
    sender.fields.update(steer=0, throttle=0, brake=65535)
    ros_node.spin_until(lambda: abs(watch.controls[-1].steering_angle) < 1e-3, what="engaged")
    sender.fields.update(steer=16384, throttle=32768, brake=6553)
    ros_node.spin_until(lambda: watch.controls[-1].throttle > 0.0, what="the pedals as given")
    first = watch.controls[-1]
    steer = (16384 - -32767) / 65534 * 2.0 - 1.0  # bipolar mapping, no dead zone
    assert first.steering_angle == pytest.approx(
        0.5 * steer * PLATFORM.inputs.handwheel_range_rad / PLATFORM.ffb.steering_ratio, abs=1e-9)
    assert first.throttle == pytest.approx(pedal(32768), abs=1e-9)
    assert first.brake == pytest.approx(pedal(6553), abs=1e-9) and first.gear == 1
    mark = len(watch.controls)
    good = packet(1000, throttle=65535)
    bad = [b"X" * len(good), good[:10], good[:-1] + bytes([good[-1] ^ 0xFF]), good + b"\0"]
    for data in bad:
        sender.sock.sendto(data, ("127.0.0.1", port))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as stranger:
        stranger.bind(("127.0.0.2", 0))
        stranger.sendto(good, ("127.0.0.1", port))
    ros_node.spin_until(lambda: len(watch.controls) > mark + 30, what="commands after bad input")
    for c in watch.controls[mark:]:
        assert (c.steering_angle, c.throttle, c.brake) == (
            first.steering_angle, first.throttle, first.brake)
    sender.fields = {"steer": -32768, "throttle": 65535, "brake": 65535}  # full lock and pedals
    ros_node.spin_until(lambda: watch.controls[-1].throttle == 1.0, what="full throttle")
    c = watch.controls[-1]
    assert c.brake == 1.0
    assert c.steering_angle == pytest.approx(
        -0.5 * PLATFORM.inputs.handwheel_range_rad / PLATFORM.ffb.steering_ratio, abs=1e-9)
    assert rig_socket_received(sender.sock) == []  # the node never answers the rig
    sender.stop()
    out = proc.stop()
    for reason in ("'bad header': 1", "'truncated': 1", "'bad CRC': 1", "'oversized': 1",
                   "dropped (sender not allowed) 1"):
        assert reason in out, out
    assert "rejected: bad header" in out, out  # the rate-limited warning names the reason


def write_key(folder: Path, data: bytes, mode: int = 0o600) -> str:
    path = folder / "rig.key"
    path.write_bytes(data)
    path.chmod(mode)
    return str(path)


def test_with_a_key_file_only_signed_rig_packets_drive(ros_node, start_node, rig, tmp_path):
    """input_key_file set: a rig sending the old unsigned packets (or packets signed with another
    key) drives nothing; the same stream signed with the key drives; the key is never logged."""
    key = secrets.token_hex(16).encode()  # 32 printable bytes, so a leak would show in the log
    port = free_port()
    proc, _ = start_bridge(ros_node, start_node, rig, input_port=port,
                           input_key_file=write_key(tmp_path, key))
    watch = Watch(ros_node)
    ros_node.spin_until(lambda: watch.sources == ["none"], what="latched source 'none'")
    unsigned = RigInputSender(port, throttle=65535)
    forged = RigInputSender(port, key=secrets.token_bytes(32), seq=30_000, throttle=65535)
    spin_for(ros_node, 1.0)  # ~100 packets of each
    assert unsigned.seq > 50 and forged.seq > 30_050
    assert watch.sources == ["none"] and watch.controls == [], "unauthenticated input drove"
    unsigned.stop()
    forged.stop()
    signed = RigInputSender(port, key=key, throttle=0, brake=65535)  # the brake engages
    ros_node.spin_until(lambda: watch.sources[-1:] == ["driver"] and len(watch.controls) > 20,
                        what="signed packets drive")  # (from its first packets on)
    signed.fields.update(throttle=65535, brake=6553)
    ros_node.spin_until(lambda: watch.controls[-1].throttle > 0.0, what="the pedals as given")
    assert watch.controls[-1].throttle == 1.0
    assert watch.controls[-1].brake == pytest.approx(pedal(6553), abs=1e-9)
    replay = packet(signed.seq - 5, throttle=0, key=key)  # a valid tag, an old number
    for _ in range(3):
        signed.sock.sendto(replay, ("127.0.0.1", port))
    spin_for(ros_node, 0.3)
    signed.stop()
    out = proc.stop()
    assert "HMAC-SHA256 tag required (key file " in out, out
    counts = re.search(r"at exit.*input packets accepted (\d+), rejected (\{[^}]*\})", out)
    assert counts, out
    accepted, rejected = int(counts[1]), ast.literal_eval(counts[2])  # in order of first arrival
    assert accepted >= 20 and rejected["stale sequence"] == 3, out
    assert rejected["missing MAC"] > 50 and rejected["bad MAC"] > 50, out
    assert "sequence restarts 0" in out, out
    # the (rate-limited) warning names the reason of whichever came first
    assert re.search(r"rejected: (missing|bad) MAC", out), out
    assert key.decode() not in out and key[:8].decode() not in out, "the key must never be logged"


def test_cue_carries_the_force_feedback_torque_only_while_the_rig_is_live(ros_node, start_node,
                                                                          rig):
    """Wheel centred and still: the handwheel torque is k_a M_z / i_s (ffb.py), published in
    MotionCue.steering_torque; with the rig silent (stale input) it is 0."""
    port = free_port()
    start_bridge(ros_node, start_node, rig, input_port=port)
    watch, stream = Watch(ros_node), StateStream(ros_node)
    ros_node.spin_until(lambda: stream.pub.get_subscription_count() > 0, what="state match")
    stream.aligning_nm = 15.0
    stream.start()
    sender = RigInputSender(port)
    expected = PLATFORM.ffb.aligning_gain * 15.0 / PLATFORM.ffb.steering_ratio
    ros_node.spin_until(lambda: watch.cues and watch.cues[-1].steering_torque != 0.0,
                        what="torque in the cue")
    assert watch.cues[-1].steering_torque == pytest.approx(expected, abs=1e-3)  # raw 0 ~ centre
    sender.stop()
    ros_node.spin_until(lambda: watch.cues[-1].steering_torque == 0.0, what="stale rig: no torque")
    stream.stop()


def test_takeover_button_switches_from_autonomy_to_driver(ros_node, start_node, rig):
    port = free_port()
    _proc, _ = start_bridge(ros_node, start_node, rig, input_port=port)
    watch = Watch(ros_node)
    stack = ros_node.create_publisher(VehicleControl, "autonomy/control", qos.COMMAND)
    ros_node.spin_until(lambda: stack.get_subscription_count() > 0, what="autonomy match")
    auto = Thread(0.02, lambda: stack.publish(VehicleControl(throttle=0.3, steering_angle=0.1,
                                                             gear=1)))
    STARTED.append(auto)
    sender = RigInputSender(port, throttle=65535)
    ros_node.spin_until(lambda: watch.sources[-1:] == ["autonomy"], what="autonomy in control")
    mark = len(watch.controls)
    ros_node.spin_until(lambda: len(watch.controls) > mark + 5, what="autonomy commands")
    assert watch.controls[-1].throttle == pytest.approx(0.3)  # the driver's pedal is ignored
    pressed = len(watch.sources)
    sender.fields["buttons"] = 1 << PLATFORM.inputs.takeover
    ros_node.spin_until(lambda: watch.sources[-1:] == ["driver"], what="takeover")
    mark = len(watch.controls)
    ros_node.spin_until(lambda: len(watch.controls) > mark + 5, what="driver commands")
    assert watch.controls[-1].throttle == 1.0 and watch.controls[-1].steering_angle == 0.0
    # from autonomy straight to the driver, and never back while autonomy still commands (the
    # rig's input may go stale on a loaded host meanwhile: 'none', then 'driver' again; a CI
    # run saw driver, none, driver, the none lost by a reader of depth 1)
    after = watch.sources[pressed:]
    assert watch.sources[pressed - 1] == "autonomy" and after[0] == "driver", watch.sources
    assert "autonomy" not in after, watch.sources
    auto.stop()
    sender.stop()
    ros_node.spin_until(lambda: watch.sources[-1:] == ["none"], what="no fresh input")
    spin_for(ros_node, 0.2)
    mark = len(watch.controls)
    spin_for(ros_node, 0.5)  # nothing fresh, nothing published (the dynamics brakes)
    assert len(watch.controls) == mark


def test_fast_mode_forwards_each_autonomy_command_once_as_it_arrives(ros_node, start_node, rig):
    """mode fast (and lockstep): autonomy commands go out on receipt, every field and the header
    kept, and the wall-clock loop does not repeat them at control_rate_hz."""
    start_bridge(ros_node, start_node, rig, mode="fast")
    watch = Watch(ros_node)
    stack = ros_node.create_publisher(VehicleControl, "autonomy/control", qos.COMMAND)
    ros_node.spin_until(lambda: stack.get_subscription_count() > 0
                        and watch.sources[-1:] == ["none"], what="autonomy match")
    sent = []
    for k in range(1, 11):
        msg = VehicleControl(throttle=k / 100, steering_angle=-0.01 * k, brake=0.5, clutch=0.25,
                             gear=-1, handbrake=True)
        msg.header.stamp.sec, msg.header.frame_id = k, "stack"
        sent.append(msg)
        stack.publish(msg)
        spin_for(ros_node, 0.05)  # slower than control_rate_hz: a loop copy would show
    ros_node.spin_until(lambda: len(watch.controls) >= len(sent), what="forwarded commands")
    spin_for(ros_node, 0.3)
    assert watch.controls == sent
    assert watch.sources[-1] == "autonomy"


def test_evdev_wheel_and_force_feedback_through_uinput(ros_node, start_node, rig):
    if not Path("/dev/uinput").exists():
        pytest.skip("/dev/uinput is absent on this machine (no virtual input devices)")
    pytest.importorskip("evdev", reason="python-evdev is not installed")
    from evdev import AbsInfo, UInput, ecodes
    absinfo = AbsInfo(0, -32767, 32767, 0, 0, 0)
    pedals = AbsInfo(0, 0, 65535, 0, 0, 0)
    events = {ecodes.EV_ABS: [(ecodes.ABS_X, absinfo), (ecodes.ABS_Y, pedals),
                              (ecodes.ABS_Z, pedals), (ecodes.ABS_RZ, pedals)],
              ecodes.EV_KEY: [ecodes.BTN_0, ecodes.BTN_1], ecodes.EV_FF: [ecodes.FF_CONSTANT]}
    ui = UInput(events, name="vehicle_sim test wheel", max_effects=4)
    levels: list[int] = []
    halt = threading.Event()

    def serve_ff() -> None:  # the uinput side of EVIOCSFF: accept uploads, record the level
        while not halt.is_set():
            event = ui.read_one()
            if event is None:
                time.sleep(0.001)
            elif event.type == ecodes.EV_UINPUT and event.code == ecodes.UI_FF_UPLOAD:
                upload = ui.begin_upload(event.value)
                upload.retval = 0
                levels.append(upload.effect.u.ff_constant_effect.level)
                ui.end_upload(upload)
            elif event.type == ecodes.EV_UINPUT and event.code == ecodes.UI_FF_ERASE:
                erase = ui.begin_erase(event.value)
                erase.retval = 0
                ui.end_erase(erase)

    server = threading.Thread(target=serve_ff, daemon=True)
    server.start()
    try:
        proc, _ = start_bridge(ros_node, start_node, rig, evdev_device=ui.device.path)
        watch = Watch(ros_node)
        ros_node.spin_until(lambda: len(levels) >= 1, what="FF_CONSTANT uploaded")
        deadline = time.monotonic() + 10.0
        while not watch.controls and time.monotonic() < deadline:
            ui.write(ecodes.EV_ABS, ecodes.ABS_X, 16384)  # wheel turned left, nothing else
            ui.write(ecodes.EV_ABS, ecodes.ABS_Z, 32768)
            ui.syn()
            ros_node.test_executor.spin_once(timeout_sec=0.02)
        assert watch.controls and watch.controls[-1].steering_angle > 0.0
        ros_node.spin_until(lambda: any(v != 0 for v in levels), what="FFB level update")
        assert all(abs(v) <= 32767 for v in levels)
        assert any(v < 0 for v in levels), "centring pulls a left-turned wheel back to the right"
        out = proc.stop()
        assert "force feedback FF_CONSTANT" in out, out
    finally:
        halt.set()
        server.join()
        ui.close()


def test_injected_link_losses_stop_frames_and_rig_input_for_their_duration(ros_node, start_node,
                                                                          rig):
    """platform LINK_LOSS for 1 s of sim time: no UDP frame, then frames again; wheel LINK_LOSS:
    the rig's packets are ignored, so its input goes stale and the driver stops driving."""
    port = free_port()
    proc, _ = start_bridge(ros_node, start_node, rig, input_port=port)
    watch, stream = Watch(ros_node), StateStream(ros_node)
    status: list[FaultStatus] = []
    ros_node.create_subscription(FaultStatus, "faults/status", status.append, qos.EVENT)
    faults = ros_node.create_publisher(FaultCommand, "faults/command", qos.EVENT)
    ros_node.spin_until(lambda: faults.get_subscription_count() > 0
                        and stream.pub.get_subscription_count() > 0, what="fault/state match")
    stream.start()
    sender = RigInputSender(port, throttle=65535)
    ros_node.spin_until(lambda: watch.sources[-1:] == ["driver"], what="the rig drives")

    faults.publish(FaultCommand(id=1, target="platform", fault=FaultCommand.LINK_LOSS,
                                duration=1.0))
    ros_node.spin_until(lambda: [s.state for s in status if s.id == 1] == [
        FaultStatus.STATE_ACTIVE], what="platform link loss active")
    t_cut, seen_ns = stream.t_ns, time.time_ns()
    ros_node.spin_until(lambda: FaultStatus.STATE_CLEARED in [s.state for s in status
                                                              if s.id == 1], what="duration")
    assert stream.t_ns - t_cut >= 0.8e9, "the duration counts the states' sim time"
    cut = len(rig.frames)
    ros_node.spin_until(lambda: len(rig.frames) > cut + 20, what="frames again")
    # the cut lasts 1 s of sim time, so about 1 s of wall time or more (the states come at
    # most in real time): around the moment the test saw it reported, the frames (500 Hz
    # otherwise) stopped for that long, by the kernel's receive times
    near = [t for t in rig.arrived_ns if abs(t - seen_ns) < 3_000_000_000]
    assert max(b - a for a, b in zip(near, near[1:], strict=False)) >= 800_000_000, \
        "no frame leaves while the platform link is cut"

    faults.publish(FaultCommand(id=2, target="wheel", fault=FaultCommand.LINK_LOSS))
    ros_node.spin_until(lambda: watch.sources[-1:] == ["none"], what="stale rig input")
    faults.publish(FaultCommand(id=3, target="wheel", fault=FaultCommand.CLEAR))
    ros_node.spin_until(lambda: any(s.id == 3 for s in status), what="clear answered")
    faults.publish(FaultCommand(id=0, target="wheel", fault=FaultCommand.CLEAR))
    ros_node.spin_until(lambda: watch.sources[-1:] == ["driver"], what="the rig drives again")
    faults.publish(FaultCommand(id=4, target="platform", fault=FaultCommand.FREEZE))
    ros_node.spin_until(lambda: any(s.id == 4 for s in status), what="FREEZE answered")
    wrong = next(s for s in status if s.id == 4)
    assert wrong.state == FaultStatus.STATE_REJECTED and "LINK_LOSS" in wrong.message
    assert next(s for s in status if s.id == 3).state == FaultStatus.STATE_REJECTED
    sender.stop()
    stream.stop()
    out = proc.stop()
    assert "ignored (injected wheel link loss) 0" not in out, out


@pytest.mark.parametrize("params, words", [
    ({"output_host": "localhost"}, "output_host 'localhost' is not an IPv4 address"),
    ({"platform_rate_hz": 20.0}, "platform_rate_hz: must be >= 50.0"),
    ({"cue_rate_hz": 900.0}, "cue_rate_hz must not exceed platform_rate_hz"),
    ({"platform_file": "/nonexistent/rig.yaml"}, "/nonexistent/rig.yaml: cannot read file"),
    ({"serial_device": "/dev/ttyUSB0", "serial_baud": 9600, "serial_rate_hz": 100.0},
     "serial_baud 9600 carries at most"),
])
def test_bad_parameters_refuse_to_start(assert_refuses, params, words):
    assert_refuses("bridge_node", params, words)


@pytest.mark.parametrize("data, mode, words", [
    (b"k" * 32, 0o644, "permissions 0644 are too open"),
    (b"k" * 32, 0o640, "permissions 0640 are too open"),
    (b"k" * 15, 0o600, "15 bytes, a key needs at least 16"),
    (b"", 0o600, "0 bytes, a key needs at least 16"),
])
def test_an_unsafe_key_file_refuses_to_start(assert_refuses, tmp_path, data, mode, words):
    path = write_key(tmp_path, data, mode)
    assert_refuses("bridge_node", {"input_port": free_port(), "input_key_file": path},
                   f"input_key_file '{path}': {words}")


def test_a_missing_key_file_refuses_to_start(assert_refuses, tmp_path):
    path = str(tmp_path / "absent.key")
    assert_refuses("bridge_node", {"input_key_file": path},
                   f"input_key_file '{path}': cannot open (No such file or directory)")


def test_serial_output_sends_whole_frames_to_a_real_tty(ros_node, start_node, rig):
    master, slave = os.openpty()
    try:
        proc, neutral = start_bridge(ros_node, start_node, rig, serial_device=os.ttyname(slave),
                                     serial_baud=115200, serial_rate_hz=100.0,
                                     wire_format="binary")
        size = frame_bytes(PLATFORM.wire, len(neutral))
        data = b""
        deadline = time.monotonic() + 10.0
        while len(data) < 30 * size and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            data += os.read(master, 4096) if ready else b""
        frames = [data[i:i + size] for i in range(0, len(data) - size + 1, size)]
        assert len(frames) >= 30, f"{len(data)} bytes from the tty"
        values = np.array([decode_binary(f, PLATFORM.wire)[1] for f in frames])  # CRC, length
        assert np.all(np.abs(values - neutral) <= QUANTUM + 1e-12), "no state yet: neutral"
        udp = len(rig.frames)
        os.close(master)  # the adapter is pulled: the node logs it and keeps its loop
        master = -1
        ros_node.spin_until(lambda: len(rig.frames) > udp + 200, what="UDP frames after loss")
        out = proc.stop()
        assert proc.proc.returncode == 0, out
        assert "serial link" in out and "lost" in out and "link lost 1 times" in out, out
    finally:
        for fd in (master, slave):
            if fd >= 0:
                os.close(fd)


def test_evdev_absent_or_missing_device_is_one_log_line(start_node, rig, ros_node):
    proc, _ = start_bridge(ros_node, start_node, rig, evdev_device="/dev/input/no_such_wheel")
    out = proc.stop()
    lines = [ln for ln in out.splitlines() if "continuing without a wheel" in ln]
    assert len(lines) == 1, out
    assert proc.proc.returncode == 0 and "platform loop (at exit)" in out, out


def test_the_bridge_reads_no_clock_and_its_threads_run_under_the_platform_loop(ros_node,
                                                                             start_node, rig):
    """The bridge's time is the wall clock (stamps: the vehicle state's): with use_sim_time
    true it still has no /clock subscription (1 kHz of callbacks holding the interpreter lock
    the platform loop waits for). In real time, where SCHED_FIFO is permitted, the loop runs at
    PLATFORM_LOOP_PRIORITY and the executor and Fast DDS's threads one level below."""
    from vehicle_sim.core.realtime import PLATFORM_LOOP_PRIORITY
    proc, _ = start_bridge(ros_node, start_node, rig, use_sim_time=True)

    def bridge_reads(topic: str) -> bool:
        return any(e.node_name == "bridge"
                   for e in ros_node.get_subscriptions_info_by_topic(topic))

    ros_node.spin_until(lambda: bridge_reads("/vehicle/state_raw")
                        and not bridge_reads("/clock"), what="state read, no clock read")
    if not fifo_permitted():
        pytest.skip("SCHED_FIFO not permitted here: the priorities are not set")
    below = PLATFORM_LOOP_PRIORITY - 1

    def raised() -> bool:
        levels = fifo_levels(proc.proc.pid)
        dds = set().union(*(p for n, p in levels.items() if n.startswith("dds.")))
        return (any(n.startswith("dds.shm.") for n in levels) and dds == {below}
                and {PLATFORM_LOOP_PRIORITY, below} <= levels.get("bridge_node", set()))

    ros_node.spin_until(raised, what=f"DDS threads and the executor at FIFO {below}, the loop "
                        f"at {PLATFORM_LOOP_PRIORITY}")
