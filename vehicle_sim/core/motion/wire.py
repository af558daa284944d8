"""Byte formats spoken with rigs: platform output frames and the steering-rig input packet.

Outputs (PC -> rig controller), values normalised to 0..1 (0.5 = neutral) and quantised to
``WireParams.bits``; NaN maps to mid-scale and anything else is clipped, so every frame is valid:
- SimTools-style text: ``<letter><number>`` per axis, fixed width (decimal or hex), e.g. with
  letters "AB", 8 bits: ``A127B255\\n`` (the "interface output" string of SimTools / FlyPT Mover).
- binary frame for microcontrollers: header bytes, seq u8, count u8, count x u16 big-endian,
  CRC16 (CCITT-FALSE, over all preceding bytes) big-endian.

Input (steering rig -> PC), one UDP datagram or serial frame, big-endian, 21 bytes
(37 with a shared key):

    offset size field
    0      2    magic b"VS"
    2      1    version (1)
    3      2    sequence u16 (wraps)
    5      2    steering raw i16          9  2  brake raw u16
    7      2    throttle raw u16          11 2  clutch raw u16
    13     2    steering torque i16 [0.01 N m], + turns the wheel left (REP-103)
    15     4    buttons u32 bitmask (bit i = button i pressed)
    19     2    CRC16-CCITT-FALSE over bytes 0..18
    21     16   (only with a shared key) HMAC-SHA256 tag over bytes 0..20, truncated to 16 bytes

Authentication is optional: with a key (``input_key.read_key_file``; bridge parameter
``input_key_file``) every packet is 37 bytes and carries the tag, which covers the whole packet,
the sequence number included, so a forged or altered packet fails the tag. A replay is not
stopped: the 16-bit sequence wraps (131 s at 500 Hz), so a recording older than a wrap can pass
the window, and after a silence of ``resync_after_s`` any number starts a new session
(``SequenceTracker``; see the README). The tag is checked first, with
``hmac.compare_digest``, before any other field is looked at. Without a key the packet is the
21 bytes above, unchanged. The CRC stays in both (it is part of the authenticated bytes).

Raw axis counts are calibrated by ``input_map``. ``decode_input_packet`` raises only PacketError.
"""
from __future__ import annotations

import hashlib
import hmac
import struct
from dataclasses import dataclass

import numpy as np

from vehicle_sim.core.motion.params import WireParams

INPUT_MAGIC = b"VS"
INPUT_VERSION = 1
_INPUT = struct.Struct(">2sBHhHHHhI")
INPUT_PACKET_BYTES = _INPUT.size + 2  # 21
INPUT_TAG_BYTES = 16  # HMAC-SHA256 truncated to 128 bits (RFC 2104 section 5: >= half the hash)
SIGNED_INPUT_PACKET_BYTES = INPUT_PACKET_BYTES + INPUT_TAG_BYTES  # 37


class PacketError(ValueError):
    """A received frame is malformed; ``reason`` says why."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


def _crc_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return tuple(table)


_TABLE = _crc_table()


def crc16_ccitt(data: bytes, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection; check "123456789" = 0x29B1)."""
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _TABLE[((crc >> 8) ^ byte) & 0xFF]
    return crc


def quantize(values: np.ndarray, bits: int) -> np.ndarray:
    """0..1 floats to integers 0..2^bits - 1; NaN -> mid-scale, +-inf and overflow clipped."""
    v = np.array(values, dtype=float).ravel()
    v[np.isnan(v)] = 0.5
    full = (1 << bits) - 1
    return np.rint(np.clip(v, 0.0, 1.0) * full).astype(np.int64)


def _width(params: WireParams) -> int:
    full = (1 << params.bits) - 1
    return len(f"{full:X}") if params.number_base == "hex" else len(str(full))


def frame_bytes(params: WireParams, count: int) -> int:
    """Length [bytes] of every output frame with ``count`` values (both formats are fixed-size)."""
    if params.format == "binary":
        return len(params.header) + 2 + 2 * count + 2
    return count * (_width(params) + 1) + len(params.terminator.encode("ascii"))


def encode_text(values: np.ndarray, params: WireParams) -> bytes:
    """SimTools-style axis string, one token per value (``len(values) <= len(axis_letters)``)."""
    q = quantize(values, params.bits)
    if len(q) > len(params.axis_letters):
        raise ValueError(f"{len(q)} values but only {len(params.axis_letters)} axis letters")
    fmt = f"0{_width(params)}{'X' if params.number_base == 'hex' else 'd'}"
    body = "".join(f"{params.axis_letters[i]}{int(x):{fmt}}" for i, x in enumerate(q))
    return (body + params.terminator).encode("ascii")


def decode_text(data: bytes, params: WireParams, count: int) -> np.ndarray:
    """Inverse of ``encode_text``: ``count`` values in 0..1; malformed text raises PacketError."""
    try:
        text = bytes(data).decode("ascii")
    except (UnicodeDecodeError, TypeError):
        raise PacketError("not an ASCII frame") from None
    if params.terminator and not text.endswith(params.terminator):
        raise PacketError("missing terminator")
    text = text[: len(text) - len(params.terminator)] if params.terminator else text
    w, base = _width(params), 16 if params.number_base == "hex" else 10
    if len(text) != count * (w + 1):
        raise PacketError(f"expected {count * (w + 1)} characters, got {len(text)}")
    out = np.empty(count)
    for i in range(count):
        token = text[i * (w + 1): (i + 1) * (w + 1)]
        if token[0] != params.axis_letters[i]:
            raise PacketError(f"axis {i}: expected letter {params.axis_letters[i]!r}")
        try:
            out[i] = int(token[1:], base) / ((1 << params.bits) - 1)
        except ValueError:
            raise PacketError(f"axis {i}: bad number {token[1:]!r}") from None
    return out


def encode_binary(values: np.ndarray, seq: int, params: WireParams) -> bytes:
    """Binary frame: header, seq u8, count u8, u16 values (big-endian), CRC16."""
    q = quantize(values, params.bits)
    if len(q) > 255:
        raise ValueError("at most 255 values per frame")
    body = bytes(params.header) + struct.pack(f">BB{len(q)}H", seq & 0xFF, len(q), *q.tolist())
    return body + struct.pack(">H", crc16_ccitt(body))


def decode_binary(data: bytes, params: WireParams) -> tuple[int, np.ndarray]:
    """Inverse of ``encode_binary``: (seq, values in 0..1); raises PacketError when malformed."""
    data = _as_bytes(data)
    h = len(params.header)
    if len(data) < h + 4:
        raise PacketError(f"truncated: {len(data)} bytes")
    if data[:h] != bytes(params.header):
        raise PacketError("bad header")
    count = data[h + 1]
    if len(data) != h + 2 + 2 * count + 2:
        raise PacketError(f"length {len(data)} does not match {count} values")
    if crc16_ccitt(data[:-2]) != struct.unpack(">H", data[-2:])[0]:
        raise PacketError("bad CRC")
    vals = np.array(struct.unpack(f">{count}H", data[h + 2: -2]), dtype=float)
    if np.any(vals > (1 << params.bits) - 1):
        raise PacketError("value above the configured resolution")
    return data[h], vals / ((1 << params.bits) - 1)


@dataclass(frozen=True)
class RigInput:
    """One decoded steering-rig input packet (raw device counts; see ``input_map``)."""

    seq: int
    steering_raw: int
    throttle_raw: int
    brake_raw: int
    clutch_raw: int
    steering_torque_nm: float
    buttons: int


def input_tag(packet: bytes, key: bytes) -> bytes:
    """The authentication tag of a 21-byte input packet: HMAC-SHA256(key, packet)[:16]."""
    return hmac.new(key, packet, hashlib.sha256).digest()[:INPUT_TAG_BYTES]


def encode_input_packet(msg: RigInput, key: bytes | None = None) -> bytes:
    """Build an input packet (the rig's side: firmware emulators, tests); with ``key`` the
    16-byte tag is appended (37 bytes)."""
    body = _INPUT.pack(INPUT_MAGIC, INPUT_VERSION, msg.seq & 0xFFFF, msg.steering_raw,
                       msg.throttle_raw, msg.brake_raw, msg.clutch_raw,
                       round(msg.steering_torque_nm * 100.0), msg.buttons)
    packet = body + struct.pack(">H", crc16_ccitt(body))
    return packet + input_tag(packet, key) if key is not None else packet


def decode_input_packet(data: bytes, key: bytes | None = None) -> RigInput:
    """Validate and decode one input packet; any defect raises PacketError with its reason.

    With ``key`` the packet must carry a valid tag: reasons "missing MAC" (a 21-byte packet
    without one) and "bad MAC" (any other tag, or any altered byte), checked before the rest."""
    data = _as_bytes(data)
    size = INPUT_PACKET_BYTES if key is None else SIGNED_INPUT_PACKET_BYTES
    if key is not None and len(data) == INPUT_PACKET_BYTES:
        raise PacketError(f"missing MAC: {len(data)} bytes, a key is set ({size} expected)")
    if len(data) < size:
        raise PacketError(f"truncated: {len(data)} of {size} bytes")
    if len(data) > size:
        raise PacketError(f"oversized: {len(data)} of {size} bytes")
    if key is not None:
        data, tag = data[:INPUT_PACKET_BYTES], data[INPUT_PACKET_BYTES:]
        if not hmac.compare_digest(input_tag(data, key), tag):
            raise PacketError("bad MAC")
    if data[:2] != INPUT_MAGIC:
        raise PacketError("bad header")
    if data[2] != INPUT_VERSION:
        raise PacketError(f"unsupported version {data[2]}")
    if crc16_ccitt(data[:-2]) != struct.unpack(">H", data[-2:])[0]:
        raise PacketError("bad CRC")
    _, _, seq, steer, thr, brk, clu, torque, buttons = _INPUT.unpack(data[:-2])
    return RigInput(seq, steer, thr, brk, clu, torque / 100.0, buttons)


FORWARD_WINDOW = 1024  # [packets] largest jump ahead accepted without a pause (~2 s at 500 Hz)


class SequenceTracker:
    """Accepts only newer 16-bit sequence numbers (serial-number arithmetic, RFC 1982).

    Newer means 1..``FORWARD_WINDOW`` ahead of the last accepted one, so a single forged or
    corrupted number far ahead cannot make the genuine stream look stale. After no packet was
    accepted for ``resync_after_s`` (a rig that rebooted, a long link loss: the input went
    stale anyway) any number starts a new session (counted in ``restarts``), so a rig whose
    sequence restarts from a small number is not locked out.
    """

    def __init__(self, resync_after_s: float = 0.1) -> None:
        self.resync_after_s = resync_after_s
        self.last: int | None = None
        self.last_s = 0.0
        self.lost = 0
        self.rejected = 0
        self.restarts = 0

    def accept(self, seq: int, now_s: float = 0.0) -> bool:
        """True if ``seq`` is newer than the last accepted one, or starts a new session after a
        pause of ``resync_after_s`` [s] (``now_s``: monotonic receive time); counts gaps as lost
        packets."""
        if self.last is not None:
            diff = (seq - self.last) & 0xFFFF
            newer = 0 < diff <= FORWARD_WINDOW
            if not newer and now_s - self.last_s <= self.resync_after_s:
                self.rejected += 1
                return False
            if newer:
                self.lost += diff - 1
            else:
                self.restarts += 1
        self.last, self.last_s = seq, now_s
        return True


def _as_bytes(data: object) -> bytes:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise PacketError(f"expected bytes, got {type(data).__name__}")
    return bytes(data)
