"""Steering-rig pipeline for the bridge node: input packets / evdev -> driver command, mux, FFB.

Each input (a UDP/serial packet through ``on_packet``, or evdev values through ``on_raw``)
updates the latest raw state; ``cycle`` runs once per control period: maps the axes, arbitrates
autonomy vs driver, and computes the FF_CONSTANT level to write (None when nothing new to send).
When no input arrived for ``input_timeout_s`` the driver throttle is forced to 0 and the
force-feedback level to 0. Handwheel rate is the finite difference of the mapped angle.
With ``input_key`` every packet must carry a valid HMAC tag (``wire``); refused packets are
counted by reason in ``rejected`` ("missing MAC", "bad MAC", "stale sequence", ...).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from vehicle_sim.core.motion.ffb import UpdateRateLimiter, ff_level, handwheel_torque
from vehicle_sim.core.motion.input_map import DriverInput, InputMapper
from vehicle_sim.core.motion.mux import CommandMux, Source
from vehicle_sim.core.motion.params import FfbParams, InputParams, MuxParams
from vehicle_sim.core.motion.wire import PacketError, SequenceTracker, decode_input_packet


@dataclass(frozen=True)
class SteeringFrame:
    """One control cycle: mapped driver input, the mux's source, the torque and level to send."""

    driver: DriverInput
    source: Source  # the mux latch after this cycle
    switched_because: str  # why the latch switched this cycle ('' if it did not)
    input_fresh: bool
    torque_nm: float
    ff_level: int | None  # None: do not write this cycle (unchanged or rate-limited)


class SteeringBridge:
    """Owns the input mapping, sequence check, mux and FFB state of one steering rig."""

    def __init__(self, inputs: InputParams, mux: MuxParams, ffb: FfbParams,
                 input_key: bytes | None = None):
        self.inputs, self.ffb, self._key = inputs, ffb, input_key
        self.mapper, self.mux = InputMapper(inputs), CommandMux(mux)
        self.sequence, self.rejected = SequenceTracker(inputs.input_timeout_s), Counter()
        self.ff_rate = UpdateRateLimiter(ffb.max_update_hz)
        self._raw: tuple[float, float, float, float, int | frozenset[int]] = (
            0.5 * (inputs.steering.raw_min + inputs.steering.raw_max),
            inputs.throttle.raw_min, inputs.brake.raw_min, inputs.clutch.raw_min, 0)
        self._torque_nm = 0.0
        self._last_input_s: float | None = None
        self._prev_angle: tuple[float, float] | None = None

    def on_packet(self, data: bytes, now_s: float) -> bool:
        """Decode one rig input packet; False (and counted in ``rejected``) if refused."""
        try:
            msg = decode_input_packet(data, self._key)
        except PacketError as exc:
            self.rejected[exc.reason.split(":")[0]] += 1
            return False
        if not self.sequence.accept(msg.seq, now_s):
            self.rejected["stale sequence"] += 1
            return False
        self.on_raw(now_s, msg.steering_raw, msg.throttle_raw, msg.brake_raw, msg.clutch_raw,
                    msg.buttons, msg.steering_torque_nm)
        return True

    def on_raw(self, now_s: float, steering_raw: float, throttle_raw: float, brake_raw: float,
               clutch_raw: float, buttons: int | frozenset[int],
               steering_torque_nm: float = 0.0) -> None:
        """Latest raw device values (evdev counts or packet fields) and the driver's torque."""
        self._raw = (steering_raw, throttle_raw, brake_raw, clutch_raw, buttons)
        self._torque_nm, self._last_input_s = steering_torque_nm, now_s

    def cycle(self, now_s: float, aligning_moment_nm: float) -> SteeringFrame:
        """Map, arbitrate and compute force feedback for this period.

        aligning_moment_nm: front-tyre self-aligning moment (VehicleSnapshot).
        """
        fresh = self._last_input_s is not None and \
            now_s - self._last_input_s <= self.inputs.input_timeout_s
        driver = self.mapper.map(*self._raw)
        if not fresh:
            driver = replace(driver, throttle=0.0)
        rate = self._rate(now_s, driver.handwheel_angle_rad)
        reason = self.mux.step(now_s, self._torque_nm if fresh else 0.0,
                               driver.takeover, driver.handback)
        torque = handwheel_torque(self.ffb, aligning_moment_nm, driver.handwheel_angle_rad, rate)
        torque = torque if fresh else 0.0
        level = ff_level(self.ffb, torque)
        send = self.ff_rate.should_send(now_s, level)
        return SteeringFrame(driver, self.mux.source, reason, fresh, torque,
                             level if send else None)

    def _rate(self, now_s: float, angle_rad: float) -> float:
        prev, self._prev_angle = self._prev_angle, (now_s, angle_rad)
        if prev is None or now_s <= prev[0]:
            return 0.0
        return (angle_rad - prev[1]) / (now_s - prev[0])
