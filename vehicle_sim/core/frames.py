"""The vehicle's reference point (base_link) and the static map -> odom transform, pure numpy.

The physics state (VehicleSnapshot, vehicle/state) is always the CG's. The standard interfaces
(odometry, /tf, the sensors' static frames) give base_link at the reference point chosen once:

- ``cg``: base_link at the centre of gravity (the default, what the models integrate);
- ``rear_axle``: base_link at the rear-axle centre projected on the ground, Autoware's convention
  (autoware vehicle-dimensions documentation: "base_link ... the center of the rear axle
  projected to the ground").

Rigid-body law, with r the vector from the CG to the reference point in body axes (REP-103):
position p_ref = p_cg + R(rpy) r, orientation unchanged, linear velocity (body axes)
v_ref = v_cg + w x r, angular velocity unchanged. A sensor mounted at lever arm l from the CG sits
at l - r from the reference point. ``at_reference`` and ``mount_from_reference_m`` are the one place
that law lives.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vehicle_sim.core.config import spec
from vehicle_sim.core.rotations import rpy_to_matrix

REFERENCE_POINTS = ("cg", "rear_axle")


@dataclass(frozen=True)
class OdomInMap:
    """The static map -> odom transform: where odom's origin and x axis lie in map."""

    x_m: float = spec(0.0, unit="m", ge=-1e6, le=1e6, doc="odom origin in map, east")
    y_m: float = spec(0.0, unit="m", ge=-1e6, le=1e6, doc="odom origin in map, north")
    yaw_rad: float = spec(0.0, unit="rad", ge=-math.pi, le=math.pi,
                          doc="odom x axis from map x, counter-clockwise")


@dataclass(frozen=True)
class PoseTwist:
    """A body's pose in odom and its twist in its own axes (SI units, REP-103)."""

    position_m: np.ndarray  # in odom
    rpy_rad: np.ndarray  # roll, pitch, yaw of the body in odom
    velocity_mps: np.ndarray  # linear velocity of the body's origin, body axes
    angular_velocity_radps: np.ndarray  # body axes


def cg_to_reference_m(reference: str, cg_to_rear_axle_m: float, cg_height_m: float
                      ) -> np.ndarray:
    """r [m]: from the CG to the reference point in body axes (x forward, y left, z up).

    ``cg_height_m`` is the CG's height above the ground in the model: the 14-DOF model's
    ``body.cg_height_m``; the planar models keep the CG on the ground plane z = 0, so 0 there
    (their odom z is the road). Raises ValueError for an unknown reference point.
    """
    if reference == "cg":
        return np.zeros(3)
    if reference == "rear_axle":
        return np.array([-float(cg_to_rear_axle_m), 0.0, -float(cg_height_m)])
    raise ValueError(f"unknown reference point {reference!r} (choose from "
                     f"{', '.join(REFERENCE_POINTS)})")


def at_reference(cg: PoseTwist, r_m: np.ndarray) -> PoseTwist:
    """The same rigid body seen from the point r_m [m] (body axes, from the CG)."""
    r = np.asarray(r_m, dtype=float)
    rpy = np.asarray(cg.rpy_rad, dtype=float)
    w = np.asarray(cg.angular_velocity_radps, dtype=float)
    return PoseTwist(position_m=np.asarray(cg.position_m, dtype=float) + rpy_to_matrix(*rpy) @ r,
                     rpy_rad=rpy.copy(),
                     velocity_mps=np.asarray(cg.velocity_mps, dtype=float) + np.cross(w, r),
                     angular_velocity_radps=w.copy())


def mount_from_reference_m(lever_from_cg_m, r_m: np.ndarray) -> tuple[float, float, float]:
    """A sensor mount [m] given from the CG (the presets' lever arms), from the reference point."""
    m = np.asarray(lever_from_cg_m, dtype=float) - np.asarray(r_m, dtype=float)
    return float(m[0]), float(m[1]), float(m[2])


def vehicle_reference_m(reference: str, vehicle, model: str) -> np.ndarray:
    """``cg_to_reference_m`` for a VehicleParams driven by ``model`` (the factory's name): the
    CG height is the 14-DOF body's where that model runs, else 0 (planar state on the road)."""
    body = getattr(vehicle, "body", None)
    height_m = body.cg_height_m if model == "full14" and body is not None else 0.0
    return cg_to_reference_m(reference, vehicle.chassis.cg_to_rear_axle_m, height_m)


def cg_pose_in_odom(x_m: float, y_m: float, yaw_rad: float, in_map: bool,
                    odom_in_map: OdomInMap, r_m: np.ndarray) -> tuple[float, float, float]:
    """A planar pose of the reference point (x, y [m], yaw [rad]; given in map if ``in_map``,
    else in odom) -> the CG's (x, y, yaw) in odom: map -> odom by the inverse of
    ``odom_in_map``, then back from the reference point by r_m (body axes, level body)."""
    if in_map:
        c, s = math.cos(odom_in_map.yaw_rad), math.sin(odom_in_map.yaw_rad)
        dx, dy = x_m - odom_in_map.x_m, y_m - odom_in_map.y_m
        x_m, y_m, yaw_rad = c * dx + s * dy, -s * dx + c * dy, yaw_rad - odom_in_map.yaw_rad
    c, s = math.cos(yaw_rad), math.sin(yaw_rad)
    r = np.asarray(r_m, dtype=float)
    yaw = math.atan2(math.sin(yaw_rad), math.cos(yaw_rad))
    return x_m - (c * r[0] - s * r[1]), y_m - (s * r[0] + c * r[1]), yaw
