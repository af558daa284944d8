"""The contract every vehicle model implements, and what the dynamics node reads from it.

Frames (REP-103/105): the world frame is ``odom`` (ENU, x east, y north, z up), the body frame is
``base_link`` at the centre of gravity (CG),
x forward, y left, z up. Every model documents its own reference point if it differs.
Wheel order everywhere: front-left, front-right, rear-left, rear-right (FL, FR, RL, RR).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Protocol

import numpy as np

WHEELS = ("front_left", "front_right", "rear_left", "rear_right")


@dataclass(frozen=True)
class Controls:
    """Driver inputs after validation (see ``vehicle_sim.core.controls``).

    steer_rad: road-wheel steering angle [rad], + turns left (REP-103), within the model's limit.
    throttle, brake, clutch: pedal positions [0..1]; clutch 1 = pedal pressed (disengaged).
    gear: -1 reverse, 0 neutral, 1..n forward; handbrake: locks the rear wheels' brakes.
    """

    steer_rad: float = 0.0
    throttle: float = 0.0
    brake: float = 0.0
    clutch: float = 0.0
    gear: int = 1
    handbrake: bool = False


class NonFiniteState(ValueError):
    """A step would have made the state NaN or infinite (parameters or inputs the model cannot
    integrate); the model keeps the state of the step before."""


@dataclass
class VehicleSnapshot:
    """Everything a node publishes about the vehicle at one instant (SI units, REP-103)."""

    position_m: np.ndarray = field(default_factory=lambda: np.zeros(3))  # CG in odom
    rpy_rad: np.ndarray = field(default_factory=lambda: np.zeros(3))  # roll, pitch, yaw (odom)
    velocity_mps: np.ndarray = field(default_factory=lambda: np.zeros(3))  # CG velocity, base_link
    angular_velocity_radps: np.ndarray = field(default_factory=lambda: np.zeros(3))  # base_link
    # inertial acceleration of the CG expressed in base_link, dv/dt + w x v (what an ideal
    # accelerometer at the CG reads minus gravity; specific force = this - R^T g)
    acceleration_mps2: np.ndarray = field(default_factory=lambda: np.zeros(3))
    angular_acceleration_radps2: np.ndarray = field(default_factory=lambda: np.zeros(3))
    wheel_speed_radps: np.ndarray = field(default_factory=lambda: np.zeros(4))  # spin, FL FR RL RR
    # longitudinal slip (w R - vx) / max(|vx|, eps), FL FR RL RR
    wheel_slip_ratio: np.ndarray = field(default_factory=lambda: np.zeros(4))
    wheel_slip_angle_rad: np.ndarray = field(default_factory=lambda: np.zeros(4))
    steer_rad: float = 0.0  # road-wheel angle actually applied
    gear: int = 0
    engine_rpm: float = 0.0
    aligning_moment_nm: float = 0.0  # self-aligning moment of the front tyres (force feedback)

    def require_finite(self) -> None:
        """Raise NonFiniteState naming the first NaN or infinite field (a finite state whose
        derivative is not, e.g. accelerations at the edge of a diverging integration)."""
        values = [getattr(self, name) for name in _SNAPSHOT_FIELDS]
        if np.isfinite(np.hstack(values)).all():  # one check on the fast path (~5 us)
            return
        for name, value in zip(_SNAPSHOT_FIELDS, values, strict=True):
            if not np.isfinite(value).all():
                raise NonFiniteState(f"{name} is {np.asarray(value).tolist()}")

    def to_vector(self) -> np.ndarray:
        """Every field, in declaration order, as one flat float64 vector (SNAPSHOT_SIZE long;
        the gear as a float): what the physics process sends instead of a pickled object."""
        return np.hstack([getattr(self, name) for name in _SNAPSHOT_FIELDS], dtype=np.float64)

    @classmethod
    def from_vector(cls, v: np.ndarray) -> VehicleSnapshot:
        """Inverse of ``to_vector`` (arrays copied out of ``v``); ValueError for a vector of
        another length."""
        if len(v) != SNAPSHOT_SIZE:
            raise ValueError(f"a vehicle snapshot is {SNAPSHOT_SIZE} float64, got {len(v)}")
        out = {}
        for name, (start, size) in _SNAPSHOT_SLICES.items():
            out[name] = float(v[start]) if size == 0 else v[start:start + size].copy()
        out["gear"] = int(out["gear"])
        return cls(**out)

    @classmethod
    def of_vector(cls, v: np.ndarray) -> VehicleSnapshot:
        """``from_vector`` without its copies and checks, for a vector that nobody else holds
        (what a model's snapshot kernel returns): the arrays are views of ``v``."""
        return cls(v[V_POSITION:V_POSITION + 3], v[V_RPY:V_RPY + 3],
                   v[V_VELOCITY:V_VELOCITY + 3], v[V_ANGULAR_VELOCITY:V_ANGULAR_VELOCITY + 3],
                   v[V_ACCELERATION:V_ACCELERATION + 3],
                   v[V_ANGULAR_ACCELERATION:V_ANGULAR_ACCELERATION + 3],
                   v[V_WHEEL_SPEED:V_WHEEL_SPEED + 4], v[V_SLIP_RATIO:V_SLIP_RATIO + 4],
                   v[V_SLIP_ANGLE:V_SLIP_ANGLE + 4], float(v[V_STEER]), int(v[V_GEAR]),
                   float(v[V_ENGINE_RPM]), float(v[V_ALIGNING]))


_SNAPSHOT_FIELDS = tuple(f.name for f in fields(VehicleSnapshot))


def _vector_slices() -> dict[str, tuple[int, int]]:
    """Field -> (first index in to_vector's vector, length; 0 = a scalar)."""
    out, start = {}, 0
    for name in _SNAPSHOT_FIELDS:
        value = getattr(VehicleSnapshot(), name)
        size = value.size if isinstance(value, np.ndarray) else 0
        out[name] = (start, size)
        start += max(1, size)
    return out


_SNAPSHOT_SLICES = _vector_slices()
SNAPSHOT_SIZE = sum(max(1, size) for _, size in _SNAPSHOT_SLICES.values())  # 34 float64
# first index of each field in that vector (kernels that fill one, VehicleSnapshot.of_vector)
(V_POSITION, V_RPY, V_VELOCITY, V_ANGULAR_VELOCITY, V_ACCELERATION, V_ANGULAR_ACCELERATION,
 V_WHEEL_SPEED, V_SLIP_RATIO, V_SLIP_ANGLE, V_STEER, V_GEAR, V_ENGINE_RPM,
 V_ALIGNING) = (start for start, _ in _SNAPSHOT_SLICES.values())


class VehicleModel(Protocol):
    """A vehicle model: owns its state vector, advances it by one fixed step."""

    name: str

    def reset(self, x_m: float = 0.0, y_m: float = 0.0, yaw_rad: float = 0.0,
              speed_mps: float = 0.0) -> None:
        """On the ground at (x, y) heading yaw with forward speed, at rest otherwise."""

    def step(self, controls: Controls, dt_s: float) -> None:
        """Advance the state by dt_s with the controls held constant over the step; raises
        NonFiniteState (state unchanged) rather than take a NaN or infinite state."""

    def snapshot(self) -> VehicleSnapshot:
        """The current state (a fresh object; the caller may keep it)."""
