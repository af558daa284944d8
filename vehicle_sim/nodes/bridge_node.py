"""Hardware bridge node (issue 6): motion platform out, steering rig in, autonomy/driver mux.

Thin: the pipelines are ``vehicle_sim.core.motion`` (MotionBridge, SteeringBridge, and the
CommandArbiter that decides the active source and the command to publish), parameters
BridgeNodeParams + the platform preset, sockets, serial port and evdev wheel ``core.devices``.
This file converts messages at the edge and publishes vehicle/control from one place.

Threads: the executor only stores the newest inputs (vehicle state, autonomy command, pause) and
serves the e-stop; the platform loop thread makes each frame ``FRAME_LEAD_S`` before its deadline
(both core cycles, FFB, serial, publishing) and hands it to the frame sender
(core.devices.frame_sender), compiled code that keeps the deadlines without the interpreter lock
and sends the UDP frame at its deadline; the rig-input thread decodes packets. Watchdog and
freshness use the wall clock (time.monotonic): a dead simulator freezes sim time, only the wall
clock notices. Headers carry the sim time of the newest vehicle state. So the node reads no ROS
clock: it keeps use_sim_time false whatever the graph passes (a /clock subscription would run 1 kHz
of callbacks in the executor, holding the interpreter lock the platform loop waits for). In
lockstep (``lockstep``, a lockstep peer) it acknowledges the /clock ticks once the stack has
commanded recently enough in sim time (nodes.bridge_lockstep), and the stack's freshness is
measured in sim time. In real
time the executor and Fast DDS's threads run at SCHED_FIFO one level below the loop: a DDS thread
preempted by the machine's other work while it holds a reader's lock would hold the executor, and
with it the interpreter lock, as long.
"""
from __future__ import annotations

import threading
import time
from collections import Counter

from rclpy.node import Node
from rclpy.parameter import Parameter
from std_msgs.msg import String
from std_srvs.srv import SetBool

from vehicle_sim.core.config import load
from vehicle_sim.core.controls import ControlLimits, DriveCommand
from vehicle_sim.core.devices import evdev_wheel, frame_sender, serial_port, udp
from vehicle_sim.core.motion.arbiter import CommandArbiter, Decision
from vehicle_sim.core.motion.bridge import MotionBridge
from vehicle_sim.core.motion.node_params import BridgeNodeParams
from vehicle_sim.core.motion.params import PlatformParams
from vehicle_sim.core.motion.safety import Mode
from vehicle_sim.core.motion.steering import SteeringBridge
from vehicle_sim.core.realtime import (
    DDS_THREADS,
    PLATFORM_LOOP_PRIORITY,
    LatenessWindow,
    percentiles,
    set_realtime_priority,
    set_threads_priority,
    shorten_switch_interval,
    tighten_timer_slack,
)
from vehicle_sim.core.vehicle.params import VehicleParams
from vehicle_sim.msg import MotionCue, SimStatus, VehicleControl, VehicleState
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos, stack_inputs
from vehicle_sim.nodes.bridge_faults import BridgeFaults
from vehicle_sim.nodes.bridge_lockstep import BridgeLockstep
from vehicle_sim.nodes.bridge_msgs import StateSample, motion_cue, state_sample
from vehicle_sim.nodes.diagnostics import Diagnostics, link_check, source_check
from vehicle_sim.nodes.main import NodeEntry, run_nodes
from vehicle_sim.nodes.params import declare_and_load
from vehicle_sim.nodes.stack_inputs import StackInputs, StackTopic
from vehicle_sim.nodes.vehicle_reports import VehicleReports
from vehicle_sim.nodes.warning_gate import WarningGate
from vehicle_sim.paths import config_path
from vehicle_sim.warm import warm_bridge

# SCHED_FIFO priority of the platform loop thread in realtime mode, where permitted
# (core.realtime.PLATFORM_LOOP_PRIORITY); the executor thread runs one level below the loop, so a
# GIL it holds is handed back without queueing behind the machine's other work. Measured by
# bench/bench_deadlines.py (README, Performance).
LOOP_PRIORITY = PLATFORM_LOOP_PRIORITY


class BridgeNode(Node):
    def __init__(self, **options) -> None:
        super().__init__("bridge", **options)
        self.set_parameters([Parameter("use_sim_time", value=False)])  # wall clock (docstring)
        self.p = p = declare_and_load(self, BridgeNodeParams)
        self.platform = p.apply_to(load(PlatformParams, config_path(p.platform_file)))
        self.motion = MotionBridge(self.platform)
        p.check_serial_capacity(self.motion.frame_bytes)
        self.steering = SteeringBridge(self.platform.inputs, self.platform.mux, self.platform.ffb,
                                       p.input_key())
        self._lock = threading.Lock()  # motion + steering: loop, rig-input and service threads
        self._sample: StateSample | None = None
        self._fed: StateSample | None = None
        vehicle = load(VehicleParams, config_path(p.vehicle_file))
        self.inputs = StackInputs(vehicle, ControlLimits(
            vehicle.steering.max_road_wheel_angle_rad, p.max_gear), self.get_logger().info,
            p.base_frame)
        self.arbiter = CommandArbiter(p.arbiter_params(self.platform.ffb.steering_ratio, tuple(
            t.name for t in self.inputs.sources)), self.steering)
        self.lockstep = (BridgeLockstep(self, p, tuple(t.topic for t in self.inputs.topics),
                                        self._restamp_stack) if p.lockstep else None)
        self.reports = VehicleReports.create(  # Autoware's /vehicle/status
            self, self.inputs, p.base_link, vehicle)
        self._warnings = WarningGate()  # per stack topic or rig sender, and kind of problem
        self.stack_rejected: Counter[str] = Counter()  # stack topic -> commands rejected
        self._paused = False
        self.accepted = 0
        self.pub_cue = self.create_publisher(MotionCue, "motion/cue", qos.STREAM)
        self.pub_control = self.create_publisher(VehicleControl, "vehicle/control", qos.COMMAND)
        self.pub_source = self.create_publisher(String, "bridge/active_source", qos.LATCHED)
        self.create_subscription(VehicleState, "vehicle/state_raw", self._on_state, qos.STREAM)
        self.create_subscription(SimStatus, "sim/status", self._on_status, qos.EVENT)
        stack_inputs.subscribe(self, self.inputs.topics, self._on_stack)
        self.create_service(SetBool, "bridge/estop", self._on_estop)
        self.faults = BridgeFaults(self)  # LINK_LOSS of targets platform and wheel
        self.ignored_inputs = 0  # rig inputs dropped during an injected wheel link loss
        self.diagnostics = Diagnostics(self, "bridge")  # per simulated second of the states
        log = self.get_logger()
        self.serial = (serial_port.SerialSender(p.serial_device, p.serial_baud, log.warning)
                       if p.serial_device else None)
        self.receiver = (udp.UdpReceiver(p.input_host, p.input_port, p.allowed_peers,
                                         self._on_packet, self._on_dropped)
                         if p.input_port else None)
        self.wheel = evdev_wheel.open_wheel(p.evdev_device, p.evdev_axes, self._on_raw, log.info)
        # the frames' deadlines (UDP out where output_port is set); the loop's own wake-ups
        self.frames = frame_sender.FrameSender(
            1.0 / p.platform_rate_hz, self.motion.frame_bytes,
            (p.output_host, p.output_port) if p.output_port else None)
        self.made_late = LatenessWindow(capacity=1 << 16)  # [s] past each frame's making time
        self.cycles = 0
        self.failed = False
        self._cue_every = p.every(p.cue_rate_hz)
        self._serial_every = p.every(p.serial_rate_hz)
        self._link_up, self._serial_reopened = True, 0  # the rig's outputs, last cycle
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="platform", daemon=True)
        out = (f"{self.platform.wire.format} frames to {p.output_host}:{p.output_port}"
               if p.output_port else "platform output off (output_port 0)")
        if self.serial:
            out += (f"; serial {p.serial_device} at {p.serial_baud} baud, "
                    f"{p.platform_rate_hz / self._serial_every:g} frames/s")
        rig = f"{p.input_host}:{p.input_port}" if self.receiver else "off"
        if self.receiver and p.input_key_file:
            rig += f", HMAC-SHA256 tag required (key file {p.input_key_file})"
        log.info(f"platform {self.platform.kind} ({p.platform_file}) at {p.platform_rate_hz:g} Hz, "
                 f"{out}; rig input UDP {rig}")

    def start(self) -> None:
        for part in (self.receiver, self.wheel):
            if part is not None:
                part.start()
        self._thread.start()
        if self.p.mode == "realtime":  # this (executor) thread, after the others started
            refused = set_realtime_priority(LOOP_PRIORITY - 1)
            if not refused:
                refused = set_threads_priority(LOOP_PRIORITY - 1, DDS_THREADS)[1]
            if refused:
                self.get_logger().info(f"executor and DDS threads: {refused}")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2.0)
        self.frames.stop()
        connected = self.serial is not None and self.serial.connected
        for part in (self.receiver, self.wheel, self.serial):
            if part is not None:
                part.stop()
        self._log_stats("at exit", serial_connected=connected)

    # ---- platform loop thread --------------------------------------------------------------
    def _loop(self) -> None:
        tighten_timer_slack()
        if self.p.mode == "realtime":  # the GIL within 0.05 ms, not CPython's 5 ms
            shorten_switch_interval()
            refused = set_realtime_priority(LOOP_PRIORITY)
            if refused:
                self.get_logger().info(f"platform loop: {refused}")
        self.frames.start(LOOP_PRIORITY if self.p.mode == "realtime" else 0)
        if self.frames.refused:
            self.get_logger().info(f"frame sender: {self.frames.refused}")
        period = self.p.stats_period_s
        next_stats = time.monotonic() + period
        while not self._stop.is_set():
            k, due = self.frames.next_deadline()
            wait = due - time.monotonic()  # one reading: a sleep is never given a negative time
            if wait > 0.0:
                time.sleep(wait)
            now = time.monotonic()
            self.made_late.add(max(0.0, now - due))
            try:
                self._tick(now, k)
            except Exception as exc:  # a dead loop must not look alive: end the process
                self.get_logger().fatal(f"platform loop failed: {type(exc).__name__}: {exc}")
                self.failed = True
                raise
            self.cycles += 1
            if period and now >= next_stats:
                next_stats += period
                self._log_stats(f"last {period:g} s; counts since start")

    def _tick(self, now: float, k: int) -> None:
        """Frame ``k`` (frame_sender.FrameSender.next_deadline), made at ``now``."""
        sample = self._sample
        link_up = not self.faults.lost("platform")
        serial_back = self.serial is not None and self.serial.reopened != self._serial_reopened
        with self._lock:
            # a link back (the injected loss ends; the serial port, where it is the only
            # output): the controller parked meanwhile, the output resumes from neutral
            if link_up and not self._link_up or serial_back and not self.p.output_port:
                self.motion.link_restored()
            if sample is not None and sample is not self._fed:
                self.motion.on_vehicle_state(sample.recv_s, sample.accel, sample.omega,
                                             sample.alpha, sample.rpy)
                self._fed = sample
            frame = self.motion.cycle(now, self._paused)
        self._link_up = link_up
        if serial_back:
            self._serial_reopened = self.serial.reopened
        self.frames.put(k, frame.payload if link_up else None)  # first: its deadline comes
        with self._lock:
            steer, decision = self.arbiter.cycle(
                now, sample.aligning_nm if sample else 0.0,
                conv.to_ns(sample.stamp) if sample else 0, self._stack_now(now))
        if self.serial is not None and link_up and self.cycles % self._serial_every == 0:
            self.serial.send(frame.payload, now)
        if self.wheel is not None and self.wheel.has_ff and steer.ff_level is not None:
            self.wheel.set_level(steer.ff_level)
        if decision.changed:
            self._announce(decision)
        if decision.command is not None:
            self._publish(decision.command)
        if self.cycles % self._cue_every == 0:
            self.pub_cue.publish(motion_cue(frame, sample, steer.torque_nm, self.motion.cue))
        if sample is not None and self.diagnostics.due(conv.to_ns(sample.stamp)):
            self._publish_diagnostics(conv.to_ns(sample.stamp), decision.source, link_up)

    def _publish_diagnostics(self, t_ns: int, source: str, platform_up: bool) -> None:
        """Command source, platform output and rig input links on /diagnostics."""
        out = ("serial" if self.serial is not None else "udp" if self.frames.address else
               "off")
        serial_down = self.serial is not None and not self.serial.connected
        checks = [source_check(source),
                  link_check("vehicle_sim: platform link", platform_up and not serial_down, out),
                  link_check("vehicle_sim: wheel link", not self.faults.lost("wheel"),
                             "evdev" if self.wheel is not None else
                             "udp" if self.receiver is not None else "off")]
        self.diagnostics.publish(t_ns, checks)

    def _announce(self, decision: Decision) -> None:
        self.pub_source.publish(String(data=decision.source))
        why = f" ({decision.reason})" if decision.reason else ""
        self.get_logger().info(f"active source: {decision.source}{why}")

    def _publish(self, command: DriveCommand) -> None:
        """The one place vehicle/control is published (loop thread, or on receipt)."""
        self.pub_control.publish(conv.vehicle_control(command))

    def _log_stats(self, span: str, serial_connected: bool | None = None) -> None:
        """The loop's log line; ``serial_connected``: as it was before the port was closed
        (at exit), else the port's state now."""
        p50, p99, worst = percentiles(self.frames.take_lateness())
        made = self.made_late.percentiles()[1]
        self.made_late.clear()
        f = self.frames
        outputs = []  # the UDP frames' deadlines count only where they go out
        if f.address:
            outputs.append(f"frames sent {f.sent}, send errors {f.errors}"
                           f"{f' (last: {f.last_error})' if f.errors else ''}; frames late "
                           f"{f.late}, missed {f.missed} (made {f.lead_s * 1e3:g} ms ahead, p99 "
                           f"{made * 1e6:.0f} us late)")
        if self.serial is not None:
            q = self.serial
            up = q.connected if serial_connected is None else serial_connected
            outputs.append(f"serial frames sent {q.sent}, dropped (line busy) {q.dropped}, link "
                           f"lost {q.losses} times{'' if up else ' (not connected)'}")
        sent = "; ".join(outputs) or "no platform output"
        dropped = self.receiver.dropped if self.receiver else 0
        self.get_logger().info(
            f"platform loop ({span}): cycles {self.cycles}, lateness p50 {p50 * 1e6:.0f} us "
            f"p99 {p99 * 1e6:.0f} us max {worst * 1e6:.0f} us, overruns {f.overruns}; {sent}; "
            f"stack commands rejected {dict(self.stack_rejected)}; input packets accepted "
            f"{self.accepted}, rejected "
            f"{dict(self.steering.rejected)}, sequence restarts {self.steering.sequence.restarts}, "
            f"dropped (sender not allowed) {dropped}, ignored "
            f"(injected wheel link loss) {self.ignored_inputs}; "
            f"mode {self.motion.safety.mode.value}, source {self.arbiter.source}")

    # ---- rig input threads -----------------------------------------------------------------
    def _on_packet(self, data: bytes, addr: tuple[str, int], now: float) -> None:
        if self.faults.lost("wheel"):
            self.ignored_inputs += 1
            return
        with self._lock:
            before = dict(self.steering.rejected)
            ok = self.steering.on_packet(data, now)
            after = dict(self.steering.rejected)
        if ok:
            self.accepted += 1
            return
        reason = next((k for k, n in after.items() if n != before.get(k, 0)), "?")
        # a line a second per sender and reason, gated before the line is made (a flood of
        # bad packets must not take the interpreter from the platform loop)
        if self._warnings.due(f"rig {addr[0]}", reason):
            self.get_logger().warning(f"rig input packet from {addr[0]}:{addr[1]} rejected: "
                                      f"{reason} (rejected so far: {after})")

    def _on_dropped(self, addr: tuple[str, int]) -> None:
        # one key for every stranger: rotating (spoofed) addresses still give a line a second
        if self._warnings.due("rig", "not an allowed peer"):
            self.get_logger().warning(
                f"rig input packet from {addr[0]}:{addr[1]} dropped: not in allowed_peers "
                f"{list(self.p.allowed_peers)} (dropped so far: {self.receiver.dropped})")

    def _on_raw(self, now: float, *raw) -> None:
        if self.faults.lost("wheel"):
            self.ignored_inputs += 1
            return
        with self._lock:
            self.steering.on_raw(now, *raw)

    # ---- executor thread -------------------------------------------------------------------
    def _on_state(self, msg: VehicleState) -> None:
        self.faults.on_time(conv.to_ns(msg.header.stamp))
        self.inputs.on_state(msg.twist.linear.x, msg.linear_acceleration.x,
                             conv.to_ns(msg.header.stamp))
        if self.reports is not None:
            self.reports.on_state(msg, self.arbiter.source)
        self._sample = state_sample(msg, time.monotonic())

    def _on_status(self, msg: SimStatus) -> None:
        self._paused = msg.paused
        if self.reports is not None:
            self.reports.on_model(msg.model)

    def _on_stack(self, topic: StackTopic, msg) -> None:
        command, problem = self.inputs.command(topic, msg)
        # warnings once a second per topic and kind of problem: one bad source, or one kind of
        # fault, hides no other
        if problem and self._warnings.due(topic.topic, problem):
            self.get_logger().warning(f"{topic.topic}: {problem}")
        if command is None:  # rejected (the previous valid command stays) or state only
            if problem:
                self.stack_rejected[topic.topic] += 1
            return
        with self._lock:  # the decision against the loop's cycle, not between its steps
            forward = self.arbiter.offer(topic.name, command, self._stack_now(time.monotonic()))
        if forward:
            self._publish(command)  # fast/lockstep: sim time outruns the wall-clock loop
        if self.lockstep is not None:  # after the command went out: the next frame may come
            self.lockstep.on_command()

    def _restamp_stack(self, now_s: float) -> None:
        with self._lock:
            self.arbiter.restamp_stack(now_s)

    def _stack_now(self, wall_s: float) -> float:
        """The clock of the stack commands' freshness: the wall clock, or in lockstep the sim
        time of the newest frame (a wall-clock timeout would fire while the run waits for it)."""
        return wall_s if self.lockstep is None else self.lockstep.sync.now_s()

    def _on_estop(self, request: SetBool.Request, response: SetBool.Response):
        with self._lock:
            if request.data:
                self.motion.estop()
                self.arbiter.estop()
                response.success, response.message = True, ("e-stop latched: full brake, "
                                                             "parking at neutral")
                self.get_logger().warning("e-stop latched by service call")
            elif self.motion.safety.mode is not Mode.ESTOP:
                response.success, response.message = True, "no e-stop latched"
            else:
                response.success = self.motion.clear_estop()
                if response.success:
                    self.arbiter.clear_estop()
                response.message = ("e-stop cleared" if response.success else
                                    "not cleared: the platform is not at rest at neutral yet")
        return response

    def exit_code(self) -> int:
        """1 if the platform loop failed, else 0 (nodes.main.run)."""
        return 1 if self.failed else 0


# how a process runs this node (nodes.main; vehicle_sim_compose runs several in one)
ENTRY = NodeEntry(BridgeNode, "bridge", done=lambda node: node.failed,
                  warm_up=warm_bridge)


def main(args: list[str] | None = None) -> int:
    """Exit 2 on bad parameters, 1 if the platform loop failed, else 0."""
    return run_nodes([(ENTRY, [])], args)
