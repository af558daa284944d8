"""PD-servo trajectory follower of paper 000: drive a physical vehicle model along a timed path.

Paper 000 drives each wheel with tau = k (P_t - P_c) / R_w (Eq. 1), P_t the input trajectory's
position a few frames ahead ("three frames"), and picks the turn direction with Eq. 2:
u = P_e - P_c, D = d_up . (u x d_fw), theta_D = acos(u . d_fw / (|u| |d_fw|)), D > 0 right,
D < 0 left. A lead-in trajectory is prepended so the car is aligned before the real start.

Here (000 gives no gains; the defaults were tuned on the figure-eight test of
test_vehicle_full_servo.py with the medium car): the longitudinal command is a PD law on the
position error along the heading, F = m (k_p e + k_d de/dt) with e = (P_t - P_c) . d_fw - v_t
dt_ahead (the target runs dt_ahead ahead of the car), i.e. Eq. 1's torque F R_w, realised through
the pedals (throttle = F / F_drive_max, brake = -F / F_brake_max). Steering: Eq. 2's direction and
angle towards a point ``steer_lookahead_s`` ahead, turned into a road-wheel angle by pure pursuit,
delta = atan(2 L sin(theta_D) / l_d) (Coulter, CMU-RI-TR-92-01, 1992), + = left.
Everything is planar (x, y in odom); no ROS; reused by traffic and the accident planner.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vehicle_sim.core.config import spec
from vehicle_sim.core.traffic.mapfile import MAX_COORD_M
from vehicle_sim.core.vehicle.interface import Controls


@dataclass(frozen=True)
class ServoParams:
    lookahead_frames: int = spec(3, ge=1, le=100)
    """P_t is this many frames ahead (000)"""
    frame_dt_s: float = spec(1.0 / 30.0, unit="s", ge=1e-3, le=1.0)
    """trajectory frame period (a plan is resampled at it: at most 1 kHz frames)"""
    kp_per_s2: float = spec(4.0, unit="1/s^2", ge=0.0, le=100.0)
    """position gain (per unit mass)"""
    kd_per_s: float = spec(4.0, unit="1/s", ge=0.0, le=100.0)
    """velocity gain (per unit mass)"""
    steer_lookahead_s: float = spec(0.5, unit="s", gt=0.0, le=10.0)
    """time ahead of P_e"""
    min_steer_lookahead_m: float = spec(3.0, unit="m", gt=0.0, le=100.0)
    """floor of |P_e - P_c|"""
    lead_in_m: float = spec(10.0, unit="m", ge=0.0, le=MAX_COORD_M)
    """straight lead-in before the start (at most a map's half-width)"""


@dataclass(frozen=True)
class ServoVehicle:
    """What the servo needs to know about the vehicle."""

    mass_kg: float
    wheelbase_m: float
    max_drive_force_n: float  # force at full throttle (low gear) [N]
    max_brake_force_n: float  # force at full brake pedal [N]
    max_steer_rad: float


def servo_vehicle(params) -> ServoVehicle:
    """ServoVehicle of a VehicleParams: drive force from the full-model drivetrain (peak torque
    in first gear) when present, else the planar powertrain's force limit."""
    dt = params.drivetrain
    if dt is not None:
        drive = (dt.peak_torque_nm * dt.gear_ratios[0] * dt.final_drive_ratio
                 / params.tyre.rolling_radius_m)
    else:
        drive = params.powertrain.max_drive_force_n
    return ServoVehicle(params.chassis.mass_kg, params.chassis.wheelbase_m, drive,
                        params.brakes.max_force_n, params.steering.max_road_wheel_angle_rad)


def lead_in(times_s: np.ndarray, xy_m: np.ndarray,
            length_m: float) -> tuple[np.ndarray, np.ndarray]:
    """Prepend a straight segment of ``length_m`` behind the first point along the initial
    tangent, travelled at the initial speed (000's lead-in "hypothetical trajectory")."""
    if length_m <= 0.0:
        return times_s, xy_m
    tangent = xy_m[1] - xy_m[0]
    dt = times_s[1] - times_s[0]
    speed = np.linalg.norm(tangent) / dt
    if speed <= 0.0:
        raise ValueError("lead-in needs a moving start (first two points differ)")
    n = max(1, math.ceil(length_m / (speed * dt)))
    k = np.arange(n, 0, -1)[:, None]
    pre_xy = xy_m[0] - tangent * k
    pre_t = times_s[0] - dt * k[:, 0]
    return np.concatenate([pre_t, times_s]), np.concatenate([pre_xy, xy_m])


def turn_direction(p_c: np.ndarray, p_e: np.ndarray, d_fw: np.ndarray) -> tuple[float, float]:
    """Paper 000 Eq. 2 in the plane (d_up = z): (D, theta_D); D > 0 right, D < 0 left."""
    u = np.array([p_e[0] - p_c[0], p_e[1] - p_c[1], 0.0])
    fw = np.array([d_fw[0], d_fw[1], 0.0])
    d = float(np.cross(u, fw)[2])
    cos_t = float(u @ fw) / max(np.linalg.norm(u) * np.linalg.norm(fw), 1e-12)
    return d, math.acos(min(max(cos_t, -1.0), 1.0))


class PDServo:
    """Follows a timed planar trajectory (times [s], points [m]) with the laws of the docstring."""

    def __init__(self, params: ServoParams, vehicle: ServoVehicle, times_s: np.ndarray,
                 xy_m: np.ndarray):
        times_s = np.asarray(times_s, dtype=float)
        xy_m = np.asarray(xy_m, dtype=float)
        if xy_m.ndim != 2 or xy_m.shape[1] != 2 or len(xy_m) != len(times_s) or len(xy_m) < 2:
            raise ValueError("need matching times (n,) and points (n, 2), n >= 2")
        if not (np.all(np.isfinite(xy_m)) and np.all(np.diff(times_s) > 0.0)):
            raise ValueError("points must be finite and times strictly increasing")
        self.p, self.v = params, vehicle
        self.times, self.xy = lead_in(times_s, xy_m, params.lead_in_m)
        self.vel = np.gradient(self.xy, self.times, axis=0)

    @property
    def start_time_s(self) -> float:
        """Time of the first lead-in point (start the vehicle there)."""
        return float(self.times[0])

    def target(self, t_s: float) -> tuple[np.ndarray, np.ndarray]:
        """(position [m], velocity [m/s]) of the trajectory at time t (linear interpolation)."""
        pos = np.array([np.interp(t_s, self.times, self.xy[:, k]) for k in range(2)])
        vel = np.array([np.interp(t_s, self.times, self.vel[:, k]) for k in range(2)])
        return pos, vel

    def command(self, t_s: float, position_m: np.ndarray, yaw_rad: float,
                velocity_mps: np.ndarray) -> Controls:
        """Controls for the vehicle at planar position/velocity (odom) and heading at time t."""
        d_fw = np.array([math.cos(yaw_rad), math.sin(yaw_rad)])
        ahead = self.p.lookahead_frames * self.p.frame_dt_s
        p_t, v_t = self.target(t_s + ahead)
        p_c = np.asarray(position_m[:2], dtype=float)
        v_c = np.asarray(velocity_mps[:2], dtype=float)
        error = float((p_t - p_c) @ d_fw) - float(v_t @ d_fw) * ahead
        rate = float((v_t - v_c) @ d_fw)
        force = self.v.mass_kg * (self.p.kp_per_s2 * error + self.p.kd_per_s * rate)
        throttle = min(max(force / self.v.max_drive_force_n, 0.0), 1.0)
        brake = min(max(-force / self.v.max_brake_force_n, 0.0), 1.0)
        p_e = self._steer_point(t_s, p_c)
        d, theta = turn_direction(p_c, p_e, d_fw)
        l_d = max(float(np.linalg.norm(p_e - p_c)), self.p.min_steer_lookahead_m)
        steer = math.atan(2.0 * self.v.wheelbase_m * math.sin(theta) / l_d)
        steer = -steer if d > 0.0 else steer  # D > 0: turn right (negative angle, REP-103)
        limit = self.v.max_steer_rad
        return Controls(steer_rad=min(max(steer, -limit), limit), throttle=throttle,
                        brake=brake, gear=1)

    def _steer_point(self, t_s: float, p_c: np.ndarray) -> np.ndarray:
        """P_e: the trajectory point steer_lookahead_s ahead, at least the minimum distance."""
        p_e, _ = self.target(t_s + self.p.steer_lookahead_s)
        step = 0.0
        while np.linalg.norm(p_e - p_c) < self.p.min_steer_lookahead_m and step < 10.0:
            step += 0.1
            p_e, _ = self.target(t_s + self.p.steer_lookahead_s + step)
        return p_e
