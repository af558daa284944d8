"""Several nodes in one process (vehicle_sim_compose, a scenario's `process`) and the executor
every node process spins (nodes.main): real processes over DDS on loopback."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from vehicle_sim import graph
from vehicle_sim.nodes.compose import split


def bin_path(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def compose(*sections: list[str], env: dict | None = None) -> subprocess.Popen:
    argv = [bin_path(graph.COMPOSE_EXECUTABLE)]
    for section in sections:
        argv += [*section, "--"]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env)


def stop(proc: subprocess.Popen) -> str:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        return proc.communicate(timeout=30)[0]
    finally:
        proc.kill()


def node_names(node) -> set[str]:
    return {name for name, _ in node.get_node_names_and_namespaces()}


def test_two_nodes_share_a_process_each_with_its_own_name_parameters_and_remappings(ros_node):
    """The imu and the gps sensors, renamed and remapped each by its own section, publish their
    own topics from one process; a parameter of one section does not reach the other."""
    imu_section = ["imu_node", "--ros-args", "-r", "__node:=imu_c", "-p", "use_sim_time:=false",
                   "-r", "imu/data:=compose/imu"]
    gps_section = ["gps_node", "--ros-args", "-r", "__node:=gps_c", "-p", "use_sim_time:=false",
                   "-r", "gnss/fix:=compose/fix"]
    proc = compose(imu_section, gps_section)
    try:
        ros_node.spin_until(lambda: {"imu_c", "gps_c"} <= node_names(ros_node), 60.0,
                            "both nodes of the composed process in the graph")
        imu = ros_node.get_publishers_info_by_topic("/compose/imu")
        fix = ros_node.get_publishers_info_by_topic("/compose/fix")
        assert [p.node_name for p in imu] == ["imu_c"], imu
        assert [p.node_name for p in fix] == ["gps_c"], fix
        assert not ros_node.get_publishers_info_by_topic("/imu/data")
        # one process: the runner and the benches see one child for both nodes
        pids = subprocess.run(["pgrep", "-f", "__node:=imu_c "], capture_output=True,
                              text=True).stdout.split()
        assert pids == [str(proc.pid)]
        assert imu[0].topic_type == "sensor_msgs/msg/Imu"
        assert fix[0].topic_type == "sensor_msgs/msg/NavSatFix"
    finally:
        out = stop(proc)
    assert proc.returncode == 0, out


def test_a_bad_parameter_of_one_node_refuses_the_whole_process_naming_the_node():
    proc = compose(["imu_node", "--ros-args", "-r", "__node:=imu_ok"],
                   ["gps_node", "--ros-args", "-r", "__node:=gps_bad", "-p", "rate_hz:=-5.0"])
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == 2, out
    assert "refusing to start: node /gps_bad: rate_hz" in out, out
    assert "Traceback" not in out, out


@pytest.mark.parametrize("argv, words", [
    (["bash_node", "--ros-args", "--"], "'bash_node' is not a vehicle_sim node executable"),
    (["imu_node", "--ros-args", "-r", "__node:=x"], "the arguments of imu_node are not ended"),
    ([], "no node to run"),
])
def test_a_malformed_compose_command_is_refused_with_one_line_and_exit_2(argv, words):
    with pytest.raises(ValueError, match=words.split("'")[0] or words):
        split(argv)
    result = subprocess.run([bin_path(graph.COMPOSE_EXECUTABLE), *argv], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2 and words in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_an_unknown_executor_choice_refuses_to_start_with_one_line():
    env = dict(os.environ, VEHICLE_SIM_EXECUTOR="multi")
    result = subprocess.run([bin_path("imu_node")], capture_output=True, text=True, env=env,
                            timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "VEHICLE_SIM_EXECUTOR='multi' is not one of events, single" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


@pytest.mark.parametrize("executor", ["events", "single"])
def test_each_executor_runs_a_node_and_stops_it_on_sigint(ros_node, executor):
    env = dict(os.environ, VEHICLE_SIM_EXECUTOR=executor)
    name = f"imu_{executor}"
    proc = compose(["imu_node", "--ros-args", "-r", f"__node:={name}",
                    "-p", "use_sim_time:=false"], env=env)
    try:
        ros_node.spin_until(lambda: name in node_names(ros_node), 60.0, f"{name} in the graph")
    finally:
        out = stop(proc)
    assert proc.returncode == 0, out


SPLIT_LIFE = """description: a process whose nodes would live differently
nodes:
  - {name: imu, executable: imu_node, respawn: true, process: sensors}
  - {name: gps, executable: gps_node, process: sensors}
"""


def test_nodes_of_one_process_must_live_and_end_alike(tmp_path):
    path = tmp_path / "split.yaml"
    path.write_text(SPLIT_LIFE)
    result = subprocess.run([bin_path("vehicle_sim_run"), "--scenario", str(path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "process 'sensors': nodes imu and gps differ in respawn" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_the_urban_processes_group_the_declared_nodes_and_keep_every_node_name():
    args = graph.resolve_args({})
    scenario = graph.load_scenario("urban")
    processes = graph.processes(scenario, args)
    assert sorted(n.name for p in processes for n in p.nodes) == \
        sorted(n.name for n in graph.active_nodes(scenario, args))
    light = next(p for p in processes if p.composed)
    argv = graph.compose_arguments(light, args, scenario)
    members, own = split(argv)
    assert [exe for exe, _ in members] == [n.executable for n in light.nodes] and own == []
    for (_, section), node in zip(members, light.nodes, strict=True):
        assert section == graph.ros_arguments(node, args, scenario)
    single = next(p for p in processes if p.name == "dynamics")
    assert not single.composed and single.nodes[0].name == "dynamics"


def test_a_process_with_a_timer_on_simulated_time_spins_the_single_threaded_executor():
    """rclpy's EventsExecutor drives ROS-time timers from clock-jump callbacks (nodes.main):
    a node with one on simulated time gets the SingleThreadedExecutor; steady timers, or ROS
    time on the system clock, keep the EventsExecutor."""
    import rclpy
    from rclpy.clock import Clock, ClockType
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter

    from vehicle_sim.nodes.main import make_executor

    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        sim = rclpy.create_node("sim_timed", context=context, parameter_overrides=[
            Parameter("use_sim_time", value=True)])
        wall = rclpy.create_node("wall_timed", context=context)
        wall.create_timer(0.1, lambda: None)  # ROS time on the system clock
        sim.create_timer(0.1, lambda: None, clock=Clock(clock_type=ClockType.STEADY_TIME))
        assert not isinstance(make_executor("events", [sim, wall], context),
                              SingleThreadedExecutor)
        sim.create_timer(0.1, lambda: None)  # on the node's clock: simulated time
        assert isinstance(make_executor("events", [sim, wall], context), SingleThreadedExecutor)
        assert isinstance(make_executor("single", [wall], context), SingleThreadedExecutor)
    finally:
        rclpy.shutdown(context=context)
