"""Dynamics node: the fixed-step physics loop that owns /clock.

Thin: parameters come from DynamicsParams, the loop from core.sim_loop, the model from
core.vehicle. This file only converts messages and wires topics and services.
"""
from __future__ import annotations

import math

import threading
import traceback

from geometry_msgs.msg import PoseWithCovarianceStamped
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from std_srvs.srv import SetBool, Trigger

from vehicle_sim.core.accident.ego_crash import EgoCrash, crash_setup
from vehicle_sim.core.config import load
from vehicle_sim.core.controls import ControlLimits, Validated, validate
from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.frames import cg_pose_in_odom, vehicle_reference_m
from vehicle_sim.core.loop_process import LoopProcess, LoopSetup
from vehicle_sim.core.realtime import (
    DDS_THREADS,
    PLATFORM_LOOP_PRIORITY,
    set_realtime_priority,
    set_threads_priority,
    shorten_switch_interval,
)
from vehicle_sim.core.sim_loop import Hooks, LoopStatus, SimLoop, step_outputs
from vehicle_sim.core.vehicle.factory import build_model
from vehicle_sim.core.vehicle.full14.terrain import TerrainParams
from vehicle_sim.core.vehicle.interface import VehicleSnapshot
from vehicle_sim.core.vehicle.params import VehicleParams
from vehicle_sim.msg import LockstepAck, SimStatus, VehicleControl
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.diagnostics import LoopDiagnostics
from vehicle_sim.nodes.ego_crash_link import EgoCrashLink
from vehicle_sim.nodes.fault_desk import FaultDesk
from vehicle_sim.nodes.graph_start import GraphStart
from vehicle_sim.nodes.main import NodeEntry, run_nodes
from vehicle_sim.nodes.params import declare_and_load, validate_on_set
from vehicle_sim.nodes.stack_inputs import initial_pose
from vehicle_sim.nodes.tf_publisher import StateOutputs
from vehicle_sim.nodes.vehicle_faults import VehicleFaultLink
from vehicle_sim.paths import config_path

_MODES = {"realtime": SimStatus.MODE_REALTIME, "fast": SimStatus.MODE_FAST,
          "lockstep": SimStatus.MODE_LOCKSTEP}


def forward_gears(vehicle: VehicleParams, model: str) -> int:
    """Gears a command may select: a manual box of the 14-DOF model has n, an automatic one (and
    the constant-power gearbox of 004 in the planar models) one drive position."""
    box = vehicle.drivetrain
    if model == "full14" and box is not None and box.transmission == "manual":
        return len(box.gear_ratios)
    return 1


class DynamicsNode(Node):
    def __init__(self, **options) -> None:
        super().__init__("dynamics", **options)
        self.loop: SimLoop | LoopProcess | None = None
        try:
            self._build()
        except BaseException:  # noqa: B036 (anything: a physics process must not outlive it)
            if isinstance(self.loop, LoopProcess):
                self.loop.close()
            raise

    def _build(self) -> None:
        self.p = declare_and_load(self, DynamicsParams)
        self.vehicle = load(VehicleParams, config_path(self.p.vehicle_file))
        terrain = (load(TerrainParams, config_path(self.p.terrain_file))
                   if self.p.terrain_file else None)
        self.limits = ControlLimits(self.vehicle.steering.max_road_wheel_angle_rad,
                                    max_gear=forward_gears(self.vehicle, self.p.model))
        dt_s = self.p.dt_ns * 1e-9
        # the ego's crash forces inside its physics (issue 11); '' map_file = none
        crash = crash_setup(self.p.map_file, self.vehicle, dt_s) if self.p.map_file else None
        self.model = None  # in this process only when the loop runs in a thread of it
        if self.p.mode == "realtime" and self.p.physics_process:
            self.loop = LoopProcess(LoopSetup(self.p, self.vehicle, terrain, crash))
            self.get_logger().info(f"physics loop in process {self.loop.pid}")
            if self.loop.pipe_problem:
                self.get_logger().warning(self.loop.pipe_problem)
            crash_core = self.loop
        else:
            self.model = build_model(self.p.model, self.vehicle, self.p.integrator, dt_s, terrain)
            self.loop = SimLoop(self.model, self.p)
        hooks = Hooks(after_step=self._after_step, status=self._publish_status,
                      frame_stalled=self._on_stalled, diverged=self._on_diverged)
        self.crash = None
        if crash is not None:
            if self.model is not None:
                crash_core = EgoCrash(crash, self.model, self._on_damage, self._on_contact)
                hooks.before_step, hooks.reset_done = crash_core.before_step, crash_core.reset_done
            else:
                self.loop.on_damage, self.loop.on_contact = self._on_damage, self._on_contact
            self.crash = EgoCrashLink(self, self.p.map_file, crash, self.p.agent_timeout_s,
                                      lambda: self.loop.t_ns, crash_core.set_agents,
                                      only_near=self.model is None)  # (the physics process)
        self.faults = VehicleFaultLink(self, self.loop)  # faults/command for target "vehicle"
        self.fault_desk = FaultDesk(self, lambda: self.loop.t_ns)  # targets nobody owns
        hooks.faults_changed = self.faults.report
        validate_on_set(self, DynamicsParams, lambda: self.p,
                        {"real_time_factor": self._set_real_time_factor})
        self.rejected = 0
        # base_link at the reference point in odom and /tf (vehicle/state stays the CG's); the
        # raw state reliable when not paced by the wall clock: sensors then sample every state
        # (a seeded run repeats); best-effort readers still match
        self.base_r_m = vehicle_reference_m(self.p.base_link, self.vehicle, self.p.model)
        self.outputs = StateOutputs(self, self.p, self.base_r_m, qos.STREAM if self.p.mode
                                    == "realtime" else qos.RELIABLE_STREAM)
        self.pub_clock = self.create_publisher(
            Clock, "/clock", qos.clock(self.p.mode == "lockstep"))
        self.pub_status = self.create_publisher(SimStatus, "sim/status", qos.EVENT)
        self.diagnostics = LoopDiagnostics(self, self.loop)  # once per simulated second
        self.create_subscription(VehicleControl, "vehicle/control", self._on_control, qos.COMMAND)
        self.create_subscription(PoseWithCovarianceStamped, "/initialpose", self._on_initial_pose,
                                 qos.COMMAND)
        self.create_subscription(LockstepAck, "/sim/lockstep_ack", self._on_ack,
                                 qos.LOCKSTEP_ACK_IN)
        self.create_service(SetBool, "sim/pause", self._on_pause)
        self.create_service(Trigger, "sim/step", self._on_step)
        self.create_service(Trigger, "sim/reset", self._on_reset)
        self._stop = threading.Event()
        self.failed = False  # the physics diverged: the process ends with exit code 1
        self._thread = threading.Thread(target=self._run_loop, args=(hooks,), name="physics",
                                        daemon=True)
        self.get_logger().info(
            f"model {self.p.model}/{self.p.integrator} at {self.p.physics_rate_hz:g} Hz, mode "
            f"{self.p.mode}, real_time_factor {self.p.real_time_factor:g}, vehicle "
            f"{self.p.vehicle_file}")

    def _set_real_time_factor(self, updated: DynamicsParams) -> None:
        self.p = updated
        self.loop.set_real_time_factor(updated.real_time_factor)
        self.get_logger().info(f"real_time_factor now {updated.real_time_factor:g}")

    def start(self) -> None:
        """The physics starts once the run's nodes are up and reading /clock (GraphStart)."""
        self._graph_start = GraphStart(self, self.p.wait_for_nodes, self.p.start_timeout_s,
                                       self.p.start_settle_s, self._start_loop,
                                       clockless=self.p.clockless_nodes)

    def _start_loop(self) -> None:
        self.get_logger().info("physics loop started")
        if self.p.mode == "realtime" and self.p.realtime_priority > 1:
            # this executor thread one FIFO level below the physics: when it holds the GIL
            # the physics waits for, it gets a core at once instead of queueing behind the
            # machine's other work (priority inversion); it sleeps in rcl_wait otherwise. With
            # the loop in its own process, the DDS threads (a command's arrival) and the loop's
            # thread here (the publishing, _run_loop) too: a command's way in and its state's
            # way out never queue behind the machine's other work (bench/bench_latency.py)
            refused = set_realtime_priority(self._threads_priority())
            if not refused and isinstance(self.loop, LoopProcess):
                refused = set_threads_priority(self._threads_priority(), DDS_THREADS)[1]
            if refused:
                self.get_logger().info(f"executor and DDS threads: {refused}")
        self._thread.start()

    def _threads_priority(self) -> int:
        """SCHED_FIFO level of this process's threads in real time: one below the physics when
        it runs in a thread here (a GIL they hold is handed back at once); with the physics in
        its own process two below, and always under the bridge's platform loop
        (PLATFORM_LOOP_PRIORITY, one below the default physics): FIFO threads of one level run
        to completion, and a burst of DDS work here held that loop's deadlines up."""
        if not isinstance(self.loop, LoopProcess):
            return max(1, self.p.realtime_priority - 1)
        return max(1, min(self.p.realtime_priority - 2, PLATFORM_LOOP_PRIORITY - 1))

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        if isinstance(self.loop, LoopProcess):  # not started, or its thread did not end
            self.loop.close()
            if self.loop.stale_steps:
                self.get_logger().info(
                    f"{self.loop.stale_steps} steps reached the node behind newer ones: their "
                    f"raw states were skipped, not published late")

    def destroy_node(self) -> None:
        if isinstance(self.loop, LoopProcess):  # e.g. another node of the process refused
            self.loop.close()
        super().destroy_node()

    # ---- physics thread ------------------------------------------------------------------
    def _after_step(self, k: int, t_ns: int, snapshot: VehicleSnapshot | None = None,
                    stale: bool = False) -> None:
        """After step k: /clock and the states that are due (the loop's thread; ``snapshot``:
        the physics process's, checked finite there; ``stale``: newer steps already wait, so
        the high-rate raw state is skipped, core.loop_process)."""
        self.diagnostics.after_step(t_ns)
        clock, raw, state = step_outputs(self.p, k)
        raw = raw and not stale
        if clock:
            self.pub_clock.publish(Clock(clock=conv.stamp(t_ns)))
        if not (raw or state):
            return
        snapshot = self._snapshot(snapshot)
        self.outputs.publish(snapshot, t_ns, raw, state)
        if self.crash is not None:  # where the ego is, for the agents it can reach (only_near)
            v = snapshot.velocity_mps
            self.crash.ego_motion = (float(snapshot.position_m[0]), float(snapshot.position_m[1]),
                                     math.hypot(v[0], v[1]))

    def _on_damage(self, t_ns: int, impulse_ns: list[float], levels: list[int]) -> None:
        self.crash.publish(t_ns, impulse_ns, levels)

    def _on_contact(self, line: str) -> None:
        self.crash.log_contact(line)

    def _publish_status(self, s: LoopStatus) -> None:
        self.diagnostics.status = s
        if self.loop.priority_problem:
            self.get_logger().warning(self.loop.priority_problem, once=True)
        msg = SimStatus(mode=_MODES[self.p.mode], paused=s.paused, sim_time=s.sim_time_s,
                        real_time_factor_target=self.p.real_time_factor
                        if self.p.mode == "realtime" else 0.0,
                        real_time_factor=s.real_time_factor, steps=s.steps, overruns=s.overruns,
                        lateness_p50=s.lateness_s[0], lateness_p99=s.lateness_s[1],
                        lateness_max=s.lateness_s[2], step_compute_p99=s.compute_p99_s,
                        command_timeout=s.command_timeout, rejected_commands=self.rejected,
                        model=self.p.model)
        msg.header.stamp = conv.stamp(round(s.sim_time_s * 1e9))  # the time its figures are of
        self.pub_status.publish(msg)

    def _run_loop(self, hooks: Hooks) -> None:
        """The physics thread: an error escaping the loop must not leave a node that looks
        alive with a frozen /clock; it ends the process with exit code 1 and the traceback.
        In real time the process hands the GIL over within a fraction of a step
        (core.realtime.shorten_switch_interval): the executor thread cannot hold a due step
        for CPython's default 5 ms."""
        if self.p.mode == "realtime":
            shorten_switch_interval()
            if isinstance(self.loop, LoopProcess) and self.p.realtime_priority > 1:
                set_realtime_priority(self._threads_priority())  # refused: _start_loop says
        try:
            self.loop.run(self._stop, hooks)
        except Exception as exc:
            self.get_logger().fatal(f"physics loop failed at t={self.loop.t_ns * 1e-9:.3f} s: "
                                    f"{type(exc).__name__}: {exc}")
            traceback.print_exc()
            self.failed = True

    def _on_diverged(self, t_ns: int, why: str) -> None:
        """The state would have become NaN/inf: nothing absurd is published, the run ends."""
        self.get_logger().fatal(f"physics stopped at t={t_ns * 1e-9:.3f} s: {why} (vehicle "
                                f"{self.p.vehicle_file}, model {self.p.model})")
        self.diagnostics.publish(t_ns, diverged=why)
        self.failed = True

    def exit_code(self) -> int:
        """1 if the physics diverged, else 0 (nodes.main.run)."""
        return 1 if self.failed else 0

    def _on_stalled(self, t_ns: int, peers: list[str]) -> None:
        self.get_logger().warning(f"lockstep: waiting for {', '.join(peers)} at "
                                  f"t={t_ns * 1e-9:.3f} s", throttle_duration_sec=5.0)
        # in case a peer missed them (e.g. it started late): peers wait for the tick and the
        # state of a frame (the traffic and ego the 100 Hz state, the sensor peers the raw one)
        self.pub_clock.publish(Clock(clock=conv.stamp(t_ns)))
        msg = self._state_msg(t_ns)
        self.outputs.pub_state.publish(msg)
        if self.p.raw_state_decimation:
            self.outputs.pub_raw.publish(msg)

    def _state_msg(self, t_ns: int) -> conv.VehicleState:
        """The model's state now, stamped t_ns (the loop is between steps)."""
        return conv.vehicle_state(self._snapshot(), t_ns, self.p.odom_frame, self.p.base_frame,
                                  self.p.model)

    def _snapshot(self, snapshot: VehicleSnapshot | None = None) -> VehicleSnapshot:
        """``snapshot``, or the model's state now; NonFiniteState (the loop then stops) rather
        than a message with NaN in it."""
        if snapshot is None:
            snapshot = self.model.snapshot()
            snapshot.require_finite()
        return snapshot

    # ---- executor thread -----------------------------------------------------------------
    def _on_control(self, msg: VehicleControl) -> None:
        """Every command source arrives here through the bridge's mux (cmd_vel, Ackermann,
        Autoware: nodes.stack_inputs); none bypasses it."""
        self._accept(validate(msg.steering_angle, msg.throttle, msg.brake, msg.clutch, msg.gear,
                              msg.handbrake, self.limits))
        if self.loop.barrier is not None:  # even a rejected command was this frame's input
            self.loop.barrier.command_received(conv.to_ns(msg.header.stamp))

    def _accept(self, result: Validated) -> None:
        """Apply a checked command (controls.check: every source's one path) or count it."""
        if result.problem:
            self.get_logger().warning(f"vehicle command {result.problem}",
                                      throttle_duration_sec=1.0)
        if result.controls is None:
            self.rejected += 1
            return
        self.loop.set_command(result.controls)

    def _on_initial_pose(self, msg: PoseWithCovarianceStamped) -> None:
        """Place the ego at a stack's initial pose, at rest (as sim/reset does)."""
        pose, problem = initial_pose(msg, self.p.map_frame, self.p.odom_frame)
        if pose is None:
            self.get_logger().warning(f"/initialpose refused: {problem}",
                                      throttle_duration_sec=1.0)
            return
        x_m, y_m, yaw_rad = cg_pose_in_odom(*pose, self.p.odom_in_map, self.base_r_m)
        self.loop.request_reset(x_m, y_m, yaw_rad, 0.0)
        self.get_logger().info(f"ego placed at x {pose[0]:.2f} m, y {pose[1]:.2f} m, yaw "
                               f"{pose[2]:.3f} rad in {'map' if pose[3] else 'odom'} "
                               f"(/initialpose; its CG at {x_m:.2f}, {y_m:.2f} m in odom)")

    def _on_ack(self, msg: LockstepAck) -> None:
        if self.loop.barrier is None:
            return
        refused = self.loop.barrier.ack(msg.node, conv.to_ns(msg.stamp),
                                        conv.to_ns(msg.command_stamp))
        if refused is not None and refused != "unknown peer":  # acks of other runs: ignored
            self.get_logger().warning(f"lockstep ack refused: {refused}",
                                      throttle_duration_sec=1.0)

    def _on_pause(self, request: SetBool.Request, response: SetBool.Response):
        self.loop.pause(request.data)
        response.success, response.message = True, "paused" if request.data else "running"
        return response

    def _on_step(self, request: Trigger.Request, response: Trigger.Response):
        if not self.loop.paused:
            response.success, response.message = False, "step needs the simulation paused"
            return response
        self.loop.request_steps(1)
        response.success, response.message = True, f"stepping from t={self.loop.t_ns} ns"
        return response

    def _on_reset(self, request: Trigger.Request, response: Trigger.Response):
        i = self.p.initial
        self.loop.request_reset(i.x_m, i.y_m, i.yaw_rad, i.speed_mps)
        response.success, response.message = True, "vehicle reset to the initial pose"
        return response


# how a process runs this node (nodes.main; vehicle_sim_compose runs several in one)
ENTRY = NodeEntry(DynamicsNode, "dynamics", done=lambda node: node.failed)


def main(args: list[str] | None = None) -> int:
    return run_nodes([(ENTRY, [])], args)
