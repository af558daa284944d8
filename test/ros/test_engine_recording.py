"""The lockstep engine's recording (``vehicle_sim_run --engine true --record true``,
nodes.edge_recording): the engine writes its own edges to an MCAP file that readers other than
our writer read back (the mcap library's reader for bytes and log times, rosbags for types and
QoS, rclpy to deserialize): every state of the run, every recorded topic at the sim times its
messages left, and a seed gives the same bytes at the same log times."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from rclpy.serialization import deserialize_message

from vehicle_sim import ros_distro
from vehicle_sim.nodes.recorder_node import header_stamp_ns

make_reader = pytest.importorskip("mcap.reader", reason="mcap not installed").make_reader

RUNNER = str(Path(sys.executable).parent / "vehicle_sim_run")
DURATION_S = 4.0
STATE_PERIOD_NS = 10_000_000  # vehicle/state at 100 Hz of sim time (config/dynamics.yaml)
# what the engine publishes and the urban scenario's recorder records (vehicle/state_raw is
# excluded by the recorder's parameters; accidents only when there is one)
RECORDED = {"/clock", "/vehicle/state", "/odom", "/tf", "/tf_static", "/imu/data", "/gnss/fix",
            "/gnss/velocity", "/traffic/agents", "/traffic/lights", "/autonomy/control"}
UNSTAMPED = {"/clock", "/tf", "/tf_static"}  # their stamps are not a header's first field


def record(folder: Path) -> tuple[Path, str]:
    result = subprocess.run(
        [RUNNER, "--engine", "true", "--mode", "lockstep", "--duration", f"{DURATION_S:g}",
         "--seed", "3", "--record", "true", "--record_dir", str(folder), "--timeout", "200"],
        capture_output=True, text=True, timeout=260)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    (path,) = folder.glob("vehicle_sim-*.mcap")
    return path, out


def messages(path: Path) -> tuple[dict[str, list[tuple[int, bytes]]], dict[str, str]]:
    """Per topic its (log time [ns], bytes) in file order, and per topic its type."""
    by_topic: dict[str, list[tuple[int, bytes]]] = {}
    types: dict[str, str] = {}
    with open(path, "rb") as f:
        for schema, channel, message in make_reader(f).iter_messages(log_time_order=False):
            by_topic.setdefault(channel.topic, []).append((message.log_time, message.data))
            types[channel.topic] = schema.name
    return by_topic, types


def _import(datatype: str):
    pkg, _, name = datatype.split("/")
    return getattr(__import__(f"{pkg}.msg", fromlist=[name]), name)


def test_an_engine_run_records_every_edge_at_its_sim_time_and_repeats_with_its_seed(tmp_path):
    runs = [record(tmp_path / name) for name in ("a", "b")]
    (path, out), (path_b, _) = runs
    assert "not in the engine: recorder (recorder_node): the engine records its own edges" in out
    assert "recorded " in out and str(path) in out
    got, types = messages(path)
    assert RECORDED <= set(got) <= RECORDED | {"/accidents"}, sorted(got)
    assert types["/vehicle/state"] == "vehicle_sim/msg/VehicleState"
    assert types["/clock"] == "rosgraph_msgs/msg/Clock"
    for topic, items in got.items():
        log = [t for t, _ in items]
        assert log == sorted(log), f"{topic}: log times go back"
        msgs = [deserialize_message(data, _import(types[topic])) for _, data in items]
        if topic == "/clock":
            assert log == [m.clock.sec * 10**9 + m.clock.nanosec for m in msgs]
        elif topic == "/gnss/fix" or topic == "/gnss/velocity":
            # stamped at the measurement, sent (and logged) at its release, latency later
            lag = [t - header_stamp_ns(data) for t, data in items]
            assert all(0 <= d < 10**9 for d in lag), lag[:5]
        elif topic not in UNSTAMPED:
            assert log == [header_stamp_ns(data) for _, data in items], topic
    # every state of the run, once: 100 Hz of sim time from the first frame to the end
    states = [deserialize_message(data, _import(types["/vehicle/state"]))
              for _, data in got["/vehicle/state"]]
    stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in states]
    assert stamps == list(range(STATE_PERIOD_NS, round(DURATION_S * 1e9) + 1, STATE_PERIOD_NS))
    assert states[0].header.frame_id == "odom" and states[-1].twist.linear.x > 1.0
    agents = deserialize_message(got["/traffic/agents"][-1][1],
                                 _import(types["/traffic/agents"]))
    assert len(agents.agents) > 0 and agents.header.frame_id == "map"
    assert len(got["/tf_static"]) == 3, "map -> odom and the two sensor mounts, at 0"
    assert {t for t, _ in got["/tf_static"]} == {0}
    # the same seed: the same messages at the same sim times
    again, _ = messages(path_b)
    assert set(again) == set(got)
    for topic in got:
        assert again[topic] == got[topic], topic


def test_the_engines_recording_is_a_rosbag2_bag_with_the_qos_it_offers(tmp_path):
    """rosbags (not the mcap library we write with) reads it as a bag: types, the offered QoS
    of each channel and the message count of the rosbag2 metadata."""
    anyreader = pytest.importorskip("rosbags.highlevel", reason="rosbags not installed")
    from rosbags.interfaces import QosDurability, QosReliability
    path, _ = record(tmp_path)
    with anyreader.AnyReader([path]) as reader:
        types = {c.topic: c.msgtype for c in reader.connections}
        assert types["/traffic/agents"] == "vehicle_sim/msg/TrafficAgentArray"
        assert types["/autonomy/control"] == "vehicle_sim/msg/VehicleControl"
        offered = {c.topic: c.ext.offered_qos_profiles for c in reader.connections}
        assert offered["/clock"][0].reliability == QosReliability.RELIABLE
        assert offered["/imu/data"][0].reliability == QosReliability.RELIABLE  # qos.SENSOR
        assert len(offered["/tf_static"]) == 3, "one profile per publisher"
        assert all(q.durability == QosDurability.TRANSIENT_LOCAL for q in offered["/tf_static"])
        assert reader.message_count == sum(1 for _ in reader.messages())
        states = [reader.deserialize(raw, conn.msgtype) for conn, _, raw in reader.messages(
            connections=[c for c in reader.connections if c.topic == "/vehicle/state"])]
    assert len(states) == round(DURATION_S * 1e9 / STATE_PERIOD_NS)
    # the bag names the distribution it was recorded on: ROS_DISTRO, else this venv's record
    # (the writer once said jazzy on the Kilted venv)
    from mcap.reader import make_reader
    with path.open("rb") as f:
        meta = {m.name: m.metadata for m in make_reader(f).iter_metadata()}["rosbag2"]
    kept = Path(sys.prefix) / ros_distro.VENV_RECORD  # the venv's record (scripts/setup.sh)
    want = os.environ.get("ROS_DISTRO") or (kept.read_text().strip() if kept.is_file()
                                            else "kilted")
    assert meta["ROS_DISTRO"] == want
    assert f"ros_distro: {want}" in meta["serialized_metadata"]
