"""Recorder: writes the configured topics, serialized as received (CDR), to an MCAP file.

Subscriptions are made as topics appear, with a QoS compatible with their publishers (reliable
and transient-local only when every publisher is). Log times are the node's clock: simulation
time with use_sim_time. The file is readable by Foxglove, `ros2 bag` (MCAP storage) and the mcap
Python readers.
"""
from __future__ import annotations

import time
from pathlib import Path

from mcap.writer import Writer
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from vehicle_sim.nodes import qos
from vehicle_sim.nodes.main import run
from vehicle_sim.nodes.params import declare_and_load
from vehicle_sim.recording import RecorderParams, ros2msg_schema


def _like(publisher_qos: QoSProfile) -> QoSProfile:
    """A subscription that matches publishers of that QoS and keeps a burst of samples."""
    return QoSProfile(depth=100, reliability=publisher_qos.reliability,
                      durability=publisher_qos.durability)


# topics of vehicle_sim's own nodes: type and the QoS they are published with (nodes/qos.py)
KNOWN_TOPICS = {
    "/clock": ("rosgraph_msgs/msg/Clock", _like(qos.STREAM)),
    "/vehicle/state": ("vehicle_sim/msg/VehicleState", _like(qos.STATE)),
    "/odom": ("nav_msgs/msg/Odometry", _like(qos.STATE)),
    "/vehicle/control": ("vehicle_sim/msg/VehicleControl", _like(qos.COMMAND)),
    "/autonomy/control": ("vehicle_sim/msg/VehicleControl", _like(qos.COMMAND)),
    "/sim/status": ("vehicle_sim/msg/SimStatus", _like(qos.EVENT)),
    "/traffic/agents": ("vehicle_sim/msg/TrafficAgentArray", _like(qos.LARGE_STREAM)),
    "/accidents": ("vehicle_sim/msg/AccidentEvent", _like(qos.EVENT)),
    "/motion/cue": ("vehicle_sim/msg/MotionCue", _like(qos.STREAM)),
    "/imu/data": ("sensor_msgs/msg/Imu", _like(qos.STREAM)),
    "/gnss/fix": ("sensor_msgs/msg/NavSatFix", _like(qos.STATE)),
}


class RecorderNode(Node):
    def __init__(self) -> None:
        super().__init__("recorder")
        self.p = declare_and_load(self, RecorderParams)
        out = Path(self.p.record_dir)
        out.mkdir(parents=True, exist_ok=True)
        self.path = out / f"vehicle_sim-{time.strftime('%Y%m%d-%H%M%S')}.mcap"
        self._file = open(self.path, "wb")
        self.writer = Writer(self._file)
        self.writer.start(profile="ros2", library="vehicle_sim recorder")
        self._channels: dict[str, int] = {}
        self.counts: dict[str, int] = {}
        self._discover()
        self.create_timer(self.p.discovery_period_s, self._discover)
        self.get_logger().info(f"recording to {self.path}")

    def _discover(self) -> None:
        """Subscribe to configured topics that appeared; the project's own topics (known type
        and QoS) at once, so a fast run is recorded from its first step."""
        found = dict(self.get_topic_names_and_types())
        for topic in self.p.topics:
            if topic in self._channels:
                continue
            if topic in KNOWN_TOPICS:
                datatype, profile = KNOWN_TOPICS[topic]
            elif len(found.get(topic, ())) == 1:
                datatype, profile = found[topic][0], self._qos_for(topic)
            else:
                continue
            self._record(topic, datatype, profile)

    def _record(self, topic: str, datatype: str, profile: QoSProfile) -> None:
        try:
            schema = ros2msg_schema(datatype)
        except FileNotFoundError as exc:
            self.get_logger().warning(f"not recording {topic}: {exc}")
            self._channels[topic] = -1
            return
        schema_id = self.writer.register_schema(name=datatype, encoding="ros2msg",
                                                data=schema.encode())
        self._channels[topic] = self.writer.register_channel(
            topic=topic, message_encoding="cdr", schema_id=schema_id)
        self.counts[topic] = 0
        self.create_subscription(_import(datatype), topic,
                                 lambda data, t=topic: self._write(t, data), profile, raw=True)

    def _qos_for(self, topic: str) -> QoSProfile:
        infos = self.get_publishers_info_by_topic(topic)
        reliable = infos and all(i.qos_profile.reliability == ReliabilityPolicy.RELIABLE
                                 for i in infos)
        latched = infos and all(i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
                                for i in infos)
        return QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE if reliable
                          else ReliabilityPolicy.BEST_EFFORT,
                          durability=DurabilityPolicy.TRANSIENT_LOCAL if latched
                          else DurabilityPolicy.VOLATILE)

    def _write(self, topic: str, data: bytes) -> None:
        now = self.get_clock().now().nanoseconds
        self.writer.add_message(channel_id=self._channels[topic], log_time=now, data=data,
                                publish_time=now, sequence=self.counts[topic])
        self.counts[topic] += 1

    def stop(self) -> None:
        self.writer.finish()
        self._file.close()
        total = sum(self.counts.values())
        self.get_logger().info(f"wrote {total} messages on {len(self.counts)} topics to "
                               f"{self.path}")


def _import(datatype: str):
    pkg, _, name = datatype.split("/")
    module = __import__(f"{pkg}.msg", fromlist=[name])
    return getattr(module, name)


def main(args: list[str] | None = None) -> int:
    return run(RecorderNode, "recorder", args)
