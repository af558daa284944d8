"""The engine node (nodes.engine_node): the urban scenario's cores in one process, run by
``vehicle_sim_run --engine true``: a seeded run repeats its summary, its edges reach a reader over
real DDS with the nodes' topics, frames and sim-time stamps, and it is refused where it cannot
run as asked."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import rclpy

from vehicle_sim.nodes import qos
from vehicle_sim.paths import config_path
from vehicle_sim.progress import PROGRESS_ENV, PROGRESS_MARK

RUNNER = str(Path(sys.executable).parent / "vehicle_sim_run")

DURATION_S = 6.0
VARIES = ("wall_time_s", "real_time_factor")  # wall-clock figures of a run


def run(*args: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
    return subprocess.run([RUNNER, *args], capture_output=True, text=True, timeout=timeout)


def _summary(folder) -> dict:
    [path] = list(folder.glob("summary-*.json"))
    data = json.loads(path.read_text())
    return {k: v for k, v in data.items() if k not in VARIES}


def test_a_seeded_engine_run_repeats_its_summary_and_drives_the_ego(tmp_path):
    summaries = []
    for name in ("a", "b"):
        result = run("--engine", "true", "--mode", "lockstep", "--duration", f"{DURATION_S:g}",
                     "--seed", "3", "--record_dir", str(tmp_path / name), "--timeout", "200",
                     timeout=240.0)
        out = result.stdout + result.stderr
        assert result.returncode == 0, out
        assert "engine: exit 0" in out and "vehicle_sim run summary" in out
        assert "not in the engine: bridge" in out, "what is left out is said"
        summaries.append(_summary(tmp_path / name))
    a, b = summaries
    assert a == b
    assert a["sim_time_s"] == DURATION_S and a["physics_steps"] == DURATION_S * 1000
    assert a["distance_m"] > 10.0 and a["traffic_agents_max"] > 0
    assert f"reached duration {DURATION_S:g} s of simulated time" in a["notes"]


def test_the_engine_is_refused_in_real_time_with_one_line():
    result = run("--engine", "true")
    assert result.returncode == 2
    assert "engine" in result.stderr and "mode lockstep" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_scenario_the_engine_cannot_run_is_refused_before_it_starts(tmp_path):
    """A fault schedule: one line and exit 2 from the runner, no process started."""
    text = config_path("scenarios/urban.yaml").read_text()
    path = tmp_path / "scheduled.yaml"
    path.write_text(text + "schedule:\n  - {at_s: 1.0, target: gps, fault: NO_FIX, id: 1}\n")
    result = run("--engine", "true", "--mode", "lockstep", "--scenario", str(path))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "no fault schedule" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "[engine]" not in result.stdout


def test_an_unbounded_engine_run_stopped_by_sigint_writes_an_interrupted_summary(tmp_path):
    proc = subprocess.Popen([str(Path(sys.executable).parent / "engine_node"), "--ros-args",
                             "-p", f"record_dir:={tmp_path}"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, PROGRESS_ENV: "1"})
    lines = []
    for line in proc.stdout:  # until it has stepped (its progress line, once a wall second)
        lines.append(line)
        if line.startswith(PROGRESS_MARK):
            break
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, "".join(lines) + out
    summary = json.loads(next(tmp_path.glob("summary-*.json")).read_text())
    assert "interrupted" in summary["notes"]
    assert summary["sim_time_s"] > 0.0, "it ran before the stop"
    assert summary["physics_steps"] == round(summary["sim_time_s"] * 1000), "whole frames"


def run_engine(ros_node, start_node, subs, duration_s: float, waits_for: tuple[str, ...] = (),
               record_dir: str = "''"):
    """The engine (seed 3) for ``duration_s`` of sim time, starting once the test node and
    ``waits_for`` are up; spun until it ends and what it sent has arrived, then ``subs`` are
    destroyed. Returns (its process, its output). With a ``record_dir``, it records there."""
    names = ", ".join((*waits_for, ros_node.get_name()))
    engine = start_node("engine_node", params={  # the test node reads no /clock
        "duration": duration_s, "seed": 3, "record_dir": record_dir,
        "record": record_dir != "''", "wait_for_nodes": f"[{names}]",
        "clockless_nodes": f"[{ros_node.get_name()}]"})
    try:
        ros_node.spin_until(lambda: engine.proc.poll() is not None, timeout_s=180.0,
                            what="the engine's run to end")
        for _ in range(40):  # what is still on its way
            ros_node.test_executor.spin_once(timeout_sec=0.05)
    finally:
        out = engine.stop()
        for sub in subs:
            ros_node.destroy_subscription(sub)
    return engine, out


def test_the_engines_edges_reach_a_reader_with_the_nodes_topics_and_stamps(ros_node, start_node,
                                                                           tmp_path):
    """... and a fault command (the engine takes none) is answered REJECTED, saying so; the
    answer is in the engine's recording too, as the node graph's recorder records it."""
    from nav_msgs.msg import Odometry
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import Imu, NavSatFix
    from vehicle_sim.msg import (
        FaultCommand,
        FaultStatus,
        TrafficAgentArray,
        TrafficLightArray,
        VehicleState,
    )
    got: dict[str, list] = {k: [] for k in ("clock", "state", "odom", "imu", "fix", "agents",
                                            "lights", "faults")}
    subs = [ros_node.create_subscription(t, topic, lambda m, k=k: got[k].append(m), q)
            for k, t, topic, q in (
                ("clock", Clock, "/clock", qos.RELIABLE_STREAM),
                ("state", VehicleState, "vehicle/state", qos.STATE),
                ("odom", Odometry, "odom", qos.STATE),
                ("imu", Imu, "imu/data", qos.SENSOR),
                ("fix", NavSatFix, "gnss/fix", qos.SENSOR),
                ("agents", TrafficAgentArray, "traffic/agents", qos.LARGE_STREAM),
                ("lights", TrafficLightArray, "traffic/lights", qos.LIGHTS),
                ("faults", FaultStatus, "faults/status", qos.EVENT))]
    faults = ros_node.create_publisher(FaultCommand, "faults/command", qos.FAULT_COMMAND)

    def send_fault() -> None:  # once the engine reads fault commands (it is a reliable reader)
        if faults.get_subscription_count() and not sent:
            sent.append(FaultCommand(id=7, target="gps", fault=FaultCommand.NO_FIX))
            faults.publish(sent[-1])
    sent: list[FaultCommand] = []
    timer = ros_node.create_timer(0.05, send_fault)
    try:
        engine, out = run_engine(ros_node, start_node, subs, 20.0, record_dir=str(tmp_path))
    finally:
        ros_node.destroy_timer(timer)
        ros_node.destroy_publisher(faults)
    assert engine.proc.returncode == 0, out
    (answer,) = got["faults"]
    assert answer.id == 7 and answer.target == "gps"
    assert answer.state == FaultStatus.STATE_REJECTED, answer
    assert "the lockstep engine takes no faults" in answer.message, answer
    from mcap_ros2.reader import read_ros2_messages
    (path,) = tmp_path.glob("vehicle_sim-*.mcap")
    recorded = [m.ros_msg for m in read_ros2_messages(str(path), topics=["/faults/status"])]
    assert [(m.id, m.state) for m in recorded] == [(7, FaultStatus.STATE_REJECTED)]
    stamp = recorded[0].header.stamp  # mcap_ros2's decoded type: compared field by field
    assert (stamp.sec, stamp.nanosec) == (answer.header.stamp.sec, answer.header.stamp.nanosec)
    assert all(got.values()), {k: len(v) for k, v in got.items()}
    stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in got["state"]]
    assert all(t % 10_000_000 == 0 for t in stamps), "states on the 100 Hz sim-time grid"
    assert stamps == sorted(set(stamps)) and stamps[-1] <= 20 * 10**9
    clock = [m.clock.sec * 10**9 + m.clock.nanosec for m in got["clock"]]
    assert clock == sorted(set(clock)) and clock[-1] <= 20 * 10**9
    assert got["state"][0].header.frame_id == "odom" and got["state"][0].child_frame_id == \
        "base_link"
    assert got["imu"][0].header.frame_id == "imu_link"
    assert got["fix"][0].header.frame_id == "gnss_link"
    assert got["agents"][-1].header.frame_id == "map" and len(got["agents"][-1].agents) > 0
    assert any(len(m.lights) > 0 for m in got["lights"])
    assert rclpy.ok(context=ros_node.context)


def test_the_ground_truth_beside_the_engine_turns_its_agents_into_autoware_objects(
        ros_node, start_node):
    """engine:=true runs the ground-truth node beside the engine (graph.ENGINE_READERS), and
    the engine waits for it: its PredictedObjects carry the engine's agents of the same stamp,
    one object each (range 0: all), at most at 10 Hz of sim time. Reliable QoS: no assumption on
    how many arrive while the engine runs faster than real time."""
    import pytest
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from vehicle_sim.msg import TrafficAgentArray
    apm = pytest.importorskip("autoware_perception_msgs.msg",
                              reason="the set-up builds autoware_perception_msgs (interfaces/)")
    rx = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
    agents: dict[int, int] = {}
    objects: list = []
    subs = [ros_node.create_subscription(
                TrafficAgentArray, "traffic/agents",
                lambda m: agents.__setitem__(m.header.stamp.sec * 10**9 + m.header.stamp.nanosec,
                                             len(m.agents)), rx),
            ros_node.create_subscription(apm.PredictedObjects,
                                         "/perception/object_recognition/objects",
                                         objects.append, rx)]
    truth = start_node("ground_truth_node", params={"use_sim_time": True})
    engine, out = run_engine(ros_node, start_node, subs, 10.0, waits_for=("ground_truth",))
    out += truth.stop()
    assert engine.proc.returncode == 0, out
    stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in objects]
    assert len(stamps) > 1 and all(b - a >= 100_000_000 for a, b in zip(stamps, stamps[1:]))
    paired = [(agents[t], len(m.objects)) for t, m in zip(stamps, objects) if t in agents]
    assert paired and all(n == k for n, k in paired), paired[:5]
    assert any(k > 0 for _, k in paired) and objects[0].header.frame_id == "map"
