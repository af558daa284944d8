"""Fuzz target: the bridge's rig link under loss, in virtual time (issue 13).

A simulated rig sends input packets to a SteeringBridge + CommandArbiter (the bridge node's core,
as its rig-input thread and platform loop call them) with gaps, reorders, duplicates, reboots
(the sequence restarts anywhere), corrupted or forged bytes, and silences around the input
timeout; the control loop cycles at drawn instants, slightly before or after a packet (two
threads). After every packet and every cycle the property checks, against a model of the link:

- nothing raises;
- a corrupted or forged packet is never accepted (with a key: any altered byte; without: bursts
  of <= 16 bits and wrong lengths, which CRC-16-CCITT always detects);
- a valid packet is accepted iff it is 1..FORWARD_WINDOW ahead of the last accepted one, or the
  last one was accepted more than the timeout ago (a rebooted rig, a long loss): so a duplicate
  or older packet within the timeout is never accepted, and the link always recovers;
- the input is fresh iff a packet was accepted within the timeout; stale: throttle 0, handwheel
  torque 0, force feedback off, source "none" and nothing published (the dynamics node's watchdog
  brakes) but the one full-brake command of the cycle the driver's input went stale; fresh: the
  driver drives with the values of the last accepted packet once engaged (the arbiter's brake
  to engage: by the takeover that made it the source, or by the brake or the takeover button
  with the throttle released), before that at full brake, no throttle.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace

from hypothesis import strategies as st

from vehicle_sim.core.config import load
from vehicle_sim.core.motion import wire
from vehicle_sim.core.motion.arbiter import (
    ENGAGE_BRAKE,
    RELEASED_THROTTLE,
    ArbiterParams,
    CommandArbiter,
)
from vehicle_sim.core.motion.ffb import ff_level
from vehicle_sim.core.motion.input_map import InputMapper
from vehicle_sim.core.motion.mux import Source
from vehicle_sim.core.motion.params import PlatformParams
from vehicle_sim.core.motion.steering import SteeringBridge
from vehicle_sim.paths import config_path

KEY = b"fuzz-link-key-0123456789"
# what the cases exercised, summed over every case run (bench/bench_fuzz.py prints it)
OUTCOMES: Counter = Counter()
OPS = ("next", "next", "next", "gap", "duplicate", "reorder", "restart", "corrupt", "forge",
       "none")


@dataclass(frozen=True)
class Step:
    dt_s: float  # virtual time from the previous packet instant
    op: str  # one of OPS
    arg: int  # gap length, how far back a reorder goes, the restart sequence, a mutation seed
    fields: tuple[int, ...]  # steering, throttle, brake, clutch, torque [0.01 N m], buttons
    cycle_offsets_s: tuple[float, ...]  # loop cycles relative to the packet instant


def _platform() -> PlatformParams:
    return load(PlatformParams, config_path("platforms/seat2_pitch_roll.yaml"))


PLATFORM = _platform()


@st.composite
def _step(draw, timeout_s: float) -> Step:
    dt = draw(st.one_of(st.sampled_from((0.0, 0.002, timeout_s, 1.5 * timeout_s,
                                         math.nextafter(timeout_s, 0.0),
                                         math.nextafter(timeout_s, 1.0))),
                        st.floats(0.0, 3.0 * timeout_s)))
    op = draw(st.sampled_from(OPS))
    arg = draw(st.integers(0, 0xFFFF) if op in ("restart", "corrupt") else st.integers(1, 1500))
    fields = (draw(st.integers(-0x8000, 0x7FFF)), draw(st.integers(0, 0xFFFF)),
              draw(st.integers(0, 0xFFFF)), draw(st.integers(0, 0xFFFF)),
              draw(st.integers(-0x8000, 0x7FFF)), draw(st.integers(0, 0xFFFFFFFF)))
    offsets = draw(st.lists(st.one_of(st.floats(-0.002, 2.0 * timeout_s),
                                      st.sampled_from((0.0, timeout_s))), max_size=3))
    return Step(dt, op, arg, fields, tuple(sorted(offsets)))


@st.composite
def link_case(draw):
    """(key or None, input timeout [s], steps)."""
    key = draw(st.sampled_from((None, KEY)))
    timeout = draw(st.one_of(st.sampled_from((0.02, 0.1, 0.25)), st.floats(0.004, 0.5)))
    return key, timeout, draw(st.lists(_step(timeout), min_size=1, max_size=40))


def _corrupt(packet: bytes, seed: int, key: bytes | None) -> bytes:
    """A corrupted copy that differs from ``packet`` in a way its checks must detect."""
    data = bytearray(packet)
    kind = seed % 4
    if kind == 0:
        return bytes(data[:seed % len(data)])  # truncated
    if kind == 1:
        return bytes(data) + bytes([seed >> 8 & 0xFF]) * (1 + seed % 7)  # extended
    if key is not None and kind == 2:  # a keyed packet: any byte altered
        data[seed % len(data)] ^= 1 + (seed >> 4) % 255
        data[(seed >> 8) % len(data)] ^= 0x5A
        return bytes(data) if bytes(data) != packet else bytes(data[:-1])
    i = seed % (len(data) - 1)  # a burst of <= 16 bits over two adjacent bytes, never zero
    pattern = 1 + (seed * 2654435761) % 0xFFFF
    data[i] ^= pattern >> 8
    data[i + 1] ^= pattern & 0xFF
    return bytes(data)


def _forged(msg: wire.RigInput, key: bytes | None) -> bytes:
    """A well-formed packet the checks must refuse: a wrong tag (keyed), else a wrong version
    or magic with a valid CRC."""
    if key is not None:
        return wire.encode_input_packet(msg, b"not-the-key")
    body = bytearray(wire.encode_input_packet(msg)[:-2])
    body[2] = wire.INPUT_VERSION + 1 + msg.seq % 200
    if msg.seq % 2:
        body[0] ^= 0x20
    return bytes(body) + wire.crc16_ccitt(bytes(body)).to_bytes(2, "big")


class _Model:
    """The link as the spec states it: last accepted (seq, time, raw values)."""

    def __init__(self, timeout_s: float):
        self.timeout_s, self.seq, self.t_s, self.raw = timeout_s, None, None, None
        self.engaged, self.driving = False, False  # the driver engaged; drove the last cycle

    def accepts(self, seq: int, now_s: float) -> bool:
        if self.seq is None or 1 <= (seq - self.seq) % 0x10000 <= wire.FORWARD_WINDOW:
            return True
        return now_s - self.t_s > self.timeout_s

    def fresh(self, now_s: float) -> bool:
        return self.t_s is not None and now_s - self.t_s <= self.timeout_s


class _Rig:
    def __init__(self, key: bytes | None):
        self.key, self.seq, self.sent = key, 0, []  # sent: (packet, RigInput)

    def packet(self, step: Step) -> tuple[bytes, wire.RigInput | None]:
        f = step.fields
        if step.op == "gap":
            self.seq += step.arg
        elif step.op == "restart":
            self.seq = step.arg
        if step.op in ("duplicate", "reorder") and self.sent:
            return self.sent[-min(len(self.sent), 1 if step.op == "duplicate" else step.arg)]
        msg = wire.RigInput(self.seq & 0xFFFF, f[0], f[1], f[2], f[3], f[4] / 100.0, f[5])
        self.seq += 1
        packet = wire.encode_input_packet(msg, self.key)
        if step.op == "corrupt":
            return _corrupt(packet, step.arg, self.key), None
        if step.op == "forge":
            return _forged(msg, self.key), None
        self.sent.append((packet, msg))
        return packet, msg


def check_link(case) -> None:
    key, timeout, steps = case
    platform = replace(PLATFORM, inputs=replace(PLATFORM.inputs, input_timeout_s=timeout))
    steering = SteeringBridge(platform.inputs, platform.mux, platform.ffb, key)
    arbiter = CommandArbiter(ArbiterParams((), driver_fallback=True, forward_on_receipt=False,
                                           publish_every=1, steering_ratio=15.0, max_gear=6),
                             steering)
    reference, model, rig = InputMapper(platform.inputs), _Model(timeout), _Rig(key)
    off_level = ff_level(platform.ffb, 0.0)
    t = last_cycle = 0.0
    for step in steps:
        t += step.dt_s
        data, msg = rig.packet(step)
        ok = steering.on_packet(data, t)
        if msg is None:
            assert not ok, f"{step.op} packet accepted: {data.hex()}"
            OUTCOMES[f"{step.op} packets refused"] += 1
        else:
            expected = model.accepts(msg.seq, t)
            assert ok == expected, (f"{step.op} seq {msg.seq} at {t:.6f} s: accepted {ok}, "
                                    f"expected {expected} (last {model.seq} at {model.t_s})")
            restart = ok and model.seq is not None and not 1 <= (
                msg.seq - model.seq) % 0x10000 <= wire.FORWARD_WINDOW
            OUTCOMES["valid packets " + ("accepted as a restart" if restart else
                                         "accepted" if ok else "refused as stale")] += 1
            if ok:
                model.seq, model.t_s = msg.seq, t
                model.raw = (msg.steering_raw, msg.throttle_raw, msg.brake_raw, msg.clutch_raw,
                             msg.buttons)
        for offset in step.cycle_offsets_s:
            last_cycle = max(last_cycle, t + offset)  # one loop thread: its clock never goes back
            _check_cycle(arbiter, reference, model, last_cycle, off_level)


def _check_cycle(arbiter: CommandArbiter, reference: InputMapper, model: _Model, now_s: float,
                 off_level: int) -> None:
    frame, decision = arbiter.cycle(now_s, 0.0, 0)
    fresh = model.fresh(now_s)
    OUTCOMES["cycles fresh" if fresh else "cycles in the safe state"] += 1
    assert frame.input_fresh == fresh, f"fresh {frame.input_fresh} at {now_s}, model {fresh}"
    assert math.isfinite(frame.torque_nm), frame
    want = reference.map(*(model.raw or steering_rest(arbiter.steering)))
    if fresh:
        assert frame.driver == want, (frame.driver, want)
        assert decision.source == "driver" and decision.command is not None, decision
        model.engaged = model.engaged or (
            bool(frame.switched_because) and frame.source is Source.DRIVER
            or want.throttle <= RELEASED_THROTTLE and (want.brake >= ENGAGE_BRAKE
                                                       or want.takeover))
        OUTCOMES["cycles driving" if model.engaged else "cycles held at full brake"] += 1
        values = decision.command.values
        assert (values.throttle, values.brake) == ((want.throttle, want.brake) if model.engaged
                                                   else (0.0, 1.0)), (values, want)
        model.driving = True
        return
    assert frame.driver == replace(want, throttle=0.0), (frame.driver, want)
    assert frame.torque_nm == 0.0 and frame.ff_level in (None, off_level), frame
    assert decision.source == "none", decision
    if model.driving:  # went stale this cycle: the one safe command
        v = decision.command.values
        assert (v.throttle, v.brake) == (0.0, 1.0), decision
    else:
        assert decision.command is None, decision
    model.engaged = model.driving = False


def steering_rest(steering: SteeringBridge) -> tuple:
    """The raw values a bridge starts from before any input (SteeringBridge's initial state)."""
    i = steering.inputs
    return (0.5 * (i.steering.raw_min + i.steering.raw_max), i.throttle.raw_min,
            i.brake.raw_min, i.clutch.raw_min, 0)
