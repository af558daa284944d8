"""Free-running speed of the planar vehicle models at dt = 1 ms (run on demand, not a test).

Two figures per model and integrator:
- batch: ``factory.simulate`` runs n steps in one jitted loop (what a >= 1e6 steps/s target needs);
- per call: ``model.step(Controls, dt)`` from Python, as the dynamics node calls it once per tick
  (Python overhead: Controls -> array, dispatch into the jitted step).
JIT compilation is excluded (warm-up run first). Usage:
    .venv/bin/python bench/bench_dynamics_models.py [n_batch_steps]
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vehicle_sim.core.vehicle.factory import make_model, simulate  # noqa: E402

PLANAR_MODELS = ("single_track", "kinematic")  # full14: bench/bench_full14.py
from vehicle_sim.core.vehicle.integrators import INTEGRATORS  # noqa: E402
from vehicle_sim.core.vehicle.interface import Controls  # noqa: E402
from vehicle_sim.core.vehicle.params import load_vehicle  # noqa: E402
from vehicle_sim.core.vehicle.single_track import controls_array  # noqa: E402

DT_S = 1e-3
CONTROLS = Controls(steer_rad=0.05, throttle=0.3)


def initial_state(kind: str) -> np.ndarray:
    """15 m/s straight ahead in the model's state layout."""
    return np.array([0.0, 0.0, 0.0, 15.0, 0.0, 0.0] if kind == "single_track"
                    else [0.0, 0.0, 0.0, 15.0])


def batch_rate(kind: str, integrator: str, car, n: int) -> float:
    """Steps per second of the jitted multi-step loop (best of 3)."""
    u = controls_array(CONTROLS)[None]
    simulate(kind, initial_state(kind), u, car, DT_S, 10, integrator)  # JIT warm-up
    best = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        simulate(kind, initial_state(kind), u, car, DT_S, n, integrator)
        best = min(best, time.perf_counter() - t0)
    return n / best


def per_call_rate(kind: str, integrator: str, car, n: int) -> float:
    """Steps per second of model.step() called from Python (best of 3)."""
    model = make_model(kind, car, integrator)
    model.reset(speed_mps=15.0)
    model.step(CONTROLS, DT_S)  # JIT warm-up
    best = np.inf
    for _ in range(3):
        model.reset(speed_mps=15.0)
        t0 = time.perf_counter()
        for _ in range(n):
            model.step(CONTROLS, DT_S)
        best = min(best, time.perf_counter() - t0)
    return n / best


def snapshot_rate(kind: str, car, n: int = 20000) -> float:
    """snapshot() calls per second (the node calls it once per published sample)."""
    model = make_model(kind, car, "rk4")
    model.reset(speed_mps=15.0)
    model.step(CONTROLS, DT_S)
    model.snapshot()
    t0 = time.perf_counter()
    for _ in range(n):
        model.snapshot()
    return n / (time.perf_counter() - t0)


def main() -> None:
    n_batch = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000
    car = load_vehicle(ROOT / "config" / "vehicles" / "medium_car.yaml")
    print(f"dt = {DT_S * 1e3:.0f} ms, batch n = {n_batch}, per-call n = {n_batch // 20}")
    print(f"{'model':14s}{'integrator':11s}{'batch steps/s':>16s}{'step() calls/s':>17s}"
          f"{'batch/call':>12s}{'x real time':>13s}")
    for kind in PLANAR_MODELS:
        for integrator in INTEGRATORS:
            batch = batch_rate(kind, integrator, car, n_batch)
            call = per_call_rate(kind, integrator, car, n_batch // 20)
            print(f"{kind:14s}{integrator:11s}{batch:16,.0f}{call:17,.0f}{batch / call:12.1f}"
                  f"{call * DT_S:13.1f}")
    for kind in PLANAR_MODELS:
        print(f"{kind}: snapshot() {snapshot_rate(kind, car):,.0f} calls/s")
    print("target: single_track batch >= 1,000,000 steps/s; 'x real time' = step() rate * dt")


if __name__ == "__main__":
    main()
