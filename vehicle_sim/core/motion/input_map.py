"""Driver input mapping: raw device counts -> normalised axes, buttons -> driver actions.

Axes: calibrate raw_min..raw_max to -1..1 (bipolar, centre at the mid count) or 0..1
(unipolar, rest at raw_min); optional inversion; dead zone d around centre / rest with the
remaining range rescaled so the output stays continuous: y = sign(x) (|x| - d) / (1 - d).
Steering: + = turn left (REP-103); calibrate ``invert`` so that holds for your wheel.
Buttons: a bitmask (bit i = button i, as in the rig input packet) or a set of evdev codes.
Gear up/down, takeover and hand-back are reported on the rising edge only.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from vehicle_sim.core.motion.params import AxisParams, InputParams


def map_axis(params: AxisParams, raw: float) -> float:
    """Normalised axis value (-1..1 or 0..1) from a raw count; NaN -> centre / rest."""
    if not math.isfinite(raw):
        if params.bipolar:
            return 0.0
        return 1.0 if params.invert else 0.0
    u = (raw - params.raw_min) / (params.raw_max - params.raw_min)  # 0..1
    u = min(max(u, 0.0), 1.0)
    d = params.dead_zone
    if params.bipolar:
        x = 2.0 * u - 1.0
        x = -x if params.invert else x
        return 0.0 if abs(x) <= d else math.copysign((abs(x) - d) / (1.0 - d), x)
    u = 1.0 - u if params.invert else u
    return 0.0 if u <= d else (u - d) / (1.0 - d)


@dataclass(frozen=True)
class DriverInput:
    """One cycle of mapped driver input (normalised; the node scales steering to its limit)."""

    steering: float  # -1..1, + left; handwheel angle = steering * range / 2
    throttle: float  # 0..1
    brake: float  # 0..1
    clutch: float  # 0..1, 1 = pedal pressed
    handbrake: bool
    gear_up: bool  # rising edges
    gear_down: bool
    takeover: bool
    handback: bool
    handwheel_angle_rad: float


class InputMapper:
    """Maps raw axes and buttons each cycle; keeps the previous buttons for edge detection."""

    def __init__(self, params: InputParams):
        self.params = params
        self._prev: frozenset[int] = frozenset()

    def map(self, steering_raw: float, throttle_raw: float, brake_raw: float, clutch_raw: float,
            buttons: int | Iterable[int]) -> DriverInput:
        """Mapped input; ``buttons`` as a bitmask int or an iterable of pressed codes."""
        p = self.params
        pressed = _pressed(buttons)
        edge = pressed - self._prev
        self._prev = pressed
        steer = map_axis(p.steering, steering_raw)
        return DriverInput(
            steering=steer, throttle=map_axis(p.throttle, throttle_raw),
            brake=map_axis(p.brake, brake_raw), clutch=map_axis(p.clutch, clutch_raw),
            handbrake=p.handbrake in pressed, gear_up=p.gear_up in edge,
            gear_down=p.gear_down in edge, takeover=p.takeover in edge,
            handback=p.handback in edge, handwheel_angle_rad=0.5 * steer * p.handwheel_range_rad)


def _pressed(buttons: int | Iterable[int]) -> frozenset[int]:
    if isinstance(buttons, int):
        return frozenset(i for i in range(buttons.bit_length()) if buttons >> i & 1)
    return frozenset(buttons)
