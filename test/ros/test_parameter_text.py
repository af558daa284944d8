"""What the runner writes as ``-p name:=<text>`` (core.ros_yaml.yaml_text) is read back by rcl's own
parameter parser as the same value and type: rcl reads an unquoted y as a bool, inf, 08, 0X10
and 0x1p3 as numbers, where PyYAML's dumper left them unquoted."""
from __future__ import annotations

import array

import rclpy
from rclpy.context import Context
from rclpy.node import Node

from vehicle_sim.core.config import parse_yaml
from vehicle_sim.core.ros_yaml import yaml_text

VALUES = ["y", "N", "inf", "-nan", "08", "0X10", "0x1p3", "-.5", "1e3", "1_000", "2024-01-08",
          "true", "~", "a: b", "runs/x y", "", 1e-3, -0.5, 1000.0, 7, -3, True, False,
          ["y", "1e3", "text"], [1.5, 2.0], [1, 2]]


def _read_by_rcl(texts: list[str]) -> list:
    context = Context()
    args = ["--ros-args"] + [a for i, t in enumerate(texts) for a in ("-p", f"p{i}:={t}")]
    rclpy.init(context=context, args=args)
    try:
        node = Node("parameter_text", context=context,
                    automatically_declare_parameters_from_overrides=True)
        values = [node.get_parameter(f"p{i}").value for i in range(len(texts))]
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
    return [list(v) if isinstance(v, array.array) else v for v in values]


def test_rcl_reads_every_written_parameter_back_as_the_same_value_and_type():
    texts = [yaml_text(v) for v in VALUES]
    read = _read_by_rcl(texts)
    for value, text, got in zip(VALUES, texts, read, strict=True):
        assert got == value and type(got) is type(value), (value, text, got)
        if isinstance(value, list):
            assert [type(g) for g in got] == [type(v) for v in value], (value, text, got)
    # and the runner's check reads the same text as the nodes will
    assert [parse_yaml(t, "t") for t in texts] == VALUES


def test_the_check_reads_launch_argument_numbers_as_rcl_does():
    """A launch argument the runner's check reads as a number, rcl reads as a number too."""
    texts = ["1e-3", "-.5", "+.5", "1.0e3", "2", "-7"]
    assert _read_by_rcl(texts) == [parse_yaml(t, "t") for t in texts]
