"""Serial platform output: line capacity checks and the link over a real pseudo-terminal."""
import os
import termios

import pytest

from vehicle_sim.core.config import ConfigError, build
from vehicle_sim.core.devices.serial_port import SerialSender
from vehicle_sim.core.motion.node_params import BridgeNodeParams
from vehicle_sim.core.motion.params import WireParams
from vehicle_sim.core.motion.wire import encode_binary, frame_bytes

WIRE = WireParams(format="binary", bits=16)


def test_capacity_is_checked_only_for_a_configured_port():
    BridgeNodeParams().check_serial_capacity(10_000)  # no serial_device: nothing to check
    fits = BridgeNodeParams(serial_device="/dev/ttyUSB0", serial_baud=115200,
                            serial_rate_hz=500.0)
    fits.check_serial_capacity(frame_bytes(WIRE, 6))  # 18 B x 10 bit x 500/s = 90 kbit/s


@pytest.mark.parametrize("baud, rate_hz, wire", [
    (9600, 100.0, WIRE),  # 18 B x 10 x 100 = 18 kbit/s > 0.9 x 9600
    (115200, 500.0, WireParams(bits=16)),  # text: 6 x 6 + 1 = 37 B -> 185 kbit/s
])
def test_a_line_too_slow_for_the_frames_is_refused_with_the_numbers(baud, rate_hz, wire):
    p = BridgeNodeParams(serial_device="/dev/ttyUSB0", serial_baud=baud, serial_rate_hz=rate_hz)
    with pytest.raises(ValueError, match=rf"serial_baud {baud} carries at most \d+ frames/s"):
        p.check_serial_capacity(frame_bytes(wire, 6))


def test_capacity_is_checked_at_the_rate_the_loop_sends():
    """350 Hz of a 500 Hz loop is every frame: 500 frames/s, not 350 (18 B x 10 bit x 500/s =
    90 kbit/s on a 38.4 kbit/s line was accepted)."""
    p = BridgeNodeParams(serial_device="/dev/ttyUSB0", serial_baud=115200, serial_rate_hz=350.0)
    p.check_serial_capacity(frame_bytes(WIRE, 6))  # 90 kbit/s < 0.9 x 115.2
    # 560 Hz would fit (100.8 kbit/s < 103.7); of an 800 Hz loop it is every frame: 144 kbit/s
    slow = BridgeNodeParams(serial_device="/dev/ttyUSB0", serial_baud=115200,
                            serial_rate_hz=560.0, platform_rate_hz=800.0)
    with pytest.raises(ValueError, match=r"serial_rate_hz 560 sends 800 frames/s \(every 1 of"):
        slow.check_serial_capacity(frame_bytes(WIRE, 6))


def test_unsupported_baud_and_rate_above_the_loop_are_refused():
    with pytest.raises(ConfigError, match="serial_baud"):
        build(BridgeNodeParams, {"serial_baud": 12345}, source="test")
    with pytest.raises(ValueError, match="serial_rate_hz must not exceed platform_rate_hz"):
        BridgeNodeParams(serial_rate_hz=1000.0)


@pytest.fixture
def pty():
    master, slave = os.openpty()
    path = os.ttyname(slave)
    yield master, path
    for fd in (master, slave):
        try:
            os.close(fd)
        except OSError:
            pass


def read_all(fd: int) -> bytes:
    os.set_blocking(fd, False)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except (BlockingIOError, OSError):
            return out
        if not chunk:
            return out
        out += chunk


def test_frames_arrive_whole_and_the_port_is_raw_8n1(pty):
    master, path = pty
    logs: list[str] = []
    link = SerialSender(path, 115200, logs.append)
    frames = [encode_binary([i / 10, 0.5, 1.0, 0.0, 0.25, 0.75], i, WIRE) for i in range(10)]
    frames.append(encode_binary([0.5] * 6, 10, WIRE)[:-2] + b"\n\r")  # bytes a tty would mangle
    for i, f in enumerate(frames):
        assert link.send(f, now_s=i * 0.01)
    assert read_all(master) == b"".join(frames), "raw mode: no CR/NL translation or echo"
    attrs = termios.tcgetattr(link.fd)
    assert attrs[4] == attrs[5] == termios.B115200
    assert attrs[2] & termios.CSIZE == termios.CS8 and not attrs[2] & termios.PARENB
    assert link.sent == len(frames) and link.dropped == 0 and logs == []
    link.stop()


def test_a_full_line_drops_frames_instead_of_blocking(pty):
    _master, path = pty  # nobody reads: the pty's buffer fills up
    link = SerialSender(path, 115200, lambda _: None)
    frame = encode_binary([0.5] * 6, 0, WIRE)
    results = [link.send(frame, now_s=0.0) for _ in range(20_000)]
    assert not all(results) and link.dropped > 0
    assert link.sent + link.dropped == len(results)
    link.stop()


def test_a_lost_port_is_logged_once_and_reopened_when_it_is_back(tmp_path, pty):
    master, path = pty
    logs: list[str] = []
    absent = str(tmp_path / "ttyUSB9")
    link = SerialSender(absent, 115200, logs.append, reopen_s=1.0)
    assert not link.connected and len(logs) == 1 and absent in logs[0] and "retry" in logs[0]
    frame = encode_binary([0.5] * 6, 0, WIRE)
    assert not link.send(frame, now_s=0.5) and len(logs) == 1
    os.symlink(path, absent)  # the adapter is plugged in
    assert not link.send(frame, now_s=0.9), "no retry before reopen_s"
    # the cycle it comes back in, its frame (made before anyone knew) is not written: the
    # caller restarts from neutral (reopened), the next frame goes out
    assert not link.send(frame, now_s=1.1) and "open again" in logs[-1] and link.reopened == 1
    assert read_all(master) == b""
    assert link.send(frame, now_s=1.11)
    assert read_all(master) == frame
    os.close(master)  # the far end goes away: writes fail with EIO
    assert not link.send(frame, now_s=2.0)
    assert link.losses == 1 and not link.connected and "lost" in logs[-1]
    link.stop()
