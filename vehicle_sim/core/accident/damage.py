"""Per-part crash damage of a vehicle, accumulated from the contact impulses [N s] of impacts
(ContactReport.impact_impulse_ns: while the contact closes; a car pushing against a wall at rest
adds nothing).

Parts: paper 000's front bumper in three parts (left / centre / right thirds of the width) and
paper 002's rear, left side and right side (VehicleDamage.msg's PART_* constants, same order).
A contact's part comes from detect.impact_part (the face nearest the contact point); at a corner
(part unknown) the front or rear by the sign of the point's body x, the front third by its y.

Level (a choice, documented here): the accumulated impulse of a part divided by the vehicle's
mass is the velocity change that part delivered, dv = J / m [m/s]. Bands, anchored on crash
test speeds: < 0.3 m/s none (a touch); < 2.8 m/s light (bumper and paint: the 10 km/h of the
IIHS / RCAR low-speed bumper tests); < 7.0 m/s moderate (panels, lamps, up to 25 km/h);
< 14.0 m/s severe (structure: the 40-64 km/h of the NCAP frontal tests lie above); beyond it
destroyed (dv above 50 km/h).
"""
from __future__ import annotations

import math

import numpy as np

from vehicle_sim.core.accident import detect

PART_FRONT_LEFT, PART_FRONT_CENTRE, PART_FRONT_RIGHT, PART_REAR, PART_LEFT_SIDE, \
    PART_RIGHT_SIDE = range(6)
N_PARTS = 6
PART_NAMES = ("front_left", "front_centre", "front_right", "rear", "left_side", "right_side")
LEVEL_NAMES = ("none", "light", "moderate", "severe", "destroyed")
LEVEL_DV_MPS = (0.3, 2.8, 7.0, 14.0)  # upper bounds of levels 0..3 (module docstring)


def damage_part(body: detect.Body, point_m, margin_m: float) -> int:
    """Damage part (PART_*) of ``body`` hit at ``point_m`` (map) (module docstring)."""
    c, s = math.cos(body.yaw_rad), math.sin(body.yaw_rad)
    dx, dy = point_m[0] - body.x_m, point_m[1] - body.y_m
    px, py = c * dx + s * dy, -s * dx + c * dy
    face = detect.impact_part(body, np.asarray(point_m, dtype=float), margin_m)
    if face == detect.PART_LEFTSIDE:
        return PART_LEFT_SIDE
    if face == detect.PART_RIGHTSIDE:
        return PART_RIGHT_SIDE
    if face == detect.PART_REAR or (face == detect.PART_UNKNOWN and px < 0.0):
        return PART_REAR
    third = body.width_m / 6.0
    if py > third:
        return PART_FRONT_LEFT
    return PART_FRONT_RIGHT if py < -third else PART_FRONT_CENTRE


class DamageState:
    """Accumulated impulse [N s] and level per part of one vehicle of mass ``mass_kg``."""

    def __init__(self, mass_kg: float):
        if not 0.0 < mass_kg < 1e6:
            raise ValueError(f"damage: mass_kg must be in (0, 1e6) kg, got {mass_kg}")
        self.mass_kg = float(mass_kg)
        self.impulse_ns = np.zeros(N_PARTS)

    def add(self, part: int, impulse_ns: float) -> bool:
        """Accumulate a contact impulse on ``part``; True if a level changed. Non-finite or
        negative impulses are refused (ValueError); the total is bounded at 1e9 N s."""
        if not 0 <= part < N_PARTS:
            raise ValueError(f"damage: unknown part {part}")
        if not (math.isfinite(impulse_ns) and impulse_ns >= 0.0):
            raise ValueError(f"damage: impulse must be finite and >= 0, got {impulse_ns}")
        before = self.levels()
        self.impulse_ns[part] = min(self.impulse_ns[part] + impulse_ns, 1e9)
        return bool(np.any(self.levels() != before))

    def levels(self) -> np.ndarray:
        """Level 0..4 (LEVEL_NAMES) per part."""
        return np.searchsorted(LEVEL_DV_MPS, self.impulse_ns / self.mass_kg, side="right")

    def reset(self) -> None:
        self.impulse_ns[:] = 0.0
