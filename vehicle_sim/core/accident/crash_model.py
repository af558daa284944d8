"""Paper 004's crash model at the contact point (sec. 7.1, Figures 11-12).

At the contact point the two bodies are joined by a longitudinal (along the contact normal) and a
transverse (tangential) spring-damper, K = 81.7 R_o with R_o from Figure 12 per crash class and
impacted part (crash_params). The transverse pair uses the same K and R_o as the normal pair of
that part (a choice: Figure 12 gives one value per part). Two vehicles act as springs in series:
K = 1 / (1/K_a + 1/K_b), likewise R; a static object is rigid (only the vehicle's side deforms).

Normal force (on B, along n from A to B), the plastic damping law: a Kelvin-Voigt element that
never pulls, F_n = max(0, K d + R d'), with d the penetration [m] and d' its rate (closing
speed). 004's damping curve itself (Figure 12's "law of damping variation") is not in the text;
ours is the clipped Kelvin-Voigt law, the usual fix of its tension at separation (Hunt &
Crossley 1975, J. Appl. Mech. 42; Gilardi & Sharf 2002, Mech. Mach. Theory 37 review). It only
dissipates: while loading, the work taken is K d^2/2 + int R d'^2; while unloading the force is at
most K d, so at most the stored K d_max^2/2 comes back, and the damper keeps the unloading force
below it: the permanent set is the deformation the clipped spring no longer pushes back.

Tangential: car-car without slip (004): the spring is anchored at the first contact (its stretch
``s`` is the tangential relative displacement of the two material points since then),
F_t = -(K s + R s'). Against barriers and static objects with slip (004): |F_t| <= mu F_n; beyond
that the anchor slides so that K |s| = mu F_n (Coulomb, mu in CrashParams).

A contact met already deep (ours): the energy argument above needs the depth to have been
made by closing motion, which did the work K d^2/2 the spring gives back. A body placed into
another (a late pose after a traffic catch-up, a respawn, a pose set by hand) did none: pushed
out by K d, a car at rest was launched at 18 m/s from a 0.32 m overlap. So the depth at a
pair's first touch beyond what its closing speed makes in two steps (plus
``FIRST_TOUCH_SLACK_M``) is a permanent set from the start: the spring pushes only on the depth
beyond it, the set shrinks as the bodies part, and no energy appears.

Numerics (ours): forces are held over a step h, so the damper is limited to R <= m_eff / h (it can
at most stop the closing speed in one step) and the spring to K <= m_eff (0.5 / h)^2 (omega h <=
0.5); m_eff is the effective mass of the pair at the contact point along the direction. With the
0.1 ms sub-step of the crash world neither limit binds for 004's values; at the ego's 1 ms physics
step the stiffest fronts are limited, which keeps the contact stable and dissipative.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vehicle_sim.core.accident import crash_params as cp

PART_FRONT, PART_LATERAL, PART_REAR = 0, 1, 2  # columns of 004 Figure 12
# slack of the first touch's depth [m] beyond twice the closing speed times the step: a depth
# within it is the contact's own (a choice: 2 mm, above the geometry's round-off)
FIRST_TOUCH_SLACK_M = 0.002


def part_column(length_m: float, width_m: float, yaw_rad: float, centre_m, point_m) -> int:
    """Figure-12 column (front / lateral / rear) of the face of a box nearest ``point_m`` (map)."""
    c, s = math.cos(yaw_rad), math.sin(yaw_rad)
    dx, dy = point_m[0] - centre_m[0], point_m[1] - centre_m[1]
    px, py = c * dx + s * dy, -s * dx + c * dy
    if 0.5 * width_m - abs(py) < 0.5 * length_m - abs(px):
        return PART_LATERAL
    return PART_FRONT if px > 0.0 else PART_REAR


def side_coefficients(crash_class: int, column: int) -> tuple[float, float]:
    """(K [N/m], R [N s/m]) of one vehicle side: R_o from Figure 12, K = 81.7 R_o."""
    r = cp.part_damping_nspm(crash_class, column)
    return cp.STIFFNESS_PER_DAMPING_PER_S * r, r


def in_series(a: tuple[float, float], b: tuple[float, float] | None) -> tuple[float, float]:
    """(K, R) of two sides in series; b None = a rigid static object."""
    if b is None:
        return a
    return 1.0 / (1.0 / a[0] + 1.0 / b[0]), 1.0 / (1.0 / a[1] + 1.0 / b[1])


@dataclass(frozen=True)
class PairLaw:
    """Coefficients of one contact: spring K [N/m], damper R [N s/m], tangential friction mu
    (math.inf = no slip)."""

    k_npm: float
    r_nspm: float
    mu: float


def effective_mass(inv_m: tuple[float, float], inv_i: tuple[float, float],
                   levers: tuple[np.ndarray, np.ndarray], direction: np.ndarray) -> float:
    """Effective mass [kg] of two planar bodies at the contact along ``direction``.

    inv_m, inv_i: 1/m [1/kg] and 1/I_z [1/(kg m^2)] of A and B (0 = immovable); levers: contact
    point minus each CG [m]."""
    total = 0.0
    for im, ii, r in zip(inv_m, inv_i, levers, strict=True):
        cross = r[0] * direction[1] - r[1] * direction[0]
        total += im + ii * cross * cross
    return math.inf if total <= 0.0 else 1.0 / total


def contact_force(law: PairLaw, depth_m: float, normal: np.ndarray, v_rel: np.ndarray,
                  state: np.ndarray | None, m_eff_kg: float, h_s: float
                  ) -> tuple[np.ndarray, np.ndarray, float]:
    """Force on B [N] (on A: minus it), the pair's new state and F_n [N].

    depth_m >= 0: penetration; normal: unit, from A to B; v_rel: velocity of A's material point
    minus B's at the contact [m/s]; state: the pair's (tangential spring stretch x, y [m], A
    relative to B; permanent set [m]) before this step, None at the first touch (module doc);
    m_eff_kg: effective mass for the stability limits; h_s: the step [s]."""
    k = min(law.k_npm, m_eff_kg * (0.5 / h_s) ** 2)
    r = min(law.r_nspm, m_eff_kg / h_s)
    closing = float(v_rel @ normal)
    if state is None:  # first touch: the depth closing motion cannot explain is a set
        state = np.array([0.0, 0.0, max(0.0, depth_m - 2.0 * max(closing, 0.0) * h_s
                                        - FIRST_TOUCH_SLACK_M)])
    set_m = min(float(state[2]), depth_m)  # gone as the bodies part
    fn = max(0.0, k * (depth_m - set_m) + r * closing)
    v_t = v_rel - closing * normal
    stretch_m = state[:2]
    s = stretch_m - float(stretch_m @ normal) * normal + v_t * h_s  # stays tangential
    ft_on_a = -(k * s + r * v_t)
    mag = math.hypot(ft_on_a[0], ft_on_a[1])
    limit = law.mu * fn
    if mag > limit:  # slip (only against statics; car-car has mu = inf)
        ft_on_a = ft_on_a * (limit / mag) if mag > 0.0 else ft_on_a
        ks = math.hypot(s[0], s[1]) * k
        s = s * (limit / ks) if ks > limit and ks > 0.0 else s
    return fn * normal - ft_on_a, np.array([s[0], s[1], set_m]), fn
