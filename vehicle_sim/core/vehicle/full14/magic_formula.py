"""Magic Formula tyre (steady state) with load dependence, combined slip and aligning moment.

Pure slip (conventions.md): F = D sin(C atan(B x - E (B x - atan(B x)))), D = mu Fz.
Load dependence (Pacejka, Tyre and Vehicle Dynamics, 3rd ed. 2012, ch. 4, the MF form
mu = p_D1 + p_D2 dfz): mu(Fz) = mu0 (1 + p_D2 dfz), dfz = (Fz - Fz0) / Fz0; slip stiffness
K = (K/Fz) Fz (first order in load: the MF's p_K2, p_K3 terms are zero).
Combined slip: normalised slip magnitude (a "similarity" method, Pacejka 2012 ch. 4):
s_x = B_x kappa, s_y = B_y tan(alpha), s = |(s_x, s_y)|; each direction takes its pure-slip
curve at s, pointed along (s_x, s_y) / s. Pure slip is exact; the resultant stays inside the
friction ellipse (mu_x Fz, mu_y Fz).
Surface presets (conventions.md, MathWorks Simscape table): (B, C, D, E) per road; the full
model uses them as MF user scaling factors relative to dry: lambda_mu = D / D_dry,
lambda_K = B C D / (B C D)_dry (the MF user scaling factors LMUX/LMUY and LKX/LKY).
Sign convention: + slip gives + force (kappa = (omega R - v_x) / |v_x|; tan(alpha) = -v_y / |v_x|,
i.e. the force opposes the lateral sliding velocity, like single_track's paper-004 convention).
"""
from __future__ import annotations

import math

from numba import njit

# (B, C, D, E) per surface, conventions.md ("Tyres"; MathWorks Simscape; dry row confirmed twice).
SURFACES: dict[str, tuple[float, float, float, float]] = {
    "dry": (10.0, 1.9, 1.0, 0.97),
    "wet": (12.0, 2.3, 0.82, 1.0),
    "snow": (5.0, 2.0, 0.3, 1.0),
    "ice": (4.0, 2.0, 0.1, 1.0),
}


def surface_scales(name: str) -> tuple[float, float]:
    """(lambda_mu, lambda_K) of a surface preset relative to dry; unknown names raise."""
    if name not in SURFACES:
        raise ValueError(f"unknown surface {name!r} (choose one of {', '.join(SURFACES)})")
    b, c, d, _ = SURFACES[name]
    bd, cd, dd, _ = SURFACES["dry"]
    return d / dd, (b * c * d) / (bd * cd * dd)


@njit(cache=True)
def mf_shape(s, c, e):
    """sin(C atan(s - E (s - atan s))) for the stiffness-scaled slip s = B x (odd in s)."""
    return math.sin(c * math.atan(s - e * (s - math.atan(s))))


@njit(cache=True)
def mf_pure(slip, b, c, d, e):
    """Pure-slip Magic Formula D sin(C atan(B x - E (B x - atan(B x)))) (conventions.md)."""
    return d * mf_shape(b * slip, c, e)


@njit(cache=True)
def load_friction(mu0, fz, fz0, sensitivity):
    """Peak friction at load fz [N]: mu0 (1 + p_D2 (fz - fz0) / fz0), floored at 0."""
    return max(mu0 * (1.0 + sensitivity * (fz - fz0) / fz0), 0.0)


@njit(cache=True)
def combined_forces(kappa, tan_alpha, fz, mu_x, mu_y, k_x, k_y, c_x, c_y, e_x, e_y):
    """(Fx, Fy) [N] at slip ratio kappa and tan(slip angle) for load fz [N].

    mu_x, mu_y: peak friction at this load; k_x [N], k_y [N/rad]: slip stiffnesses at this
    load (B = K / (C D)). Normalised combined slip, see the module docstring.
    """
    if fz <= 0.0 or mu_x <= 0.0 or mu_y <= 0.0:
        return 0.0, 0.0
    dx, dy = mu_x * fz, mu_y * fz
    sx = k_x / (c_x * dx) * kappa
    sy = k_y / (c_y * dy) * tan_alpha
    s = math.hypot(sx, sy)
    if s < 1e-9:
        return k_x * kappa, k_y * tan_alpha
    return dx * mf_shape(s, c_x, e_x) * sx / s, dy * mf_shape(s, c_y, e_y) * sy / s


@njit(cache=True)
def aligning_moment(fy, tan_alpha, c_alpha, fy_max, trail0):
    """Self-aligning moment [N m] = -t Fy with the brush-model trail (as single_track).

    t = t0 * 3 (1 - l)^3 / (3 - 3 l + l^2), l = C |tan a| / (3 Fy_max) clipped to 1 (Pacejka
    2012, ch. 3): t0 at zero slip, 0 once the whole contact slides.
    """
    if fy_max <= 0.0 or c_alpha <= 0.0:
        return 0.0
    lam = min(c_alpha * abs(tan_alpha) / (3.0 * fy_max), 1.0)
    trail = trail0 * 3.0 * (1.0 - lam) ** 3 / (3.0 - 3.0 * lam + lam * lam)
    return -trail * fy
