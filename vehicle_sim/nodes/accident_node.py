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
from vehicle_sim.core.accident.watch import AccidentWatch, Event
from vehicle_sim.core.config import load
from vehicle_sim.core.vehicle.params import VehicleParams
from vehicle_sim.graph import load_scenario
from vehicle_sim.msg import AccidentEvent, TrafficAgentArray, VehicleState
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.agent_cdr import agents_of, yaws
from vehicle_sim.nodes.agent_inputs import AgentSnapshots
from vehicle_sim.nodes.fault_schedule import SchedulePublisher, check_names
from vehicle_sim.nodes.main import NodeEntry, run_nodes
from vehicle_sim.nodes.params import declare_and_load
from vehicle_sim.paths import config_path
from vehicle_sim.warm import warm_accident


def agent_columns(rows: np.ndarray) -> dict[str, np.ndarray]:
    """core.accident.watch's agent columns of agent rows (agent_cdr.AGENT)."""
    pose = rows["pose"]
    cols = {"id": rows["id"].astype(np.int64), "x": pose[:, 0].copy(), "y": pose[:, 1].copy(),
            "yaw": yaws(rows),
            "speed": rows["speed"].copy(), "lateral_speed": rows["lateral_speed"].copy(),
            "yaw_rate": rows["yaw_rate"].copy(),
            "length": rows["length"].astype(float), "width": rows["width"].astype(float),
            "fault_id": rows["fault_id"].astype(np.int64)}
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
                                 qos.AGENTS_IN, raw=True)  # (agent_cdr: thousands of agents)
        schedule = load_scenario(self.p.scenario).schedule if self.p.scenario else ()
        check_names(schedule, f"scenario {self.p.scenario}")
        self.schedule = SchedulePublisher(self, schedule)
        self.get_logger().info(f"ego box {self.ego_size[0]:.2f} x {self.ego_size[1]:.2f} m "
                               f"({self.p.vehicle_file}), agents vs agents "
                               f"{self.p.agents_vs_agents}")

    def _on_agents(self, data: bytes) -> None:
        agents = agents_of(self, data)
        if agents is None:
            return
        self.agents.update(agents)
        t_ns = agents.stamp_ns
        self.watch.remember_faults(t_ns, agent_columns(agents.rows))
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
        timeout_ns = round(self.p.agent_timeout_s * 1e9)
        self.agents.expire(t_ns, timeout_ns)
        if self._columns[0] != self.agents.version:
            stamps, rows = self.agents.current(t_ns, timeout_ns)
            self._columns = (self.agents.version, [
                (int(stamp_ns), agent_columns(rows[stamps == stamp_ns]))
                for stamp_ns in np.unique(stamps)])
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
