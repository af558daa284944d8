"""Fixtures for tests that start real nodes and exchange real messages over Fast DDS (loopback)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

rclpy = pytest.importorskip("rclpy", reason="ROS tests need rclpy (scripts/test.sh installs it)")

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


@pytest.fixture(scope="module")
def ros_node():
    """An rclpy node in the test process (its own context)."""
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node(f"test_{os.getpid()}", context=context)
    executor = rclpy.executors.SingleThreadedExecutor(context=context)
    executor.add_node(node)
    node.test_executor = executor
    node.spin_until = lambda *a, **k: spin_until(node, *a, **k)
    yield node
    node.destroy_node()
    rclpy.shutdown(context=context)


@pytest.fixture(scope="module")
def warm_traffic():
    """The traffic kernels compiled (or loaded from numba's on-disk cache) once, in this
    process, before a module starts traffic nodes: they then start from a warm cache."""
    from vehicle_sim.core.traffic.sim import TrafficSim
    from vehicle_sim.paths import config_path
    sim = TrafficSim.from_files(config_path("maps/urban_grid.yaml"))
    sim.step(0.05, (50.0, -1.75, 0.0, 5.0))


# waits stretch by this factor on slow machines, e.g. an emulated VM (scripts/vm_uinput.sh)
TIME_SCALE = float(os.environ.get("VSIM_TEST_TIME_SCALE", "1"))


def spin_until(node, predicate, timeout_s: float = 20.0, what: str = "condition") -> None:
    """Spin the test node until predicate() is true; fail naming `what` after the timeout
    (x VSIM_TEST_TIME_SCALE)."""
    timeout_s *= TIME_SCALE
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        node.test_executor.spin_once(timeout_sec=0.05)


def bin_path(name: str) -> str:
    return str(Path(sys.executable).parent / name)


class NodeProcess:
    """A node executable started as a real process, stopped with SIGINT like ros2 launch does."""

    def __init__(self, executable: str, params: dict | None = None, params_file: str = "",
                 name: str = "", remappings: tuple = ()):
        cmd = [bin_path(executable), "--ros-args"]
        if name:
            cmd += ["-r", f"__node:={name}"]
        for remap in remappings:  # "from:=to"
            cmd += ["-r", remap]
        if params_file:
            cmd += ["--params-file", params_file]
        for key, value in (params or {}).items():
            cmd += ["-p", f"{key}:={value}"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.stdout.read()


@pytest.fixture
def start_node():
    started: list[NodeProcess] = []

    def start(executable: str, **kwargs) -> NodeProcess:
        proc = NodeProcess(executable, **kwargs)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.stop()


@pytest.fixture
def assert_refuses(start_node):
    """Start a node with bad parameters: it must exit 2 with 'refusing to start' and ``words``
    in its output (vehicle_sim.nodes.main.run)."""

    def check(executable: str, params: dict, words: str, timeout_s: float = 60.0) -> None:
        proc = start_node(executable, params=params)
        proc.proc.wait(timeout=timeout_s)
        output = proc.stop()
        assert proc.proc.returncode == 2, output
        assert "refusing to start" in output and words in output, output

    return check


@pytest.fixture
def composed_scenario(tmp_path) -> Path:
    """The urban scenario with its light nodes (imu, gps, accident, ground_truth) in one
    process `light` (graph.NodeSpec.process), as a scenario file."""
    import yaml

    from vehicle_sim.paths import share_dir
    scenario = yaml.safe_load((share_dir() / "config/scenarios/urban.yaml").read_text())
    for node in scenario["nodes"]:
        if node["name"] in ("imu", "gps", "accident", "ground_truth"):
            node["process"] = "light"
    path = tmp_path / "urban_light.yaml"
    path.write_text(yaml.safe_dump(scenario))
    return path
