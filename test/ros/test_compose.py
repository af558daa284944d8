"""Several nodes in one process (vehicle_sim_compose, a scenario's `process`) and the executor
every node process spins (nodes.main): real processes over DDS on loopback."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
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


def test_two_nodes_share_a_process_each_with_its_own_name_parameters_and_remappings(ros_node,
                                                                                   tmp_path):
    """The imu and the gps sensors, renamed, parametrised and remapped each by its own section,
    run in one process: the imu's parameter file (`/**` keys, with a parameter only the imu
    knows: the gps would refuse to start) and its remapping of the state both read reach the
    imu alone."""
    params = tmp_path / "imu.yaml"
    params.write_text("/**:\n  ros__parameters:\n    use_sim_time: false\n"
                      "    imu_topic: compose/imu\n")
    imu_section = ["imu_node", "--ros-args", "-r", "__node:=imu_c", "--params-file", str(params),
                   "-r", "vehicle/state_raw:=compose/raw"]
    gps_section = ["gps_node", "--ros-args", "-r", "__node:=gps_c", "-p", "use_sim_time:=false",
                   "-r", "gnss/fix:=compose/fix"]
    proc = compose(imu_section, gps_section)

    def by(topic: str, publishers: bool = True) -> list[str]:
        infos = (ros_node.get_publishers_info_by_topic(topic) if publishers
                 else ros_node.get_subscriptions_info_by_topic(topic))
        return sorted(i.node_name for i in infos)

    try:
        ros_node.spin_until(  # (a node's name comes with its participant, maybe later)
            lambda: by("/compose/imu") == ["imu_c"] and by("/compose/fix") == ["gps_c"]
            and "imu_c" in by("/compose/raw", False)
            and "gps_c" in by("/vehicle/state_raw", False) or proc.poll() is not None,
            60.0, "the composed nodes' topics")
        assert proc.poll() is None, "the process ended: a parameter reached the wrong node"
        assert by("/compose/imu") == ["imu_c"] and by("/compose/fix") == ["gps_c"]
        assert by("/compose/raw", False) == ["imu_c"]
        assert by("/vehicle/state_raw", False) == ["gps_c"]
        assert not by("/imu/data") and not by("/gnss/fix")
        # one process: the runner and the benches see one child for both nodes
        pids = subprocess.run(["pgrep", "-f", "__node:=imu_c "], capture_output=True,
                              text=True).stdout.split()
        assert pids == [str(proc.pid)]
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
    (["imu_node", "loose", "--ros-args", "--"], "the arguments of imu_node must start with"),
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


@pytest.mark.parametrize("executor, which", [
    ("events", "EventsExecutor"),
    ("single", "SingleThreadedExecutor (VEHICLE_SIM_EXECUTOR=single)")])
def test_each_executor_runs_a_node_and_stops_it_on_sigint(ros_node, executor, which):
    if executor == "events":
        pytest.importorskip("rclpy.experimental", reason="this rclpy has no EventsExecutor")
    env = dict(os.environ, VEHICLE_SIM_EXECUTOR=executor)
    name = f"imu_{executor}"
    proc = compose(["imu_node", "--ros-args", "-r", f"__node:={name}",
                    "-p", "use_sim_time:=false"], env=env)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    expected = f"{name}: spinning with rclpy's {which}"
    try:  # spinning: the node is up (a signal before that ends it as well, exit 0)
        ros_node.spin_until(lambda: any(expected in line for line in lines)
                            or proc.poll() is not None, 60.0, "the executor's line")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        reader.join(timeout=10)
    out = "".join(lines)
    assert proc.returncode == 0 and expected in out, out


def test_the_composed_executables_are_the_node_entry_points():
    import tomllib

    from vehicle_sim.nodes.compose import MODULES
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    scripts = tomllib.loads(pyproject.read_text())["project"]["scripts"]
    assert {exe: scripts[exe].split(":")[0] for exe in graph.NODE_EXECUTABLES} == MODULES


SPLIT_LIFE = """description: a process whose nodes would live differently
nodes:
  - {name: imu, executable: imu_node, respawn: true, process: sensors}
  - {name: gps, executable: gps_node, process: sensors}
"""


FOREIGN_MEMBER = """description: a program that is not a vehicle_sim node in a shared process
nodes:
  - {name: imu, executable: imu_node, process: sensors}
  - {name: intruder, executable: /bin/true, process: sensors}
"""


@pytest.mark.parametrize("content, words", [
    (SPLIT_LIFE, "process 'sensors': nodes imu and gps differ in respawn"),
    (FOREIGN_MEMBER, "process 'sensors': '/bin/true' of node intruder is not a vehicle_sim "
                     "node and cannot share a process")])
def test_a_process_takes_only_vehicle_sim_nodes_that_live_and_end_alike(tmp_path, content,
                                                                        words):
    path = tmp_path / "process.yaml"
    path.write_text(content)
    result = subprocess.run([bin_path("vehicle_sim_run"), "--scenario", str(path),
                             "--foreign_executables"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert words in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_processes_group_the_declared_nodes_and_keep_every_node_name(composed_scenario):
    args = graph.resolve_args({})
    scenario = graph.load_scenario(str(composed_scenario))
    processes = graph.processes(scenario, args)
    assert sorted(n.name for p in processes for n in p.nodes) == \
        sorted(n.name for n in graph.active_nodes(scenario, args))
    light = next(p for p in processes if p.composed)
    assert [n.name for n in light.nodes] == ["imu", "gps", "accident", "ground_truth"]
    members, own = split(graph.compose_arguments(light, args, scenario))
    assert [exe for exe, _ in members] == [n.executable for n in light.nodes] and own == []
    for (_, section), node in zip(members, light.nodes, strict=True):
        assert section == graph.ros_arguments(node, args, scenario)
    single = next(p for p in processes if p.name == "dynamics")
    assert not single.composed and single.nodes[0].name == "dynamics"
    # the shipped scenarios keep a process per node (the respawn of one node alone)
    for name in graph.scenario_names():
        shipped = graph.load_scenario(name)
        assert not any(p.composed for p in graph.processes(shipped, args)), name


def test_a_composed_graph_runs_to_its_summary_and_reports_the_process_with_its_nodes(
        composed_scenario, tmp_path):
    result = subprocess.run([bin_path("vehicle_sim_run"), "--scenario", str(composed_scenario),
                             "--mode", "lockstep", "--duration", "3", "--seed", "2",
                             "--record_dir", str(tmp_path), "--timeout", "150"],
                            capture_output=True, text=True, timeout=200)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-4000:]
    assert "reached duration 3 s" in out, out[-4000:]
    assert "light: exit 0, respawned 0x (imu, gps, accident, ground_truth)" in out, out[-3000:]
    spinning = set(re.findall(r"\]: (\S+): spinning with rclpy's", out))
    assert spinning == {"dynamics", "traffic", "imu+gps+accident+ground_truth", "bridge",
                        "ego_driver", "sim_monitor"}, spinning  # one executor per process


def test_a_process_with_a_timer_on_simulated_time_spins_the_single_threaded_executor():
    """rclpy's EventsExecutor drives ROS-time timers from clock-jump callbacks (nodes.main):
    a node with one on simulated time gets the SingleThreadedExecutor; steady timers, or ROS
    time on the system clock, keep the EventsExecutor."""
    import rclpy
    from rclpy.clock import Clock, ClockType
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter

    from vehicle_sim.nodes.main import make_executor

    pytest.importorskip("rclpy.experimental", reason="this rclpy has no EventsExecutor")
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        sim = rclpy.create_node("sim_timed", context=context, parameter_overrides=[
            Parameter("use_sim_time", value=True)])
        wall = rclpy.create_node("wall_timed", context=context)
        wall.create_timer(0.1, lambda: None)  # ROS time on the system clock
        sim.create_timer(0.1, lambda: None, clock=Clock(clock_type=ClockType.STEADY_TIME))
        executor, which = make_executor("events", [sim, wall], context)
        assert not isinstance(executor, SingleThreadedExecutor) and which == "EventsExecutor"
        sim.create_timer(0.1, lambda: None)  # on the node's clock: simulated time
        executor, which = make_executor("events", [sim, wall], context)
        assert isinstance(executor, SingleThreadedExecutor)
        assert which == "SingleThreadedExecutor (a timer on simulated time in sim_timed)"
        assert isinstance(make_executor("single", [wall], context)[0], SingleThreadedExecutor)
    finally:
        rclpy.shutdown(context=context)
