"""The packed bodies of the crash world and what a step returns (units: crash_world's module
docstring), plus the post-crash sliding law (pure planar dynamics until the body stops)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

DYNAMIC, PRESCRIBED = 0, 1
NO_STATIC = -1


@dataclass
class BodyArrays:
    """Packed bodies, one row each (see the module docstring for units)."""

    ids: np.ndarray  # (n,) int64, unique
    mode: np.ndarray  # (n,) DYNAMIC or PRESCRIBED
    pose: np.ndarray  # (n, 3) x_m, y_m, yaw_rad
    vel: np.ndarray  # (n, 3) vx_mps, vy_mps (map), yaw_rate_radps
    size: np.ndarray  # (n, 2) length_m, width_m
    mass_kg: np.ndarray  # (n,)
    yaw_inertia_kgm2: np.ndarray  # (n,)
    crash_class: np.ndarray  # (n,) index into crash_params.CRASH_CLASSES

    def check(self) -> None:
        """One ValueError line naming the first bad row (non-finite, empty box, bad mass)."""
        n = len(self.ids)
        for name in ("mode", "pose", "vel", "size", "mass_kg", "yaw_inertia_kgm2",
                     "crash_class"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"bodies: {name} has {len(getattr(self, name))} rows, ids {n}")
        rows = np.column_stack((self.pose, self.vel, self.size, self.mass_kg,
                                self.yaw_inertia_kgm2))
        bad = ~np.isfinite(rows).all(axis=1) | (self.size <= 0).any(axis=1) | \
            (self.mass_kg <= 0) | (self.yaw_inertia_kgm2 <= 0) | (np.abs(rows) > 1e7).any(axis=1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"body id {int(self.ids[i])}: non-finite, huge or non-positive "
                             f"value in {rows[i].tolist()}")
        if len(np.unique(self.ids)) != n:
            raise ValueError("bodies: ids are not unique")


@dataclass(frozen=True)
class ContactReport:
    """One pair in contact during a step. b_static >= 0: B is that static object (b_id -1)."""

    a_id: int
    b_id: int
    b_static: int
    first: bool  # the pair was not in contact at the end of the previous step
    point_m: tuple[float, float]
    normal: tuple[float, float]  # from A to B
    impulse_ns: float  # |integral of the force on B| over the step [N s]
    a_part: int  # detect.PART_*
    b_part: int
    # the impulse delivered while the contact closed faster than CrashParams.stop_speed_mps
    # [N s]: what an impact adds (damage); a car resting against a wall adds none
    impact_impulse_ns: float = 0.0


@dataclass(frozen=True)
class CrashStep:
    """What a step changed: new states (x, y, yaw, vx, vy, yaw_rate) of the dynamic bodies that
    were in contact or crashed (ids), and the contacts."""

    ids: np.ndarray
    states: np.ndarray
    contacts: list[ContactReport] = field(default_factory=list)


def mean_footprint_radius_m(length_m, width_m):
    """Mean distance [m] of the points of a length x width rectangle from its centre (exact)."""
    a, b = 0.5 * np.asarray(length_m, float), 0.5 * np.asarray(width_m, float)
    d = np.hypot(a, b)
    return (2 * a * b * d + a ** 3 * np.log((b + d) / a) + b ** 3 * np.log((a + d) / b)) / (
        6 * a * b)


def slide(vel: np.ndarray, mu_g: float, rho: np.ndarray, mass: np.ndarray, inertia: np.ndarray,
          h: float) -> None:
    """The post-crash friction over h [s] on rows of vel (n, 3), in place (never reverses)."""
    speed = np.hypot(vel[:, 0], vel[:, 1])
    keep = np.where(speed > mu_g * h, 1.0 - mu_g * h / np.maximum(speed, 1e-12), 0.0)
    vel[:, 0] *= keep
    vel[:, 1] *= keep
    dr = mu_g * mass * rho / inertia * h
    r = vel[:, 2]
    vel[:, 2] = np.sign(r) * np.maximum(np.abs(r) - dr, 0.0)
