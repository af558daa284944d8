"""vehicle_sim.nodes.main.run, the start-up and shutdown every node process shares: a ROS
clean-up that blocks does not keep the process alive (a real rclpy node in a real process, whose
destroy_node blocks as the rcl/rmw node teardown was seen to under load)."""
from __future__ import annotations

import subprocess
import sys
import time

from vehicle_sim.nodes.main import CLEANUP_TIMEOUT_S, STACKS_S
from vehicle_sim.runner import STOP_GRACE_S

HANGS_ON_DESTROY = """
import time
from rclpy.node import Node
from vehicle_sim.nodes.main import run

class Hangs(Node):
    def __init__(self):
        super().__init__("hangs")

    def stop(self):
        print("stop() ran", flush=True)

    def exit_code(self):
        return 3

    def destroy_node(self):
        time.sleep(120.0)

raise SystemExit(run(Hangs, "hangs", done=lambda node: True))
"""


def test_a_blocked_ros_cleanup_ends_the_process_after_the_timeout_with_a_message():
    assert CLEANUP_TIMEOUT_S + STACKS_S < STOP_GRACE_S, "the runner would SIGTERM first"
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-c", HANGS_ON_DESTROY], check=False,
                            capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - start
    assert result.returncode == 3, "the node's exit code: " + result.stdout + result.stderr
    assert "stop() ran" in result.stdout, "the node's own stop() comes before the clean-up"
    assert "ROS clean-up still blocked after 5 s" in result.stderr
    assert "destroy_node" in result.stderr, "the stacks show where it blocked"
    assert CLEANUP_TIMEOUT_S <= elapsed < CLEANUP_TIMEOUT_S + 30.0


SPINS_HOLDING_THE_LOCK = """
import re
from rclpy.node import Node
from vehicle_sim.nodes.main import run

class SpinsHoldingTheLock(Node):
    def __init__(self):
        super().__init__("spins_holding_the_lock")

    def exit_code(self):
        return 5

    def destroy_node(self):
        # C code that never lets the interpreter lock go (a regular expression that backtracks
        # for hours), as the Fast DDS participant teardown spun: no Python thread can run
        re.match(r"(a+)+$", "a" * 48 + "b")

raise SystemExit(run(SpinsHoldingTheLock, "spins_holding_the_lock", done=lambda node: True))
"""


def test_a_cleanup_that_spins_holding_the_interpreter_lock_still_ends_with_the_nodes_code():
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-c", SPINS_HOLDING_THE_LOCK], check=False,
                            capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - start
    assert result.returncode == 5, "the node's exit code: " + result.stdout + result.stderr
    assert "ROS clean-up still blocked after 5 s" in result.stderr
    assert "destroy_node" in result.stderr, "the stacks show where it spun"
    assert CLEANUP_TIMEOUT_S <= elapsed < CLEANUP_TIMEOUT_S + 30.0


HANGS_WHEN_RELEASED = """
import time
import weakref
from rclpy.node import Node
from vehicle_sim.nodes.main import run

class HangsWhenReleased(Node):
    def __init__(self):
        super().__init__("hangs_when_released")
        # stands for an rclpy entity whose destructor blocks (an EventHandler's __exit__ did)
        weakref.finalize(self, time.sleep, 120.0)
        self._me = self  # a reference cycle, as a node's callbacks make: the collector frees it

    def exit_code(self):
        return 4

raise SystemExit(run(HangsWhenReleased, "hangs_when_released", done=lambda node: True))
"""


def test_a_destructor_that_blocks_is_released_inside_the_cleanup_bound():
    """The executor and the nodes are released before the clean-up's watchdog ends, not when
    run_nodes returns: a destructor that blocks there ends the process after the timeout."""
    result = subprocess.run([sys.executable, "-c", HANGS_WHEN_RELEASED], check=False,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 4, "the node's exit code: " + result.stdout + result.stderr
    assert "ROS clean-up still blocked after 5 s" in result.stderr


STOP_RAISES = """
from rclpy.node import Node
from vehicle_sim.nodes.main import run

class StopRaises(Node):
    def __init__(self):
        super().__init__("stop_raises")

    def stop(self):
        raise OSError("record_dir is read-only")

raise SystemExit(run(StopRaises, "stop_raises", done=lambda node: True))
"""


def test_an_error_in_stop_exits_1_with_its_traceback_and_still_cleans_up():
    result = subprocess.run([sys.executable, "-c", STOP_RAISES], check=False,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "OSError: record_dir is read-only" in result.stderr
    assert "ROS clean-up still blocked" not in result.stderr


def test_a_malformed_params_file_refuses_to_start_with_exit_2(start_node, tmp_path):
    bad = tmp_path / "bad_params.yaml"
    bad.write_text("x: [\n")
    proc = start_node("imu_node", params_file=str(bad))
    proc.proc.wait(timeout=60)
    output = proc.stop()
    assert proc.proc.returncode == 2, output
    assert "refusing to start" in output and "params file" in output, output
    assert "Traceback" not in output, output


START_RAISES = """
from rclpy.node import Node
from vehicle_sim.nodes.main import NodeEntry, run_nodes

class Starts(Node):
    def __init__(self, **options):
        super().__init__("starts", **options)

    def start(self):
        raise OSError("the rig's serial port is gone")

class NeverStarted(Node):
    def __init__(self, **options):
        super().__init__("never_started", **options)

    def stop(self):
        raise RuntimeError("stop() of a node whose start() never ran")

raise SystemExit(run_nodes([(NodeEntry(Starts, "starts"), []),
                            (NodeEntry(NeverStarted, "never_started"), [])]))
"""


def test_a_start_that_fails_stops_only_the_nodes_that_started():
    """One process, two nodes: the first one's start() raises, so the second never started and
    its stop() is not called; the process exits 1 with the one traceback and cleans up."""
    result = subprocess.run([sys.executable, "-c", START_RAISES], check=False,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "OSError: the rig's serial port is gone" in result.stderr
    assert "never ran" not in result.stderr, result.stderr
    assert "ROS clean-up still blocked" not in result.stderr


NO_GUARD = """
from vehicle_sim.nodes import main

def no_guard(*args):
    raise RuntimeError("numba cannot compile here")

main.ExitGuard = no_guard  # as a broken numba would make it
""" + SPINS_HOLDING_THE_LOCK


def test_without_a_guard_the_cleanup_is_still_bounded_and_says_why():
    """A guard that cannot be had (its compiler broken) does not skip the clean-up or leave
    it unbounded: one line says so and faulthandler ends the process (code 1)."""
    result = subprocess.run([sys.executable, "-c", NO_GUARD], check=False,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr  # not the node's 5
    assert "no exit guard (RuntimeError: numba cannot compile here)" in result.stderr
    assert "destroy_node" in result.stderr, "the clean-up ran, and the stacks show where"
