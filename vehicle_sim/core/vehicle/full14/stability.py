"""Explicit-integrator step limit of a 14-DOF (``full14``) vehicle: its stiffest modes.

A vehicle whose values are each within their bounds can still combine into a mode the physics
step cannot integrate (a 1 kg m^2 body on car springs, a 2e5 N s/m damper on a 33 kg wheel): the
state then goes non-finite at run time. ``check_step`` refuses such a vehicle before it runs
(``factory.build_model`` calls it with the loop's step), naming the mode, its parameters and the
step it needs.

Method: each stiff mode of the model's equations (dynamics.py, corners.py) is reduced to a 1-DOF
``M x'' + C x' + K x = 0`` (or a first-order decay ``x' = -rate x``); its eigenvalues are the
roots s of ``M s^2 + C s + K``. An explicit Runge-Kutta step of h maps a mode to R(h s) per
step, R the method's stability polynomial (Euler 1 + z, midpoint 1 + z + z^2/2, RK4
1 + z + z^2/2 + z^3/6 + z^4/24); it is stable while |R(h s)| <= 1. ``stable_step`` finds the
largest such h along the ray of s (real-axis limits: Euler and midpoint 2, RK4 2.785; imaginary
axis: RK4 2 sqrt 2, Euler and midpoint none, so a lightly damped oscillation under Euler needs
h < 2 zeta / omega_n), and the physics step must stay below ``STEP_MARGIN`` of it.

Modes (per axle where front and rear differ; F_* as packing.pack_full fills them):

* wheel hop (body held): m_u s^2 + (c_t + c_s) s + (k_t + k_s' + k_arb), from
  ``dx[X_VZW] = (fw2 - fs) / m_u`` with the tyre ``fz = k_t pen + c_t (... - vzw)``, the corner
  force ``suspension_force`` (spring, bump or rebound damper, the larger of the two) and the
  anti-roll bar ``k_arb (comp - comp_other)`` (its own corner moves: + k_arb).
* body heave, roll, pitch (wheels held): the corner forces fs_i act at (x_i, y_i) with
  x = a or -b, y = +-track/2 (``corner``/``compression``): heave m_s s^2 + 2 sum(c) s +
  2 sum(k_s'); roll I_xx s^2 + sum(c t^2 / 2) s + sum((k_s' + 2 k_arb) t^2 / 2) (the bar
  adds k_arb t^2 per axle); pitch I_yy s^2 + 2 (c_f a^2 + c_r b^2) s + 2 (k_f' a^2 + k_r' b^2).
* tyre longitudinal deflection against the wheel spin: with e = omega R - v_x the pair
  ``du_x = e - |v_x| u_x / sigma_x``, ``I_w omega' = -R (K_x u_x / sigma_x + d_x du_x)`` is
  (I_w / R^2) s^2 + (d_x + (I_w / R^2) |v_x| / sigma_x) s + K_x / sigma_x with
  K_x = longitudinal_stiffness_per_load * F_z (static wheel load).
* tyre lateral deflection (``du_y = -v_y - |v_x| u_y / sigma_y``, F_y = K_y u_y / sigma_y +
  d_y du_y at the contact point under the corner): on the vehicle mass (lateral), the yaw
  inertia (lever x_i) and the roll inertia (lever: the CG height over the contact point,
  ``t0 -= cz * fw1``): M s^2 + (sum d_y g^2 + M |v_x| / sigma_y) s + sum(K_y / sigma_y g^2).
  The tyre modes are taken at rest and at the vehicle's top speed (max_rpm in the top gear),
  as the relaxation term grows with the speed.
* first-order decays: held-wheel regularisation 1 / brake_hold_time_s (``_wheel_spin``: the
  hold torque I_w omega / tau within its capacity), a limited-slip coupling 2 c_lsd / I_w
  (left-right difference), a viscous clutch c_v (1 / I_e + G^2 sum(k_i^2) / I_w) at the
  largest ratio G, engine viscous friction f_1 / I_e.

Left out, as bounded: the dry clutch's slip band (its torque is clipped at the capacity, and it
locks once the capacity can close the slip within a step: discrete.try_lock), the engine's
Coulomb friction and idle governor (clipped ramps), the bump and rebound stops (their stiffness
grows with the penetration, reached only at the end of travel: a hard landing is a run-time
event the loop's divergence check still catches). The spring progression is taken at its
stiffest point before the bump stop (static compression + bump travel). Terrain and tyre
faults scale the relaxation lengths at run time; the check uses the dry reference surface.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vehicle_sim.core.vehicle.full14.drivetrain import clutch_inverse_inertia
from vehicle_sim.core.vehicle.full14.packing import (
    F_A, F_B, F_BUMP, F_CBUMP, F_CREB, F_CT, F_FZ_STATIC, F_HCG, F_IE, F_IW, F_IXX, F_IYY, F_IZZ,
    F_KARB, F_KPROG, F_KS, F_KT, F_KXC, F_KYC, F_M, F_MS, F_MU_UNS, F_SIGX, F_SIGY,
    F_TRACK, F_X0, pack_full)
from vehicle_sim.core.vehicle.full14.params import RPM_TO_RADPS
from vehicle_sim.core.vehicle.params import VehicleParams

# the physics step must stay below this share of the largest stable step (a 2x reserve for what
# the 1-DOF reductions leave out: coupling between modes, load transfer raising K_x and K_y,
# the spring progression beyond its static point)
STEP_MARGIN = 0.5

# stability polynomials R(z) of the explicit integrators (integrators.py), highest power first
_POLY = {"euler": (1.0, 1.0),
         "midpoint": (0.5, 1.0, 1.0),
         "rk4": (1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0)}
# |z| scanned for the first unstable point of a ray (RK4 ends at 2.83 on the imaginary axis)
_SCAN = np.linspace(0.0, 3.0, 30001)[1:]


@dataclass(frozen=True)
class Mode:
    """One stiff mode: M s^2 + C s + K = 0 (M > 0), or a decay s = -rate (M = 0, C = rate)."""

    name: str  # e.g. "front wheel hop"
    what: str  # its parameters in words, for the refusal
    m: float
    c: float
    k: float

    def eigenvalues(self) -> tuple[complex, ...]:
        """Roots s [1/s] of M s^2 + C s + K (a decay: -C)."""
        if self.m == 0.0:
            return (complex(-self.c),)
        disc = complex(self.c * self.c - 4.0 * self.m * self.k)
        root = disc ** 0.5
        return ((-self.c + root) / (2.0 * self.m), (-self.c - root) / (2.0 * self.m))


def stable_step(s: complex, integrator: str) -> float:
    """Largest h [s] with |R(h s)| <= 1 along the ray of the eigenvalue s (0: none, e.g. Euler
    on an undamped oscillation); s = 0 has no limit (inf)."""
    size = abs(s)
    if size == 0.0:
        return math.inf
    z = _SCAN * (s / size)
    unstable = np.abs(np.polyval(_POLY[integrator], z)) > 1.0 + 1e-12
    if not unstable.any():
        return math.inf
    first = int(np.argmax(unstable))
    return float(_SCAN[first - 1] if first else 0.0) / size


def modes(params: VehicleParams) -> list[Mode]:
    """The stiff modes of ``params`` (which needs the full-model groups), module docstring."""
    p = pack_full(params)
    w, dt = params.wheels, params.drivetrain
    out: list[Mode] = []
    axles = ("front", "rear")
    lever = (p[F_A], p[F_B])
    spring, damper = [], []
    for axle, side in enumerate(axles):
        # spring k x (1 + prog x^2): tangent k (1 + 3 prog x^2) at the bump-stop onset
        x = p[F_X0 + axle] + p[F_BUMP]
        spring.append(p[F_KS + axle] * (1.0 + 3.0 * p[F_KPROG] * x * x))
        bump, rebound = p[F_CBUMP + axle], p[F_CREB + axle]
        damper.append(max(bump, rebound))
        phase = "bump" if bump >= rebound else "rebound"
        m_u, karb = p[F_MU_UNS + axle], p[F_KARB + axle]
        out.append(Mode(
            f"{side} wheel hop",
            f"suspension.{side}_{phase}_damping_nspm {damper[axle]:.4g} N s/m + "
            f"wheels.tyre_vertical_damping_nspm {p[F_CT]:.4g} N s/m, tyre + spring + anti-roll "
            f"stiffness {p[F_KT] + spring[axle] + karb:.4g} N/m, over "
            f"wheels.{side}_unsprung_mass_kg {m_u:.4g} kg",
            m_u, p[F_CT] + damper[axle], p[F_KT] + spring[axle] + karb))
    half = (0.5 * p[F_TRACK], 0.5 * p[F_TRACK + 1])
    out.append(Mode(
        "body heave",
        f"4 suspension springs {2.0 * sum(spring):.4g} N/m and dampers "
        f"{2.0 * sum(damper):.4g} N s/m over the sprung mass {p[F_MS]:.4g} kg",
        p[F_MS], 2.0 * sum(damper), 2.0 * sum(spring)))
    for name, what, stiff, arms, field in (  # at the half tracks, at the axle distances
            ("roll", "suspension and anti-roll bars",
             [spring[a] + 2.0 * p[F_KARB + a] for a in range(2)], half, F_IXX),
            ("pitch", "suspension", spring, lever, F_IYY)):
        k = sum(2.0 * stiff[a] * arms[a] ** 2 for a in range(2))
        c = sum(2.0 * damper[a] * arms[a] ** 2 for a in range(2))
        out.append(Mode(f"body {name}", f"{what} {k:.4g} N m/rad, dampers {c:.4g} N m s/rad "
                        f"over body.{name}_inertia_kgm2 {p[field]:.4g} kg m^2", p[field], c, k))
    out += _tyre_modes(params, p)
    out.append(Mode("held-wheel brake regularisation",
                    f"full_numerics.brake_hold_time_s {params.full_numerics.brake_hold_time_s:g} s",
                    0.0, 1.0 / params.full_numerics.brake_hold_time_s, 0.0))
    ratios = [r * dt.final_drive_ratio for r in (*dt.gear_ratios, dt.reverse_ratio)]
    if dt.differential == "limited_slip" and dt.limited_slip_nms > 0.0:
        out.append(Mode("limited-slip coupling",
                        f"drivetrain.limited_slip_nms {dt.limited_slip_nms:g} N m s over "
                        f"wheels.spin_inertia_kgm2 {w.spin_inertia_kgm2:g} kg m^2",
                        0.0, 2.0 * dt.limited_slip_nms / w.spin_inertia_kgm2, 0.0))
    if dt.clutch_type == "viscous":
        g = max(ratios)
        rate = dt.clutch_viscous_nms * clutch_inverse_inertia(g, p)
        out.append(Mode("viscous clutch",
                        f"drivetrain.clutch_viscous_nms {dt.clutch_viscous_nms:g} N m s between "
                        f"drivetrain.engine_inertia_kgm2 {p[F_IE]:g} kg m^2 and the wheels at "
                        f"ratio {g:.4g}", 0.0, rate, 0.0))
    if dt.friction_nm_per_radps > 0.0:
        out.append(Mode("engine viscous friction",
                        f"drivetrain.friction_nm_per_radps {dt.friction_nm_per_radps:g} N m s "
                        f"over drivetrain.engine_inertia_kgm2 {p[F_IE]:g} kg m^2",
                        0.0, dt.friction_nm_per_radps / p[F_IE], 0.0))
    return out


def top_speed_mps(params: VehicleParams) -> float:
    """Road speed at max_rpm in the top gear [m/s] (the tyre modes' speed)."""
    dt = params.drivetrain
    ratio = min(dt.gear_ratios) * dt.final_drive_ratio
    return dt.max_rpm * RPM_TO_RADPS / ratio * params.tyre.rolling_radius_m


def _tyre_modes(params: VehicleParams, p: np.ndarray) -> list[Mode]:
    mf = params.magic_formula
    sig_x, sig_y = p[F_SIGX], p[F_SIGY]
    d_x, d_y = mf.carcass_damping_x_nspm, mf.carcass_damping_y_nspm
    m_spin = p[F_IW] / params.tyre.rolling_radius_m ** 2  # I_w / R^2
    v_top = top_speed_mps(params)
    out = []
    for speed, at in ((0.0, "at rest"), (v_top, f"at the top speed {v_top:.3g} m/s")):
        for axle, side in enumerate(("front", "rear")):
            k = p[F_KXC] * p[F_FZ_STATIC + axle] / sig_x
            out.append(Mode(
                f"{side} tyre longitudinal deflection {at}",
                f"magic_formula.longitudinal_stiffness_per_load {p[F_KXC]:g} x "
                f"{p[F_FZ_STATIC + axle]:.4g} N / relaxation_length_x_m {sig_x:g} m, "
                f"carcass_damping_x_nspm {d_x:g} N s/m, against wheels.spin_inertia_kgm2 "
                f"{p[F_IW]:g} kg m^2 / R^2", m_spin, d_x + m_spin * speed / sig_x, k))
        # lateral: the four contact points on the vehicle mass, yaw and roll inertia
        ky = [p[F_KYC + i // 2] * p[F_FZ_STATIC + i // 2] / sig_y for i in range(4)]
        x_i = [p[F_A], p[F_A], -p[F_B], -p[F_B]]
        h = p[F_HCG]
        for name, inertia, field, g2 in (
                ("lateral", p[F_M], "chassis.mass_kg", [1.0] * 4),
                ("yaw", p[F_IZZ], "chassis.yaw_inertia_kgm2", [x * x for x in x_i]),
                ("roll", p[F_IXX], "body.roll_inertia_kgm2", [h * h] * 4)):
            k = sum(kk * g for kk, g in zip(ky, g2))
            c = sum(d_y * g for g in g2) + inertia * speed / sig_y
            out.append(Mode(
                f"tyre lateral deflection in {name} {at}",
                f"tyre.*_cornering_coeff_per_rad x static loads / "
                f"magic_formula.relaxation_length_y_m {sig_y:g} m ({k:.4g}), "
                f"carcass_damping_y_nspm {d_y:g} N s/m, over {field} {inertia:.4g}",
                inertia, c, k))
    return out


@dataclass(frozen=True)
class StepLimit:
    """The mode that limits the step most: its eigenvalue and largest stable step."""

    mode: Mode
    eigenvalue: complex
    stable_step_s: float

    def ratio(self, dt_s: float) -> float:
        """dt / the largest stable step (the check needs <= STEP_MARGIN)."""
        return math.inf if self.stable_step_s == 0.0 else dt_s / self.stable_step_s


def step_limit(params: VehicleParams, integrator: str) -> StepLimit:
    """The vehicle's most restrictive mode for ``integrator``."""
    if integrator not in _POLY:
        raise ValueError(f"unknown integrator {integrator!r} (choose one of {', '.join(_POLY)})")
    best = None
    for mode in modes(params):
        for s in mode.eigenvalues():
            h = stable_step(s, integrator)
            if best is None or h < best.stable_step_s:
                best = StepLimit(mode, s, h)
    return best


def check_step(params: VehicleParams, integrator: str, dt_s: float,
               margin: float = STEP_MARGIN) -> StepLimit:
    """Raise ValueError (one line: the vehicle, the mode and its parameters, the step it needs)
    unless ``dt_s`` is within ``margin`` of every mode's stable step; returns the limit."""
    limit = step_limit(params, integrator)
    if limit.ratio(dt_s) <= margin:
        return limit
    s, h = limit.eigenvalue, limit.stable_step_s
    eig = f"{s.real:.4g} 1/s" if s.imag == 0.0 else f"{s.real:.4g} +- {abs(s.imag):.4g}j 1/s"
    need = (f"needs a physics step below {margin * h * 1e3:.3g} ms, physics_rate_hz >= "
            f"{math.ceil(1.0 / (margin * h)):d} ({margin:g} of its stable step "
            f"{h * 1e3:.3g} ms)" if h > 0.0 else
            "is undamped: the integrator is unstable on it at any step")
    raise ValueError(
        f"vehicle {params.name!r} cannot be integrated by full14 at this step: {limit.mode.name}"
        f" ({limit.mode.what}; eigenvalue {eig}) {need}; the physics step is "
        f"{dt_s * 1e3:g} ms ({integrator})")
