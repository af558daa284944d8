"""Frozen, validated parameters of the motion-platform and steering-rig bridge (issue 6).

Load a platform preset with ``load(PlatformParams, "config/platforms/<name>.yaml")`` from
``vehicle_sim.core.config``; every field has its unit in the name or in ``spec(unit=...)``.
Frames: REP-103 (x forward, y left, z up), radians, SI. Platform poses are expressed in the
platform's neutral frame: origin at the moving platform's reference point in its neutral
position, axes parallel to the vehicle body axes; pose vector order (x, y, z, roll, pitch, yaw).
Values marked "design choice" are not from a source: tune them on the rig.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from vehicle_sim.core.config import spec
from vehicle_sim.core.units import GRAVITY_MAX_MPS2, GRAVITY_MIN_MPS2, GRAVITY_MPS2

# Plausibility limits (a choice each: far beyond any real rig, yet every derived value stays sane)
LENGTH_MAX_M = 10.0  # rig geometry and head offset; real hexapods are < 5 m
ACCEL_MAX_MPS2 = 100.0  # ~10 g, beyond any rig or road manoeuvre
RATE_MAX_RADPS = 10.0  # platform rotation rates are < 1 rad/s
OMEGA_MAX_RADPS = 100.0  # washout breaks are ~0.1-10 rad/s (Reid & Nahon 1985)
ZETA_MAX = 10.0  # usual damping ratios are 0.5-1
TORQUE_MAX_NM = 50.0  # 2x the strongest direct-drive sim wheels (~25-32 N m peak)
# a longer silence of a link (vehicle state, rig input) keeps the rig moving or the wheel
# pushing: that would be no watchdog
WATCHDOG_MAX_S = 2.0
RAW_MAX_COUNT = 2.0**31  # evdev axis values are int32 (struct input_absinfo)
BUTTON_MAX = 0x2FF  # evdev KEY_MAX (linux/input-event-codes.h); rig packet bits are 0..31
# [bytes] largest output frame: a UDP datagram's payload over IPv4 (65535 - 20 IP header - 8 UDP
# header); sendto refuses a larger one (EMSGSIZE), so every frame would fail
FRAME_MAX_BYTES = 65507
BINARY_VALUES_MAX = 255  # the binary frame's value count is one byte (wire.encode_binary)
TEXT_TOKEN_MAX_BYTES = 6  # a text frame's axis: its letter and at most 5 digits (16 bits: 65535)


# the force-feedback update rate: the bridge node's ffb_rate_hz replaces the preset's
# ffb.max_update_hz (node_params.apply_to): one spec, so the two defaults and bounds cannot drift
def ffb_rate_spec(doc: str) -> Any:
    """A highest FF_CONSTANT update rate [Hz] field, documented as ``doc``."""
    return spec(250.0, unit="Hz", gt=0.0, le=500.0, doc=doc)

Vec3 = tuple[float, float, float]
Vec6 = tuple[float, float, float, float, float, float]


def symmetric_joints(radius_m: float, half_angle_rad: float, phase_rad: float,
                     z_m: float = 0.0) -> tuple[Vec3, ...]:
    """Six joints in three pairs 120 deg apart, pair centres at ``phase + k 120 deg``.

    Order for the usual crossed-leg hexapod: use phase 0 for the base with the pair split
    (+a, 120-a, 120+a, 240-a, 240+a, -a) and phase 60 deg for the platform (c-a, c+a per pair).
    """
    out = []
    for k in range(3):
        c = phase_rad + k * 2.0 * math.pi / 3.0
        for s in (-1.0, 1.0):
            a = c + s * half_angle_rad
            out.append((radius_m * math.cos(a), radius_m * math.sin(a), z_m))
    return tuple(out)


def _base_order(joints: tuple[Vec3, ...]) -> tuple[Vec3, ...]:
    """Rotate the pairs by one so leg i joins base joint i to platform joint i (crossed legs)."""
    return joints[1:] + joints[:1]


# Generic 6-DOF hexapod (design choice, illustrative: 0.5 m base radius, 0.35 m platform radius,
# 10 deg pair half-spacing, 0.55 m neutral height (0.638 m legs), 0.2 m stroke).
# Replace with the measured joint centres of the rig.
_BASE = _base_order(symmetric_joints(0.5, math.radians(10.0), 0.0))
_PLAT = symmetric_joints(0.35, math.radians(10.0), math.radians(60.0))


@dataclass(frozen=True)
class CueingParams:
    """Where the driver's head is and the gravity used for specific force."""

    head_position_m: Vec3 = spec((0.0, 0.0, 0.0), unit="m", ge=-LENGTH_MAX_M, le=LENGTH_MAX_M)
    """driver's head (vestibular organ) in base_link, from the CG"""
    gravity_mps2: float = spec(GRAVITY_MPS2, unit="m/s^2", ge=GRAVITY_MIN_MPS2,
                               le=GRAVITY_MAX_MPS2)


@dataclass(frozen=True)
class WashoutParams:
    """Classical washout (Reid & Nahon 1985, UTIAS Report 296): scale, limit, filter.

    Filter values from conventions.md (motion platforms): translational high-pass omega_n
    2.5 rad/s, zeta 1; tilt low-pass 5 rad/s; tilt rate below the vestibular rotation threshold,
    ~3 deg/s (Groen & Bles 2004, J. Vestibular Research 14:375-385).
    """

    rate_hz: float = spec(100.0, unit="Hz", gt=0.0, le=5000.0)
    """platform update rate"""
    trans_scale: Vec3 = spec((0.5, 0.5, 0.5), unit="-", ge=0.0, le=1.0)
    """specific-force scale per axis (design choice)"""
    trans_limit_mps2: Vec3 = spec((5.0, 5.0, 5.0), unit="m/s^2", gt=0.0, le=ACCEL_MAX_MPS2)
    """clip of the scaled specific force (design choice)"""
    trans_hp_order: int = spec(3, choices=(2, 3))
    """2: residual displacement a/omega^2 for a step; 3: returns to 0"""
    trans_hp_omega_radps: float = spec(2.5, unit="rad/s", gt=0.0, le=OMEGA_MAX_RADPS)
    trans_hp_zeta: float = spec(1.0, unit="-", gt=0.0, le=ZETA_MAX)
    trans_hp_break_radps: float = spec(0.5, unit="rad/s", gt=0.0, le=OMEGA_MAX_RADPS)
    """first-order break, 3rd order (design choice)"""
    tilt_lp_omega_radps: float = spec(5.0, unit="rad/s", gt=0.0, le=OMEGA_MAX_RADPS)
    tilt_lp_zeta: float = spec(1.0, unit="-", gt=0.0, le=ZETA_MAX)
    tilt_rate_limit_radps: float = spec(math.radians(3.0), unit="rad/s", gt=0.0,
                                        le=RATE_MAX_RADPS)
    tilt_max_rad: float = spec(math.radians(20.0), unit="rad", gt=0.0, lt=math.pi / 2)
    """tilt-coordination angle limit (design choice)"""
    rot_scale: Vec3 = spec((0.5, 0.5, 0.5), unit="-", ge=0.0, le=1.0)
    """design choice"""
    rot_limit_radps: Vec3 = spec((1.0, 1.0, 1.0), unit="rad/s", gt=0.0, le=RATE_MAX_RADPS)
    """design choice"""
    rot_hp_omega_radps: float = spec(1.0, unit="rad/s", gt=0.0, le=OMEGA_MAX_RADPS)
    """design choice"""
    rot_hp_zeta: float = spec(1.0, unit="-", gt=0.0, le=ZETA_MAX)

    def __post_init__(self) -> None:
        nyquist = math.pi * self.rate_hz
        for name in ("trans_hp_omega_radps", "trans_hp_break_radps", "tilt_lp_omega_radps",
                     "rot_hp_omega_radps"):
            if getattr(self, name) >= 0.5 * nyquist:
                raise ValueError(f"{name} must be below half the Nyquist rate "
                                 f"{0.5 * nyquist:.1f} rad/s")


@dataclass(frozen=True)
class StewartParams:
    """6-DOF hexapod geometry: leg i joins base joint i to platform joint i.

    base_joints_m: in the base frame (z up). platform_joints_m: in the platform frame, whose origin
    sits ``neutral_height_m`` above the base origin in the neutral pose.
    """

    base_joints_m: tuple[Vec3, ...] = spec(_BASE, unit="m", ge=-LENGTH_MAX_M, le=LENGTH_MAX_M)
    platform_joints_m: tuple[Vec3, ...] = spec(_PLAT, unit="m", ge=-LENGTH_MAX_M,
                                               le=LENGTH_MAX_M)
    neutral_height_m: float = spec(0.55, unit="m", gt=0.0, le=LENGTH_MAX_M)
    leg_min_m: float = spec(0.54, unit="m", gt=0.0, le=LENGTH_MAX_M)
    """shortest leg (joint centre to centre)"""
    leg_max_m: float = spec(0.74, unit="m", gt=0.0, le=LENGTH_MAX_M)
    max_joint_angle_rad: float = spec(math.radians(30.0), unit="rad", gt=0.0, le=math.pi / 2)
    """joint deflection from its neutral direction; rod-end spherical bearings allow ~15-30 deg
    (check yours)"""

    def __post_init__(self) -> None:
        if len(self.base_joints_m) != 6 or len(self.platform_joints_m) != 6:
            raise ValueError("base_joints_m and platform_joints_m need exactly 6 points each")
        if not self.leg_min_m < self.leg_max_m:
            raise ValueError("leg_min_m must be < leg_max_m")
        for i, (b, p) in enumerate(zip(self.base_joints_m, self.platform_joints_m, strict=True)):
            d = (p[0] - b[0], p[1] - b[1], p[2] + self.neutral_height_m - b[2])
            length = math.sqrt(sum(c * c for c in d))
            if not self.leg_min_m <= length <= self.leg_max_m:
                raise ValueError(f"leg {i} neutral length {length:.4f} m is outside the stroke "
                                 f"[{self.leg_min_m}, {self.leg_max_m}] m")


@dataclass(frozen=True)
class VerticalRigParams:
    """2-DOF (pitch/roll) or 3-DOF (pitch/roll/heave) rig of vertical actuators.

    attach_xy_m: actuator attachment points in the platform frame, relative to the pivot (2-DOF)
    or to the platform centre (3-DOF). stroke_m: full travel; neutral is mid-stroke.
    """

    dof: str = spec("pitch_roll", choices=("pitch_roll", "pitch_roll_heave"))
    attach_xy_m: tuple[tuple[float, float], ...] = spec(((-0.4, 0.25), (-0.4, -0.25)), unit="m",
                                                        ge=-LENGTH_MAX_M, le=LENGTH_MAX_M)
    stroke_m: float = spec(0.1, unit="m", gt=0.0, le=LENGTH_MAX_M)

    def __post_init__(self) -> None:
        if len(self.attach_xy_m) < 2:
            raise ValueError("attach_xy_m needs at least 2 actuators")


@dataclass(frozen=True)
class SafetyParams:
    """Per-axis limits of the platform pose (x, y, z [m], roll, pitch, yaw [rad])."""

    pose_limit: Vec6 = spec((0.08, 0.08, 0.06, 0.26, 0.26, 0.26), unit="m|rad", gt=0.0, le=math.pi)
    """symmetric pose limit about neutral (design choice); <= pi for the angles (rig travel is < 1
    m)"""
    velocity_limit: Vec6 = spec((0.3, 0.3, 0.2, 0.6, 0.6, 0.6), unit="m/s|rad/s", gt=0.0,
                                le=RATE_MAX_RADPS)
    accel_limit: Vec6 = spec((3.0, 3.0, 3.0, 6.0, 6.0, 6.0), unit="m/s^2|rad/s^2", gt=0.0,
                             le=ACCEL_MAX_MPS2)
    watchdog_timeout_s: float = spec(0.1, unit="s", gt=0.0, le=WATCHDOG_MAX_S)
    """vehicle state older than this ramps the rig to neutral"""
    soft_start_s: float = spec(3.0, unit="s", ge=0.0, le=60.0)
    """blend from neutral to the command"""


@dataclass(frozen=True)
class WireParams:
    """Output wire format for the rig controller."""

    format: str = spec("simtools_text", choices=("simtools_text", "binary"))
    axis_letters: str = spec("ABCDEF")
    """one letter per output axis (SimTools style)"""
    bits: int = spec(8, choices=(8, 10, 12, 16))
    """output resolution"""
    number_base: str = spec("decimal", choices=("decimal", "hex"))
    terminator: str = spec("\n")
    """appended to each text frame"""
    header: tuple[int, ...] = spec((0xA5, 0x5A), ge=0, le=255)
    """binary frame header bytes"""

    def __post_init__(self) -> None:
        letters = self.axis_letters  # sent as ASCII (wire.encode_text): "Ä" passes isalpha()
        if not (letters.isascii() and letters.isalpha()) or len(set(letters)) != len(letters):
            raise ValueError("axis_letters must be distinct ASCII letters")
        if not self.terminator.isascii():
            raise ValueError(f"terminator {self.terminator!r} is not ASCII (text frames are)")
        if not self.header:
            raise ValueError("header needs at least one byte")
        worst = self.max_frame_bytes()
        if worst > FRAME_MAX_BYTES:
            part = "header" if self.format == "binary" else "terminator"
            raise ValueError(f"a {self.format} frame could be {worst} bytes, more than a UDP "
                             f"datagram carries ({FRAME_MAX_BYTES}): {part} too long")

    def max_frame_bytes(self) -> int:
        """Bytes [bytes] of the longest frame of this format: every axis letter used (text), or
        BINARY_VALUES_MAX values (binary); wire.frame_bytes is a frame's exact length."""
        if self.format == "binary":
            return len(self.header) + 2 + 2 * BINARY_VALUES_MAX + 2
        return len(self.axis_letters) * TEXT_TOKEN_MAX_BYTES + len(self.terminator)


@dataclass(frozen=True)
class FfbParams:
    """Steering force feedback (conventions.md, steering wheel force feedback).

    Sign: torques are about the steering column, + turns the wheel counter-clockwise (left,
    like + steer_rad in REP-103). The evdev FF_CONSTANT direction convention differs between
    drivers: ``level_sign`` flips it (verify on the bench with a small gain first).
    """

    steering_ratio: float = spec(15.0, unit="-", gt=0.0, le=60.0)
    """handwheel / road-wheel angle; passenger cars ~12-20 (Gillespie, Fundamentals of Vehicle
    Dynamics, 1992, ch. 8); <= 60 as the full14 vehicle's steering_ratio"""
    aligning_gain: float = spec(1.0, unit="-", ge=0.0, le=10.0)
    """scale of the tyre aligning moment"""
    damping_nm_s_per_rad: float = spec(0.05, unit="N m s/rad", ge=0.0, le=5.0)
    """design choice"""
    centring_nm_per_rad: float = spec(0.3, unit="N m/rad", ge=0.0, le=TORQUE_MAX_NM)
    """design choice"""
    friction_nm: float = spec(0.1, unit="N m", ge=0.0, le=TORQUE_MAX_NM)
    """Coulomb friction (design choice)"""
    friction_smoothing_radps: float = spec(0.5, unit="rad/s", gt=0.0, le=10.0)
    """tanh width of the friction sign"""
    device_max_nm: float = spec(2.5, unit="N m", gt=0.0, le=TORQUE_MAX_NM)
    """torque at level 32767; gear/belt consumer wheels ~2-4 N m, set from your wheel's data
    sheet"""
    safe_max_nm: float = spec(2.0, unit="N m", gt=0.0, le=TORQUE_MAX_NM)
    """never command more than this"""
    level_sign: int = spec(1, choices=(-1, 1))
    max_update_hz: float = ffb_rate_spec("FF_CONSTANT update rate; ~200-500 Hz (conventions.md)")

    def __post_init__(self) -> None:
        if self.safe_max_nm > self.device_max_nm:
            raise ValueError("safe_max_nm must not exceed device_max_nm")


@dataclass(frozen=True)
class AxisParams:
    """Raw device counts -> normalised axis (bipolar -1..1 or unipolar 0..1)."""

    raw_min: float = spec(-32767.0, unit="count", ge=-RAW_MAX_COUNT, le=RAW_MAX_COUNT)
    raw_max: float = spec(32767.0, unit="count", ge=-RAW_MAX_COUNT, le=RAW_MAX_COUNT)
    bipolar: bool = spec(True)
    """True: -1..1 about the mid count; False: 0..1 (pedals)"""
    invert: bool = spec(False)
    dead_zone: float = spec(0.0, unit="-", ge=0.0, lt=1.0)
    """fraction of the range around centre (bipolar) or rest (unipolar)"""

    def __post_init__(self) -> None:
        if self.raw_min == self.raw_max:
            raise ValueError("raw_min and raw_max must differ")


_PEDAL = AxisParams(raw_min=0.0, raw_max=65535.0, bipolar=False, dead_zone=0.02)


@dataclass(frozen=True)
class InputParams:
    """Driver input mapping; button fields are bit indices / evdev codes, -1 = not used."""

    steering: AxisParams = AxisParams(dead_zone=0.0)
    throttle: AxisParams = _PEDAL
    brake: AxisParams = _PEDAL
    clutch: AxisParams = _PEDAL
    handwheel_range_rad: float = spec(math.radians(900.0), unit="rad", gt=0.0,
                                      le=math.radians(3600.0))
    """lock-to-lock handwheel angle (900 deg, G29/T300 class); at most 10 turns (trucks ~4-6)"""
    gear_up: int = spec(0, ge=-1, le=BUTTON_MAX)
    gear_down: int = spec(1, ge=-1, le=BUTTON_MAX)
    handbrake: int = spec(2, ge=-1, le=BUTTON_MAX)
    takeover: int = spec(3, ge=-1, le=BUTTON_MAX)
    handback: int = spec(4, ge=-1, le=BUTTON_MAX)
    input_timeout_s: float = spec(0.1, unit="s", gt=0.0, le=WATCHDOG_MAX_S)
    """no input for this long: throttle 0, force feedback off"""


@dataclass(frozen=True)
class MuxParams:
    """Autonomy / driver command arbitration."""

    takeover_torque_nm: float = spec(2.5, unit="N m", gt=0.0, le=TORQUE_MAX_NM)
    """UN R79 caps ACSF override effort at 50 N at the rim (~9 N m on a 0.185 m radius); 2.5 N m is
    a design choice"""
    takeover_hold_s: float = spec(0.2, unit="s", ge=0.0, le=2.0)
    """torque must stay above this long; a choice: a longer hold delays the driver's takeover"""


@dataclass(frozen=True)
class PlatformParams:
    """One motion platform preset (config/platforms/*.yaml)."""

    kind: str = spec("stewart6", choices=("stewart6", "seat2", "seat3"))
    cueing: CueingParams = CueingParams()
    washout: WashoutParams = WashoutParams()
    safety: SafetyParams = SafetyParams()
    stewart: StewartParams = StewartParams()
    rig: VerticalRigParams = VerticalRigParams()
    wire: WireParams = WireParams()
    ffb: FfbParams = FfbParams()
    inputs: InputParams = InputParams()
    mux: MuxParams = MuxParams()

    def __post_init__(self) -> None:
        n = self.actuator_count
        if self.wire.format == "binary" and n > BINARY_VALUES_MAX:
            raise ValueError(f"the binary wire format carries at most {BINARY_VALUES_MAX} values, "
                             f"the {self.kind} rig has {n} actuators (rig.attach_xy_m)")
        if self.wire.format != "binary" and len(self.wire.axis_letters) < n:
            raise ValueError(f"wire.axis_letters has {len(self.wire.axis_letters)} letters, "
                             f"the {self.kind} rig needs {n}")
        if self.kind == "seat3" and self.rig.dof != "pitch_roll_heave":
            raise ValueError("kind seat3 needs rig.dof pitch_roll_heave")
        if self.kind == "seat2" and self.rig.dof != "pitch_roll":
            raise ValueError("kind seat2 needs rig.dof pitch_roll")

    @property
    def actuator_count(self) -> int:
        """Number of actuator values sent on the wire."""
        return 6 if self.kind == "stewart6" else len(self.rig.attach_xy_m)
