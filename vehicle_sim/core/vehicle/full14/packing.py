"""Packed parameter array of the 14-DOF model: indices ``F_*`` and ``pack_full``.

Per-axle entries are (front, rear) pairs at F_X and F_X + 1; per-wheel entries are four values
FL, FR, RL, RR at F_X .. F_X + 3. The terrain (terrain.pack_terrain) is appended at the end;
its offset is stored at F_TERRAIN. Derived values (static loads, free tyre radius, static
spring compression) are computed here once.

The F_* indices are compile-time constants of the disk-cached numba kernels; the package's
cache guard (core.numba_cache) drops those kernels when this layout changes.
"""
from __future__ import annotations

import math

import numpy as np

from vehicle_sim.core.units import GRAVITY_MPS2
from vehicle_sim.core.vehicle.full14.params import MAX_CURVE_POINTS, MAX_GEARS, RPM_TO_RADPS
from vehicle_sim.core.vehicle.full14.terrain import TerrainParams, pack_terrain
from vehicle_sim.core.vehicle.params import VehicleParams

_names: list[tuple[str, int]] = [
    ("M", 1), ("MS", 1), ("IXX", 1), ("IYY", 1), ("IZZ", 1), ("A", 1), ("B", 1), ("TRACK", 2),
    ("HCG", 1), ("G", 1),
    ("KS", 2), ("KPROG", 1), ("CBUMP", 2), ("CREB", 2), ("BUMP", 1), ("REB", 1), ("KSTOP", 1),
    ("KARB", 2),
    ("X0", 2), ("L0", 2), ("MU_UNS", 2), ("IW", 1), ("KT", 1), ("CT", 1), ("R0", 2),
    ("FZ_STATIC", 2),
    ("CX", 1), ("CY", 1), ("EX", 1), ("EY", 1), ("MUX", 1), ("MUY", 1), ("KXC", 1),
    ("KYC", 2), ("FZ0", 1), ("PD2", 1), ("SIGX", 1), ("SIGY", 1), ("DAMPX", 1), ("DAMPY", 1),
    ("CRR", 1), ("TRAIL", 1),
    ("GRIP", 4), ("RSCALE", 4), ("RRSCALE", 4),
    ("TB", 1), ("TB_FRONT", 1), ("STEER_MAX", 1), ("DRAG", 1),
    ("IDLE", 1), ("WMAX", 1), ("TPEAK", 1), ("IE", 1), ("F0", 1), ("F1", 1), ("NCURVE", 1),
    ("CURVE_W", MAX_CURVE_POINTS), ("CURVE_T", MAX_CURVE_POINTS), ("GOV", 1),
    ("CL_VISCOUS", 1), ("CL_TMAX", 1), ("CL_CVISC", 1), ("CL_ENGAGE", 1), ("CL_BAND", 1),
    ("AUTO", 1), ("NGEARS", 1), ("RATIOS", MAX_GEARS), ("REVERSE", 1), ("FINAL", 1),
    ("SHIFT_DT", 1), ("KDRIVE", 4), ("LSD", 1), ("BRAKE_TAU", 1), ("SPEAK", 1),
    ("VFLOOR", 1), ("EXT", 6), ("TERRAIN", 1),
]
_index = {}
_pos = 0
for _n, _size in _names:
    _index[_n] = _pos
    _pos += _size
N_FIXED = _pos
(F_M, F_MS, F_IXX, F_IYY, F_IZZ, F_A, F_B, F_TRACK, F_HCG, F_G, F_KS, F_KPROG, F_CBUMP, F_CREB,
 F_BUMP, F_REB, F_KSTOP, F_KARB,
 F_X0, F_L0, F_MU_UNS, F_IW, F_KT, F_CT, F_R0, F_FZ_STATIC, F_CX, F_CY,
 F_EX, F_EY, F_MUX, F_MUY, F_KXC, F_KYC, F_FZ0, F_PD2, F_SIGX, F_SIGY, F_DAMPX, F_DAMPY, F_CRR,
 F_TRAIL, F_GRIP, F_RSCALE, F_RRSCALE, F_TB, F_TB_FRONT, F_STEER_MAX, F_DRAG, F_IDLE, F_WMAX,
 F_TPEAK, F_IE, F_F0, F_F1, F_NCURVE, F_CURVE_W, F_CURVE_T, F_GOV, F_CL_VISCOUS, F_CL_TMAX,
 F_CL_CVISC, F_CL_ENGAGE, F_CL_BAND, F_AUTO, F_NGEARS, F_RATIOS, F_REVERSE, F_FINAL, F_SHIFT_DT,
 F_KDRIVE, F_LSD, F_BRAKE_TAU, F_SPEAK, F_VFLOOR, F_EXT, F_TERRAIN) = (_index[n] for n, _ in _names)


def spring_compression(load_n: float, k: float, prog: float) -> float:
    """Compression x [m] with k x (1 + prog x^2) = load (Newton iteration, monotone spring)."""
    x = load_n / k
    for _ in range(50):
        f = k * x * (1.0 + prog * x * x) - load_n
        x -= f / (k * (1.0 + 3.0 * prog * x * x))
    return x


def peak_slip(c: float, e: float) -> float:
    """Normalised slip s = B x of the Magic Formula peak: s - E (s - atan s) = tan(pi / 2C)."""
    target = math.tan(math.pi / (2.0 * c))
    lo, hi = 0.0, 1e4
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid - e * (mid - math.atan(mid)) < target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _drive_weights(layout: str, front_share: float) -> tuple[float, float, float, float]:
    """Share k_i of the carrier speed / torque per wheel (FL, FR, RL, RR), sum 1."""
    front = {"fwd": 1.0, "rwd": 0.0, "4wd": front_share}[layout]
    return (0.5 * front, 0.5 * front, 0.5 * (1.0 - front), 0.5 * (1.0 - front))


def pack_full(params: VehicleParams, terrain: TerrainParams | None = None) -> np.ndarray:
    """The float64 array ``full14_f`` reads; raises ValueError without the full-model groups."""
    if not params.has_full_model:
        raise ValueError(f"vehicle {params.name!r} has no full-model groups (body, suspension, "
                         "wheels, magic_formula, drivetrain): full14 cannot use it")
    c, bd, s, w = params.chassis, params.body, params.suspension, params.wheels
    mf, t = params.magic_formula, params.tyre
    tail = pack_terrain(terrain)
    p = np.zeros(N_FIXED + len(tail))
    g = GRAVITY_MPS2
    unsprung = (w.front_unsprung_mass_kg, w.rear_unsprung_mass_kg)
    p[F_M], p[F_G] = c.mass_kg, g
    p[F_MS] = c.mass_kg - 2.0 * sum(unsprung)
    p[F_IXX], p[F_IYY], p[F_IZZ] = bd.roll_inertia_kgm2, bd.pitch_inertia_kgm2, c.yaw_inertia_kgm2
    p[F_A], p[F_B], p[F_HCG] = c.cg_to_front_axle_m, c.cg_to_rear_axle_m, bd.cg_height_m
    p[F_TRACK:F_TRACK + 2] = bd.front_track_m, bd.rear_track_m
    p[F_KS:F_KS + 2] = s.front_spring_npm, s.rear_spring_npm
    p[F_KPROG] = s.spring_progression_per_m2
    p[F_CBUMP:F_CBUMP + 2] = s.front_bump_damping_nspm, s.rear_bump_damping_nspm
    p[F_CREB:F_CREB + 2] = s.front_rebound_damping_nspm, s.rear_rebound_damping_nspm
    p[F_BUMP], p[F_REB], p[F_KSTOP] = s.bump_travel_m, s.rebound_travel_m, s.stop_stiffness_npm2
    p[F_KARB:F_KARB + 2] = s.front_anti_roll_npm, s.rear_anti_roll_npm
    p[F_MU_UNS:F_MU_UNS + 2] = unsprung
    p[F_IW], p[F_KT], p[F_CT] = (w.spin_inertia_kgm2, w.tyre_vertical_stiffness_npm,
                                 w.tyre_vertical_damping_nspm)
    wheelbase = c.wheelbase_m
    shares = (c.cg_to_rear_axle_m / wheelbase, c.cg_to_front_axle_m / wheelbase)
    for axle in range(2):
        sprung_load = 0.5 * p[F_MS] * g * shares[axle]
        x0 = spring_compression(sprung_load, p[F_KS + axle], p[F_KPROG])
        fz = sprung_load + unsprung[axle] * g
        deflection = fz / p[F_KT]
        p[F_X0 + axle] = x0
        p[F_FZ_STATIC + axle] = fz
        # effective rolling radius R0 - delta / 3 equals tyre.rolling_radius_m at static load
        p[F_R0 + axle] = t.rolling_radius_m + deflection / 3.0
        p[F_L0 + axle] = bd.cg_height_m - (p[F_R0 + axle] - deflection)  # attachment-wheel
    p[F_CX], p[F_CY], p[F_EX], p[F_EY] = mf.shape_x, mf.shape_y, mf.curvature_x, mf.curvature_y
    p[F_MUX], p[F_MUY] = mf.longitudinal_friction, t.friction_coefficient
    p[F_KXC] = mf.longitudinal_stiffness_per_load
    p[F_KYC:F_KYC + 2] = t.front_cornering_coeff_per_rad, t.rear_cornering_coeff_per_rad
    p[F_FZ0], p[F_PD2] = mf.nominal_load_n, mf.load_sensitivity
    p[F_SIGX], p[F_SIGY] = mf.relaxation_length_x_m, mf.relaxation_length_y_m
    p[F_DAMPX], p[F_DAMPY] = mf.carcass_damping_x_nspm, mf.carcass_damping_y_nspm
    p[F_SPEAK] = min(peak_slip(mf.shape_x, mf.curvature_x), peak_slip(mf.shape_y, mf.curvature_y))
    p[F_CRR], p[F_TRAIL] = t.rolling_resistance_coeff, t.pneumatic_trail_m
    p[F_GRIP:F_GRIP + 4] = 1.0
    p[F_RSCALE:F_RSCALE + 4] = 1.0
    p[F_RRSCALE:F_RRSCALE + 4] = 1.0
    # total brake torque at full pedal = brakes.max_force_n at the static rolling radius
    p[F_TB] = params.brakes.max_force_n * t.rolling_radius_m
    p[F_TB_FRONT] = params.brakes.front_bias
    p[F_STEER_MAX] = params.steering.max_road_wheel_angle_rad
    p[F_DRAG] = 0.5 * params.aero.air_density_kgpm3 * params.aero.drag_area_m2
    _pack_drivetrain(p, params)
    p[F_TERRAIN] = N_FIXED
    p[N_FIXED:] = tail
    return p


def _pack_drivetrain(p: np.ndarray, params: VehicleParams) -> None:
    dt, num = params.drivetrain, params.full_numerics
    p[F_IDLE], p[F_WMAX] = dt.idle_rpm * RPM_TO_RADPS, dt.max_rpm * RPM_TO_RADPS
    p[F_TPEAK], p[F_IE] = dt.peak_torque_nm, dt.engine_inertia_kgm2
    p[F_F0], p[F_F1] = dt.friction_torque_nm, dt.friction_nm_per_radps
    n = len(dt.torque_curve_rpm)
    p[F_NCURVE] = n
    p[F_CURVE_W:F_CURVE_W + n] = np.asarray(dt.torque_curve_rpm) * RPM_TO_RADPS
    p[F_CURVE_T:F_CURVE_T + n] = dt.torque_curve_norm
    p[F_GOV] = num.idle_governor_band_rpm * RPM_TO_RADPS
    p[F_CL_VISCOUS] = 1.0 if dt.clutch_type == "viscous" else 0.0
    p[F_CL_TMAX], p[F_CL_CVISC] = dt.clutch_max_torque_nm, dt.clutch_viscous_nms
    p[F_CL_ENGAGE], p[F_CL_BAND] = dt.clutch_engage_rpm * RPM_TO_RADPS, num.clutch_slip_band_radps
    p[F_AUTO] = 1.0 if dt.transmission == "automatic" else 0.0
    p[F_NGEARS] = len(dt.gear_ratios)
    p[F_RATIOS:F_RATIOS + len(dt.gear_ratios)] = dt.gear_ratios
    p[F_REVERSE], p[F_FINAL] = dt.reverse_ratio, dt.final_drive_ratio
    p[F_SHIFT_DT] = num.min_shift_interval_s
    p[F_KDRIVE:F_KDRIVE + 4] = _drive_weights(dt.drive_layout, dt.front_torque_share)
    p[F_LSD] = dt.limited_slip_nms if dt.differential == "limited_slip" else 0.0
    p[F_BRAKE_TAU] = num.brake_hold_time_s
    p[F_VFLOOR] = num.slip_speed_floor_mps
    if not math.isfinite(p[:N_FIXED].sum()):
        raise ValueError("non-finite value in the packed full-model parameters")
