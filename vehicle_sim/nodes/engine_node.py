"""Engine node: a scenario's cores in ONE process (core.engine.urban), stepped in a fixed order as
fast as the machine goes, with ROS only at the edges (issue 14: lockstep batch runs far faster
than real time; the node graph spends a lockstep frame in per-message Python across eight
processes). ``vehicle_sim_run --engine true`` (or ``ros2 launch ... engine:=true``) starts it in
place of the scenario's nodes; their parameters come from the same declaration
(vehicle_sim.engine_setup), so the same cores run with the same parameters and seed.

Edges (the topics and QoS of the nodes they stand for; a message is built only while some
reader is matched or its topic is recorded, so an edge nobody reads costs nothing):
``/clock``, ``vehicle/state``, ``vehicle/state_raw``, ``odom`` (base_link at ``base_link``)
and ``/tf``, ``imu/data`` (these as CDR bytes packed from the core's values, state_cdr),
``gnss/fix``, ``gnss/velocity``, ``traffic/agents`` (CDR from the arrays), ``traffic/lights``,
``autonomy/control`` (the autopilot's commands), ``accidents`` (AccidentEvent, the accident
node's law: core.accident.watch), ``/tf_static`` (the sensor mounts and map -> odom,
latched). The engine waits for no reader (``wait_for_nodes`` holds only its start): the writers
keep the nodes' keep-last histories, so a reader that falls behind by more than one history
misses messages; a stack that must see every one runs the node graph in lockstep (a recording
must not: ``record``, below).
Ego contacts go to the log; the ego's damage and the run summary go to the summary (printed at
the end and written to ``record_dir`` as the sim_monitor does). With ``record`` the engine
records its own edges in-process (nodes.edge_recording): every message of a topic the
scenario's recorder node would record goes to an MCAP file in ``record_dir`` as it leaves, read
or not, so the recording is never thinned. Not run (refused with exit 2 where the run would
differ, see engine_setup): fault schedules, shards (a fault command is answered REJECTED,
nodes.fault_desk); left out with one log line each: the bridge
(no rig, no stack: the autopilot drives), the ground-truth node, the monitor (its summary is
written here), the recorder (the engine records).

Time: sim time only, from the engine's steps (no wall clock in the loop), so a seed repeats a
run byte for byte; the run ends at ``duration`` (the summary covers [0, duration]).
"""
from __future__ import annotations

import os
import threading
import time
import traceback

import numpy as np
from geometry_msgs.msg import TwistWithCovarianceStamped
from rclpy.node import Node
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, NavSatFix

from vehicle_sim import graph
from vehicle_sim.core.accident.watch import Event
from vehicle_sim.core.ego.autopilot import Command
from vehicle_sim.core.engine.params import EngineNodeParams
from vehicle_sim.core.engine.urban import UrbanEngine
from vehicle_sim.core.frames import vehicle_reference_m
from vehicle_sim.core.run_summary import write_summary
from vehicle_sim.core.sensors.gnss import GnssFix
from vehicle_sim.core.sensors.imu import ImuSample
from vehicle_sim.core.vehicle.interface import VehicleSnapshot
from vehicle_sim.engine_setup import engine_params, left_out, recorder_params
from vehicle_sim.msg import (
    AccidentEvent,
    TrafficAgentArray,
    TrafficLightArray,
    VehicleControl,
)
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos, state_cdr
from vehicle_sim.nodes import traffic_msgs as tm
from vehicle_sim.nodes.accident_node import event_msg
from vehicle_sim.nodes.edge_recording import Edge, EdgeRecording
from vehicle_sim.nodes.fault_desk import FaultDesk
from vehicle_sim.nodes.gps_node import gnss_velocity, navsatfix
from vehicle_sim.nodes.graph_start import GraphStart
from vehicle_sim.nodes.main import NodeEntry, run_nodes
from vehicle_sim.nodes.params import declare_and_load
from vehicle_sim.nodes.sensor_common import sensor_mount_tf
from vehicle_sim.nodes.tf_publisher import StateOutputs
from vehicle_sim.progress import PROGRESS_ENV, PROGRESS_MARK
from vehicle_sim.scenario_check import check_one_world
from vehicle_sim.warm import warm_accident, warm_ego, warm_traffic, warm_vehicles

PROGRESS_PERIOD_S = 1.0  # [s] wall time between progress lines (as the sim_monitor's)
STOP_TIMEOUT_S = 5.0  # [s] wall time for the frame under way to end at a stop


class EngineNode(Node):
    def __init__(self, **options) -> None:
        super().__init__("engine", **options)
        self.p = declare_and_load(self, EngineNodeParams)
        # it owns /clock and runs on its own steps: no reader of the clock it publishes
        self.set_parameters([Parameter("use_sim_time", value=False)])
        scenario = graph.load_scenario(self.p.scenario)
        args = graph.resolve_args({"scenario": self.p.scenario, "seed": str(self.p.seed),
                                   "mode": "lockstep", "engine": "true",
                                   "base_link": self.p.base_link,
                                   "record": str(self.p.record).lower(),
                                   "record_dir": self.p.record_dir,
                                   "vehicle_file": self.p.vehicle_file})
        check_one_world(scenario, args)  # as the runner and the launch file, when started alone
        self.ep = engine_params(scenario, args)  # ConfigError: the node refuses to start
        for line in left_out(scenario, args):
            self.get_logger().info(f"not in the engine: {line}")
        recorder = recorder_params(scenario, args)
        if self.p.record and recorder is None:
            self.get_logger().warning("record true, but the scenario declares no recorder "
                                      "node: nothing is recorded")
        rec = self.recording = EdgeRecording(self, recorder) if recorder is not None else None
        d = self.ep.dynamics
        self.frame_id, self.base_frame, self.model_name = d.odom_frame, d.base_frame, d.model
        self.clock_out = Edge(self.create_publisher(Clock, "/clock", qos.clock(lockstep=True)),
                              rec)  # its frames are lockstep (or faster): every tick
        self.imu_out = Edge(self._sensor_publisher(Imu, self.ep.imu.imu_topic), rec)
        self.fix_out = Edge(self._sensor_publisher(NavSatFix, self.ep.gps.fix_topic), rec)
        self.vel_out = (Edge(self._sensor_publisher(TwistWithCovarianceStamped,
                                                    self.ep.gps.velocity_topic), rec)
                        if self.ep.gps.velocity_topic else None)
        self.agents_out = Edge(self.create_publisher(TrafficAgentArray, "traffic/agents",
                                                     qos.LARGE_STREAM), rec)
        self.lights_out = Edge(self.create_publisher(TrafficLightArray, "traffic/lights",
                                                     qos.LIGHTS), rec)
        self.command_out = Edge(self.create_publisher(VehicleControl, "autonomy/control",
                                                      qos.COMMAND), rec)
        # events are latched (transient local): every one is sent, read or not
        self.accidents_out = Edge(self.create_publisher(AccidentEvent, "accidents", qos.EVENT),
                                  rec, latched=True)
        self.engine = UrbanEngine(self.ep, self)
        # no fault targets in the engine: every fault command is answered REJECTED at once
        self.fault_desk = FaultDesk(self, lambda: self.engine.t_ns, grace_s=0.0,
                                    none="none: the lockstep engine takes no faults, the node "
                                    "graph does (engine false)", recording=rec)
        # the sensor frames, as the sensor nodes give them (stamped at sim time 0)
        imu, gnss = self.engine.imu.params, self.engine.gnss.params
        self._mounts = [sensor_mount_tf(self, self.ep.imu, imu.lever_arm_m, imu.mounting_rpy_rad,
                                        conv.stamp(0), rec),
                        sensor_mount_tf(self, self.ep.gps, gnss.antenna_lever_arm_m,
                                        (0.0, 0.0, 0.0), conv.stamp(0), rec)]
        # the dynamics node's outputs (raw state reliable, as in its batch modes)
        self.outputs = StateOutputs(self, d, vehicle_reference_m(
            self.p.base_link, self.engine.vehicle, d.model), qos.RELIABLE_STREAM, rec)
        if rec is not None:  # every edge is added: the channels offer all their publishers' QoS
            rec.start()
            self.get_logger().info(f"recording to {rec.file.path}")  # (the runner reports it)
        network = self.engine.world.sim.network
        self.encoder = tm.AgentEncoder(network.lane_names)
        self.imu_encoder = state_cdr.ImuEncoder(self.ep.imu.frame_id)
        self.light_xy, self.ped_xy = tm.light_positions(network)
        # as the traffic node's: at a change, else at lights_rate_hz (no lockstep reader waits)
        self.lights_gate = tm.LightsGate(self.ep.traffic.lights_rate_hz)
        self.ego_damage: dict[str, list] | None = None  # the ego's latest damage report
        self.failed = self.finished = self._started = False
        self._wall0 = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="engine", daemon=True)
        self.get_logger().info(f"engine: scenario {self.p.scenario}, seed {self.p.seed}, "
                               f"duration {self.p.duration:g} s, frames of "
                               f"{d.lockstep_frame_steps} steps at {d.physics_rate_hz:g} Hz")

    def _sensor_publisher(self, msg_type: type, topic: str):
        """As the sensor nodes' (SensorNode.sensor_publisher): qos.SENSOR, overridable."""
        return self.create_publisher(msg_type, topic, qos.SENSOR,
                                     qos_overriding_options=qos.overridable())

    # ---- the run -------------------------------------------------------------------------
    def start(self) -> None:
        """The frames start once the nodes of ``wait_for_nodes`` are up, their /clock readers
        known and they are matched as readers of the engine's topics (GraphStart; at most its
        CLOCK_MATCH_WAIT_S)."""
        d = self.ep.dynamics
        self._graph_start = GraphStart(self, self.p.wait_for_nodes, d.start_timeout_s,
                                       d.start_settle_s, self._start_frames, match_clock=True,
                                       clockless=self.p.clockless_nodes)

    def _start_frames(self) -> None:
        self._wall0 = self._progress_wall = time.monotonic()
        self._started = True
        self._thread.start()

    def _run(self) -> None:
        """Frames until ``duration`` (or a stop), then the summary is due."""
        end_ns = round(self.p.duration * 1e9)
        frame_ns = self.ep.dynamics.lockstep_frame_steps * self.ep.dynamics.dt_ns
        try:
            while not self._stop.is_set() and (not end_ns or self.engine.t_ns < end_ns):
                if end_ns and self.engine.t_ns + frame_ns > end_ns:
                    self.engine.step()  # the last steps up to the duration exactly
                else:
                    self.engine.frame()
                self._progress()
        except Exception as exc:  # a diverged model, a core error: the run failed (exit 1)
            self.get_logger().fatal(f"engine failed at t={self.engine.t_ns * 1e-9:.3f} s: "
                                    f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
            self.failed = True
        self.finished = True

    def _progress(self) -> None:
        if os.environ.get(PROGRESS_ENV) != "1":
            return
        now = time.monotonic()
        if now - self._progress_wall >= PROGRESS_PERIOD_S:
            self._progress_wall = now
            s = self.engine.summary
            rtf = s.sim_time_s / max(now - self._wall0, 1e-9)
            print(f"{PROGRESS_MARK} {s.sim_time_s:.3f} {self.p.duration:.3f} {rtf:.3f} "
                  f"{s.traffic_agents_max} {s.accidents}", flush=True)

    def stop(self) -> None:
        """The summary, printed (and written to record_dir) before the ROS clean-up."""
        self._stop.set()
        if self._started:
            self._thread.join(timeout=STOP_TIMEOUT_S)
        running = self._thread.is_alive()  # a frame that never ends: its world stays open
        s = self.engine.summary
        s.physics_steps = self.engine.loop.k
        s.wall_time_s = time.monotonic() - self._wall0
        s.real_time_factor = s.sim_time_s / s.wall_time_s if s.wall_time_s > 0 else 0.0
        done = self.p.duration > 0 and self.engine.t_ns >= round(self.p.duration * 1e9)
        s.notes.append(f"reached duration {self.p.duration:g} s of simulated time" if done
                       else "failed" if self.failed else "interrupted")
        s.notes.append("lockstep engine: the scenario's cores in one process")
        try:
            print(write_summary(s, self.p.record_dir, self.engine.accident_details,
                                self.engine.damage_book(self.ego_damage)), flush=True)
        finally:  # a summary that cannot be written keeps the recording whole
            if self.recording is not None:  # a frame still running writes no more to it
                self.get_logger().info(self.recording.finish())
        if not running:
            self.engine.close()

    def exit_code(self) -> int:
        return 1 if self.failed else 0

    # ---- edges (core.engine.urban.Edges): each message built only when read or recorded ---
    # (t_ns: the sim time it leaves at; a GNSS fix leaves at its release, the engine's time)
    def clock(self, t_ns: int) -> None:
        if self.clock_out.wanted():
            self.clock_out.send(t_ns, state_cdr.clock(t_ns))

    def vehicle(self, t_ns: int, snap: VehicleSnapshot, raw: bool, state: bool) -> None:
        self.outputs.publish(snap, t_ns, raw, state)

    def imu(self, t_ns: int, sample: ImuSample) -> None:
        if self.imu_out.wanted():
            self.imu_out.send(t_ns, self.imu_encoder.encode(sample, t_ns))

    def fix(self, fix: GnssFix) -> None:
        t_ns = self.engine.t_ns
        if self.fix_out.wanted():
            self.fix_out.send(t_ns, navsatfix(fix, self.ep.gps.frame_id))
        if (self.vel_out is not None and fix.velocity_enu_mps is not None
                and self.vel_out.wanted()):
            self.vel_out.send(t_ns, gnss_velocity(fix, self.ep.gps.frame_id))

    def traffic(self, t_ns: int, agents: dict[str, np.ndarray],
                lights: tuple[list[str], np.ndarray]) -> None:
        frame, source = self.ep.traffic.frame_id, "traffic"
        if self.agents_out.wanted():
            owner = np.full(len(agents["uid"]), self.ep.traffic.shard_index)
            self.agents_out.send(t_ns, self.encoder.encode(agents, owner, t_ns, frame, source))
        ped_names, ped = self.engine.world.sim.pedestrian_states()
        if self.lights_out.wanted() and self.lights_gate.due(t_ns, lights[1], ped):
            self.lights_out.send(t_ns, tm.lights_msg(lights[0], lights[1], self.light_xy,
                                                     ped_names, ped, self.ped_xy, t_ns, frame,
                                                     source))

    def command(self, t_ns: int, cmd: Command) -> None:
        if self.command_out.wanted():
            out = VehicleControl(steering_angle=cmd.steer_rad, throttle=cmd.throttle,
                                 brake=cmd.brake, gear=cmd.gear)
            out.header.stamp = conv.stamp(t_ns)
            self.command_out.send(t_ns, out)

    def accident(self, event: Event) -> None:
        msg = event_msg(event, self.engine.summary.accidents, self.ep.accident.frame_id)
        self.accidents_out.send(self.engine.t_ns, msg)
        self.get_logger().info(
            f"accident {msg.id} at t={event.contact.t_ns * 1e-9:.3f} s: {msg.actor} -> "
            f"{msg.victim}, {msg.impact_speed:.1f} m/s")

    def damage(self, t_ns: int, impulse_ns: list[float], levels: list[int]) -> None:
        self.ego_damage = {"impulse_ns": [float(v) for v in impulse_ns],
                           "level": [int(v) for v in levels]}

    def log(self, line: str) -> None:
        self.get_logger().info(line)


def _warm() -> None:
    warm_vehicles()
    warm_traffic()
    warm_ego()
    warm_accident()


# how a process runs this node (nodes.main)
ENTRY = NodeEntry(EngineNode, "engine", done=lambda node: node.finished, warm_up=_warm)


def main(args: list[str] | None = None) -> int:
    return run_nodes([(ENTRY, [])], args)
