"""Parameter groups of the 14-DOF model (``full14``), optional YAML sections of a vehicle file.

A vehicle file that has none of these sections still serves the planar models; ``full14`` needs
all of ``body``, ``suspension``, ``wheels``, ``magic_formula`` and ``drivetrain`` (checked by
``VehicleParams.__post_init__``, which names the missing one). Every physical field is required
in the YAML; only the numerical ``full_numerics`` settings have code defaults.
Front/rear values are per wheel (one corner), not per axle. Plausibility bounds as in
``vehicle.params`` (a ~100 kg quadricycle .. a 60 t truck, with margin around the shipped
values), e.g. tyre vertical stiffness 1e4..1e7 N/m (cars ~2e5, truck tyres ~8e5), unsprung mass
1..2000 kg per wheel, springs 1e3..5e6 N/m per corner, engine speeds up to 25000 rpm.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from vehicle_sim.core.config import spec

DRIVE_LAYOUTS = ("fwd", "rwd", "4wd")
CLUTCH_TYPES = ("dry", "viscous")
TRANSMISSIONS = ("manual", "automatic")
DIFFERENTIALS = ("open", "limited_slip")


@dataclass(frozen=True)
class BodyParams:
    """Sprung body (6 DOF) of the full model; reference point = its CG (base_link)."""

    cg_height_m: float = spec(unit="m", ge=0.1, le=5.0)
    """sprung-mass CG above the ground at static equilibrium"""
    roll_inertia_kgm2: float = spec(unit="kg m^2", ge=1.0, le=1e6)
    """sprung mass about body x"""
    pitch_inertia_kgm2: float = spec(unit="kg m^2", ge=1.0, le=2e6)
    """sprung mass about body y"""
    front_track_m: float = spec(unit="m", ge=0.3, le=4.0)
    """front wheel centre distance"""
    rear_track_m: float = spec(unit="m", ge=0.3, le=4.0)
    """rear wheel centre distance"""
    steering_ratio: float = spec(unit="-", ge=1.0, le=60.0)
    """steering-wheel angle / road-wheel angle"""


@dataclass(frozen=True)
class SuspensionParams:
    """Independent vertical suspension per corner (paper 001): nonlinear spring, damper, stops.

    Spring force k x (1 + progression x^2) for compression x from the free length; damper
    bump / rebound rates; beyond the travel limits (measured from static) a bump or rebound
    stop adds stop_stiffness * excess^2. An anti-roll bar adds k (x_this - x_other side); its
    roll stiffness is k * track^2 [N m/rad].
    """

    front_spring_npm: float = spec(unit="N/m", ge=1e3, le=5e6)
    """spring rate per front corner"""
    rear_spring_npm: float = spec(unit="N/m", ge=1e3, le=5e6)
    """spring rate per rear corner"""
    spring_progression_per_m2: float = spec(unit="1/m^2", ge=0.0, le=1e3)
    """cubic spring term"""
    front_bump_damping_nspm: float = spec(unit="N s/m", gt=0.0, le=2e5)
    """compression, front"""
    front_rebound_damping_nspm: float = spec(unit="N s/m", gt=0.0, le=2e5)
    """extension, front"""
    rear_bump_damping_nspm: float = spec(unit="N s/m", gt=0.0, le=2e5)
    """compression, rear"""
    rear_rebound_damping_nspm: float = spec(unit="N s/m", gt=0.0, le=2e5)
    """extension, rear"""
    bump_travel_m: float = spec(unit="m", ge=0.005, le=0.5)
    """compression from static to stop"""
    rebound_travel_m: float = spec(unit="m", ge=0.005, le=0.5)
    """extension from static to stop"""
    stop_stiffness_npm2: float = spec(unit="N/m^2", ge=1e4, le=1e9)
    """quadratic bump/rebound stop"""
    front_anti_roll_npm: float = spec(unit="N/m", ge=0.0, le=1e6)
    """anti-roll bar: k (x_left - x_right) on each side"""
    rear_anti_roll_npm: float = spec(unit="N/m", ge=0.0, le=1e6)
    """anti-roll bar, rear axle"""


@dataclass(frozen=True)
class WheelParams:
    """Unsprung masses (vertical DOF) and wheel spin; the rolling radius is ``tyre``'s."""

    front_unsprung_mass_kg: float = spec(unit="kg", ge=1.0, le=2000.0)
    """per front wheel"""
    rear_unsprung_mass_kg: float = spec(unit="kg", ge=1.0, le=2000.0)
    """per rear wheel"""
    spin_inertia_kgm2: float = spec(unit="kg m^2", ge=0.05, le=200.0)
    """wheel + tyre about its axle"""
    tyre_vertical_stiffness_npm: float = spec(unit="N/m", ge=1e4, le=1e7)
    """radial tyre stiffness"""
    tyre_vertical_damping_nspm: float = spec(unit="N s/m", ge=0.0, le=1e5)
    """radial tyre damping"""


@dataclass(frozen=True)
class MagicFormulaParams:
    """Magic Formula tyre at the reference (dry) surface; lateral peak and stiffness come from
    ``tyre.friction_coefficient`` and ``tyre.*_cornering_coeff_per_rad``.

    mu(Fz) = mu0 (1 + load_sensitivity (Fz - Fz0) / Fz0) (MF form, Pacejka 2012 ch. 4).
    Transient slip: first-order relaxation lengths and carcass damping (see magic_formula.py).
    """

    longitudinal_friction: float = spec(unit="-", ge=0.05, le=3.0)
    """mu_x peak at Fz0"""
    longitudinal_stiffness_per_load: float = spec(unit="-", ge=1.0, le=100.0)
    """K_x / Fz (slip stiffness per load)"""
    shape_x: float = spec(unit="-", gt=1.0, lt=2.0)
    """C_x"""
    shape_y: float = spec(unit="-", gt=1.0, lt=2.0)
    """C_y"""
    curvature_x: float = spec(unit="-", ge=-10.0, le=1.0)
    """E_x"""
    curvature_y: float = spec(unit="-", ge=-10.0, le=1.0)
    """E_y"""
    nominal_load_n: float = spec(unit="N", ge=100.0, le=2e5)
    """Fz0"""
    load_sensitivity: float = spec(unit="-", ge=-0.5, le=0.5)
    """d mu / mu per dFz / Fz0"""
    relaxation_length_x_m: float = spec(unit="m", ge=0.01, le=3.0)
    """sigma_x"""
    relaxation_length_y_m: float = spec(unit="m", ge=0.01, le=3.0)
    """sigma_y"""
    carcass_damping_x_nspm: float = spec(unit="N s/m", ge=0.0, le=1e5)
    """on the deflection rate"""
    carcass_damping_y_nspm: float = spec(unit="N s/m", ge=0.0, le=1e5)
    """on the deflection rate"""


@dataclass(frozen=True)
class DrivetrainParams:
    """Engine - clutch - gearbox - differential(s) of paper 001 (see drivetrain.py)."""

    idle_rpm: float = spec(unit="rpm", ge=100.0, le=3000.0)
    """idle speed held by the governor"""
    max_rpm: float = spec(unit="rpm", ge=500.0, le=25000.0)
    """rev limiter"""
    peak_torque_nm: float = spec(unit="N m", gt=0.0, le=1e4)
    """multiplier of the normalised curve"""
    torque_curve_rpm: tuple[float, ...] = spec(unit="rpm", ge=0.0, le=25000.0)
    """curve breakpoints"""
    torque_curve_norm: tuple[float, ...] = spec(unit="-", ge=0.0, le=1.0)
    """full-throttle torque / peak at breakpoints"""
    engine_inertia_kgm2: float = spec(unit="kg m^2", ge=0.01, le=20.0)
    """engine + flywheel"""
    friction_torque_nm: float = spec(unit="N m", ge=0.0, le=1e3)
    """constant engine friction"""
    friction_nm_per_radps: float = spec(unit="N m s", ge=0.0, le=10.0)
    """friction ~ omega (001)"""
    clutch_type: str = spec(choices=CLUTCH_TYPES)
    """dry (locks/slips) or viscous"""
    clutch_max_torque_nm: float = spec(unit="N m", gt=0.0, le=2e4)
    """dry clutch capacity"""
    clutch_viscous_nms: float = spec(unit="N m s", gt=0.0, le=1e3)
    """viscous clutch coefficient"""
    clutch_engage_rpm: float = spec(unit="rpm", gt=0.0, le=25000.0)
    """capacity ramps from 0 at idle to full here (anti-stall)"""
    transmission: str = spec(choices=TRANSMISSIONS)
    """manual: Controls.gear; automatic: D"""
    gear_ratios: tuple[float, ...] = spec(unit="-", gt=0.0, le=20.0)
    """forward gears 1..n"""
    reverse_ratio: float = spec(unit="-", gt=0.0, le=20.0)
    """magnitude of the reverse ratio"""
    final_drive_ratio: float = spec(unit="-", gt=0.0, le=20.0)
    """differential ratio"""
    drive_layout: str = spec(choices=DRIVE_LAYOUTS)
    """driven axles"""
    front_torque_share: float = spec(unit="-", ge=0.0, le=1.0)
    """4wd centre differential fixed split (001)"""
    differential: str = spec(choices=DIFFERENTIALS)
    """axle differentials"""
    limited_slip_nms: float = spec(unit="N m s", ge=0.0, le=1e4)
    """viscous coupling, left-right"""

    def __post_init__(self) -> None:
        if len(self.torque_curve_rpm) != len(self.torque_curve_norm):
            raise ValueError("torque_curve_rpm and torque_curve_norm must have the same length")
        if not 2 <= len(self.torque_curve_rpm) <= MAX_CURVE_POINTS:
            raise ValueError(f"torque curve needs 2..{MAX_CURVE_POINTS} points")
        if any(b <= a for a, b in zip(self.torque_curve_rpm, self.torque_curve_rpm[1:])):
            raise ValueError("torque_curve_rpm must be strictly increasing")
        if not 1 <= len(self.gear_ratios) <= MAX_GEARS:
            raise ValueError(f"gear_ratios needs 1..{MAX_GEARS} gears")
        if not self.idle_rpm < self.clutch_engage_rpm < self.max_rpm:
            raise ValueError("need idle_rpm < clutch_engage_rpm < max_rpm")
        if max(self.torque_curve_norm) <= 0.0:
            raise ValueError("torque_curve_norm is all zero: the engine gives no torque")


@dataclass(frozen=True)
class FullNumerics:
    """Numerical settings of the full model (not vehicle properties)."""

    brake_hold_time_s: float = spec(0.01, unit="s", ge=1e-4, le=1.0)
    """time constant with which a held wheel stops spinning"""
    clutch_slip_band_radps: float = spec(1.0, unit="rad/s", ge=1e-3, le=100.0)
    """slip speed over which dry friction builds up"""
    idle_governor_band_rpm: float = spec(100.0, unit="rpm", ge=1.0, le=2000.0)
    """governor opens fully this far below idle"""
    min_shift_interval_s: float = spec(1.0, unit="s", gt=0.0, le=10.0)
    """automatic gearbox"""
    slip_speed_floor_mps: float = spec(0.5, unit="m/s", ge=0.01, le=5.0)
    """speed floor of the kinematic slip (sliding test)"""


MAX_CURVE_POINTS = 16
MAX_GEARS = 10
RPM_TO_RADPS = 2.0 * math.pi / 60.0
