"""Accident node: contact detection between the ego and the traffic agents (paper 004 sec. 7.1)
reported as paper 002 collisions (actor, victim, parts, position) on ``accidents``; and the
scenario's schedule of faults and instructor actions sent ahead of their time (fault_schedule).

Thin: parameters come from AccidentParams, the law (which bodies, when, names, faults, scripted
pairs) from core.accident.watch (the lockstep engine's too), the geometry from
core.accident.detect. This file only converts messages.

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

import numpy as np
from rclpy.node import Node

from vehicle_sim.core.accident.detect import PART_NAMES, AccidentDetector
from vehicle_sim.core.accident.params import AccidentParams
from vehicle_sim.core.accident.watch import COLUMNS, AccidentWatch, Event
from vehicle_sim.core.config import load
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


def agent_columns(agents: list[TrafficAgent]) -> dict[str, np.ndarray]:
    """core.accident.watch's agent columns of TrafficAgent messages."""
    rows = [(a.id, a.pose.position.x, a.pose.position.y,
             conv.rpy_from_quaternion(a.pose.orientation)[2], a.speed, a.lateral_speed,
             a.yaw_rate, a.length, a.width, a.fault_id) for a in agents]
    table = np.array(rows, dtype=float).reshape(-1, len(COLUMNS))
    cols = {name: table[:, k] for k, name in enumerate(COLUMNS)}
    # uint32 in the message: exact in float64, so the one walk above gives them too
    cols["id"] = cols["id"].astype(np.int64)
    cols["fault_id"] = cols["fault_id"].astype(np.int64)
    return cols


def event_msg(e: Event, event_id: int, frame: str) -> AccidentEvent:
    """The AccidentEvent of a reported accident (core.accident.watch.Event)."""
    c = e.contact
    msg = AccidentEvent(id=event_id, source=AccidentEvent.SOURCE_SCRIPTED if e.scripted
                        else AccidentEvent.SOURCE_DETECTED, actor=c.actor, victim=c.victim,
                        actor_part=c.actor_part, victim_part=c.victim_part,
                        impact_speed=c.impact_speed_mps, fault_id=e.fault_id)
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
        self.watch = AccidentWatch(self.p, self.ego_size)  # the law (core.accident.watch)
        AccidentDetector.warm_up()  # numba compile before the first sample, not at first contact
        self.agents = AgentSnapshots(
            lambda line: self.get_logger().warning(line, throttle_duration_sec=5.0),
            "the contact checks")
        self.events = 0
        self._columns: tuple[int, list] = (-1, [])  # (agents.version, _current's columns)
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
        t_ns = conv.to_ns(msg.header.stamp)
        self.watch.remember_faults(t_ns, agent_columns(msg.agents))
        if self.p.agents_vs_agents:  # agent pairs at the array's own stamp
            self._report(lambda: self.watch.agents(t_ns, self._current(t_ns)))

    def _on_state(self, msg: VehicleState) -> None:
        t_ns = conv.to_ns(msg.header.stamp)
        yaw = conv.rpy_from_quaternion(msg.pose.orientation)[2]
        ego = (msg.pose.position.x, msg.pose.position.y, yaw, msg.twist.linear.x,
               msg.twist.linear.y, msg.twist.angular.z)
        self._report(lambda: self.watch.ego(t_ns, ego, self._current(t_ns)))

    def _current(self, t_ns: int) -> list[tuple[int, dict[str, np.ndarray]]]:
        """Every shard's current agents (agent_inputs: no ghosts, none timed out) as columns,
        one set per stamp; built again only when the sets changed (every 100 Hz state asks:
        2,000 agents take ~33 ms to build)."""
        current = self.agents.current(t_ns, round(self.p.agent_timeout_s * 1e9))
        if self._columns[0] != self.agents.version:
            by_stamp: dict[int, list] = {}
            for stamp_ns, a in current:
                by_stamp.setdefault(stamp_ns, []).append(a)
            self._columns = (self.agents.version, [(stamp_ns, agent_columns(agents))
                                                   for stamp_ns, agents in by_stamp.items()])
        return self._columns[1]

    def _report(self, detect) -> None:
        try:
            found = detect()
        except ValueError as exc:
            self.get_logger().warning(f"detection skipped: {exc}", throttle_duration_sec=5.0)
            return
        for e in found:
            self.events += 1
            msg = event_msg(e, self.events, self.p.frame_id)
            self.pub.publish(msg)
            self.get_logger().info(
                f"accident {self.events} at t={e.contact.t_ns * 1e-9:.3f} s: {msg.actor} "
                f"({PART_NAMES[msg.actor_part]}) -> {msg.victim} ({PART_NAMES[msg.victim_part]}), "
                f"{msg.impact_speed:.1f} m/s at ({msg.position.x:.1f}, {msg.position.y:.1f})"
                + (f", instructor fault {e.fault_id}" if e.fault_id else ""))


# how a process runs this node (nodes.main; vehicle_sim_compose runs several in one)
ENTRY = NodeEntry(AccidentNode, "accident", warm_up=warm_accident)


def main(args: list[str] | None = None) -> int:
    return run_nodes([(ENTRY, [])], args)


if __name__ == "__main__":  # also runnable as python -m before its console script exists
    import sys

    sys.exit(main())
