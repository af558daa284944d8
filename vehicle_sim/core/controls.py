"""Validation of incoming driver and stack commands and the command watchdog (no ROS).

Policy (one place, ``check``, for every input path: ``validate`` for VehicleControl,
``validate_setpoint`` for the stack commands that go through the speed/acceleration/curvature
controller (Twist, TwistStamped, Ackermann, Autoware); a new kind of command is one more such
entry):
- any non-finite field (NaN, inf) of the source's message rejects the whole command: it is not
  applied, does not feed the watchdog, and the previous valid one stays; so does a conversion
  whose finite inputs add up to a non-finite pedal or steering angle;
- a header the simulator cannot use (``header_problem``: a frame other than the vehicle's, a
  stamp far from sim time) and an unknown gear reject the command;
- a gear outside [-1, max_gear] rejects the command;
- pedals outside [0, 1] and steering beyond the vehicle's limit are clamped, with a warning.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from vehicle_sim.core.vehicle.interface import Controls


@dataclass(frozen=True)
class DriveCommand:
    """A vehicle command as its source sent it, with its header.

    values: the command in Controls' fields, NOT validated yet (``validate`` does that where the
    command is applied, the dynamics node; the bridge checks autonomy/control before it
    forwards it); stamp_ns: the command's time [ns] (sim time); frame_id: its header's
    frame, passed through unchanged.
    """

    values: Controls
    stamp_ns: int = 0
    frame_id: str = ""


@dataclass(frozen=True)
class ControlLimits:
    max_steer_rad: float  # road-wheel steering limit [rad]
    max_gear: int  # highest forward gear


@dataclass(frozen=True)
class Validated:
    controls: Controls | None  # None: rejected
    problem: str = ""  # "" when the command was accepted unchanged


def check(fields: Mapping[str, float], convert: Callable[[], Controls],
          limits: ControlLimits, before: str = "") -> Validated:
    """The one validation path of every command source; see the module docstring for the policy.

    fields: the numbers of the source's message that the command is made from, named as the
    warning should name them; a non-finite one rejects the command before ``convert`` could hide
    it (a cmd_vel speed of inf would become full throttle). convert: builds the raw command from
    them; its gear is checked and its pedals and steering clamped here. before: a problem found
    before (header, unknown gear): rejects the command without calling ``convert`` (a stateful
    controller is not stepped by a command that is not applied).
    """
    if before:
        return Validated(None, f"rejected: {before}")
    for name, value in fields.items():
        if not math.isfinite(value):
            return Validated(None, f"rejected: {name} is {value}")
    raw = convert()
    for name in ("steer_rad", "throttle", "brake", "clutch"):
        if not math.isfinite(getattr(raw, name)):  # finite fields that add up to inf or NaN
            return Validated(None, f"rejected: its {name} came out as {getattr(raw, name)}")
    if not -1 <= raw.gear <= limits.max_gear:
        return Validated(None, f"rejected: gear {raw.gear} outside [-1, {limits.max_gear}]")
    problems = []
    pedals = {}
    for name in ("throttle", "brake", "clutch"):
        value = getattr(raw, name)
        pedals[name] = min(1.0, max(0.0, value))
        if pedals[name] != value:
            problems.append(f"{name} {value:g} clamped to [0, 1]")
    steer = min(limits.max_steer_rad, max(-limits.max_steer_rad, raw.steer_rad))
    if steer != raw.steer_rad:
        problems.append(f"steering_angle {raw.steer_rad:g} rad clamped to "
                        f"+-{limits.max_steer_rad:g}")
    controls = Controls(steer_rad=steer, throttle=pedals["throttle"], brake=pedals["brake"],
                        clutch=pedals["clutch"], gear=int(raw.gear), handbrake=bool(raw.handbrake))
    return Validated(controls, "; ".join(problems))


def validate(steer_rad: float, throttle: float, brake: float, clutch: float, gear: int,
             handbrake: bool, limits: ControlLimits) -> Validated:
    """A VehicleControl's fields through ``check``."""
    named = {"steering_angle": steer_rad, "throttle": throttle, "brake": brake, "clutch": clutch}
    return check(named, lambda: Controls(steer_rad=steer_rad, throttle=throttle, brake=brake,
                                         clutch=clutch, gear=gear, handbrake=handbrake), limits)


def header_problem(frame_id: str, stamp_ns: int, now_ns: int, frames: tuple[str, ...],
                   max_skew_s: float) -> str:
    """Why a stamped command's header is unusable ('' if usable).

    frame_id: must be one of ``frames`` (the vehicle's own; '' = unset, taken as the vehicle's);
    stamp_ns: 0 = unstamped (accepted), else within ``max_skew_s`` of the newest sim time
    ``now_ns`` (a command from another clock, e.g. wall time into a sim-time run, is refused).
    """
    if frame_id not in frames:
        return f"frame_id {frame_id!r} is not one of {list(frames)}"
    if stamp_ns and now_ns and abs(stamp_ns - now_ns) * 1e-9 > max_skew_s:
        return (f"stamp {stamp_ns * 1e-9:.3f} s is more than {max_skew_s:g} s from sim time "
                f"{now_ns * 1e-9:.3f} s")
    return ""


_VALUES = re.compile(r"'[^']*'|[-+]?(?:\d[\d.]*(?:e[-+]?\d+)?|inf|nan)", re.IGNORECASE)


def problem_kind(problem: str) -> str:
    """A command problem with its values blanked ("frame_id 'map' ..." -> "frame_id # ..."):
    the key a node throttles its warnings by, so a new kind of problem is reported at once while
    a stream of varied values of one kind (hostile or not) still gives one line a second."""
    return _VALUES.sub("#", problem)


def validate_setpoint(fields: Mapping[str, float], convert: Callable[[], Controls],
                      limits: ControlLimits, before: str = "") -> Validated:
    """A stack's motion command (the fields it is made of) through ``check``; convert runs the
    stack controller (``core.motion.stack_controller``) only for a command that is applied."""
    return check(fields, convert, limits, before)


class CommandWatchdog:
    """Replaces the command by full braking when none arrived for ``timeout_s`` of sim time."""

    def __init__(self, timeout_s: float, brake: float):
        self.timeout_s, self._brake = timeout_s, brake
        self._last_ns: int | None = None

    def feed(self, t_ns: int) -> None:
        self._last_ns = t_ns

    def expired(self, t_ns: int) -> bool:
        """True before the first command and when the last one is older than the timeout."""
        return self._last_ns is None or (t_ns - self._last_ns) * 1e-9 > self.timeout_s

    def safe(self, last: Controls) -> Controls:
        """The safe command: no throttle, brakes applied, steering and gear kept."""
        return Controls(steer_rad=last.steer_rad, throttle=0.0, brake=self._brake, clutch=0.0,
                        gear=last.gear, handbrake=last.handbrake)
