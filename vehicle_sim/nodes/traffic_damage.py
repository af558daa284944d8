"""The traffic node's damage output (issue 11): the per-part damage of its crashed agents and
scripted vehicles (core.accident.fleet_damage, kept by TrafficCrashes) on
``accidents/traffic_damage`` as one latched VehicleDamageArray holding every damaged body of this
node, so a late joiner (the run monitor) gets the current state. Bodies are named like the
accident node names them: ``agent/<TrafficAgent.id>``, ``scripted/<template vehicle id>``."""
from __future__ import annotations

import numpy as np
from rclpy.node import Node

from vehicle_sim.core.accident.scene import AccidentScene
from vehicle_sim.core.accident.traffic_crashes import TrafficCrashes
from vehicle_sim.msg import VehicleDamage, VehicleDamageArray
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.traffic_msgs import agent_ids

TOPIC = "accidents/traffic_damage"


def body_name(uid: int, scene: AccidentScene | None) -> str:
    if scene is not None and uid in scene.uids:
        return f"scripted/{scene.names[int(np.flatnonzero(scene.uids == uid)[0])]}"
    return f"agent/{int(agent_ids(np.array([uid]))[0])}"


class TrafficDamagePublisher:
    """Publishes TrafficCrashes' damage book (see the module docstring)."""

    def __init__(self, node: Node, frame_id: str):
        self.node, self.frame_id = node, frame_id
        self.pub = node.create_publisher(VehicleDamageArray, TOPIC, qos.LATCHED)

    def publish(self, t_ns: int, crashes: TrafficCrashes | None,
                scene: AccidentScene | None) -> None:
        """The whole book (empty without a crash world)."""
        out = VehicleDamageArray(source=self.node.get_name())
        out.header.stamp, out.header.frame_id = conv.stamp(t_ns), self.frame_id
        book = crashes.damage.states if crashes is not None else {}
        for uid in sorted(book):
            d = book[uid]
            out.bodies.append(VehicleDamage(
                header=out.header, body=body_name(uid, scene),
                impulse=[float(v) for v in d.impulse_ns], level=[int(v) for v in d.levels()]))
        self.pub.publish(out)
