"""vehicle_sim_report on hostile recordings: a decompression bomb is refused in one line before
it is decompressed; NaN and absurd numbers are left out with a note, and the JSON stays JSON."""
from __future__ import annotations

import io
import json
import math
import struct
import warnings

import lz4.frame
import mcap.stream_reader
import mcap_ros2.decoder
import numpy as np
import pytest
import zstandard
from mcap.data_stream import RecordBuilder
from mcap.opcode import Opcode
from mcap.reader import SeekingReader, make_reader
from mcap.records import Channel, ChunkIndex, DataEnd, Footer, Header, Schema
from mcap.writer import CompressionType, IndexType
from mcap.writer import Writer as McapWriter
from mcap_ros2.writer import Writer

from vehicle_sim.report import cli
from vehicle_sim.report import data as report_data
from vehicle_sim.report.data import MAX_ABS_VALUE, MAX_RECORD_BYTES, _check_chunks, read_recording

MAGIC = b"\x89MCAP0\r\n"
_ZEROS = bytes(2**20)


def _xxh32(data: bytes) -> int:
    """xxHash32 (seed 0) of fewer than 16 bytes: an lz4 frame descriptor's checksum."""
    p1, p2, p3, p4, p5, m = 2654435761, 2246822519, 3266489917, 668265263, 374761393, 2**32 - 1

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & m
    h = (p5 + len(data)) & m
    whole = len(data) // 4 * 4
    for (lane,) in struct.iter_unpack("<I", data[:whole]):
        h = rotl((h + lane * p3) & m, 17) * p4 & m
    for byte in data[whole:]:
        h = rotl((h + byte * p5) & m, 11) * p1 & m
    h = (h ^ (h >> 15)) * p2 & m
    h = (h ^ (h >> 13)) * p3 & m
    return h ^ (h >> 16)


def _lz4_saying(records: bytes, said: int) -> bytes:
    """An lz4 frame of ``records`` whose header says it holds ``said`` bytes (checksum right)."""
    frame = lz4.frame.compress(records, store_size=True)
    descriptor = frame[4:6] + struct.pack("<Q", said)  # FLG, BD, content size
    return frame[:4] + descriptor + bytes([_xxh32(descriptor) >> 8 & 0xFF]) + frame[15:]


def _bomb(path, size: int, *, indexed: bool = True, declared: int | None = None,
          codec: str = "zstd") -> None:
    """An MCAP whose one chunk (``codec`` zstd or lz4) holds a std_msgs/String message of
    ``size`` bytes on /bridge/active_source (tens of KB on disk); the chunk says it is
    ``declared`` bytes uncompressed (default: what it is); its zstd frame says what it is, its
    lz4 frame says ``declared`` too."""
    rb = RecordBuilder()
    rb.write(MAGIC)
    Header(profile="ros2", library="test").write(rb)
    schema = Schema(id=1, name="std_msgs/msg/String", encoding="ros2msg", data=b"string data")
    channel = Channel(id=1, topic="/bridge/active_source", message_encoding="cdr", metadata={},
                      schema_id=1)
    schema.write(rb)
    channel.write(rb)
    data = b"\x00\x01\x00\x00" + struct.pack("<I", size - 8)  # CDR string, its NUL included
    records = 9 + 22 + size
    head = struct.pack("<BQHIQQ", Opcode.MESSAGE, 22 + size, 1, 0, 1, 1) + data
    declared = records if declared is None else declared
    if codec == "lz4":
        compressed = _lz4_saying(head + bytes(size - len(data)), declared)
    else:
        out = zstandard.ZstdCompressor(level=1).compressobj(size=records)
        parts = [out.compress(head)]
        for k in range(0, size - len(data), len(_ZEROS)):
            parts.append(out.compress(_ZEROS[:min(len(_ZEROS), size - len(data) - k)]))
        compressed = b"".join(parts) + out.flush()
    body = (struct.pack("<QQQI", 1, 1, declared, 0) + struct.pack("<I", len(codec))
            + codec.encode() + struct.pack("<Q", len(compressed)) + compressed)
    chunk_at = rb.count
    rb.write(struct.pack("<BQ", Opcode.CHUNK, len(body)) + body)
    DataEnd(data_section_crc=0).write(rb)
    summary_at = rb.count
    if indexed:
        schema.write(rb)
        channel.write(rb)
        ChunkIndex(chunk_length=9 + len(body), chunk_start_offset=chunk_at, compression=codec,
                   compressed_size=len(compressed), message_end_time=1, message_index_length=0,
                   message_index_offsets={}, message_start_time=1,
                   uncompressed_size=declared).write(rb)
    Footer(summary_start=summary_at if indexed else 0, summary_offset_start=0,
           summary_crc=0).write(rb)
    rb.write(MAGIC)
    path.write_bytes(rb.end())


@pytest.fixture
def no_decompression(monkeypatch):
    """The mcap reader's zstd decompression fails the test (a bomb must be refused first)."""
    def refuse(*_):
        raise AssertionError("a chunk was decompressed")
    monkeypatch.setattr(mcap.stream_reader.zstandard, "decompress", refuse)


def test_the_crafted_file_reads_when_small(tmp_path):
    path = tmp_path / "small.mcap"
    _bomb(path, 100)
    assert [len(s) for _, s in read_recording(path).sources] == [100 - 9]


def test_a_decompression_bomb_is_refused_in_one_line_before_it_is_decompressed(
        tmp_path, capsys, no_decompression):
    """Issue: a 46 KB file with a 1.5 GB message took 4.46 GB of memory."""
    path = tmp_path / "bomb.mcap"
    _bomb(path, MAX_RECORD_BYTES)
    assert path.stat().st_size < 100_000
    assert cli.main([str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and str(path) in err, err
    assert f"a chunk decompresses to {MAX_RECORD_BYTES + 31} bytes" in err, err


@pytest.mark.parametrize("indexed, declared", [
    (False, None),  # no summary: the chunks in the file's order
    (True, 1000),  # a chunk header that lies: the zstd frame's content size is believed
])
def test_a_bomb_without_index_or_with_a_lying_header_is_refused(tmp_path, no_decompression,
                                                                 indexed, declared):
    path = tmp_path / "bomb.mcap"
    _bomb(path, MAX_RECORD_BYTES, indexed=indexed, declared=declared)
    with pytest.raises(ValueError, match=f"{path}: .*a chunk decompresses to "
                                         f"{MAX_RECORD_BYTES + 31} bytes"):
        read_recording(path)


def test_an_lz4_frame_holding_more_than_its_header_says_is_refused_before_mcap_reads_it(
        tmp_path, monkeypatch):
    """mcap decompresses lz4 without a bound: a chunk and a frame header both saying 1000 bytes
    over 1 GiB of zeros took 1 GB of memory. The check decompresses lz4 itself, up to the
    limit (here lowered to 1 MiB, so the test holds only 2 MiB)."""
    monkeypatch.setattr(report_data, "MAX_RECORD_BYTES", 2**20)
    monkeypatch.setattr(mcap.stream_reader.lz4, "decompress", lambda *_: pytest.fail(
        "mcap decompressed the chunk"))
    path = tmp_path / "bomb.mcap"
    _bomb(path, 2 * 2**20, declared=1000, codec="lz4")
    raw = path.read_bytes()
    frame = raw[raw.index(b"lz4") + 3 + 8:]  # after the chunk's compression name and length
    assert lz4.frame.get_frame_info(frame)["content_size"] == 1000, "the frame header lies"
    with pytest.raises(ValueError, match=f"a chunk decompresses to {2**20 + 1} bytes"):
        read_recording(path)


STATE_SCHEMA = """std_msgs/Header header
geometry_msgs/Pose pose
geometry_msgs/Twist twist
geometry_msgs/Vector3 linear_acceleration
""" + "".join(f"{'=' * 80}\nMSG: {name}\n{text}" for name, text in (
    ("std_msgs/Header", "builtin_interfaces/Time stamp\nstring frame_id\n"),
    ("builtin_interfaces/Time", "int32 sec\nuint32 nanosec\n"),
    ("geometry_msgs/Pose", "Point position\nQuaternion orientation\n"),
    ("geometry_msgs/Point", "float64 x\nfloat64 y\nfloat64 z\n"),
    ("geometry_msgs/Quaternion", "float64 x\nfloat64 y\nfloat64 z\nfloat64 w\n"),
    ("geometry_msgs/Twist", "Vector3 linear\nVector3 angular\n"),
    ("geometry_msgs/Vector3", "float64 x\nfloat64 y\nfloat64 z\n")))


def _states(path, xs: list[float]) -> None:
    """A recording of /vehicle/state at 10 Hz, the ego at x = xs[k], driving at 10 m/s."""
    with open(path, "wb") as f:
        writer = Writer(f)
        schema = writer.register_msgdef("vehicle_sim/msg/VehicleState", STATE_SCHEMA)
        v3 = {"x": 0.0, "y": 0.0, "z": 0.0}
        for k, x in enumerate(xs):
            writer.write_message("/vehicle/state", schema, {
                "header": {"stamp": {"sec": k // 10, "nanosec": k % 10 * 100_000_000},
                           "frame_id": "odom"},
                "pose": {"position": {"x": x, "y": 0.0, "z": 0.0},
                         "orientation": {"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0}},
                "twist": {"linear": {**v3, "x": 10.0}, "angular": v3},
                "linear_acceleration": v3}, log_time=k * 100_000_000)
        writer.finish()


def test_nan_and_absurd_positions_are_left_out_with_a_note_and_the_json_is_valid(tmp_path):
    """Issue: NaN and 1e308 positions gave "distance_m": NaN / Infinity (not JSON) and numpy
    overflow warnings."""
    path = tmp_path / "nan.mcap"
    xs = [float(k) for k in range(20)]
    xs[3], xs[7], xs[11] = math.nan, 1e308, -math.inf
    _states(path, xs)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's overflow warnings
        files = cli.write_report(path, tmp_path / "out")

    def refuse(constant):
        raise AssertionError(f"{constant} in the JSON")
    summary = json.loads(files["summary"].read_text(), parse_constant=refuse)
    assert summary["state_samples"] == 17
    assert summary["distance_m"] == pytest.approx(19.0)  # the rows left out, the path unbroken
    assert (f"left out for NaN, infinite or beyond ±{MAX_ABS_VALUE:g} numbers: 3 of 20 "
            "/vehicle/state messages") in summary["notes"]


def test_a_recording_of_plain_numbers_has_no_such_note(tmp_path):
    path = tmp_path / "plain.mcap"
    _states(path, [float(k) for k in range(20)])
    rec = read_recording(path)
    assert len(rec.state) == 20 and rec.notes == []


@pytest.mark.parametrize("index_types, compression", [
    (IndexType.NONE, CompressionType.ZSTD),  # chunks checked in the file's order, no summary
    (IndexType.ALL, CompressionType.LZ4),  # lz4 frames' sizes
])
def test_unindexed_and_lz4_recordings_still_read(tmp_path, index_types, compression):
    path, unindexed = tmp_path / "plain.mcap", tmp_path / "other.mcap"
    _states(path, [float(k) for k in range(5)])
    with open(path, "rb") as src, open(unindexed, "wb") as f:
        writer = McapWriter(f, index_types=index_types, compression=compression)
        writer.start("ros2", "test")
        sid = writer.register_schema("vehicle_sim/msg/VehicleState", "ros2msg",
                                     STATE_SCHEMA.encode())
        cid = writer.register_channel("/vehicle/state", "cdr", sid)
        for _, _, m in make_reader(src).iter_messages():
            writer.add_message(cid, m.log_time, m.data, m.publish_time)
        writer.finish()
    assert read_recording(unindexed).state.tolist() == read_recording(path).state.tolist()


class CountingFile(io.FileIO):
    """A file that counts the bytes read from it (under a buffered reader, as open() gives)."""

    taken = 0

    def readinto(self, b):
        n = super().readinto(b)
        self.taken += n or 0
        return n


def test_the_size_check_reads_the_chunks_headers_not_their_data(tmp_path):
    """With chunk indexes, the bomb check reads each chunk only as far as its frame header: a
    recording is read once by the mcap reader, not a second time by the check (it read the
    whole 4 MB before; now ~1 %, a buffer's 8 KiB at each chunk and the summary)."""
    path = tmp_path / "noise.mcap"
    rng = np.random.default_rng(1)
    with open(path, "wb") as f:
        writer = McapWriter(f, compression=CompressionType.ZSTD)
        writer.start("ros2", "test")
        sid = writer.register_schema("std_msgs/msg/String", "ros2msg", b"string data")
        cid = writer.register_channel("/bridge/active_source", "cdr", sid)
        for k in range(40):  # 40 x 100 kB of noise: a few 1 MiB chunks, incompressible
            writer.add_message(cid, k, rng.bytes(100_000), k)
        writer.finish()
    raw = CountingFile(path, "rb")
    with io.BufferedReader(raw) as f:
        _check_chunks(f, SeekingReader(f, record_size_limit=MAX_RECORD_BYTES))
        assert raw.taken < 0.05 * path.stat().st_size, (raw.taken, path.stat().st_size)


def test_a_recording_cut_short_says_so(tmp_path):
    path = tmp_path / "plain.mcap"
    _states(path, [float(k) for k in range(20)])
    cut = tmp_path / "cut.mcap"
    whole = path.read_bytes()
    for end in range(len(MAGIC) + 1, len(whole) - 1, 7):
        cut.write_bytes(whole[:end])
        with pytest.raises(ValueError) as err:
            read_recording(cut)
        assert str(err.value) == f"{cut}: {CUT_SHORT}"


CUT_SHORT = "cut short (no MCAP footer: the recorder did not finish the file)"


def test_a_recording_without_its_footer_says_the_recorder_did_not_finish_it(tmp_path, capsys):
    """Issue: a file as a SIGKILLed recorder leaves it (its chunks whole, no summary and footer)
    said "RecordLengthLimitExceeded: unknown (opcode 0) record has length 2556...": the reader
    took its last bytes for a footer."""
    path = tmp_path / "plain.mcap"
    _states(path, [float(k) for k in range(20)])
    whole = path.read_bytes()
    (summary_start,) = struct.unpack("<Q", whole[-len(MAGIC) - 20:-len(MAGIC) - 12])  # footer's
    path.write_bytes(whole[:summary_start - 13])  # the data section without its DataEnd (13 B)
    assert cli.main([str(path), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"vehicle_sim_report: {path}: {CUT_SHORT}\n"


def _one_state(path, schema_name: str, schema: str, data: bytes) -> None:
    """A recording of one /vehicle/state message ``data``, with ``schema`` named so."""
    with open(path, "wb") as f:
        writer = McapWriter(f, compression=CompressionType.ZSTD)
        writer.start("ros2", "test")
        sid = writer.register_schema(schema_name, "ros2msg", schema.encode())
        cid = writer.register_channel("/vehicle/state", "cdr", sid)
        writer.add_message(cid, 0, data, 0)
        writer.finish()


ITEMS = f"B[] items\n{'=' * 80}\nMSG: hostile/B\nuint8 v\n"  # a sequence of 1-byte structs


@pytest.fixture
def no_decoding(monkeypatch):
    """mcap_ros2's decoder generation fails the test (a hostile schema is refused first)."""
    monkeypatch.setattr(mcap_ros2.decoder, "generate_dynamic", lambda *_: pytest.fail(
        "a schema of the file was used"))


def test_a_topic_of_another_type_is_refused_before_its_schema_is_used(tmp_path, no_decoding):
    path = tmp_path / "other.mcap"
    n = 1000
    _one_state(path, "hostile/msg/Items", ITEMS, b"\x00\x01\x00\x00" + struct.pack("<I", n)
               + bytes(n))
    with pytest.raises(ValueError, match="/vehicle/state is of type 'hostile/msg/Items', not "
                                         "'vehicle_sim/msg/VehicleState'"):
        read_recording(path)


def test_a_message_over_its_topics_bound_is_refused_before_it_is_decoded(tmp_path, capsys,
                                                                         no_decoding):
    """Issue: a few KB of zstd held a /vehicle/state whose schema (of the right name) said
    millions of 1-byte items: decoded, GBs of objects. Here 1 MiB of them, a few KB on disk."""
    path = tmp_path / "items.mcap"
    n = 2**20
    _one_state(path, "vehicle_sim/msg/VehicleState", ITEMS,
               b"\x00\x01\x00\x00" + struct.pack("<I", n) + bytes(n))
    assert path.stat().st_size < 10_000
    assert cli.main([str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and str(path) in err, err
    assert (f"a /vehicle/state message of {n + 8} bytes is over the report's limit of "
            f"{report_data.SMALL_MESSAGE_BYTES} bytes for that topic") in err, err


def test_a_fifo_given_as_a_recording_is_refused_without_blocking(tmp_path):
    """read_recording itself, not only the command's is_file check: opening a FIFO for reading
    blocks until a writer comes."""
    import os
    fifo = tmp_path / "run.mcap"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        read_recording(fifo)
