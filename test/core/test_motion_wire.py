"""Wire formats: round trips, in-range output for any input, strict input-packet validation."""
import hashlib
import hmac
import struct

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from vehicle_sim.core.config import ConfigError, load
from vehicle_sim.core.motion.params import FRAME_MAX_BYTES, PlatformParams, WireParams
from vehicle_sim.core.motion.wire import (
    FORWARD_WINDOW,
    INPUT_PACKET_BYTES,
    SIGNED_INPUT_PACKET_BYTES,
    PacketError,
    RigInput,
    SequenceTracker,
    crc16_ccitt,
    decode_binary,
    decode_input_packet,
    decode_text,
    encode_binary,
    encode_input_packet,
    encode_text,
    frame_bytes,
    input_tag,
    quantize,
)

any_float = st.floats(allow_nan=True, allow_infinity=True)
unit_float = st.floats(0.0, 1.0)
formats = st.builds(WireParams, bits=st.sampled_from((8, 10, 12, 16)),
                    number_base=st.sampled_from(("decimal", "hex")))
rig_inputs = st.builds(
    RigInput, seq=st.integers(0, 0xFFFF), steering_raw=st.integers(-32768, 32767),
    throttle_raw=st.integers(0, 0xFFFF), brake_raw=st.integers(0, 0xFFFF),
    clutch_raw=st.integers(0, 0xFFFF),
    steering_torque_nm=st.integers(-32768, 32767).map(lambda c: c / 100.0),
    buttons=st.integers(0, 0xFFFFFFFF))


def test_crc_check_value():
    assert crc16_ccitt(b"123456789") == 0x29B1  # CRC-16/CCITT-FALSE catalogue check value


@given(st.lists(unit_float, min_size=1, max_size=6), formats)
def test_text_round_trip(values, params):
    out = decode_text(encode_text(values, params), params, len(values))
    assert out == pytest.approx(values, abs=0.5 / ((1 << params.bits) - 1) + 1e-12)


@given(st.lists(any_float, min_size=6, max_size=6), formats)
def test_text_frames_are_in_range_and_fixed_length_for_any_input(values, params):
    frame = encode_text(values, params)
    assert len(frame) == len(encode_text([0.5] * 6, params))
    out = decode_text(frame, params, 6)
    assert np.all((out >= 0.0) & (out <= 1.0))
    q = quantize(values, params.bits)
    assert np.all((q >= 0) & (q <= (1 << params.bits) - 1))
    assert all(q[i] == (1 << params.bits) // 2 for i, v in enumerate(values) if np.isnan(v))


@given(st.lists(any_float, min_size=1, max_size=6), formats, st.sampled_from(("", "\n", "\r\n")))
def test_frame_bytes_is_the_length_of_every_frame(values, params, terminator):
    text = WireParams(**{**vars(params), "terminator": terminator})
    binary = WireParams(**{**vars(params), "format": "binary"})
    assert len(encode_text(values, text)) == frame_bytes(text, len(values))
    assert len(encode_binary(values, 7, binary)) == frame_bytes(binary, len(values))


@given(st.lists(any_float, min_size=1, max_size=8), st.integers(0, 255), formats)
def test_binary_round_trip_and_range(values, seq, params):
    seq_out, out = decode_binary(encode_binary(values, seq, params), params)
    assert seq_out == seq and np.all((out >= 0.0) & (out <= 1.0))
    expected = np.clip(np.nan_to_num(np.array(values), nan=0.5), 0.0, 1.0)
    assert out == pytest.approx(expected, abs=0.5 / ((1 << params.bits) - 1) + 1e-12)


def test_binary_frame_corruption_is_rejected():
    p = WireParams()
    frame = bytearray(encode_binary([0.2, 0.7], 3, p))
    frame[5] ^= 0x01
    with pytest.raises(PacketError, match="CRC"):
        decode_binary(bytes(frame), p)
    with pytest.raises(PacketError, match="header"):
        decode_binary(b"\x00" + bytes(frame[1:]), p)


def _platform(tmp_path, wire: dict, actuators: int = 2):
    f = tmp_path / "rig.yaml"
    rig = {"dof": "pitch_roll", "attach_xy_m": [[-0.4, 0.001 * k - 0.1] for k in range(actuators)]}
    f.write_text(yaml.safe_dump({"kind": "seat2", "rig": rig, "wire": wire}))
    return f


@pytest.mark.parametrize("wire, reason", [
    ({"axis_letters": "ÄÖ"}, "axis_letters must be distinct ASCII letters"),  # isalpha() is True
    ({"terminator": "é"}, "terminator 'é' is not ASCII"),
    ({"terminator": "x" * 200_000}, "could be 200036 bytes, more than a UDP datagram carries"),
    ({"format": "binary", "header": [1] * 100_000}, "could be 100514 bytes, more than a UDP"),
])
def test_a_wire_whose_frames_cannot_be_sent_is_refused_at_load(tmp_path, wire, reason):
    """Each of these loaded, then every frame of the platform loop failed (UnicodeEncodeError,
    EMSGSIZE): refused in one line naming the file and the key."""
    f = _platform(tmp_path, wire)
    with pytest.raises(ConfigError, match=reason) as err:
        load(PlatformParams, f)
    assert str(err.value).startswith(f"{f}: wire: ") and "\n" not in str(err.value)


def test_the_longest_frame_allowed_is_one_udp_datagram(tmp_path):
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # all 52: the longest body
    fits = FRAME_MAX_BYTES - len(letters) * 6  # 16 bits decimal: a letter and 5 digits per axis
    params = WireParams(axis_letters=letters, bits=16, terminator="x" * fits)
    assert len(encode_text(np.zeros(len(letters)), params)) == FRAME_MAX_BYTES
    with pytest.raises(ValueError, match="terminator too long"):
        WireParams(axis_letters=letters, bits=16, terminator="x" * (fits + 1))
    binary = WireParams(format="binary", header=(1,) * (FRAME_MAX_BYTES - 2 - 2 * 255 - 2))
    assert len(encode_binary(np.zeros(255), 0, binary)) == FRAME_MAX_BYTES


def test_a_binary_rig_of_more_actuators_than_a_frame_carries_is_refused_at_load(tmp_path):
    wire = {"format": "binary"}
    assert load(PlatformParams, _platform(tmp_path, wire, 255)).actuator_count == 255
    f = _platform(tmp_path, wire, 256)  # was: "at most 255 values per frame" in the loop
    with pytest.raises(ConfigError, match="binary wire format carries at most 255 values, the "
                                          "seat2 rig has 256 actuators") as err:
        load(PlatformParams, f)
    assert str(f) in str(err.value)


@given(rig_inputs)
def test_input_packet_round_trip(msg):
    data = encode_input_packet(msg)
    assert len(data) == INPUT_PACKET_BYTES and decode_input_packet(data) == msg


GOOD = encode_input_packet(RigInput(7, -1200, 300, 0, 65535, 1.5, 0b1001))


@pytest.mark.parametrize("data, reason", [
    (GOOD[:-1], "truncated"), (b"", "truncated"), (GOOD + b"\x00", "oversized"),
    (GOOD * 100, "oversized"), (b"XS" + GOOD[2:], "bad header"),
    (GOOD[:-2] + struct.pack(">H", crc16_ccitt(GOOD[:-2]) ^ 0xFFFF), "bad CRC"),
    (GOOD[:2] + b"\x02" + GOOD[3:], "version"),
    (None, "expected bytes"), ("VS" * 10, "expected bytes"), (21, "expected bytes"),
])
def test_input_decoder_rejects_with_a_reason(data, reason):
    with pytest.raises(PacketError, match=reason):
        decode_input_packet(data)


@given(st.integers(0, INPUT_PACKET_BYTES * 8 - 1))
def test_any_single_bit_flip_is_rejected(bit):
    data = bytearray(GOOD)
    data[bit // 8] ^= 1 << (bit % 8)
    with pytest.raises(PacketError):
        decode_input_packet(bytes(data))


@settings(max_examples=300)
@given(st.binary(max_size=64))
def test_input_decoder_raises_only_packet_error(data):
    try:
        decode_input_packet(data)
    except PacketError:
        pass


KEY = bytes(range(32))
MSG = RigInput(7, -1200, 300, 0, 65535, 1.5, 0b1001)
SIGNED = encode_input_packet(MSG, KEY)


def test_an_unkeyed_packet_is_unchanged_byte_for_byte():
    """Existing rigs keep working: without a key the layout, and these exact bytes, stay."""
    assert GOOD == bytes.fromhex("5653010007fb50012c0000ffff009600000009dba4")
    assert decode_input_packet(GOOD) == MSG and decode_input_packet(GOOD, None) == MSG


@given(rig_inputs, st.binary(min_size=16, max_size=64))
def test_signed_packet_round_trip(msg, key):
    data = encode_input_packet(msg, key)
    assert len(data) == SIGNED_INPUT_PACKET_BYTES == 37
    assert data[:INPUT_PACKET_BYTES] == encode_input_packet(msg)  # the old packet + the tag
    assert decode_input_packet(data, key) == msg


def test_the_tag_is_truncated_hmac_sha256_over_the_whole_packet():
    assert SIGNED[21:] == hmac.new(KEY, GOOD, hashlib.sha256).digest()[:16] == input_tag(GOOD, KEY)


@given(st.integers(0, SIGNED_INPUT_PACKET_BYTES * 8 - 1))
def test_any_bit_flip_in_body_or_tag_fails_the_mac(bit):
    data = bytearray(SIGNED)
    data[bit // 8] ^= 1 << (bit % 8)
    with pytest.raises(PacketError, match="bad MAC"):
        decode_input_packet(bytes(data), KEY)


def test_the_mac_covers_the_sequence_number():
    """A forged sequence number with the CRC recomputed (what a CRC alone lets anyone do) and
    the old tag kept: refused, so a replay cannot be renumbered into the window."""
    body = bytearray(GOOD[:-2])
    body[3:5] = struct.pack(">H", 8)
    forged = bytes(body) + struct.pack(">H", crc16_ccitt(bytes(body))) + SIGNED[21:]
    assert decode_input_packet(forged[:21]).seq == 8  # valid without a key
    with pytest.raises(PacketError, match="bad MAC"):
        decode_input_packet(forged, KEY)


@pytest.mark.parametrize("data, reason", [
    (GOOD, "missing MAC"), (SIGNED[:-1], "truncated"), (SIGNED + b"\0", "oversized"),
    (encode_input_packet(MSG, bytes(32)), "bad MAC"),  # signed with another key
    (GOOD + bytes(16), "bad MAC"), (b"", "truncated"), (None, "expected bytes"),
])
def test_keyed_decoder_rejects_with_a_reason(data, reason):
    with pytest.raises(PacketError, match=reason):
        decode_input_packet(data, KEY)


def test_an_unkeyed_decoder_refuses_signed_packets_as_oversized():
    with pytest.raises(PacketError, match="oversized: 37 of 21"):
        decode_input_packet(SIGNED)


@settings(max_examples=300)
@given(st.binary(max_size=64))
def test_keyed_decoder_raises_only_packet_error(data):
    try:
        decode_input_packet(data, KEY)
    except PacketError:
        pass


def test_sequence_tracker_handles_wrap_duplicates_and_gaps():
    t = SequenceTracker()
    assert t.accept(65534) and t.accept(65535) and t.accept(0)  # wrap
    assert not t.accept(0) and not t.accept(65530)  # duplicate, stale
    assert t.accept(3) and t.lost == 2 and t.rejected == 2


def test_a_rig_that_reboots_is_accepted_after_a_pause():
    """Issue 13: after the rig's sequence restarts from a small number, the old tracker rejected
    every packet as stale (up to 32,767 of them)."""
    t = SequenceTracker(resync_after_s=0.1)
    for k in range(100):
        assert t.accept(40_000 + k, k * 0.002)
    reboot_s = 99 * 0.002 + 2.0  # the rig is silent while it boots
    assert t.accept(1, reboot_s) and t.restarts == 1
    assert all(t.accept(1 + k, reboot_s + k * 0.002) for k in range(1, 900))
    assert t.rejected == 0


def test_one_forged_sequence_far_ahead_does_not_block_the_genuine_stream():
    """Issue 13: a packet with seq = last + 0x7FFE made the next 32,766 genuine ones stale."""
    t = SequenceTracker(resync_after_s=0.1)
    assert t.accept(100, 0.0)
    assert not t.accept(100 + 0x7FFE, 0.001), "outside the forward window"
    assert all(t.accept(100 + k, 0.001 + k * 0.002) for k in range(1, 50))
    assert t.rejected == 1 and t.lost == 0 and t.restarts == 0


def test_within_the_pause_old_and_far_numbers_stay_rejected():
    t = SequenceTracker(resync_after_s=0.1)
    assert t.accept(5000, 0.0)
    assert not t.accept(5000 + FORWARD_WINDOW + 1, 0.05) and not t.accept(4000, 0.1)
    assert t.accept(5000 + FORWARD_WINDOW, 0.1) and t.lost == FORWARD_WINDOW - 1
