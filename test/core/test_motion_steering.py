"""Steering-rig pipeline: packet validation counters, stale input, takeover and FFB through it."""
import pytest

from vehicle_sim.core.motion.mux import Source
from vehicle_sim.core.motion.params import FfbParams, InputParams, MuxParams
from vehicle_sim.core.motion.steering import SteeringBridge
from vehicle_sim.core.motion.wire import RigInput, encode_input_packet

DT = 0.004  # 250 Hz control cycle


def bridge():
    return SteeringBridge(InputParams(), MuxParams(takeover_torque_nm=2.0, takeover_hold_s=0.2),
                          FfbParams())


def packet(seq, steer=0, throttle=30000, torque=0.0, buttons=0):
    return encode_input_packet(RigInput(seq, steer, throttle, 0, 0, torque, buttons))


def test_bad_and_stale_packets_are_counted_by_reason():
    b = bridge()
    assert b.on_packet(packet(5), 0.0)
    assert not b.on_packet(packet(5), 0.001)  # duplicate
    assert not b.on_packet(packet(6)[:-1], 0.002)
    assert not b.on_packet(b"XS" + packet(7)[2:], 0.003)
    assert b.rejected == {"stale sequence": 1, "truncated": 1, "bad header": 1}


def test_stale_input_cuts_throttle_and_force_feedback():
    b = bridge()
    b.on_packet(packet(1, steer=8000, throttle=60000), 0.0)
    f = b.cycle(0.01, aligning_moment_nm=20.0)
    assert f.input_fresh and f.driver.throttle > 0.5 and f.torque_nm != 0.0
    f = b.cycle(0.5, aligning_moment_nm=20.0)
    assert not f.input_fresh and f.driver.throttle == 0.0 and f.torque_nm == 0.0
    assert f.ff_level == 0


def test_takeover_by_held_rig_torque_and_damping_through_the_chain():
    b = bridge()
    frames = []
    for k in range(100):  # driver turns left at a steady rate, pushing 3 N m
        t = k * DT
        b.on_packet(packet(k, steer=40 * k, torque=3.0), t)
        frames.append(b.cycle(t, aligning_moment_nm=0.0))
    first = next(k for k, f in enumerate(frames) if f.source is Source.DRIVER)
    assert first * DT == pytest.approx(0.2, abs=DT + 1e-9)
    # with no aligning moment, damping + friction resist the turn beyond the centring spring
    spring = [-FfbParams().centring_nm_per_rad * f.driver.handwheel_angle_rad for f in frames]
    assert all(f.torque_nm < s for f, s in zip(frames[1:], spring[1:], strict=True))


KEY = b"k" * 16 + bytes(range(16))


def keyed_bridge():
    return SteeringBridge(InputParams(), MuxParams(), FfbParams(), input_key=KEY)


def signed(seq, throttle=30000, key=KEY):
    return encode_input_packet(RigInput(seq, 0, throttle, 0, 0, 0.0, 0), key)


def test_with_a_key_only_signed_packets_drive_and_the_rest_is_counted():
    b = keyed_bridge()
    assert not b.on_packet(packet(1, throttle=60000), 0.0)  # the old unsigned packet
    assert not b.on_packet(signed(2, key=bytes(32)), 0.001)  # another key
    tampered = bytearray(signed(3))
    tampered[7] ^= 0x80  # throttle byte
    assert not b.on_packet(bytes(tampered), 0.002)
    assert b.cycle(0.003, 0.0).input_fresh is False
    assert b.on_packet(signed(4, throttle=60000), 0.004)
    f = b.cycle(0.005, aligning_moment_nm=0.0)
    assert f.input_fresh and f.driver.throttle > 0.5
    assert b.rejected == {"missing MAC": 1, "bad MAC": 2}


def test_a_replayed_signed_packet_is_refused_by_the_sequence_window():
    b = keyed_bridge()
    recorded = [signed(k) for k in range(10, 20)]
    assert all(b.on_packet(p, 0.002 * i) for i, p in enumerate(recorded))
    for i, p in enumerate(recorded):  # replayed while the rig is live: valid tags, old numbers
        assert not b.on_packet(p, 0.02 + 0.001 * i)
    assert b.rejected == {"stale sequence": len(recorded)} and b.sequence.restarts == 0


def test_without_a_key_unsigned_packets_still_drive_and_signed_ones_are_refused():
    b = bridge()
    assert b.on_packet(packet(1), 0.0)
    assert not b.on_packet(signed(2), 0.001)
    assert b.rejected == {"oversized": 1}
