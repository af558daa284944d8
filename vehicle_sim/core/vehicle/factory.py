"""Select a vehicle model by name (what the dynamics node's ``model`` parameter chooses).

Models: ``single_track`` (paper 004 single-track, Fiala tyres, kinematic blend at low speed) and
``kinematic`` (kinematic bicycle). Both are referenced at the CG (base_link). Integrators:
``euler``, ``midpoint``, ``rk4`` (see :mod:`integrators`).
"""
from __future__ import annotations

import numpy as np

from vehicle_sim.core.vehicle.integrators import INTEGRATORS
from vehicle_sim.core.vehicle.interface import VehicleModel
from vehicle_sim.core.vehicle.kinematic import KinematicModel, kinematic_f, ks_simulate
from vehicle_sim.core.vehicle.params import VehicleParams, pack
from vehicle_sim.core.vehicle.single_track import (
    SingleTrackModel, single_track_f, st_simulate, stepper)

MODELS = ("single_track", "kinematic")
_CLASSES = {"single_track": SingleTrackModel, "kinematic": KinematicModel}
_BATCH = {"single_track": (st_simulate, single_track_f), "kinematic": (ks_simulate, kinematic_f)}


def _check(kind: str, integrator: str) -> None:
    if kind not in MODELS:
        raise ValueError(f"unknown vehicle model {kind!r} (choose one of {', '.join(MODELS)})")
    if integrator not in INTEGRATORS:
        raise ValueError(
            f"unknown integrator {integrator!r} (choose one of {', '.join(INTEGRATORS)})")


def make_model(kind: str, params: VehicleParams, integrator: str) -> VehicleModel:
    """A new model of ``kind`` (one of MODELS) using ``integrator`` (one of INTEGRATORS)."""
    _check(kind, integrator)
    return _CLASSES[kind](params, integrator)


def simulate(kind: str, x0: np.ndarray, controls: np.ndarray, params: VehicleParams | np.ndarray,
             dt_s: float, n: int, integrator: str = "rk4") -> np.ndarray:
    """Run ``n`` fixed steps in one jitted loop (no Python per step); returns (n + 1, n_state).

    x0: the model's state vector (single_track: S_*, kinematic: K_*). controls: (m, N_INPUT)
    float array of U_* rows (``single_track.controls_array``); row i is held over step i, the
    last row is held for the remaining steps. params: VehicleParams or an array from ``pack``.
    """
    _check(kind, integrator)
    if not dt_s > 0.0 or n < 0:
        raise ValueError(f"need dt_s > 0 and n >= 0, got dt_s={dt_s}, n={n}")
    p = pack(params) if isinstance(params, VehicleParams) else np.asarray(params, dtype=float)
    u = np.atleast_2d(np.asarray(controls, dtype=float))
    loop, f = _BATCH[kind]
    return loop(stepper(integrator), f, np.asarray(x0, dtype=float), u, p, float(dt_s),
                int(n))
