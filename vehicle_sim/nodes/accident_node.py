"""Accident node: contact detection between the ego and the traffic agents (paper 004 sec. 7.1)
reported as paper 002 collisions (actor, victim, parts, position) on ``accidents``; and the
scenario's schedule of faults and instructor actions sent ahead of their time (fault_schedule).

Thin: parameters come from AccidentParams, the geometry from core.accident.detect. This file only
converts messages.

Time: ego contacts are checked on every ``vehicle/state`` sample, at its stamp (simulation
time), against the latest agents (every shard's latest ``traffic/agents`` set, see agent_inputs)
moved at constant speed and heading to that stamp (at most ``max_extrapolation_s``: the traffic
runs at a lower rate and may lag). Contacts between two agents are checked on every agent array
at its own stamp, without extrapolation (a constant-speed guess would invent rear-end contacts in
braking queues). An event's stamp is the simulation time of the sample at which the boxes first
overlapped.

Frames: the ego pose is in odom, the agents in map; a static identity map -> odom is assumed, as
by the traffic node.
"""
from __future__ import annotations

import math
from dataclasses import replace

from rclpy.node import Node

from vehicle_sim.core.accident.detect import (
    PART_NAMES,
    PART_UNKNOWN,
    AccidentDetector,
    Body,
    Contact,
    static_body,
)
from vehicle_sim.core.accident.params import AccidentParams
from vehicle_sim.core.accident.scene import planned_pairs, scripted_names
from vehicle_sim.core.accident.template import load_template
from vehicle_sim.core.config import load
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.vehicle.params import VehicleParams
from vehicle_sim.graph import load_scenario
from vehicle_sim.msg import AccidentEvent, TrafficAgent, TrafficAgentArray, VehicleState
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.agent_inputs import AgentSnapshots
from vehicle_sim.nodes.fault_schedule import SchedulePublisher, check_names
from vehicle_sim.nodes.main import NodeEntry, run_nodes
from vehicle_sim.nodes.params import declare_and_load
from vehicle_sim.paths import config_path
from vehicle_sim.warm import warm_accident

STATIC = "static/"
MAX_FAULTED_AGENTS = 10_000  # agents whose instructor fault id is remembered


def agent_name(agent_id: int) -> str:
    return f"agent/{agent_id}"


def ego_body(msg: VehicleState, name: str, length_m: float, width_m: float) -> Body:
    """Ego box at the CG; base_link velocity rotated into the map frame."""
    yaw = conv.rpy_from_quaternion(msg.pose.orientation)[2]
    c, s = math.cos(yaw), math.sin(yaw)
    u, v = msg.twist.linear.x, msg.twist.linear.y
    return Body(name, msg.pose.position.x, msg.pose.position.y, yaw, length_m, width_m,
                c * u - s * v, s * u + c * v, msg.twist.angular.z)


def agent_body(a: TrafficAgent, dt_s: float, name: str) -> Body:
    """Agent box moved dt_s at its body-frame velocity (speed, lateral_speed: a crashed agent
    slides) and yaw rate, both held constant."""
    yaw = conv.rpy_from_quaternion(a.pose.orientation)[2]

    def velocity(h: float) -> tuple[float, float]:
        c, s = math.cos(h), math.sin(h)
        return c * a.speed - s * a.lateral_speed, s * a.speed + c * a.lateral_speed
    vx, vy = velocity(yaw + 0.5 * a.yaw_rate * dt_s)
    x, y = a.pose.position.x + vx * dt_s, a.pose.position.y + vy * dt_s
    yaw += a.yaw_rate * dt_s
    return Body(name, x, y, yaw, float(a.length), float(a.width), *velocity(yaw), a.yaw_rate)


def event_msg(c: Contact, event_id: int, frame: str, fault_id: int = 0,
              scripted: bool = False) -> AccidentEvent:
    """The event of contact ``c``; a static object is never the actor and has no part
    (PART_UNKNOWN)."""
    if c.actor.startswith(STATIC):  # the vehicle may spin away at the contact point
        c = replace(c, actor=c.victim, victim=c.actor, actor_part=c.victim_part,
                    victim_part=c.actor_part, relative_velocity_mps=tuple(
                        -v for v in c.relative_velocity_mps))
    parts = [PART_UNKNOWN if name.startswith(STATIC) else part
             for name, part in ((c.actor, c.actor_part), (c.victim, c.victim_part))]
    msg = AccidentEvent(id=event_id, source=AccidentEvent.SOURCE_SCRIPTED if scripted
                        else AccidentEvent.SOURCE_DETECTED, actor=c.actor, victim=c.victim,
                        actor_part=parts[0], victim_part=parts[1],
                        impact_speed=c.impact_speed_mps, fault_id=fault_id)
    msg.header.stamp, msg.header.frame_id = conv.stamp(c.t_ns), frame
    msg.relative_velocity.x, msg.relative_velocity.y = c.relative_velocity_mps
    msg.position.x, msg.position.y = c.position_m
    return msg


class AccidentNode(Node):
    def __init__(self, **options) -> None:
        super().__init__("accident", **options)
        self.p = declare_and_load(self, AccidentParams)
        chassis = load(VehicleParams, config_path(self.p.vehicle_file)).chassis
        self.ego_size = (chassis.length_m, chassis.width_m)
        # ego contacts on every state sample; agent-agent contacts on every agent array (two
        # streams of stamps, so two episode books)
        self.with_ego = AccidentDetector(self.p.release_s, self.p.part_margin_m)
        self.between_agents = AccidentDetector(self.p.release_s, self.p.part_margin_m)
        AccidentDetector.warm_up()  # numba compile before the first sample, not at first contact
        self.agents = AgentSnapshots()
        self.events = 0
        self.fault_of: dict[str, int] = {}  # agent name -> last instructor fault id on it
        self._last_ns: dict[int, int] = {}  # detector -> its last sample time
        self.statics = ([static_body(o) for o in load_map(config_path(self.p.map_file))
                         .static_objects] if self.p.map_file else [])
        template = (load_template(config_path(self.p.accident_template))
                    if self.p.accident_template else None)
        self.names = scripted_names(template) if template else {}
        self.planned = planned_pairs(template) if template else set()
        self.pub = self.create_publisher(AccidentEvent, "accidents", qos.EVENT)
        self.create_subscription(VehicleState, "vehicle/state", self._on_state, qos.STATE)
        self.create_subscription(TrafficAgentArray, "traffic/agents", self._on_agents,
                                 qos.AGENTS_IN)
        schedule = load_scenario(self.p.scenario).schedule if self.p.scenario else ()
        check_names(schedule, f"scenario {self.p.scenario}")
        self.schedule = SchedulePublisher(self, schedule)
        self.get_logger().info(f"ego box {self.ego_size[0]:.2f} x {self.ego_size[1]:.2f} m "
                               f"({self.p.vehicle_file}), agents vs agents "
                               f"{self.p.agents_vs_agents}")

    def _on_agents(self, msg: TrafficAgentArray) -> None:
        self.agents.update(msg)
        for a in msg.agents:  # the instructor's fault on an agent, kept after it ended
            if a.fault_id:
                if len(self.fault_of) >= MAX_FAULTED_AGENTS:  # bounded: forget the oldest
                    self.fault_of.pop(next(iter(self.fault_of)))
                self.fault_of[agent_name(a.id)] = a.fault_id
        if self.p.agents_vs_agents:  # agent pairs at the array's own stamp, not extrapolated
            t_ns = conv.to_ns(msg.header.stamp)
            self._detect(self.between_agents, t_ns, self._agent_bodies(t_ns), None)

    def _on_state(self, msg: VehicleState) -> None:
        t_ns = conv.to_ns(msg.header.stamp)
        bodies = [ego_body(msg, self.p.ego_name, *self.ego_size), *self._agent_bodies(t_ns)]
        self._detect(self.with_ego, t_ns, bodies, self.p.ego_name)

    def _agent_bodies(self, t_ns: int) -> list[Body]:
        """Every current agent moved to t_ns (at most max_extrapolation_s)."""
        out = []
        for stamp_ns, a in self.agents.current(t_ns, round(self.p.agent_timeout_s * 1e9)):
            dt = min(max((t_ns - stamp_ns) * 1e-9, 0.0), self.p.max_extrapolation_s)
            out.append(agent_body(a, dt, self.names.get(a.id) or agent_name(a.id)))
        return out

    def _detect(self, detector: AccidentDetector, t_ns: int, bodies: list[Body],
                only_with: str | None) -> None:
        try:
            if t_ns < self._last_ns.get(id(detector), -1):  # a new run: episodes start over
                detector.reset()
            self._last_ns[id(detector)] = t_ns
            found = detector.update(t_ns, bodies, only_with, self.statics)
        except ValueError as exc:
            self.get_logger().warning(f"detection skipped: {exc}", throttle_duration_sec=5.0)
            return
        for c in found:
            self.events += 1
            fault = self.fault_of.get(c.actor) or self.fault_of.get(c.victim, 0)
            scripted = frozenset((c.actor, c.victim)) in self.planned
            msg = event_msg(c, self.events, self.p.frame_id, fault, scripted)
            self.pub.publish(msg)
            self.get_logger().info(
                f"accident {self.events} at t={c.t_ns * 1e-9:.3f} s: {msg.actor} "
                f"({PART_NAMES[msg.actor_part]}) -> {msg.victim} ({PART_NAMES[msg.victim_part]}), "
                f"{msg.impact_speed:.1f} m/s at ({msg.position.x:.1f}, {msg.position.y:.1f})"
                + (f", instructor fault {fault}" if fault else ""))


# how a process runs this node (nodes.main; vehicle_sim_compose runs several in one)
ENTRY = NodeEntry(AccidentNode, "accident", warm_up=warm_accident)


def main(args: list[str] | None = None) -> int:
    return run_nodes([(ENTRY, [])], args)


if __name__ == "__main__":  # also runnable as python -m before its console script exists
    import sys

    sys.exit(main())
