"""MCAP recording helpers without rclpy: message definitions in the `ros2msg` schema encoding
and the rosbag2 metadata that lets `ros2 bag info/play` use the file as it is.

A ros2msg schema is the message's .msg text followed by the text of every message type it uses,
each after a separator line and `MSG: pkg/Type` (the format rosbag2 writes and Foxglove reads).

rosbag2 (Jazzy/Kilted, metadata version 9) keeps per channel the publishers' QoS as YAML under
channel metadata key `offered_qos_profiles`, enums as the rmw strings ("reliable",
"transient_local", ...), durations as {sec, nsec} (rosbag2_storage/src/rosbag2_storage/qos.cpp,
`convert<Rosbag2QoS>::encode`), and the bag's metadata.yaml text in a metadata record named
`rosbag2`, key `serialized_metadata` (rosbag2_storage_mcap/src/mcap_storage.cpp,
`read_metadata`).
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from vehicle_sim.core.config import spec

SEPARATOR = "=" * 80


@dataclass(frozen=True)
class RecorderParams:
    record_dir: str = spec("runs")
    """folder of the MCAP file"""
    topics: tuple[str, ...] = spec(
        ("/clock", "/vehicle/state", "/odom", "/vehicle/control", "/autonomy/control",
         "/sim/status", "/cmd_vel", "/bridge/active_source",
         "/traffic/agents", "/traffic/lights", "/traffic/markers", "/imu/data", "/gnss/fix",
         "/motion/cue", "/accidents", "/accidents/damage", "/faults/command", "/faults/status",
         "/tf", "/tf_static", "/diagnostics", "/gnss/velocity", "/map", "/map/markers",
         "/initialpose",
         # a stack's commands and the reports it reads (see README "Connecting a stack")
         "/cmd_vel_stamped", "/ackermann_cmd", "/control/command/control_cmd",
         "/control/command/gear_cmd", "/control/command/turn_indicators_cmd",
         "/control/command/hazard_lights_cmd", "/vehicle/status/velocity_status",
         "/vehicle/status/steering_status", "/vehicle/status/gear_status",
         "/vehicle/status/control_mode", "/vehicle/status/turn_indicators_status",
         "/vehicle/status/hazard_lights_status",
         # the ground truth in Autoware's types
         "/perception/object_recognition/objects",
         "/perception/object_recognition/tracking/objects",
         "/perception/traffic_light_recognition/traffic_signals"))
    """topics recorded when they appear (any message type, found by discovery)"""
    type_prefixes: tuple[str, ...] = spec(("vehicle_sim/",))
    """also record every topic whose type starts with one of these"""
    exclude_topics: tuple[str, ...] = spec(("/sim/lockstep_ack", "/traffic/handover",
                                            "/traffic/ghosts", "/vehicle/state_raw"))
    """internal protocol topics and the 1 kHz raw state, left out even when their type matches"""
    map_file: str = spec("maps/urban_grid.yaml")
    """map of the run (the traffic node's map_file), written to the MCAP metadata for
    vehicle_sim_report"""
    vehicle_file: str = spec("vehicles/medium_car.yaml")
    """the ego's vehicle file (the dynamics node's), written to the MCAP metadata: the report's ego
    box"""
    discovery_period_s: float = spec(0.2, unit="s", ge=0.01, le=10.0)
    """how often to look for topics (a choice: a topic found later loses its first messages; faster
    is busy work)"""
    lockstep: bool = spec(False)
    """acknowledge every /clock tick once the vehicle state of that time is recorded: the run then
    never outpaces the recording (set by the scenario's lockstep_peer in mode lockstep)"""

    def __post_init__(self) -> None:
        if self.lockstep and not self.wanted("/vehicle/state", "vehicle_sim/msg/VehicleState"):
            raise ValueError("lockstep: /vehicle/state must be recorded (the recorder "
                             "acknowledges each frame by its state); topics / exclude_topics "
                             "leave it out")

    def wanted(self, topic: str, datatype: str) -> bool:
        """Record ``topic`` of ``datatype``: listed, or of a recorded type and not excluded."""
        return topic in self.topics or (
            topic not in self.exclude_topics
            and any(datatype.startswith(p) for p in self.type_prefixes))


ROSBAG2_VERSION = 9  # metadata version of rosbag2 Jazzy and Kilted
INFINITE_NS = 2**63 - 1  # RMW_DURATION_INFINITE as rclpy reports it


@dataclass(frozen=True)
class OfferedQos:
    """One publisher's QoS with the rmw names of rosbag2's YAML ("keep_last", "reliable", ...)."""
    history: str = "keep_last"
    depth: int = 10
    reliability: str = "reliable"
    durability: str = "volatile"
    deadline_ns: int = INFINITE_NS
    lifespan_ns: int = INFINITE_NS
    liveliness: str = "automatic"
    liveliness_lease_duration_ns: int = INFINITE_NS
    avoid_ros_namespace_conventions: bool = False


def _duration(ns: int) -> dict[str, int]:
    sec, nsec = divmod(max(0, min(int(ns), INFINITE_NS)), 10**9)
    return {"sec": sec, "nsec": nsec}


def offered_qos_yaml(profiles: list[OfferedQos]) -> str:
    """The `offered_qos_profiles` YAML of rosbag2 metadata version 9 (key order as qos.cpp)."""
    items = [{"history": q.history, "depth": int(q.depth), "reliability": q.reliability,
              "durability": q.durability, "deadline": _duration(q.deadline_ns),
              "lifespan": _duration(q.lifespan_ns), "liveliness": q.liveliness,
              "liveliness_lease_duration": _duration(q.liveliness_lease_duration_ns),
              "avoid_ros_namespace_conventions": bool(q.avoid_ros_namespace_conventions)}
             for q in profiles]
    return yaml.safe_dump(items, sort_keys=False, default_flow_style=False)


@dataclass(frozen=True)
class RecordedTopic:
    name: str
    datatype: str
    qos_yaml: str
    message_count: int


def bag_metadata_yaml(topics: list[RecordedTopic], start_ns: int, end_ns: int,
                      file_name: str, ros_distro: str) -> str:
    """metadata.yaml text of a single-file MCAP bag (rosbag2 metadata_io.cpp field names)."""
    count = sum(t.message_count for t in topics)
    duration = max(0, end_ns - start_ns)
    info = {
        "version": ROSBAG2_VERSION, "storage_identifier": "mcap",
        "duration": {"nanoseconds": duration},
        "starting_time": {"nanoseconds_since_epoch": start_ns},
        "message_count": count,
        "topics_with_message_count": [
            {"topic_metadata": {"name": t.name, "type": t.datatype,
                                "serialization_format": "cdr",
                                "offered_qos_profiles": t.qos_yaml,
                                "type_description_hash": ""},
             "message_count": t.message_count} for t in topics],
        "compression_format": "", "compression_mode": "",
        "relative_file_paths": [file_name],
        "files": [{"path": file_name, "starting_time": {"nanoseconds_since_epoch": start_ns},
                   "duration": {"nanoseconds": duration}, "message_count": count}],
        "custom_data": {}, "ros_distro": ros_distro,
    }
    return yaml.safe_dump({"rosbag2_bagfile_information": info}, sort_keys=False)

_BUILTIN = {"bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16",
            "int32", "uint32", "int64", "uint64", "string", "wstring"}


def msg_file(datatype: str) -> Path:
    """share/<pkg>/msg/<Type>.msg for 'pkg/msg/Type' or 'pkg/Type'."""
    pkg, _, name = datatype.replace("/msg/", "/").partition("/")
    prefixes = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    for prefix in (*prefixes, sys.prefix):
        path = Path(prefix) / "share" / pkg / "msg" / f"{name}.msg"
        if path.is_file():
            return path
    raise FileNotFoundError(f"no definition of {datatype} under AMENT_PREFIX_PATH or {sys.prefix}")


def _dependencies(text: str, pkg: str) -> list[str]:
    deps = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        field_type = re.sub(r"(\[.*\]|<=\d+)", "", line.split()[0])
        if field_type in _BUILTIN:
            continue
        if field_type == "Header":
            field_type = "std_msgs/Header"
        deps.append(field_type if "/" in field_type else f"{pkg}/{field_type}")
    return deps


def ros2msg_schema(datatype: str) -> str:
    """The full ros2msg definition of `pkg/msg/Type`, dependencies expanded once each."""
    pkg = datatype.split("/")[0]
    text = msg_file(datatype).read_text()
    parts, seen = [text.rstrip("\n")], set()
    queue = _dependencies(text, pkg)
    while queue:
        dep = queue.pop(0)
        if dep in seen:
            continue
        seen.add(dep)
        dep_text = msg_file(dep).read_text()
        parts += [SEPARATOR, f"MSG: {dep}", dep_text.rstrip("\n")]
        queue += _dependencies(dep_text, dep.split("/")[0])
    return "\n".join(parts) + "\n"
