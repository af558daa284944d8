"""vehicle_sim_live over real DDS and a real WebSocket client: the Foxglove channels are
advertised, a subscribed channel carries the ego published on vehicle/state (the size of the
vehicle file it is given), and the server binds to loopback by default."""
from __future__ import annotations

import asyncio
import json
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from vehicle_sim.msg import VehicleState

from vehicle_sim.nodes import qos

pytest.importorskip("foxglove", reason="foxglove-sdk is not installed (extra 'live')")
websockets = pytest.importorskip("websockets", reason="websockets is not installed")

CHANNELS = {"/live/ego", "/live/agents", "/live/lights", "/live/map", "/live/gnss",
            "/live/status", "/live/accidents", "/live/imu", "/live/ego_state"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def first_ego_message(port: int, publish) -> tuple[dict, bytes]:
    """Connect, read the advertisement, subscribe to /live/ego and return (advertised channels
    by topic, the first binary message data)."""
    url = f"ws://127.0.0.1:{port}"
    protocols = ["foxglove.sdk.v1", "foxglove.websocket.v1"]  # the SDK's, the older name
    async with websockets.connect(url, subprotocols=protocols) as ws:
        channels: dict = {}
        while not CHANNELS <= set(channels):
            msg = json.loads(await asyncio.wait_for(ws.recv(), 30.0))
            if msg.get("op") == "advertise":
                channels.update({c["topic"]: c for c in msg["channels"]})
        await ws.send(json.dumps({"op": "subscribe", "subscriptions": [
            {"id": 7, "channelId": channels["/live/ego"]["id"]}]}))
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline:
            publish()
            try:
                data = await asyncio.wait_for(ws.recv(), 0.2)
            except TimeoutError:
                continue
            if isinstance(data, bytes) and data[0] == 1:
                return channels, data
        raise AssertionError("no /live/ego message within 30 s")


@pytest.mark.parametrize("vehicle_file", [None, "vehicles/truck.yaml"])
def test_channels_are_advertised_and_the_ego_arrives(ros_node, start_node, vehicle_file):
    """... as a box of its vehicle file's length and width (default: the medium car)."""
    from vehicle_sim.core.vehicle.params import load_vehicle
    from vehicle_sim.live import scene
    from vehicle_sim.paths import config_path

    port = free_port()
    given = {} if vehicle_file is None else {"vehicle_file": vehicle_file}
    proc = start_node("vehicle_sim_live", params={"port": port, **given})
    pub = ros_node.create_publisher(VehicleState, "vehicle/state", qos.STATE)
    ros_node.spin_until(lambda: pub.get_subscription_count() > 0, timeout_s=60.0,
                        what="the live view's vehicle/state subscription")
    state = VehicleState()
    state.header.stamp.sec, state.header.frame_id = 12, "odom"
    state.pose.position.x, state.pose.position.y, state.pose.orientation.w = 31.5, -1.75, 1.0

    def publish() -> None:
        pub.publish(state)
        ros_node.test_executor.spin_once(timeout_sec=0.0)

    channels, data = asyncio.run(first_ego_message(port, publish))
    assert channels["/live/ego"]["schemaName"] == "foxglove.SceneUpdate"
    assert channels["/live/status"]["encoding"] == "json"
    sub_id, log_time_ns = struct.unpack_from("<IQ", data, 1)
    assert sub_id == 7 and log_time_ns == 12_000_000_000  # the state's simulation time
    car = load_vehicle(config_path("vehicles/medium_car.yaml")).chassis
    ego = load_vehicle(config_path(vehicle_file or "vehicles/medium_car.yaml")).chassis
    assert data[13:] == scene.ego_scene(state, ego.length_m, ego.width_m).encode()
    assert (data[13:] == scene.ego_scene(state, car.length_m, car.width_m).encode()) == \
        (vehicle_file is None)  # a truck is drawn longer than the car
    assert proc.proc.poll() is None
    assert listening_addresses(port) == {"0100007F"}  # 127.0.0.1 only, by default


def listening_addresses(port: int) -> set[str]:
    """Local addresses (hex, /proc/net/tcp) of the TCP sockets listening on ``port``."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, hex_port = local.split(":")
        if state == "0A" and int(hex_port, 16) == port:
            found.add(address)
    return found


def test_a_taken_port_is_refused_with_one_line(start_node):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        proc = start_node("vehicle_sim_live", params={"port": taken.getsockname()[1]})
        proc.proc.wait(timeout=60)
        out = proc.stop()
    assert proc.proc.returncode == 2, out
    assert "refusing to start" in out and "Traceback" not in out, out


def test_a_vehicle_file_that_does_not_read_is_refused_with_one_line(start_node):
    proc = start_node("vehicle_sim_live", params={"port": free_port(),
                                                  "vehicle_file": "vehicles/no_such_car.yaml"})
    proc.proc.wait(timeout=60)
    out = proc.stop()
    assert proc.proc.returncode == 2, out
    refused = [line for line in out.splitlines() if "refusing to start" in line]
    assert len(refused) == 1 and "no_such_car.yaml" in refused[0], out
    assert "Traceback" not in out, out


async def ego_from_a_run(port: int, runner) -> bytes:
    """Connect to the runner's live view as soon as it listens; the first /live/ego message."""
    deadline = time.monotonic() + 120.0
    while True:
        try:
            async with websockets.connect(f"ws://127.0.0.1:{port}",
                                          subprotocols=["foxglove.sdk.v1"]) as ws:
                channels: dict = {}
                while "/live/ego" not in channels:
                    msg = json.loads(await asyncio.wait_for(ws.recv(), 30.0))
                    if msg.get("op") == "advertise":
                        channels.update({c["topic"]: c["id"] for c in msg["channels"]})
                await ws.send(json.dumps({"op": "subscribe", "subscriptions": [
                    {"id": 1, "channelId": channels["/live/ego"]}]}))
                while True:
                    data = await asyncio.wait_for(ws.recv(), 120.0)
                    if isinstance(data, bytes) and data[0] == 1:
                        return data
        except OSError:
            assert runner.poll() is None and time.monotonic() < deadline, "no live view"
            await asyncio.sleep(0.5)


def test_the_runner_starts_the_live_view_with_live_true(tmp_path):
    """... drawing the run's ego: a truck's length, not the default car's."""
    from vehicle_sim.core.vehicle.params import load_vehicle
    from vehicle_sim.paths import config_path

    truck = load_vehicle(config_path("vehicles/truck.yaml")).chassis
    car = load_vehicle(config_path("vehicles/medium_car.yaml")).chassis
    port = free_port()
    runner = subprocess.Popen(
        [str(Path(sys.executable).parent / "vehicle_sim_run"), "--mode", "lockstep",
         "--duration", "8", "--live", "true", "--live_port", str(port), "--record_dir",
         str(tmp_path), "--timeout", "240", "--vehicle_file", "vehicles/truck.yaml"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        data = asyncio.run(ego_from_a_run(port, runner))
        assert struct.unpack_from("<I", data, 1)[0] == 1
        # the box's length, a protobuf double (foxglove.Vector3.x) in the SceneUpdate
        assert struct.pack("<d", truck.length_m) in data
        assert struct.pack("<d", car.length_m) not in data
        out, _ = runner.communicate(timeout=240)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 0, out[-3000:]
    assert "live_view: exit" in out and "Foxglove WebSocket on ws://127.0.0.1" in out, out[-3000:]
