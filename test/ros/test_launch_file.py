"""launch/urban.launch.py against the real launch / launch_ros API (skipped where absent)."""
from __future__ import annotations

import importlib.util
import subprocess
import sys

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
        assert arg.name in declared
        assert declared[arg.name].description.startswith(arg.description)
        assert declared[arg.name].default_value[0].text == arg.default


@pytest.mark.parametrize("composed", [False, True])
def test_expands_to_the_same_nodes_as_the_runner(composed, request):
    from launch.launch_context import LaunchContext
    from launch_ros.actions import Node

    description = _describe()
    context = LaunchContext()
    scenario_arg = "urban"
    if composed:  # a process shared by several nodes: one vehicle_sim_compose
        scenario_arg = str(request.getfixturevalue("composed_scenario"))
        context.launch_configurations["scenario"] = scenario_arg
    for arg in description.get_launch_arguments():
        arg.visit(context)
    nodes = []
    for entity in description.entities:
        for sub in (entity.visit(context) or []):
            if isinstance(sub, Node):
                nodes.append(sub)
    args = graph.resolve_args({"scenario": scenario_arg})
    scenario = graph.load_scenario(scenario_arg)
    expected = graph.processes(scenario, args)
    assert any(p.composed for p in expected) == composed
    assert [n.node_executable for n in nodes] == [
        graph.COMPOSE_EXECUTABLE if p.composed else p.nodes[0].executable for p in expected]
    for node, process in zip(nodes, expected, strict=True):
        if process.composed:  # the runner's very sections (graph.compose_arguments)
            arguments = ["".join(part.perform(context) for part in argument)
                         for argument in node.cmd[1:]]
            sections = graph.compose_arguments(process, args, scenario)
            assert arguments[:len(sections)] == sections  # then launch_ros's own --ros-args


@pytest.mark.parametrize("composed", [False, True])
def test_launch_runs_a_bounded_scenario_to_its_summary(tmp_path, composed, request):
    """What `ros2 launch vehicle_sim urban.launch.py mode:=fast duration:=3` does (and with a
    scenario whose light nodes share a process)."""
    path = share_dir() / "launch" / "urban.launch.py"
    code = (
        "import sys, launch\n"
        "from launch.launch_description_sources import PythonLaunchDescriptionSource\n"
        "ls = launch.LaunchService(argv=sys.argv[1:])\n"
        f"ls.include_launch_description(launch.actions.IncludeLaunchDescription("
        f"PythonLaunchDescriptionSource({str(path)!r}), launch_arguments=[(a.split(':=')[0], "
        f"a.split(':=')[1]) for a in sys.argv[1:]]))\n"
        "sys.exit(ls.run())\n")
    extra = ([f"scenario:={request.getfixturevalue('composed_scenario')}"] if composed else [])
    result = subprocess.run([sys.executable, "-c", code, "mode:=fast", "duration:=3",
                             f"record_dir:={tmp_path}", *extra], capture_output=True,
                            text=True, timeout=120)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "vehicle_sim run summary" in out and "reached duration 3 s" in out
