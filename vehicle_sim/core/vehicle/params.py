"""Vehicle parameters: one frozen, validated structure per vehicle, loaded from YAML.

Groups (YAML sections) used by the planar models (``kinematic``, ``single_track``): ``chassis``,
``tyre``, ``powertrain``, ``brakes``, ``steering``, ``aero`` and the optional numerical group
``low_speed``. The 14-DOF model (``full14``) also needs ``body``, ``suspension``, ``wheels``,
``magic_formula`` and ``drivetrain`` (full14/params.py; all or none of them, None = not given) and
has the optional numerical group ``full_numerics``. Every physical field is required in the YAML
(no code default), only the numerical groups have defaults. (``config.flat_fields`` cannot
flatten the None-default groups: load vehicles from YAML with ``config.load``/``load_vehicle``.)

Plausibility bounds: every numeric field carries a lower and an upper bound (in its ``spec``,
checked when the file is loaded; a violation raises ConfigError naming file, key and bound). They
span road vehicles from a ~100 kg quadricycle to a 60 t heavy-haulage truck (EU 44 t, more with
special permits), with margin around the shipped cars (1.1 t) and truck (9.5 t): e.g. mass
100..60000 kg, yaw inertia 10..2e6 kg m^2 (m (l^2 + w^2) / 12 of a 60 t, 16 m truck is
1.3e6). They refuse typos and absurd values that load but turn the state into NaN (1e308,
1e-300), not unusual vehicles.

``pack(params)`` flattens what the planar kernels need into one float64 array, once, indexed by
the ``P_*`` constants below (no long argument lists in the numba kernels).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vehicle_sim.core.accident.crash_params import CRASH_CLASSES
from vehicle_sim.core.config import load, spec
from vehicle_sim.core.units import GRAVITY_MPS2
from vehicle_sim.core.vehicle.full14.params import (
    BodyParams,
    DrivetrainParams,
    FullNumerics,
    MagicFormulaParams,
    SuspensionParams,
    WheelParams,
)

# Standard gravity [m/s^2] (3rd CGPM, 1901; also ISO 80000-3).


@dataclass(frozen=True)
class ChassisParams:
    """Rigid body of the vehicle; distances from the centre of gravity (CG) along body x."""

    mass_kg: float = spec(unit="kg", ge=100.0, le=60000.0)
    """total vehicle mass"""
    yaw_inertia_kgm2: float = spec(unit="kg m^2", ge=10.0, le=2e6)
    """moment of inertia about body z at the CG"""
    cg_to_front_axle_m: float = spec(unit="m", ge=0.1, le=10.0)
    """a: CG to front axle"""
    cg_to_rear_axle_m: float = spec(unit="m", ge=0.1, le=10.0)
    """b: CG to rear axle"""
    length_m: float = spec(unit="m", ge=1.0, le=25.0)
    """overall body length (bounding box)"""
    width_m: float = spec(unit="m", ge=0.5, le=3.0)
    """overall body width (bounding box)"""

    def __post_init__(self) -> None:
        if self.wheelbase_m >= self.length_m:
            raise ValueError(f"wheelbase {self.wheelbase_m:.3f} m (a + b) must be shorter than "
                             f"the body length {self.length_m} m")

    @property
    def wheelbase_m(self) -> float:
        """L = a + b [m]."""
        return self.cg_to_front_axle_m + self.cg_to_rear_axle_m


@dataclass(frozen=True)
class TyreParams:
    """Tyre-road contact of the planar models (Fiala brush lateral force, conventions.md)."""

    friction_coefficient: float = spec(unit="-", ge=0.05, le=2.0)
    """road-tyre peak friction mu"""
    front_cornering_coeff_per_rad: float = spec(unit="1/rad", ge=1.0, le=100.0)
    """front axle cornering stiffness divided by its vertical load, C_alpha_f / Fz_f"""
    rear_cornering_coeff_per_rad: float = spec(unit="1/rad", ge=1.0, le=100.0)
    """rear axle cornering stiffness divided by its vertical load, C_alpha_r / Fz_r"""
    rolling_radius_m: float = spec(unit="m", gt=0.05, le=1.5)
    """effective rolling radius"""
    pneumatic_trail_m: float = spec(unit="m", ge=0.0, le=0.2)
    """pneumatic trail at zero slip (brush model: a/3)"""
    rolling_resistance_coeff: float = spec(unit="-", ge=0.0, le=0.1)
    """rolling resistance force / vertical load"""


@dataclass(frozen=True)
class PowertrainParams:
    """Automatic constant-power gearbox of paper 004: F = throttle * min(F_max, P / |u|)."""

    max_drive_force_n: float = spec(unit="N", gt=0.0, le=1e6)
    """drive force limit at low speed"""
    max_power_w: float = spec(unit="W", gt=0.0, le=2e6)
    """constant power at the wheels"""
    front_drive_fraction: float = spec(unit="-", ge=0.0, le=1.0)
    """share of drive force on the front axle (1 = FWD)"""
    max_reverse_speed_mps: float = spec(unit="m/s", gt=0.0, le=50.0)
    """drive is cut beyond this speed in reverse gear"""


@dataclass(frozen=True)
class BrakeParams:
    """Service brakes; each axle's force saturates at mu * Fz (locked wheels, no ABS)."""

    max_force_n: float = spec(unit="N", gt=0.0, le=1e6)
    """total brake force demanded at full pedal"""
    front_bias: float = spec(unit="-", ge=0.0, le=1.0)
    """share of brake force on the front"""


@dataclass(frozen=True)
class SteeringParams:
    """Road-wheel steering; inputs beyond the limit are clamped by the model."""

    max_road_wheel_angle_rad: float = spec(unit="rad", gt=0.0, lt=math.pi / 2)
    """|delta| limit of the road wheels"""


@dataclass(frozen=True)
class AeroParams:
    """Aerodynamic drag F = 0.5 * rho * CdA * u * |u|."""

    drag_area_m2: float = spec(unit="m^2", ge=0.0, le=20.0)
    """drag coefficient times frontal area"""
    air_density_kgpm3: float = spec(unit="kg/m^3", ge=0.5, le=2.0)
    """air density"""


@dataclass(frozen=True)
class LowSpeedParams:
    """Numerical low-speed handling of the single-track model (not physical properties).

    Paper 004's slip angles divide by u, so below ``blend_low_speed_mps`` the single-track model
    is the kinematic bicycle and between the two speeds both are blended linearly. In the
    kinematic regime v and r relax to the kinematic values with ``kinematic_relaxation_time_s``
    (must exceed the integration step; Euler is stable for dt < 2 * tau).
    """

    blend_low_speed_mps: float = spec(1.0, unit="m/s", gt=0.0, le=20.0)
    blend_high_speed_mps: float = spec(3.0, unit="m/s", gt=0.0, le=30.0)
    kinematic_relaxation_time_s: float = spec(0.05, unit="s", ge=1e-3, le=1.0)

    def __post_init__(self) -> None:
        if self.blend_high_speed_mps <= self.blend_low_speed_mps:
            raise ValueError(f"blend_high_speed_mps ({self.blend_high_speed_mps}) must exceed "
                             f"blend_low_speed_mps ({self.blend_low_speed_mps})")


@dataclass(frozen=True)
class VehicleParams:
    """Everything the vehicle models need; build with :func:`load_vehicle`."""

    name: str = spec()
    """human-readable vehicle name"""
    chassis: ChassisParams = spec()
    tyre: TyreParams = spec()
    powertrain: PowertrainParams = spec()
    brakes: BrakeParams = spec()
    steering: SteeringParams = spec()
    aero: AeroParams = spec()
    low_speed: LowSpeedParams = spec(LowSpeedParams())
    crash_class: str = spec("medium", choices=CRASH_CLASSES)
    """crash-model class of paper 004 Figure 12 (damping R_o per impact part, K = 81.7 R_o;
    core/accident/crash_params.py)"""
    # Groups of the 14-DOF model (full14/params.py); None = not given (planar models only).
    body: BodyParams = spec(None)
    suspension: SuspensionParams = spec(None)
    wheels: WheelParams = spec(None)
    magic_formula: MagicFormulaParams = spec(None)
    drivetrain: DrivetrainParams = spec(None)
    full_numerics: FullNumerics = spec(FullNumerics())

    def __post_init__(self) -> None:
        groups = FULL_MODEL_GROUPS
        given = [g for g in groups if getattr(self, g) is not None]
        if given and len(given) != len(groups):
            missing = [g for g in groups if getattr(self, g) is None]
            raise ValueError(f"full-model groups are all or nothing: missing {', '.join(missing)}"
                             f" (given: {', '.join(given)})")
        if self.wheels is not None:
            w = self.wheels
            sprung = self.chassis.mass_kg - 2.0 * (w.front_unsprung_mass_kg
                                                   + w.rear_unsprung_mass_kg)
            if sprung <= 0.0:
                raise ValueError(f"wheels: unsprung masses exceed chassis.mass_kg "
                                 f"({self.chassis.mass_kg} kg)")

    @property
    def has_full_model(self) -> bool:
        """True when every group the 14-DOF model needs is present."""
        return self.body is not None

    def axle_loads_n(self) -> tuple[float, float]:
        """Static vertical loads (front, rear) [N] on level ground: m g b / L, m g a / L."""
        c = self.chassis
        weight = c.mass_kg * GRAVITY_MPS2
        return (weight * c.cg_to_rear_axle_m / c.wheelbase_m,
                weight * c.cg_to_front_axle_m / c.wheelbase_m)

    def cornering_stiffness_npr(self) -> tuple[float, float]:
        """Axle cornering stiffnesses (front, rear) [N/rad] = coefficient * static axle load."""
        fzf, fzr = self.axle_loads_n()
        return (self.tyre.front_cornering_coeff_per_rad * fzf,
                self.tyre.rear_cornering_coeff_per_rad * fzr)

    def understeer_gradient_s2pm(self) -> float:
        """K_us = m / L * (b / C_f - a / C_r) [s^2/m] (linear single-track, steady state)."""
        c = self.chassis
        cf, cr = self.cornering_stiffness_npr()
        return c.mass_kg / c.wheelbase_m * (c.cg_to_rear_axle_m / cf - c.cg_to_front_axle_m / cr)


FULL_MODEL_GROUPS = ("body", "suspension", "wheels", "magic_formula", "drivetrain")


def load_vehicle(path: str | Path) -> VehicleParams:
    """Load and validate a vehicle YAML; problems raise ConfigError naming file, key and reason."""
    return load(VehicleParams, path)


# Packed layout for the planar kernels (single_track, kinematic).
P_MASS, P_IZ, P_A, P_B, P_MU, P_CAF, P_CAR, P_RW, P_TRAIL, P_CRR = range(10)
P_FMAX, P_PMAX, P_DRIVE_FRONT, P_VREV, P_BRAKE_FMAX, P_BRAKE_FRONT = range(10, 16)
P_STEER_MAX, P_DRAG, P_V_LO, P_V_HI, P_TAU, P_G, P_FZF, P_FZR = range(16, 24)
# External wrench (set_external_wrench, e.g. crash forces): force [N] in odom, moment [N m] about
# the CG; 0 after pack().
P_EXT_FX, P_EXT_FY, P_EXT_MZ = range(24, 27)
N_PARAMS = 27


def pack(params: VehicleParams) -> np.ndarray:
    """The float64 array the planar kernels read, indexed by the ``P_*`` constants.

    Derived entries: P_CAF/P_CAR axle cornering stiffness [N/rad], P_DRAG = 0.5 rho CdA [kg/m],
    P_FZF/P_FZR static axle loads [N].
    """
    c, t, pt, br = params.chassis, params.tyre, params.powertrain, params.brakes
    p = np.zeros(N_PARAMS)
    p[P_MASS], p[P_IZ] = c.mass_kg, c.yaw_inertia_kgm2
    p[P_A], p[P_B] = c.cg_to_front_axle_m, c.cg_to_rear_axle_m
    p[P_MU] = t.friction_coefficient
    p[P_CAF], p[P_CAR] = params.cornering_stiffness_npr()
    p[P_RW], p[P_TRAIL] = t.rolling_radius_m, t.pneumatic_trail_m
    p[P_CRR] = t.rolling_resistance_coeff
    p[P_FMAX], p[P_PMAX] = pt.max_drive_force_n, pt.max_power_w
    p[P_DRIVE_FRONT], p[P_VREV] = pt.front_drive_fraction, pt.max_reverse_speed_mps
    p[P_BRAKE_FMAX], p[P_BRAKE_FRONT] = br.max_force_n, br.front_bias
    p[P_STEER_MAX] = params.steering.max_road_wheel_angle_rad
    p[P_DRAG] = 0.5 * params.aero.air_density_kgpm3 * params.aero.drag_area_m2
    ls = params.low_speed
    p[P_V_LO], p[P_V_HI], p[P_TAU] = (ls.blend_low_speed_mps, ls.blend_high_speed_mps,
                                      ls.kinematic_relaxation_time_s)
    p[P_G] = GRAVITY_MPS2
    p[P_FZF], p[P_FZR] = params.axle_loads_n()
    return p
