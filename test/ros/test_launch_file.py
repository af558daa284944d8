"""launch/urban.launch.py against the real launch / launch_ros API (skipped where absent)."""
from __future__ import annotations

import importlib.util

import pytest

from vehicle_sim import graph
from vehicle_sim.paths import share_dir

launch = pytest.importorskip(
    "launch", reason="launch/launch_ros are not on PyPI; this check runs in a ROS 2 workspace")
launch_ros = pytest.importorskip("launch_ros", reason="launch_ros is not installed")


def _describe():
    path = share_dir() / "launch" / "urban.launch.py"
    spec = importlib.util.spec_from_file_location("urban_launch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate_launch_description()


def test_declares_every_graph_argument_with_description():
    description = _describe()
    declared = {a.name: a for a in description.get_launch_arguments()}
    for arg in graph.LAUNCH_ARGS:
        assert arg.name in declared and declared[arg.name].description == arg.description
        assert declared[arg.name].default_value[0].text == arg.default


def test_expands_to_the_same_nodes_as_the_runner():
    from launch.launch_context import LaunchContext
    from launch_ros.actions import Node

    description = _describe()
    context = LaunchContext()
    for arg in description.get_launch_arguments():
        arg.visit(context)
    nodes = []
    for entity in description.entities:
        for sub in (entity.visit(context) or []):
            if isinstance(sub, Node):
                nodes.append(sub)
    args = graph.resolve_args({})
    expected = graph.active_nodes(graph.load_scenario("urban"), args)
    assert [n.node_executable for n in nodes] == [s.executable for s in expected]
