"""record:=true writes a real MCAP file whose messages decode with the ros2msg schemas."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

mcap_ros2 = pytest.importorskip("mcap_ros2.reader", reason="mcap-ros2-support not installed")

RUNNER = str(Path(sys.executable).parent / "vehicle_sim_run")


def test_recorded_run_decodes_with_increasing_sim_stamps(tmp_path):
    result = subprocess.run([RUNNER, "--mode", "fast", "--duration", "4", "--record", "true",
                             "--record_dir", str(tmp_path), "--timeout", "100"],
                            capture_output=True, text=True, timeout=150)
    assert result.returncode == 0, result.stdout + result.stderr
    files = list(tmp_path.glob("*.mcap"))
    assert len(files) == 1, result.stdout
    stamps, topics = [], set()
    with open(files[0], "rb") as f:
        for msg in mcap_ros2.read_ros2_messages(f):
            topics.add(msg.channel.topic)
            if msg.channel.topic == "/vehicle/state":
                ros = msg.ros_msg
                assert ros.header.frame_id == "odom" and ros.child_frame_id == "base_link"
                stamps.append(ros.header.stamp.sec * 10**9 + ros.header.stamp.nanosec)
    assert {"/vehicle/state", "/clock", "/sim/status", "/odom"} <= topics
    assert len(stamps) > 100 and all(b > a for a, b in zip(stamps, stamps[1:]))
    # the clock starts when every node is up, so a fast run is recorded from its first step
    assert stamps[0] <= 100_000_000, stamps[0]
