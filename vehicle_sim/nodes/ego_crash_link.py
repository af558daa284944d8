"""The dynamics node's crash side (issue 11): the traffic agents (``traffic/agents``) handed to the
ego's crash physics (core.accident.ego_crash, in the physics loop's thread or process), and its
damage (``accidents/damage``, VehicleDamage, latched: a late joiner gets the current state) and
first contacts (a log line) published from what the physics reports.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from rclpy.node import Node

from vehicle_sim.core.accident import damage as dmg
from vehicle_sim.core.accident.crash_params import KIND_CRASH_CLASS, crash_class_index
from vehicle_sim.core.accident.ego_contacts import AgentArrays, EgoBody
from vehicle_sim.core.accident.ego_crash import EgoCrashSetup
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.msg import TrafficAgentArray, VehicleDamage
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.agent_inputs import AgentSnapshots
from vehicle_sim.paths import config_path

_KIND_CLASS = [crash_class_index(c) for c in KIND_CRASH_CLASS]


def agent_arrays(current: list) -> AgentArrays:
    """AgentArrays of AgentSnapshots.current()'s (stamp, TrafficAgent) list (map = odom)."""
    n = len(current)
    out = AgentArrays(np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros((n, 3)),
                      np.zeros((n, 3)), np.zeros((n, 2)), np.zeros(n, np.int64))
    for i, (stamp_ns, a) in enumerate(current):
        yaw = conv.rpy_from_quaternion(a.pose.orientation)[2]
        out.ids[i], out.stamp_ns[i] = a.id, stamp_ns
        out.pose[i] = (a.pose.position.x, a.pose.position.y, yaw)
        c, s = math.cos(yaw), math.sin(yaw)  # body-frame speed and lateral_speed (sliding)
        out.vel[i] = (c * a.speed - s * a.lateral_speed, s * a.speed + c * a.lateral_speed,
                      a.yaw_rate)
        out.size[i] = (a.length, a.width)
        out.crash_class[i] = _KIND_CLASS[a.kind] if a.kind < len(_KIND_CLASS) else 0
    ok = np.isfinite(out.pose).all(axis=1) & np.isfinite(out.vel).all(axis=1) & \
        (out.size > 0).all(axis=1)
    if not ok.all():
        out = AgentArrays(out.ids[ok], out.stamp_ns[ok], out.pose[ok], out.vel[ok],
                          out.size[ok], out.crash_class[ok])
    return out


def crash_setup(map_file: str, vehicle, dt_s: float) -> EgoCrashSetup:
    """The ego's crash physics for ``map_file``'s static objects (a missing or bad map refuses
    the node's start)."""
    return EgoCrashSetup(tuple(load_map(config_path(map_file)).static_objects),
                         EgoBody.from_vehicle(vehicle), dt_s)


class EgoCrashLink:
    """Agents in, damage and contacts out (module docstring). ``now_ns`` is the physics loop's
    simulation time; ``hand_over`` gives the packed agents to the crash physics."""

    def __init__(self, node: Node, map_file: str, setup: EgoCrashSetup, agent_timeout_s: float,
                 now_ns: Callable[[], int], hand_over: Callable[[AgentArrays], None]):
        self.node, self.name = node, setup.name
        self._now_ns, self._hand_over = now_ns, hand_over
        self._timeout_ns = round(agent_timeout_s * 1e9)
        self._snapshots = AgentSnapshots()
        self.pub = node.create_publisher(VehicleDamage, "accidents/damage", qos.LATCHED)
        node.create_subscription(TrafficAgentArray, "traffic/agents", self._on_agents,
                                 qos.AGENTS_IN)
        n = len(dmg.PART_NAMES)
        self.publish(0, [0.0] * n, [0] * n)
        node.get_logger().info(f"crash contacts: {len(setup.statics)} static objects of "
                               f"{map_file} and the traffic agents")

    def _on_agents(self, msg: TrafficAgentArray) -> None:
        """The agents of every shard still alive at the loop's time, to the physics."""
        self._snapshots.update(msg)
        self._hand_over(agent_arrays(self._snapshots.current(self._now_ns(), self._timeout_ns)))

    def log_contact(self, line: str) -> None:
        self.node.get_logger().info(line)

    def publish(self, t_ns: int, impulse_ns: list[float], levels: list[int]) -> None:
        msg = VehicleDamage(body=self.name)
        msg.header.stamp, msg.header.frame_id = conv.stamp(t_ns), "map"
        msg.impulse, msg.level = impulse_ns, levels
        self.pub.publish(msg)
