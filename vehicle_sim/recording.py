"""MCAP recording helpers without rclpy: message definitions in the `ros2msg` schema encoding.

A ros2msg schema is the message's .msg text followed by the text of every message type it uses,
each after a separator line and `MSG: pkg/Type` (the format rosbag2 writes and Foxglove reads).
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from vehicle_sim.core.config import spec

SEPARATOR = "=" * 80


@dataclass(frozen=True)
class RecorderParams:
    record_dir: str = spec("runs", doc="folder of the MCAP file")
    topics: tuple[str, ...] = spec(
        ("/clock", "/vehicle/state", "/odom", "/vehicle/control", "/autonomy/control",
         "/sim/status", "/cmd_vel",
         "/traffic/agents", "/traffic/lights", "/imu/data", "/gnss/fix", "/motion/cue",
         "/accidents", "/faults/command", "/faults/status"),
        doc="topics recorded when they appear")
    discovery_period_s: float = spec(0.2, unit="s", gt=0.0, doc="how often to look for topics")

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
