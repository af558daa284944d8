"""The true vehicle state the sensor models sample, and the rotations they need.

Reference point: the vehicle CG, origin of ``base_link`` (REP-103: x forward, y left, z up).
World frame: local ENU (``map``/``odom``). Orientation is roll, pitch, yaw [rad] with
R_world_base = Rz(yaw) Ry(pitch) Rx(roll). Any object with the attributes of :class:`TrueState`
is accepted (``vehicle_sim.core.vehicle.interface.VehicleSnapshot`` uses the same names).
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from transforms3d.quaternions import mat2quat

from vehicle_sim.core.rotations import rpy_to_matrix  # noqa: F401 (re-exported)


class KinematicState(Protocol):
    """What the sensor models read (arrays of 3 floats, SI units)."""

    position_m: np.ndarray  # CG position in local ENU [m]
    rpy_rad: np.ndarray  # roll, pitch, yaw of base_link in ENU [rad]
    velocity_mps: np.ndarray  # CG velocity in base_link axes [m/s]
    angular_velocity_radps: np.ndarray  # body rate in base_link axes [rad/s]
    acceleration_mps2: np.ndarray  # inertial acceleration of the CG in base_link, no gravity
    angular_acceleration_radps2: np.ndarray  # d(omega)/dt in base_link axes [rad/s^2]


def _zeros() -> np.ndarray:
    return np.zeros(3)


@dataclass
class TrueState:
    """Plain implementation of :class:`KinematicState`.

    ``acceleration_mps2`` is the CG's acceleration relative to the (inertial) ENU frame expressed
    in base_link axes, i.e. dv_body/dt + omega x v_body; it never contains gravity.
    """

    position_m: np.ndarray = field(default_factory=_zeros)
    rpy_rad: np.ndarray = field(default_factory=_zeros)
    velocity_mps: np.ndarray = field(default_factory=_zeros)
    angular_velocity_radps: np.ndarray = field(default_factory=_zeros)
    acceleration_mps2: np.ndarray = field(default_factory=_zeros)
    angular_acceleration_radps2: np.ndarray = field(default_factory=_zeros)


_NAMES = ("position_m", "rpy_rad", "velocity_mps", "angular_velocity_radps",
          "acceleration_mps2", "angular_acceleration_radps2")


def read_state(state: KinematicState) -> np.ndarray:
    """The six vectors of ``state`` as a float array (6, 3) in _NAMES order; refuses NaN/shape."""
    try:
        v = np.array([getattr(state, name) for name in _NAMES], dtype=float)
    except (ValueError, TypeError):
        v = np.zeros((0, 3))
    if v.shape != (6, 3) or not np.isfinite(v).all():
        for name in _NAMES:
            x = np.asarray(getattr(state, name), dtype=float)
            if x.shape != (3,) or not np.all(np.isfinite(x)):
                raise ValueError(f"state.{name} must be 3 finite numbers, got {x!r}")
    return v


def read_state_floats(state: KinematicState) -> list[float]:
    """read_state's 18 values as Python floats, row after row (position, rpy, velocity, angular
    velocity, acceleration, angular acceleration); the same checks and errors. Float64 (3,)
    arrays are read as they are, anything else through read_state. Finite values have a finite
    sum (a sum that overflows only sends them through read_state's own check)."""
    x: list[float] = []
    for name in _NAMES:
        v = getattr(state, name)
        if type(v) is not np.ndarray or v.dtype is not _FLOAT64 or v.shape != (3,):
            return read_state(state).ravel().tolist()
        x += v.tolist()
    total = sum(x)
    if total - total == 0.0:
        return x
    return read_state(state).ravel().tolist()


_FLOAT64 = np.dtype(np.float64)


class FixedMatrix:
    """A constant 3x3 matrix m (a mounting rotation, a misalignment matrix) and its products."""

    def __init__(self, m: np.ndarray):
        self.m = m
        self.identity = m.shape == (3, 3) and bool(np.array_equal(m, np.eye(3)))

    def times(self, x: np.ndarray) -> np.ndarray:
        """m @ x (3,) bit for bit, x itself when that is plainly the product: m exactly the identity
        (ones and signed zeros) and every x_i a normal float (finite, nonzero, not subnormal).
        Each result is then x_i plus signed zeros, in whatever order and with or without fused
        multiply-adds the BLAS kernel sums them: exactly x_i. With a zero x_i the sign of the
        result would depend on the kernel, so numpy computes it."""
        if self.identity:
            a, b, c = x.tolist()
            if (_MIN_NORMAL <= abs(a) <= _MAX_FLOAT and _MIN_NORMAL <= abs(b) <= _MAX_FLOAT
                    and _MIN_NORMAL <= abs(c) <= _MAX_FLOAT):
                return x
        # m.dot(x) is m @ x at half the call cost: for a 3x3 matrix (C- or F-ordered) and a
        # contiguous vector both end in the same cblas_dgemv kernel with the same arguments
        # (numpy's cblas_matrixproduct and matmul's gemv; test_sensors_exact compares them)
        return self.m.dot(x)


_MIN_NORMAL, _MAX_FLOAT = sys.float_info.min, sys.float_info.max


def rotation_vector_to_matrix(v: np.ndarray) -> np.ndarray:
    """Rodrigues: rotation by |v| [rad] about v / |v| (3, 3)."""
    angle = float(np.linalg.norm(v))
    if angle < 1e-12:
        return np.eye(3)
    k = v / angle
    kx = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + math.sin(angle) * kx + (1.0 - math.cos(angle)) * (kx @ kx)


def matrix_to_quaternion_xyzw(r: np.ndarray) -> np.ndarray:
    """Unit quaternion (x, y, z, w), w >= 0, of a rotation matrix (via transforms3d)."""
    w, x, y, z = mat2quat(r)
    q = np.array([x, y, z, w])
    return q if w >= 0.0 else -q
