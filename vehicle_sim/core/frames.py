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
that law lives, with the lever-arm kinematics of a point r of the body that the sensors and the
motion cues share: ``point_velocity`` (v + w x r), ``specific_force`` (what an accelerometer at r
reads: a + alpha x r + w x (w x r) - R^T g_world, g_world = (0, 0, -g) ENU, +g on z at rest) and
``cross3``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vehicle_sim.core.config import spec
from vehicle_sim.core.rotations import rpy_to_matrix

REFERENCE_POINTS = ("cg", "rear_axle")
ODOM_MAX_M = 1.0e6  # [m] |x|, |y| of a position in odom or map, and of odom's origin in map
_FLOAT64 = np.dtype(np.float64)


def _floats3(v) -> list[float]:
    """The three numbers of a 3-vector as Python floats (a float64 array read as it is)."""
    if type(v) is np.ndarray and v.dtype is _FLOAT64:
        return v.tolist()
    return [float(v[0]), float(v[1]), float(v[2])]


def cross3(a, b) -> np.ndarray:
    """a x b of two 3-vectors (arrays or sequences) as a float64 array: np.cross's arithmetic in
    its order (the same values) at a fraction of its call cost (~15-20 us on small arrays)."""
    a0, a1, a2 = _floats3(a)
    b0, b1, b2 = _floats3(b)
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


def point_velocity(v_mps, w_radps, r_m) -> np.ndarray:
    """Velocity [m/s] of the body's point r_m [m] (from the CG): v + w x r, all three in one set
    of axes (body axes in the models, map axes in the accident detector)."""
    return np.asarray(v_mps, dtype=float) + cross3(w_radps, r_m)


def specific_force(a_mps2: list[float], alpha_radps2: list[float], w_radps: list[float],
                   r_m: list[float], roll_rad: float, pitch_rad: float, gravity_mps2: float
                   ) -> tuple[float, float, float]:
    """Specific force [m/s^2] at the body's point r_m [m] (from the CG), in body axes:
    a + alpha x r + w x (w x r) + g R_wb[2, :] (R_wb = rpy_to_matrix(roll, pitch, yaw), whose third
    row does not depend on yaw). a: the CG's coordinate acceleration without gravity, alpha and w
    the body's angular acceleration and velocity, all body axes, as 3 Python floats each; this
    runs per sample in the IMU and the 500 Hz platform loop, so on floats, no arrays."""
    a0, a1, a2 = a_mps2
    e0, e1, e2 = alpha_radps2
    w0, w1, w2 = w_radps
    r0, r1, r2 = r_m
    q0, q1, q2 = w1 * r2 - w2 * r1, w2 * r0 - w0 * r2, w0 * r1 - w1 * r0  # w x r
    cr, sr = math.cos(roll_rad), math.sin(roll_rad)
    cp, sp = math.cos(pitch_rad), math.sin(pitch_rad)
    g = gravity_mps2
    return (a0 + (e1 * r2 - e2 * r1) + (w1 * q2 - w2 * q1) + g * -sp,
            a1 + (e2 * r0 - e0 * r2) + (w2 * q0 - w0 * q2) + g * (cp * sr),
            a2 + (e0 * r1 - e1 * r0) + (w0 * q1 - w1 * q0) + g * (cp * cr))


@dataclass(frozen=True)
class OdomInMap:
    """The static map -> odom transform: where odom's origin and x axis lie in map."""

    x_m: float = spec(0.0, unit="m", ge=-ODOM_MAX_M, le=ODOM_MAX_M)
    """odom origin in map, east"""
    y_m: float = spec(0.0, unit="m", ge=-ODOM_MAX_M, le=ODOM_MAX_M)
    """odom origin in map, north"""
    yaw_rad: float = spec(0.0, unit="rad", ge=-math.pi, le=math.pi)
    """odom x axis from map x, counter-clockwise"""


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
                     velocity_mps=point_velocity(cg.velocity_mps, w, r),
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
