"""The dynamics node's crash side (issue 11): the traffic agents (``traffic/agents``) handed to the
ego's crash physics (core.accident.ego_crash, in the physics loop's thread or process), and its
damage (``accidents/damage``, VehicleDamage, latched: a late joiner gets the current state) and
first contacts (a log line) published from what the physics reports.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from rclpy.node import Node

from vehicle_sim.core.accident import damage as dmg
from vehicle_sim.core.accident.crash_params import crash_classes
from vehicle_sim.core.accident.ego_contacts import AgentArrays
from vehicle_sim.core.accident.ego_crash import EgoCrashSetup
from vehicle_sim.core.box_geometry import bounding_radius
from vehicle_sim.msg import TrafficAgentArray, VehicleDamage
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.agent_cdr import agents_of, yaws
from vehicle_sim.nodes.agent_inputs import AgentSnapshots


def agent_arrays(stamps: np.ndarray, rows: np.ndarray) -> AgentArrays:
    """AgentArrays of AgentSnapshots.current()'s stamps [ns] and rows (map = odom)."""
    pose = rows["pose"]
    return AgentArrays.from_columns(
        rows["id"], stamps, pose[:, 0], pose[:, 1], yaws(rows), rows["speed"],
        rows["lateral_speed"], rows["yaw_rate"], rows["length"], rows["width"],
        crash_classes(rows["kind"]))


class EgoCrashLink:
    """Agents in, damage and contacts out (module docstring). ``now_ns`` is the physics loop's
    simulation time; ``hand_over`` gives the packed agents to the crash physics."""

    def __init__(self, node: Node, map_file: str, setup: EgoCrashSetup, agent_timeout_s: float,
                 now_ns: Callable[[], int], hand_over: Callable[[AgentArrays], None],
                 only_near: bool = False):
        self.node, self.name = node, setup.name
        self._now_ns, self._hand_over = now_ns, hand_over
        self._timeout_ns = round(agent_timeout_s * 1e9)
        self._horizon_s = agent_timeout_s
        self._ego_radius_m = bounding_radius(setup.body.length_m, setup.body.width_m)
        # only the agents near the ego (AgentArrays.near), for the physics process, whose
        # request pipe a large set fills; in the node's thread (fast and lockstep) all: which
        # agents the filter keeps depends on the ego state the loop has reached when the array
        # is handled, i.e. on thread timing, and a seeded run must repeat
        self._only_near = only_near
        # (x [m], y [m], speed [m/s]) of the newest ego state (the loop's thread sets it)
        self.ego_motion: tuple[float, float, float] | None = None
        self._snapshots = AgentSnapshots(
            lambda line: node.get_logger().warning(line, throttle_duration_sec=5.0),
            "the ego's crash contacts")
        self.pub = node.create_publisher(VehicleDamage, "accidents/damage", qos.LATCHED)
        node.create_subscription(TrafficAgentArray, "traffic/agents", self._on_agents,
                                 qos.AGENTS_IN, raw=True)  # (agent_cdr: thousands of agents)
        n = len(dmg.PART_NAMES)
        self.publish(0, [0.0] * n, [0] * n)
        node.get_logger().info(f"crash contacts: {len(setup.statics)} static objects of "
                               f"{map_file} and the traffic agents")

    def _on_agents(self, data: bytes) -> None:
        """The agents of every shard still alive at the loop's time to the physics; with
        ``only_near`` those that can reach the ego before the set is stale
        (AgentArrays.near), none before the first ego state (the next set comes a traffic
        step later)."""
        agents = agents_of(self.node, data)
        if agents is None:
            return
        self._snapshots.update(agents)
        ego = self.ego_motion
        if self._only_near and ego is None:
            return
        arrays = agent_arrays(*self._snapshots.current(self._now_ns(), self._timeout_ns))
        self._hand_over(arrays.near(*ego, self._ego_radius_m, self._horizon_s)
                        if self._only_near else arrays)

    def log_contact(self, line: str) -> None:
        self.node.get_logger().info(line)

    def publish(self, t_ns: int, impulse_ns: list[float], levels: list[int]) -> None:
        msg = VehicleDamage(body=self.name)
        msg.header.stamp, msg.header.frame_id = conv.stamp(t_ns), "map"
        msg.impulse, msg.level = impulse_ns, levels
        self.pub.publish(msg)
