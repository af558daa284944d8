"""The interface packages the set-up builds from their published definitions (interfaces/*):
the generated types carry exactly the fields and constants of their .msg files, and they travel
over DDS between real nodes."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

INTERFACES = Path(__file__).resolve().parents[2] / "interfaces"
FIELD = re.compile(r"^([\w/]+(?:\[\d*\])?)\s+(\w+)\s*(=\s*(.+))?$")


def definitions():
    """(package, kind, name, [section lines]) for every .msg/.srv/.action under interfaces/."""
    for path in sorted(INTERFACES.glob("*/*/*")):
        if path.suffix in (".msg", ".srv", ".action"):
            lines = [ln.split("#")[0].strip() for ln in path.read_text().splitlines()]
            sections, current = [], []
            for line in lines:
                if line == "---":
                    sections.append(current)
                    current = []
                elif line:
                    current.append(line)
            sections.append(current)
            yield path.parts[-3], path.suffix[1:], path.stem, sections


def idl_type(ros_type: str, package: str) -> str:
    """A .msg field type as rosidl's Python classes name it."""
    base, array = re.match(r"^([\w/]+)(\[\d*\])?$", ros_type).groups()
    if "/" in base:
        pkg, name = base.split("/")
        base = f"{pkg}/{name}"
    elif base[0].isupper():
        base = f"{package}/{base}"
    named = {"float64": "double", "float32": "float", "bool": "boolean",
             "byte": "octet"}.get(base, base)
    if array == "[]":
        return f"sequence<{named}>"
    return f"{named}[{array[1:-1]}]" if array else named


@pytest.mark.parametrize("package,kind,name,sections",
                         list(definitions()), ids=lambda v: v if isinstance(v, str) else "")
def test_generated_types_match_their_definitions(package, kind, name, sections):
    module = importlib.import_module(f"{package}.{kind}")
    interface = getattr(module, name)
    names = {"msg": [], "srv": ["Request", "Response"], "action": ["Goal", "Result", "Feedback"]}
    parts = [getattr(interface, part) for part in names[kind]] or [interface]
    assert len(parts) == len(sections)
    for cls, lines in zip(parts, sections, strict=True):
        fields, constants = {}, {}
        for line in lines:
            ros_type, field, _, value = FIELD.match(line).groups()
            if value is None:
                fields[field] = idl_type(ros_type, package)
            else:  # string constants are quoted in the .msg, plain in Python
                constants[field] = value.strip().strip('"') if ros_type == "string" \
                    else value.strip()
        assert cls.get_fields_and_field_types() == fields, f"{package}/{name}"
        for constant, value in constants.items():
            assert str(getattr(cls, constant)) == value, f"{package}/{name}.{constant}"


def test_the_imu_node_sends_its_static_frame_as_a_tf2_message(ros_node, start_node):
    tf2 = importlib.import_module("tf2_msgs.msg")
    got = []
    latched = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    sub = ros_node.create_subscription(tf2.TFMessage, "/tf_static", got.append, latched)
    proc = start_node("imu_node")
    try:
        ros_node.spin_until(lambda: any(t.child_frame_id == "imu_link"
                                        for m in got for t in m.transforms),
                            what="base_link -> imu_link on /tf_static")
        names = dict(ros_node.get_topic_names_and_types())
        assert names["/tf_static"] == ["tf2_msgs/msg/TFMessage"]
        tf = next(t for m in got for t in m.transforms if t.child_frame_id == "imu_link")
        assert tf.header.frame_id == "base_link"
    finally:
        proc.stop()
        ros_node.destroy_subscription(sub)
