"""Traffic node: urban traffic of paper 004 (core.traffic.TrafficSim) around the ego, on
simulation time, optionally split into shards that hand agents over (paper 003).

Thin: parameters come from TrafficNodeParams (+ a TrafficParams file and a map file), the model
from core.traffic, message conversion from traffic_msgs. This file only wires topics.

Time: with use_sim_time (set for every node of the graph) a ROS timer follows /clock. Step k of
the traffic runs at simulation time t_k = t_0 + k * dt with dt = 1 / rate_hz exactly (never
wall time); t_0 is the first multiple of dt at or after the first /clock time seen (dt for
a fresh dynamics node, whose first tick is 1 ms). Every output of step k is stamped t_k. If sim
time jumps ahead by more than ``max_catch_up_steps`` steps the excess is skipped with a warning;
if it goes back (a new dynamics run) the schedule re-anchors.

Computed ahead (``compute_ahead``, on the timer): once the outputs of step k are out, step k+1
is computed from the inputs in at t_k (the ego, instructor actions, released link faults) and
held until /clock reaches t_k+1, when it goes out at once: the agents of t_k+1 are not late by
the ~20 ms a 5,000-agent step costs (issue 14). The price is one step of reaction: an input
that comes in after t_k acts from step k+2, an instructor action's duration counts from t_k+1
(the start of the first step it acts on), and its fault statuses carry that sim time, up to one
step ahead of /clock; the agents it may name are those of the step held. Lockstep and shards
compute each step at its tick.

Frames: the ego is the latest ``vehicle/state`` (pose in odom; in lockstep the latest stamped at
or before the step). The traffic map frame and odom coincide: a static identity map -> odom is
assumed (the dynamics node starts the ego at its ``initial.*`` pose given in map coordinates).

Lockstep (dynamics ``mode: lockstep`` with this node's name in ``lockstep_peers``): for every
/clock tick t, once the vehicle state stamped t is in (LockstepPeer), the node runs the traffic
steps due up to t, then publishes LockstepAck(node=<own name>, stamp=t, output_stamp=<newest
step>) on /sim/lockstep_ack, so the dynamics may run its next frame; ticks between two traffic
steps are acknowledged at once. Lights go out at every step, so readers can wait for them. No
sim-time timer runs then: the same inputs give the same steps in every run.

Shards (shard_count > 1, paper 003): agents that leave this shard's sectors are handed over to
their new owner, and the agents near the border go to the other shards as ghosts (read-only
obstacles, published here with ghost = true); see shard_link.ShardLink, also for sharded
lockstep, where each frame waits for the other shards' messages (``lockstep_inputs``).

Faults (target = this node's name, ``traffic``; instructor_link.TrafficFaults): the instructor's
actions on one agent (FaultCommand PROVOKE_ACCIDENT ... STOP_IN_LANE, or the service
``traffic/instruct``), and LINK_DROP / LINK_DELAY of its ``vehicle/state`` input (link_faults;
in lockstep the frame still waits for the state's stamp, the ego pose used is the gated one).
Crashed agents (core.traffic.crashed) go out with STATE_CRASHED; they are removed after the
core's ``crash_timeout_s`` or when sim time goes back (a new run / reset). Their per-part
damage (and the scripted vehicles') goes out on ``accidents/traffic_damage`` (traffic_damage).
"""
from __future__ import annotations

import time
from collections import deque
from typing import NamedTuple

import numpy as np
from rclpy.node import Node
from visualization_msgs.msg import MarkerArray

from vehicle_sim.core.accident.traffic_world import TrafficWorld
from vehicle_sim.core.traffic.node_params import TrafficNodeParams
from vehicle_sim.msg import (
    TrafficAgentArray,
    TrafficLightArray,
    VehicleState,
)
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import map_markers, qos
from vehicle_sim.nodes import traffic_msgs as tm
from vehicle_sim.nodes.instructor_link import TrafficFaults
from vehicle_sim.nodes.link_faults import LinkFaults
from vehicle_sim.nodes.lockstep_peer import LockstepPeer
from vehicle_sim.nodes.main import NodeEntry, run_nodes
from vehicle_sim.nodes.params import declare_and_load
from vehicle_sim.nodes.shard_link import ShardLink
from vehicle_sim.nodes.traffic_damage import TrafficDamagePublisher
from vehicle_sim.warm import warm_traffic

TIMING_REPORT_STEPS = 200  # debug log of step / output compute times every this many steps


class _Step(NamedTuple):
    """A computed traffic step, before its outputs go out."""

    t_ns: int  # its sim time (the stamp of every output)
    agents: dict[str, np.ndarray]  # core.traffic agent columns (+ fault ids, scripted)
    agents_msg: bytes  # the TrafficAgentArray as serialized CDR (traffic_msgs.AgentEncoder)
    damage_changed: bool  # the crash world's damage book changed in this step
    core_s: float  # wall time of the core step [s] (debug log)
    encode_s: float  # wall time of the agents' encoding [s]


class TrafficNode(Node):
    def __init__(self, **options) -> None:
        super().__init__("traffic", **options)
        self.p = declare_and_load(self, TrafficNodeParams)
        self.world = TrafficWorld(self.p)  # the core, its crash world and scene
        self.sim, self.sectors = self.world.sim, self.world.sectors
        self.dt_ns = self.p.dt_ns
        self.heartbeat = self.p.heartbeat_steps or self.sim.p.heartbeat_steps
        self.light_xy, self.ped_xy = tm.light_positions(self.sim.network)
        self.encoder = tm.AgentEncoder(self.sim.network.lane_names)
        self.ego: tuple[float, float, float, float] | None = None
        self.ego_t_ns: int | None = None  # the stamp of self.ego [ns]
        # lockstep: the ego states by stamp, so step t uses the state of t even when a newer
        # one came in first (the dynamics runs on to the frame end)
        self._egos: deque[tuple[int, tuple[float, float, float, float]]] = deque(maxlen=1000)
        self.ego_ns = -1  # stamp of the newest vehicle state [ns]
        self.last_ns: int | None = None  # sim time of the last step (schedule anchor)
        self.steps = self.skipped = 0
        self.lights_gate = tm.LightsGate(self.p.lights_rate_hz)  # on change, else at its rate
        self._next_markers_ns = 0
        self._timing = np.zeros((TIMING_REPORT_STEPS, 2))  # wall s: core step, outputs
        self.pub_agents = self.create_publisher(TrafficAgentArray, "traffic/agents",
                                                 qos.LARGE_STREAM)
        self.pub_lights = self.create_publisher(TrafficLightArray, "traffic/lights", qos.LIGHTS)
        self.pub_markers = self.create_publisher(MarkerArray, "traffic/markers", qos.STATE) \
            if self.p.publish_markers else None
        self.ego_size_m = self.sim.ego_size_m  # the ego's box in the markers (ego_vehicle_file)
        if self.p.publish_markers:  # the map once, latched (lanes, static objects, signals)
            self.pub_map = self.create_publisher(MarkerArray, map_markers.TOPIC, qos.LATCHED)
            self.pub_map.publish(map_markers.map_markers_msg(self.sim.network, self.p.frame_id))
        self.create_subscription(VehicleState, self.p.state_topic, self._on_state, qos.STATE)
        self.links = LinkFaults(self.get_name(), (self.p.state_topic,))
        self.faults = TrafficFaults(self, self.sim, self.links, now_ns=self._action_start_ns)
        self.damage_out = TrafficDamagePublisher(self, self.p.frame_id)  # agents' and scripted
        self.damage_out.publish(0, None)
        self.sharded = self.p.shard_count > 1
        self.link = ShardLink(self, self.p, self.sim, self.sectors, self.heartbeat,
                              lambda: self.lockstep.pump()) if self.sharded else None
        self._last_agents = self._last_lights = None  # the newest step's outputs
        self._prev_ns: int | None = None  # the last lockstep frame done
        # on the timer, step k+1 is computed right after step k went out, from the inputs of
        # then, and goes out at its tick: the outputs are not late by the step's compute time
        self.compute_ahead = self.p.compute_ahead and not self.p.lockstep and not self.sharded
        self._held: _Step | None = None  # the step computed ahead, until its tick
        if self.p.lockstep:  # frames on /clock ticks, each once its inputs are in
            self.lockstep = LockstepPeer(self, self._frame_ready, self._frame, self._resend)
        else:
            self.create_timer(self.dt_ns * 1e-9, self._on_timer)
        shard = "all sectors" if not self.sharded else (
            f"shard {self.p.shard_index}/{self.p.shard_count} "
            f"({len(self.sim.owned)} of {self.sectors.nx * self.sectors.ny} sectors)")
        self.get_logger().info(
            f"map {self.p.map_file} ({self.sim.network.n_lanes} lanes, "
            f"{len(self.light_xy)} lights), {shard}, {self.sim.n_agents} agents at start, "
            f"{self.p.rate_hz:g} Hz sim time, lockstep {self.p.lockstep}")

    # ---- inputs ------------------------------------------------------------------------------
    def _on_state(self, msg: VehicleState) -> None:
        t_ns = conv.to_ns(msg.header.stamp)
        self.ego_ns = max(self.ego_ns, t_ns)  # (lockstep: the frame waits for the stamp only)
        for m in self.links.offer(self.p.state_topic, msg, t_ns, self.last_ns or 0):
            self._use_state(m)
        if self.p.lockstep:
            self.lockstep.pump()

    def _use_state(self, msg: VehicleState) -> None:
        """A vehicle state through the link gate: the ego of the next steps."""
        ego = tm.ego_from_state(msg)
        if ego is None:
            self.get_logger().warning("non-finite ego state on "
                                      f"{self.p.state_topic} skipped", throttle_duration_sec=5.0)
        elif self.p.lockstep:
            self._egos.append((conv.to_ns(msg.header.stamp), ego))
        else:
            self.ego, self.ego_t_ns = ego, conv.to_ns(msg.header.stamp)

    def _action_start_ns(self) -> int:
        """Sim time from which an instructor action counts: the start of the first step it can
        act on (the last step out, or the one held when computing ahead)."""
        held = self._held
        return held.t_ns if held is not None else (self.last_ns or 0)

    def _on_timer(self) -> None:
        self.advance(self.get_clock().now().nanoseconds)

    def _frame_ready(self, t_ns: int) -> bool:
        return self.ego_ns >= t_ns and (self.link is None or self.link.ready(self._prev_ns))

    def _frame(self, t_ns: int) -> tuple[int, int]:
        """Lockstep frame t_ns: the other shards' released hand-overs and ghosts, the steps
        due; (the newest step's stamp or 0, no command)."""
        if self.link is not None:
            self.link.frame(self._prev_ns)
        self._prev_ns = t_ns
        self.advance(t_ns)
        return (self.last_ns if self.steps else 0), 0

    def _resend(self) -> None:
        """The newest step's outputs again (lockstep stall, see LockstepPeer)."""
        for pub, out in ((self.pub_agents, self._last_agents),
                         (self.pub_lights, self._last_lights)):
            if out is not None:
                pub.publish(out)
        if self.link is not None:
            self.link.resend()

    # ---- schedule ----------------------------------------------------------------------------
    def advance(self, now_ns: int) -> None:
        """Run every traffic step due at or before ``now_ns`` (sim time); computing ahead, the
        next step is computed once the due ones are out."""
        if self.last_ns is None or now_ns < self.last_ns:
            if self.last_ns is not None:
                self._re_anchor(now_ns)
            # the first step is the first multiple of dt at or after the first time seen
            self.last_ns = -(-now_ns // self.dt_ns) * self.dt_ns - self.dt_ns
        due = (now_ns - self.last_ns) // self.dt_ns
        behind = due
        if due and self._held is not None:  # computed at the step's start: its outputs now
            self.last_ns += self.dt_ns
            self._publish(self._held)
            self._held, due = None, due - 1
        if due > self.p.max_catch_up_steps:
            skip = due - self.p.max_catch_up_steps
            self.get_logger().warning(f"traffic behind sim time by {behind} steps: skipping "
                                      f"{skip}", throttle_duration_sec=5.0)
            self.last_ns += skip * self.dt_ns
            self.skipped += skip
            due = self.p.max_catch_up_steps
        for _ in range(due):
            self.last_ns += self.dt_ns
            self.step(self.last_ns)
        if self.compute_ahead and self._held is None:
            self._held = self._compute(self.last_ns + self.dt_ns, self.last_ns)

    def _re_anchor(self, now_ns: int) -> None:
        """Sim time went back (a new dynamics run): a new schedule, a new crash world."""
        self.get_logger().warning(f"sim time went back to {now_ns * 1e-9:.3f} s: "
                                  "re-anchoring the traffic schedule")
        self._held = None  # (its step stays in the core: the traffic runs on)
        self.lights_gate.next_ns = self._next_markers_ns = 0  # both go out at the first step
        self.world.restart()  # a new run: the crashed agents go, a new crash world and scene
        self.damage_out.publish(now_ns, None)  # a new run: nothing damaged
        # ego states of the run before (lockstep) would block the newer ones
        self._egos = deque((e for e in self._egos if e[0] <= now_ns), maxlen=self._egos.maxlen)

    def step(self, t_ns: int) -> None:
        """One traffic step for sim time t_ns, then every output of that step."""
        self._publish(self._compute(t_ns, t_ns))

    def _compute(self, t_ns: int, inputs_ns: int) -> _Step:
        """Step the core to sim time t_ns from the inputs in at ``inputs_ns`` (t_ns, or the
        step's start when computed ahead) and encode its agents."""
        if self.link is not None:
            self.link.before_step(t_ns)
        self.faults.expire(t_ns)
        for m in self.links.release(self.p.state_topic, inputs_ns):
            self._use_state(m)
        if self.p.lockstep:
            self._ego_at(t_ns)
        start = time.perf_counter()  # wall time only measures compute (debug log)
        damaged = self.world.step(t_ns, self.dt_ns * 1e-9, self.ego, self.ego_t_ns)
        core = time.perf_counter()
        self.steps += 1
        if self.link is not None:
            self.link.after_step(t_ns, self.steps)
        a = self.sim.agents(include_ghosts=True)
        a["fault_id"] = self.faults.fault_ids(a["uid"])
        a = self.world.with_scene(a)  # scripted vehicles are published with the agents
        owner = (self.link.owners(a) if self.link is not None
                 else np.full(len(a["uid"]), self.p.shard_index))
        # CDR bytes straight from the arrays (traffic_msgs.AgentEncoder, equal to agents_msg)
        msg = self.encoder.encode(a, owner, t_ns, self.p.frame_id, self.get_name())
        return _Step(t_ns, a, msg, damaged, core - start, time.perf_counter() - core)

    def _publish(self, s: _Step) -> None:
        """Every output of a computed step. The core holds that step's state until the next
        _compute, so lights, damage and markers read it live."""
        start = time.perf_counter()
        self._last_agents = s.agents_msg
        self.pub_agents.publish(s.agents_msg)
        if s.damage_changed:
            self.damage_out.publish(s.t_ns, self.world)
        self._publish_lights(s.t_ns)
        if self.pub_markers is not None and s.t_ns >= self._next_markers_ns:
            self._next_markers_ns = s.t_ns + round(1e9 / self.p.markers_rate_hz)
            self.pub_markers.publish(tm.markers_msg(
                s.agents, self.light_xy, self.sim.light_states()[1], s.t_ns, self.p.frame_id,
                lifetime_s=2.0 / self.p.markers_rate_hz,
                ego_box=None if self.ego is None else (*self.ego[:3], *self.ego_size_m)))
        self._report_timing(s.core_s, s.encode_s + time.perf_counter() - start,
                            len(s.agents["uid"]))

    def _ego_at(self, t_ns: int) -> None:
        """Lockstep: ``self.ego`` = the newest ego state stamped at or before ``t_ns``."""
        while self._egos and self._egos[0][0] <= t_ns:
            self.ego_t_ns, self.ego = self._egos.popleft()

    def _report_timing(self, core_s: float, out_s: float, n: int) -> None:
        self._timing[self.steps % TIMING_REPORT_STEPS] = core_s, out_s
        if self.steps % TIMING_REPORT_STEPS == 0:
            p50, p99 = np.percentile(self._timing, [50, 99], axis=0) * 1e3
            self.get_logger().debug(
                f"{n} agents: core step p50 {p50[0]:.2f} p99 {p99[0]:.2f} ms, outputs "
                f"(convert + publish) p50 {p50[1]:.2f} p99 {p99[1]:.2f} ms "
                f"(budget {self.dt_ns * 1e-6:.0f} ms); {self.skipped} steps skipped so far")

    def _publish_lights(self, t_ns: int) -> None:
        names, states = self.sim.light_states()
        ped_names, ped = self.sim.pedestrian_states()
        # (in lockstep every step's lights go out: readers wait for them)
        if not self.lights_gate.due(t_ns, states, ped, every=self.p.lockstep):
            return
        self._last_lights = tm.lights_msg(names, states, self.light_xy, ped_names, ped,
                                          self.ped_xy, t_ns, self.p.frame_id, self.get_name())
        self.pub_lights.publish(self._last_lights)


# how a process runs this node (nodes.main; vehicle_sim_compose runs several in one)
ENTRY = NodeEntry(TrafficNode, "traffic", warm_up=warm_traffic)


def main(args: list[str] | None = None) -> int:
    return run_nodes([(ENTRY, [])], args)
