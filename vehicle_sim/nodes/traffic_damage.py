"""The traffic node's damage output (issue 11): the per-part damage of its crashed agents and
scripted vehicles (core.accident.fleet_damage, kept by TrafficCrashes) on
``accidents/traffic_damage`` as one latched VehicleDamageArray holding every damaged body of this
node, so a late joiner (the run monitor) gets the current state. Bodies are named like the
accident node names them (traffic_world.body_name)."""
from __future__ import annotations

from rclpy.node import Node

from vehicle_sim.core.accident.traffic_world import TrafficWorld
from vehicle_sim.msg import VehicleDamage, VehicleDamageArray
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos

TOPIC = "accidents/traffic_damage"


class TrafficDamagePublisher:
    """Publishes TrafficCrashes' damage book (see the module docstring)."""

    def __init__(self, node: Node, frame_id: str):
        self.node, self.frame_id = node, frame_id
        self.pub = node.create_publisher(VehicleDamageArray, TOPIC, qos.LATCHED)

    def publish(self, t_ns: int, world: TrafficWorld | None) -> None:
        """The whole book of ``world`` (None, or no crash world: empty)."""
        out = VehicleDamageArray(source=self.node.get_name())
        out.header.stamp, out.header.frame_id = conv.stamp(t_ns), self.frame_id
        for name, d in (world.damage_book() if world is not None else {}).items():
            out.bodies.append(VehicleDamage(header=out.header, body=name,
                                            impulse=d["impulse_ns"], level=d["level"]))
        self.pub.publish(out)
