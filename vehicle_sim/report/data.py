"""A recording (MCAP with ros2msg schemas and CDR messages) as numpy arrays, without ROS.

Decoded with mcap_ros2 (the schemas embedded in the file), so a recording made by another build
of vehicle_sim still reads; a topic's channel must be of the type the report reads it as, and each
message within its topic's bound (TOPICS), checked before it is decoded. Times are the messages'
header stamps [s] of simulation time.
"""
from __future__ import annotations

import io
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path

import lz4.frame
import numpy as np
import zstandard
from mcap.data_stream import ReadDataStream
from mcap.exceptions import EndOfFile
from mcap.reader import SeekingReader
from mcap.records import Channel, Chunk, Schema
from mcap.stream_reader import StreamReader
from mcap_ros2.decoder import DecoderFactory

from vehicle_sim.core.rotations import yaw_from_xyzw

MAGIC = b"\x89MCAP0\r\n"  # an MCAP file's first and last 8 bytes (its specification)
FOOTER_BYTES = 1 + 8 + 8 + 8 + 4  # its footer record: opcode, length, 2 offsets, a CRC
# [bytes] bounds of one message, checked before it is decoded with the file's own schema: a few
# KB of zstd held a /vehicle/state of millions of 1-byte items, which took GBs as objects.
# A fixed-size message (state, control, status, imu, gnss: < 1 KB) or an event's strings
SMALL_MESSAGE_BYTES = 64 * 2**10
# a TrafficAgent's CDR (nodes/agent_cdr.py's layout): ~130 B with a lane name of ~10
# characters, here with up to ~70
AGENT_CDR_BYTES = 200
# a TrafficLight's CDR: ~40 B with its "signal:lane" id of up to ~24 characters
LIGHT_CDR_BYTES = 64
# agents and lights of one array the report reads (a choice: the largest traffic the benches
# run, bench_traffic's 20,000 agents). Not the traffic's own MAX_AGENTS (1e6): the file's schema
# may say an array of 1-byte items, one Python object (~120 B) each once decoded, so the bound
# of an array's bytes is what bounds the report's memory (~0.5 GB at 4 MB; 1e6 agents' 200 MB
# took 1.2 GB at 10 MB, measured)
MAX_ARRAY_ITEMS = 20_000
# the topics the report reads: (the type it reads each as, the bound of one message [bytes])
TOPICS = {
    "/vehicle/state": ("vehicle_sim/msg/VehicleState", SMALL_MESSAGE_BYTES),
    "/vehicle/control": ("vehicle_sim/msg/VehicleControl", SMALL_MESSAGE_BYTES),
    "/bridge/active_source": ("std_msgs/msg/String", SMALL_MESSAGE_BYTES),
    "/sim/status": ("vehicle_sim/msg/SimStatus", SMALL_MESSAGE_BYTES),
    "/traffic/agents": ("vehicle_sim/msg/TrafficAgentArray",
                        SMALL_MESSAGE_BYTES + MAX_ARRAY_ITEMS * AGENT_CDR_BYTES),
    "/traffic/lights": ("vehicle_sim/msg/TrafficLightArray",
                        SMALL_MESSAGE_BYTES + MAX_ARRAY_ITEMS * LIGHT_CDR_BYTES),
    "/accidents": ("vehicle_sim/msg/AccidentEvent", SMALL_MESSAGE_BYTES),
    "/imu/data": ("sensor_msgs/msg/Imu", SMALL_MESSAGE_BYTES),
    "/gnss/fix": ("sensor_msgs/msg/NavSatFix", SMALL_MESSAGE_BYTES),
}
# a decoded quaternion's (x, y, z, w), for yaw_from_xyzw: the nodes' yaw, to the bit
_XYZW = attrgetter("x", "y", "z", "w")
# [bytes] bound of any record and of what a chunk decompresses to, checked before it is: a
# recording's chunks are the mcap Writer's 1 MiB (its chunk_size) plus at most one message, and
# its largest messages are a shard's TrafficAgentArray (~140 B per agent in a recording: a few
# thousand agents are < 1 MB; at core.traffic.params.MAX_AGENTS, 1e6, ~140 MB) and the /map
# OccupancyGrid (export.occupancy.MAX_CELLS, 50 MB). A 46 KB file whose one zstd chunk holds a
# 1.5 GB message is refused instead of taking GBs of memory.
MAX_RECORD_BYTES = 256 * 2**20
# how much of a chunk's compressed data tells its frame's content size [bytes]: a zstd frame
# header is at most 18 bytes, an lz4 frame's 19 (their format specifications)
FRAME_HEAD_BYTES = 64
MAX_COMPRESSION_NAME = 64  # [bytes] mcap's names are '', 'zstd' and 'lz4'
# |value| beyond which a recorded number is no simulation's: positions are within 2 ODOM_MAX_M
# (core.frames: odom's origin plus a position in odom), times within MAX_RUN_DURATION_S (1e7 s).
# A row holding one, or a NaN or infinity, is left out (with a note): the report's sums and
# squares (path length, RMS) stay finite, and its JSON valid.
MAX_ABS_VALUE = 1e9


def _t(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


@dataclass
class Recording:
    """Columns per topic; every array is float64, one row per message."""
    path: Path
    map_file: str = ""
    vehicle_file: str = ""  # the ego's (metadata of recordings since vehicle_file was written)
    # t, x, y, yaw, vx, vy, yaw_rate, ax, ay (base_link accelerations, gravity excluded)
    state: np.ndarray = field(default_factory=lambda: np.zeros((0, 9)))
    control: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))  # t, steer, thr, brk
    sources: list[tuple[float, str]] = field(default_factory=list)  # (log time, source)
    # t, rtf, lateness p50, p99, max
    status: np.ndarray = field(default_factory=lambda: np.zeros((0, 5)))
    # per snapshot: (t, agents (n, 7): id, x, y, yaw, speed, length, width)
    agents: list[tuple[float, np.ndarray]] = field(default_factory=list)
    # per snapshot: (t, {light id: (state, x, y)})
    lights: list[tuple[float, dict[str, tuple[int, float, float]]]] = field(default_factory=list)
    accidents: list[dict] = field(default_factory=list)
    imu: np.ndarray = field(default_factory=lambda: np.zeros((0, 7)))  # t, ax, ay, az, gx, gy, gz
    gnss: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))  # t, lat, lon, alt
    notes: list[str] = field(default_factory=list)  # what was left out, for the report's notes

    @property
    def duration_s(self) -> float:
        return float(self.state[-1, 0] - self.state[0, 0]) if len(self.state) > 1 else 0.0


PARTS = ("front", "rear", "left side", "right side", "unknown")


def _accident(m) -> dict:
    return {"time_s": _t(m.header.stamp), "id": int(m.id), "actor": m.actor, "victim": m.victim,
            "actor_part": PARTS[min(m.actor_part, 4)], "victim_part": PARTS[min(m.victim_part, 4)],
            "impact_speed_mps": float(m.impact_speed),
            "position_m": [float(m.position.x), float(m.position.y)],
            "scripted": bool(m.source == 1)}


def read_recording(path: str | Path) -> Recording:
    """Read ``path``; raises ValueError naming the file when it is not a readable MCAP."""
    path = Path(path)
    rec = Recording(path)
    rows: dict[str, list] = {t: [] for t in TOPICS}
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block the open
            raise ValueError("not a regular file")
        with open(path, "rb") as f:
            _check_ends(f)
            reader = SeekingReader(f, record_size_limit=MAX_RECORD_BYTES)
            _check_chunks(f, reader)
            for record in reader.iter_metadata():
                if record.name == "vehicle_sim":
                    rec.map_file = record.metadata.get("map_file", "")
                    rec.vehicle_file = record.metadata.get("vehicle_file", "")
            decoders = Decoders()
            for schema, channel, message in reader.iter_messages(topics=list(TOPICS)):
                m = decoders.decode(schema, channel, message.data)
                _take(rec, rows, channel.topic, message.log_time, m)
    except CutShort as exc:
        raise ValueError(f"{path}: {exc}") from None
    except (OSError, ValueError, KeyError, EOFError) as exc:
        raise ValueError(f"{path}: not a readable vehicle_sim recording ({exc})") from None
    except EndOfFile:
        raise ValueError(f"{path}: not a readable MCAP file (it ends inside a record: cut "
                         "short)") from None
    except Exception as exc:  # the mcap readers raise their own types on a damaged file
        raise ValueError(f"{path}: not a readable MCAP file ({type(exc).__name__}: {exc})") \
            from None
    _columns(rec, rows)
    return rec


class CutShort(ValueError):
    """A recording that starts as an MCAP file but does not end as one."""


def _check_ends(f) -> None:
    """CutShort when ``f`` starts as an MCAP file but does not end with a footer and the magic:
    a recorder killed (SIGKILL, a crash) leaves its file so, and the reader took its last bytes
    for a footer ("unknown (opcode 0) record has length 2556207854172241952")."""
    head = f.read(len(MAGIC))
    size = f.seek(0, io.SEEK_END)
    f.seek(max(size - len(MAGIC), 0), io.SEEK_SET)
    if head == MAGIC and (size < 2 * len(MAGIC) + FOOTER_BYTES or f.read() != MAGIC):
        raise CutShort("cut short (no MCAP footer: the recorder did not finish the file)")
    f.seek(0, io.SEEK_SET)


class Decoders:
    """mcap_ros2's decoder per channel, each message checked before it is decoded: the channel
    of the type the report reads its topic as, the message within its topic's bound (TOPICS).
    The file's own schema says what a message holds, so a hostile one of the right name may
    say millions of items in a few KB: the bound is what keeps the decoded objects in check."""

    def __init__(self) -> None:
        self._factory = DecoderFactory()
        self._decoders: dict[int, Callable[[bytes], object]] = {}  # channel id -> decoder

    def decode(self, schema: Schema | None, channel: Channel, data: bytes):
        limit = TOPICS[channel.topic][1]
        if len(data) > limit:
            raise ValueError(f"a {channel.topic} message of {len(data)} bytes is over the "
                             f"report's limit of {limit} bytes for that topic (a damaged or "
                             "hostile file)")
        decoder = self._decoders.get(channel.id)
        if decoder is None:
            decoder = self._decoders[channel.id] = self._decoder_for(schema, channel)
        return decoder(data)

    def _decoder_for(self, schema: Schema | None, channel: Channel):
        expected = TOPICS[channel.topic][0]
        name = schema.name if schema is not None else "no schema"
        if name != expected:
            raise ValueError(f"{channel.topic} is of type {name!r}, not {expected!r} (the report "
                             "reads no other)")
        decoder = self._factory.decoder_for(channel.message_encoding, schema)
        if decoder is None:
            raise ValueError(f"{channel.topic}: messages in {channel.message_encoding!r} with a "
                             f"{schema.encoding!r} schema, not CDR with ros2msg")
        return decoder


def _columns(rec: Recording, rows: dict[str, list]) -> None:
    """``rows`` into ``rec``'s arrays, sorted by time; rows, agents, lights and accidents with
    a NaN, infinite or out-of-range number (MAX_ABS_VALUE) left out, counted in one note."""
    left_out: list[str] = []  # "n of N <topic> <items>" per topic with numbers left out
    for topic, name, width in (("/vehicle/state", "state", 9), ("/vehicle/control", "control", 4),
                               ("/sim/status", "status", 5), ("/imu/data", "imu", 7),
                               ("/gnss/fix", "gnss", 4)):
        if rows[topic]:
            data = np.array(rows[topic], dtype=np.float64).reshape(-1, width)
            # a fix's NaN is its "no fix" (core.sensors.gnss), for sensors.sensor_errors to skip
            keep = _usable(data, nan_ok=topic == "/gnss/fix")
            _count(left_out, topic, "messages", np.count_nonzero(~keep), len(keep))
            data = data[keep]
            setattr(rec, name, data[np.argsort(data[:, 0], kind="stable")])
    agents, bad = [], 0
    for t, table in rec.agents:
        keep = _usable(table[:, 1:]) & _ok(t)  # an id (uint32) may be beyond MAX_ABS_VALUE
        bad += np.count_nonzero(~keep)
        if _ok(t):
            agents.append((t, table[keep]))
    _count(left_out, "/traffic/agents", "agents", bad, sum(len(a) for _, a in rec.agents))
    lights, bad = [], 0
    for t, states in rec.lights:
        kept = {k: v for k, v in states.items() if _ok(t, *v)}
        bad += len(states) - len(kept)
        if _ok(t):
            lights.append((t, kept))
    _count(left_out, "/traffic/lights", "lights", bad, sum(len(lt) for _, lt in rec.lights))
    accidents = [a for a in rec.accidents
                 if _ok(a["time_s"], a["impact_speed_mps"], *a["position_m"])]
    _count(left_out, "/accidents", "messages", len(rec.accidents) - len(accidents),
           len(rec.accidents))
    rec.agents, rec.lights, rec.accidents = agents, lights, accidents
    if left_out:
        rec.notes.append(f"left out for NaN, infinite or beyond ±{MAX_ABS_VALUE:g} numbers: "
                         + ", ".join(left_out))


def _usable(data: np.ndarray, nan_ok: bool = False) -> np.ndarray:
    """Which rows of ``data`` (n, k) are all within ±MAX_ABS_VALUE (NaN too with ``nan_ok``)."""
    inside = np.abs(data) <= MAX_ABS_VALUE  # False for NaN and infinities
    return (inside | np.isnan(data) if nan_ok else inside).all(axis=1)


def _ok(*values: float) -> bool:
    return all(abs(v) <= MAX_ABS_VALUE for v in values)  # False for NaN and infinities


def _count(left_out: list[str], topic: str, items: str, bad: int, total: int) -> None:
    if bad:
        left_out.append(f"{bad} of {total} {topic} {items}")


def _check_chunks(f, reader: SeekingReader) -> None:
    """ValueError when a chunk of ``f`` would decompress to more than MAX_RECORD_BYTES, by its
    header or by its frame's declared content size (a lying header), before the reader
    decompresses it: the chunks the reader reads, those of its summary's chunk indexes or,
    without any, those in the file's order."""
    for uncompressed_size, compression, data in _chunk_heads(f, reader):
        size = max(uncompressed_size, _declared_size(compression, data))
        if size > MAX_RECORD_BYTES:
            raise ValueError(f"a chunk decompresses to {size} bytes, over the report's limit of "
                             f"{MAX_RECORD_BYTES} (a damaged or hostile file)")
    f.seek(0, io.SEEK_SET)


def _chunk_heads(f, reader: SeekingReader):
    """Each chunk's (uncompressed_size, compression, compressed data): with chunk indexes the
    data only as far as its frame header (``_read_head``), else whole (a stream read)."""
    summary = reader.get_summary()
    if summary is None or not summary.chunk_indexes:
        f.seek(0, io.SEEK_SET)
        yield from ((r.uncompressed_size, r.compression, r.data)
                    for r in StreamReader(f, emit_chunks=True,
                                          record_size_limit=MAX_RECORD_BYTES).records
                    if isinstance(r, Chunk))
        return
    for index in summary.chunk_indexes:
        if index.chunk_length > MAX_RECORD_BYTES:
            raise ValueError(f"a chunk of {index.chunk_length} bytes is over the report's limit "
                             f"of {MAX_RECORD_BYTES} (a damaged or hostile file)")
        f.seek(index.chunk_start_offset + 1 + 8, io.SEEK_SET)  # where SeekingReader reads it
        yield _read_head(ReadDataStream(f))


def _read_head(stream: ReadDataStream) -> tuple[int, str, bytes]:
    """A chunk record's fields (mcap's Chunk.read) with its compressed data read only as far as
    the frame header (FRAME_HEAD_BYTES): a recording is read once, not twice. An lz4 chunk is
    read whole: it is decompressed to be measured (``_declared_size``)."""
    stream.read8(), stream.read8()  # message start and end time
    uncompressed_size = stream.read8()
    stream.read4()  # uncompressed crc
    length = stream.read4()
    if length > MAX_COMPRESSION_NAME:
        raise ValueError(f"a chunk's compression name of {length} bytes (a damaged file)")
    compression = str(stream.read(length), "utf-8")
    data_length = stream.read8()
    wanted = data_length if compression == "lz4" else min(data_length, FRAME_HEAD_BYTES)
    data = stream.read(wanted)
    return uncompressed_size, compression, data


def _declared_size(compression: str, data: bytes) -> int:
    """What a chunk's compressed frame ``data`` holds [bytes]. A zstd frame by what its header
    says (0: not said; mcap's zstandard then bounds the output by the chunk's uncompressed_size,
    and refuses a frame holding more than its header says). An lz4 frame by decompressing it up
    to the limit: mcap decompresses lz4 without a bound, and a frame may hold more than its
    header says (a header of 1000 bytes over 1 GiB of zeros took 1 GB of memory)."""
    if compression == "zstd":  # zstandard and lz4: mcap's codecs (its dependencies)
        return max(zstandard.frame_content_size(data), 0)  # -1: not in the frame
    if compression == "lz4":
        return len(lz4.frame.LZ4FrameDecompressor().decompress(
            data, max_length=MAX_RECORD_BYTES + 1))
    return 0


def _take(rec: Recording, rows: dict[str, list], topic: str, log_ns: int, m) -> None:
    if topic == "/vehicle/state":
        a = m.linear_acceleration
        rows[topic].append((_t(m.header.stamp), m.pose.position.x, m.pose.position.y,
                            yaw_from_xyzw(*_XYZW(m.pose.orientation)), m.twist.linear.x,
                            m.twist.linear.y, m.twist.angular.z, a.x, a.y))
    elif topic == "/vehicle/control":
        rows[topic].append((_t(m.header.stamp), m.steering_angle, m.throttle, m.brake))
    elif topic == "/bridge/active_source":
        rec.sources.append((log_ns * 1e-9, m.data))
    elif topic == "/sim/status":
        rows[topic].append((m.sim_time, m.real_time_factor, m.lateness_p50, m.lateness_p99,
                            m.lateness_max))
    elif topic == "/traffic/agents":
        agents = np.array([(a.id, a.pose.position.x, a.pose.position.y,
                            yaw_from_xyzw(*_XYZW(a.pose.orientation)), a.speed, a.length,
                            a.width) for a in m.agents if not a.ghost],
                          dtype=np.float64).reshape(-1, 7)
        rec.agents.append((_t(m.header.stamp), agents))
    elif topic == "/traffic/lights":
        rec.lights.append((_t(m.header.stamp), {lt.id: (int(lt.state), lt.position.x,
                                                          lt.position.y)
                                                 for lt in m.lights if not lt.pedestrian}))
    elif topic == "/accidents":
        rec.accidents.append(_accident(m))
    elif topic == "/imu/data":
        a, g = m.linear_acceleration, m.angular_velocity
        rows[topic].append((_t(m.header.stamp), a.x, a.y, a.z, g.x, g.y, g.z))
    elif topic == "/gnss/fix":
        rows[topic].append((_t(m.header.stamp), m.latitude, m.longitude, m.altitude))
