"""Select a vehicle model by name (what the dynamics node's ``model`` parameter chooses).

Models: ``single_track`` (paper 004 single-track, Fiala tyres, kinematic blend at low speed),
``kinematic`` (kinematic bicycle) and ``full14`` (14-DOF: sprung body, suspension, wheel travel and
spin, Magic Formula tyres, engine-clutch-gearbox-differential; needs the full-model groups of the
vehicle file, see full14/params.py). All are referenced at the (sprung-mass) CG (base_link).
Integrators: ``euler``, ``midpoint``, ``rk4`` (see :mod:`integrators`).
"""
from __future__ import annotations

import numpy as np

from vehicle_sim.core.vehicle.full14.discrete import full14_after_step
from vehicle_sim.core.vehicle.full14.dynamics import full14_f
from vehicle_sim.core.vehicle.full14.model import Full14Model
from vehicle_sim.core.vehicle.full14.packing import pack_full
from vehicle_sim.core.vehicle.full14.stability import check_step
from vehicle_sim.core.vehicle.full14.terrain import TerrainParams
from vehicle_sim.core.vehicle.integrators import INTEGRATORS, run_steps
from vehicle_sim.core.vehicle.interface import Controls, VehicleModel
from vehicle_sim.core.vehicle.kinematic import KinematicModel, kinematic_after_step, kinematic_f
from vehicle_sim.core.vehicle.params import VehicleParams, pack
from vehicle_sim.core.vehicle.planar import stepper
from vehicle_sim.core.vehicle.single_track import (
    SingleTrackModel, single_track_after_step, single_track_f)

MODELS = ("single_track", "kinematic", "full14")
_CLASSES = {"single_track": SingleTrackModel, "kinematic": KinematicModel, "full14": Full14Model}
# (f(x, u, p), after_step(x, x_new, u, p, dt)) of each model, for integrators.run_steps
_DYNAMICS = {"single_track": (single_track_f, single_track_after_step),
             "kinematic": (kinematic_f, kinematic_after_step),
             "full14": (full14_f, full14_after_step)}


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


def build_model(kind: str, params: VehicleParams, integrator: str, dt_s: float,
                terrain: TerrainParams | None = None) -> VehicleModel:
    """The model of a dynamics loop, its numba kernels compiled (full14: seconds) by one braked
    step of ``dt_s`` and a snapshot, so that the first real-time step and the first state sent
    are not the ones that compile them. A full14 vehicle whose stiffest mode ``integrator``
    cannot integrate at ``dt_s`` raises ValueError first (full14.stability.check_step)."""
    if kind == "full14" and params.has_full_model:
        check_step(params, integrator, dt_s)
    model = make_model(kind, params, integrator)
    if terrain is not None:
        model.set_terrain(terrain)
    model.step(Controls(brake=1.0), dt_s)
    model.snapshot()
    return model


def simulate(kind: str, x0: np.ndarray, controls: np.ndarray, params: VehicleParams | np.ndarray,
             dt_s: float, n: int, integrator: str = "rk4") -> np.ndarray:
    """Run ``n`` fixed steps in one jitted loop (no Python per step); returns (n + 1, n_state).

    x0: the model's state vector (single_track: S_*, kinematic: K_*, full14:
    full14.state_layout.X_*, e.g. ``full14.model.equilibrium_state``). controls: (m, N_INPUT)
    float array of U_* rows (``single_track.controls_array``); row i is held over step i, the
    last row is held for the remaining steps. params: VehicleParams or a packed array (``pack``;
    full14: ``pack_full`` or ``Full14Model.packed_params``, which carry terrain and tyre faults).
    """
    _check(kind, integrator)
    if not dt_s > 0.0 or n < 0:
        raise ValueError(f"need dt_s > 0 and n >= 0, got dt_s={dt_s}, n={n}")
    if isinstance(params, VehicleParams):
        p = pack_full(params) if kind == "full14" else pack(params)
    else:
        p = np.asarray(params, dtype=float)
    u = np.atleast_2d(np.asarray(controls, dtype=float))
    f, after_step = _DYNAMICS[kind]
    return run_steps(stepper(integrator), f, after_step, np.asarray(x0, dtype=float), u, p,
                     float(dt_s), int(n))
