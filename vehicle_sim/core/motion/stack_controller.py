"""Speed / acceleration / curvature commands of an autonomy stack -> pedals and road-wheel angle.

A stack (Autoware, Nav2, a CARLA-style Ackermann user) commands motion, not pedals. This
controller turns a ``Setpoint`` into the pedal/steering ``Controls`` the mux and the dynamics
node take, from the vehicle file alone (no tuning per vehicle):

Longitudinal (along base_link x, SI units):
- target acceleration a*: the setpoint's own acceleration (Autoware's ``is_defined_acceleration``)
  or, for a speed command, a* = clip(k_v (v* - v), -limit, +limit), with the command's
  acceleration limit (Ackermann's ``acceleration``; 0 = the default limits) so the speed is
  approached on a first-order curve, without overshoot;
- force: feed-forward from the vehicle's longitudinal model (the single-track model's terms,
  ``single_track.axle_long_forces``): F = m a* + C_rr m g sign(v) + 1/2 rho C_d A v|v|,
  plus a PI on the acceleration error (a* - a measured) for what that model leaves out (grade,
  the 14-DOF drivetrain's lag);
- pedals: F along the gear's direction -> throttle = F / min(F_drive_max, P_max / |v|) (the
  constant-power drive of paper 004); F against the motion -> brake = |F| / F_brake_max;
  at rest with a zero speed target (or a deceleration demand) the brake holds the car.

Lateral: the commanded road-wheel angle, or from curvature by the kinematic bicycle
delta = atan(L kappa) (L the wheelbase); limited to the vehicle's maximum angle and, when the
command gives one, to its rate.

Deterministic: time comes from the measured state's stamps (sim time), never the wall clock.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from vehicle_sim.core.config import spec
from vehicle_sim.core.units import GRAVITY_MPS2
from vehicle_sim.core.vehicle.drive_law import full_drive_force_n
from vehicle_sim.core.vehicle.interface import Controls
from vehicle_sim.core.vehicle.params import VehicleParams

REST_MPS = 0.2  # [m/s] below this the car counts as at rest (a choice: ~ one step of creep)


@dataclass(frozen=True)
class ControllerGains:
    """Gains of the stack controller (a choice each, see the field docs)."""

    speed_gain_per_s: float = spec(1.0, unit="1/s", gt=0.0, le=20.0)
    """acceleration demand per m/s of speed error (the former cmd_vel law's gain: a 1 s time
    constant)"""
    max_accel_mps2: float = spec(3.0, unit="m/s^2", gt=0.0, le=20.0)
    """default acceleration limit of a speed command (comfort driving is below ~3 m/s^2)"""
    max_decel_mps2: float = spec(8.0, unit="m/s^2", gt=0.0, le=20.0)
    """default deceleration limit of a speed command (~0.8 g)"""
    accel_kp: float = spec(0.2, unit="-", ge=0.0, lt=1.0)
    """proportional gain on the acceleration error (< 1: the pedal acts at once on a planar model, a
    loop gain >= 1 oscillates)"""
    accel_ki_per_s: float = spec(2.0, unit="1/s", ge=0.0, le=50.0)
    """integral gain on the acceleration error"""
    integral_limit_mps2: float = spec(2.0, unit="m/s^2", ge=0.0, le=10.0)
    """anti-windup bound of the integral term"""
    max_dt_s: float = spec(0.2, unit="s", gt=0.0, le=2.0)
    """longest step the integral and the rate limit take (a gap in the commands does not wind
    anything up)"""


@dataclass(frozen=True)
class LongitudinalModel:
    """The vehicle's longitudinal inverse model, from the vehicle file (``from_vehicle``): the
    force for an acceleration (``force_n``) and the drive force at full throttle
    (``drive_available_n``). Shared by this controller and the ego autopilot (core.ego)."""

    mass_kg: float
    rolling_force_n: float  # C_rr m g
    drag_n_per_mps2: float  # 1/2 rho C_d A
    max_drive_force_n: float
    max_power_w: float
    max_brake_force_n: float
    wheelbase_m: float
    max_steer_rad: float

    @classmethod
    def from_vehicle(cls, v: VehicleParams) -> LongitudinalModel:
        c = v.chassis
        return cls(mass_kg=c.mass_kg,
                   rolling_force_n=v.tyre.rolling_resistance_coeff * c.mass_kg * GRAVITY_MPS2,
                   drag_n_per_mps2=0.5 * v.aero.air_density_kgpm3 * v.aero.drag_area_m2,
                   max_drive_force_n=v.powertrain.max_drive_force_n,
                   max_power_w=v.powertrain.max_power_w, max_brake_force_n=v.brakes.max_force_n,
                   wheelbase_m=c.wheelbase_m,
                   max_steer_rad=v.steering.max_road_wheel_angle_rad)

    def force_n(self, accel_mps2: float, speed_mps: float, rolling: float = 1.0) -> float:
        """Force along x [N] that gives ``accel_mps2`` at ``speed_mps``: m a + rolling C_rr m g
        + 1/2 rho C_d A v|v| (the single-track model's terms, ``single_track.axle_long_forces``);
        ``rolling`` the sign of the rolling resistance (1 moving forward, -1 backward, 0 none)."""
        return self.mass_kg * accel_mps2 + (rolling * self.rolling_force_n
                                            + self.drag_n_per_mps2 * speed_mps * abs(speed_mps))

    def drive_available_n(self, speed_mps: float) -> float:
        """Drive force at full throttle [N]: the vehicle models' constant-power law."""
        return full_drive_force_n(self.max_drive_force_n, self.max_power_w, speed_mps)


@dataclass(frozen=True)
class Setpoint:
    """One stack command in the controller's terms (base_link x forward, + left, SI units)."""

    speed_mps: float = 0.0  # target speed; negative: reverse
    accel_mps2: float | None = None  # the acceleration itself; None: from the speed error
    accel_limit_mps2: float = 0.0  # |a| limit towards speed_mps; 0: the default limits
    steer_rad: float | None = None  # road-wheel angle; None: from curvature
    curvature_per_m: float = 0.0  # path curvature [1/m], + left
    steer_rate_radps: float = 0.0  # road-wheel angle rate limit; 0: none
    gear: int | None = None  # -1, 0, 1..; None: from the sign of speed_mps


@dataclass(frozen=True)
class Measured:
    """The newest vehicle state: forward speed, forward acceleration, its stamp (sim time)."""

    speed_mps: float
    accel_mps2: float
    t_ns: int


def warm_up() -> None:
    """Compile (or load from numba's cache) the drive law the inverse model calls from Python
    with floats (LongitudinalModel.drive_available_n): not during the first commands."""
    full_drive_force_n(1.0, 1.0, 1.0)


def twist_curvature(v_mps: float, yaw_rate_radps: float) -> float:
    """A (v, yaw rate) command's curvature r / v, with |v| at least 0.5 m/s so that a turn on
    the spot does not saturate the steering (the former cmd_vel law)."""
    v_ref = v_mps if abs(v_mps) > 0.5 else math.copysign(0.5, v_mps or 1.0)
    return yaw_rate_radps / v_ref


class StackController:
    """The controller's state (integral, last angle, last time); one per command source."""

    def __init__(self, model: LongitudinalModel, gains: ControllerGains = ControllerGains()):
        self.model, self.gains = model, gains
        self.reset()

    def reset(self) -> None:
        self._integral_mps2 = 0.0
        self._steer_rad = 0.0
        self._t_ns: int | None = None
        self._direction = 0

    def step(self, sp: Setpoint, m: Measured) -> Controls:
        """The pedals and road-wheel angle for ``sp`` given the state ``m``."""
        g = self.gains
        dt = 0.0 if self._t_ns is None else min(max((m.t_ns - self._t_ns) * 1e-9, 0.0),
                                                g.max_dt_s)
        self._t_ns = m.t_ns
        gear = sp.gear if sp.gear is not None else (-1 if sp.speed_mps < 0.0 else 1)
        direction = (gear > 0) - (gear < 0)
        if direction != self._direction:
            self._integral_mps2, self._direction = 0.0, direction
        steer = self._steer(sp, dt)
        target = self._target_accel(sp, m.speed_mps)
        at_rest = abs(m.speed_mps) < REST_MPS
        hold = at_rest and (target * direction <= 0.0 or direction == 0)
        if hold:
            self._integral_mps2 = 0.0
            return Controls(steer_rad=steer, brake=1.0, gear=gear)
        error = target - m.accel_mps2
        self._integral_mps2 = min(max(self._integral_mps2 + g.accel_ki_per_s * error * dt,
                                      -g.integral_limit_mps2), g.integral_limit_mps2)
        demand = target + g.accel_kp * error + self._integral_mps2
        force = self._force_n(demand, m.speed_mps, direction)
        throttle, brake = self._pedals(force, m.speed_mps, direction)
        return Controls(steer_rad=steer, throttle=throttle, brake=brake, gear=gear)

    def _target_accel(self, sp: Setpoint, speed_mps: float) -> float:
        g, model = self.gains, self.model
        if sp.accel_mps2 is not None:
            target = sp.accel_mps2
        else:
            up = sp.accel_limit_mps2 or g.max_accel_mps2
            down = sp.accel_limit_mps2 or g.max_decel_mps2
            error = sp.speed_mps - speed_mps
            target = g.speed_gain_per_s * error
            # the limit acts on the speed's magnitude: speeding up vs slowing down
            speeding_up = error * (sp.speed_mps or speed_mps) > 0.0
            limit = up if speeding_up else down
            target = min(max(target, -limit), limit)
        brake_limit = model.max_brake_force_n / model.mass_kg
        drive_limit = model.max_drive_force_n / model.mass_kg
        return min(max(target, -max(brake_limit, drive_limit)), max(brake_limit, drive_limit))

    def _force_n(self, accel_mps2: float, speed_mps: float, direction: int) -> float:
        """Force along x [N] that gives ``accel_mps2`` at ``speed_mps`` (feed-forward model)."""
        if abs(speed_mps) > 0.05:
            moving = math.copysign(1.0, speed_mps)
        else:  # starting: rolling resistance opposes the direction the car is asked to go
            moving = float(direction) if accel_mps2 * direction > 0.0 else 0.0
        return self.model.force_n(accel_mps2, speed_mps, moving)

    def _pedals(self, force_n: float, speed_mps: float, direction: int) -> tuple[float, float]:
        """(throttle, brake) for the force ``force_n`` along x."""
        model = self.model
        drives = direction != 0 and force_n * direction > 0.0 and speed_mps * direction > -REST_MPS
        if drives:
            return min(1.0, abs(force_n) / model.drive_available_n(speed_mps)), 0.0
        if force_n * speed_mps < 0.0 or abs(speed_mps) < REST_MPS:
            return 0.0, min(1.0, abs(force_n) / model.max_brake_force_n)
        return 0.0, 0.0  # a push the gear cannot give (neutral, or against the gear): coast

    def _steer(self, sp: Setpoint, dt_s: float) -> float:
        model = self.model
        want = (sp.steer_rad if sp.steer_rad is not None
                else math.atan(model.wheelbase_m * sp.curvature_per_m))
        want = min(max(want, -model.max_steer_rad), model.max_steer_rad)
        if sp.steer_rate_radps > 0.0:
            step = sp.steer_rate_radps * dt_s
            want = min(max(want, self._steer_rad - step), self._steer_rad + step)
        self._steer_rad = want
        return want
