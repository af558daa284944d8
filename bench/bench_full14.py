"""Speed of the 14-DOF model (``full14``) at dt = 1 ms (run on demand, not a test).

Figures per integrator:
- batch: ``factory.simulate("full14", ...)`` runs n steps in one jitted loop (target >= 1e5/s);
- per call: ``model.step(Controls, dt)`` from Python as the dynamics node calls it at 1 kHz
  (target < 200 us = 20 % of the 1 ms budget), and ``model.snapshot()``;
- stable step: a launch + slalom + hard-braking run (9 s) at dt = 1..8 ms per integrator,
  final position compared with RK4 at 0.25 ms ("diverged" = non-finite or roll > 0.5 rad).
Times are CPU time of this process (time.process_time), so other load on the shared machine
does not inflate them; JIT compilation is excluded (warm-up first). Usage:
    .venv/bin/python bench/bench_full14.py [n_batch_steps]
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vehicle_sim.core.vehicle.factory import make_model, simulate  # noqa: E402
from vehicle_sim.core.vehicle.full14.model import equilibrium_state  # noqa: E402
from vehicle_sim.core.vehicle.full14.packing import pack_full  # noqa: E402
from vehicle_sim.core.vehicle.integrators import INTEGRATORS  # noqa: E402
from vehicle_sim.core.vehicle.interface import Controls  # noqa: E402
from vehicle_sim.core.vehicle.params import load_vehicle  # noqa: E402
from vehicle_sim.core.vehicle.single_track import controls_array  # noqa: E402

DT_S = 1e-3
CALLS = 2000  # model.step() / snapshot() calls per timing
CONTROLS = Controls(steer_rad=0.05, throttle=0.3)


def best_of(fn, repeats: int = 3) -> float:
    """Best CPU time [s] of ``repeats`` calls; the matching wall time is kept in WALL."""
    best = np.inf
    for _ in range(repeats):
        t0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu = time.process_time() - t0
        if cpu < best:
            best = cpu
            WALL[0] = time.perf_counter() - w0
    return best


WALL = [0.0]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    car = load_vehicle(ROOT / "config" / "vehicles" / "medium_car.yaml")
    p = pack_full(car)
    x0 = equilibrium_state(p, speed_mps=15.0)
    u = controls_array(CONTROLS)[None]
    print(f"full14, medium_car, dt = {DT_S * 1e3:g} ms, {n} batch steps")
    for integ in INTEGRATORS:
        simulate("full14", x0, u, p, DT_S, 10, integ)  # JIT warm-up
        rate = n / best_of(lambda i=integ: simulate("full14", x0, u, p, DT_S, n, i))
        rate_wall = n / WALL[0]
        model = make_model("full14", car, integ)
        model.reset(speed_mps=15.0)
        model.step(CONTROLS, DT_S)
        model.snapshot()
        per_step = best_of(lambda m=model: [m.step(CONTROLS, DT_S) for _ in range(CALLS)]) / CALLS
        per_snap = best_of(lambda m=model: [m.snapshot() for _ in range(CALLS)]) / CALLS
        print(f"  {integ:8s} batch {rate:8.0f} steps/s cpu ({rate_wall:8.0f} wall) | "
              f"step() {per_step * 1e6:6.1f} us "
              f"({per_step / DT_S * 100:4.1f} % of 1 ms) | snapshot() {per_snap * 1e6:6.1f} us")
    stability(car)


def manoeuvre(dt: float) -> np.ndarray:
    """Control rows for 9 s at step dt: full throttle with a 0.5 Hz slalom, then full brake."""
    rows = []
    for k in range(round(9.0 / dt)):
        t = k * dt
        steer = 0.1 * np.sin(np.pi * t)
        c = Controls(steer_rad=steer, throttle=1.0) if t < 6.0 else Controls(steer_rad=steer,
                                                                           brake=1.0)
        rows.append(controls_array(c))
    return np.array(rows)


def stability(car) -> None:
    p = pack_full(car)
    x0 = equilibrium_state(p)
    ref = simulate("full14", x0, manoeuvre(2.5e-4), p, 2.5e-4, 36000, "rk4")[-1]
    print("stable step (9 s launch + slalom + braking; final position error vs RK4 0.25 ms):")
    for integ in INTEGRATORS:
        cells = []
        for dt in (1e-3, 2e-3, 3e-3, 4e-3, 5e-3, 8e-3):
            traj = simulate("full14", x0, manoeuvre(dt), p, dt, round(9.0 / dt), integ)
            ok = np.all(np.isfinite(traj)) and np.abs(traj[:, 3]).max() < 0.5
            err = np.linalg.norm(traj[-1, :2] - ref[:2]) if ok else np.inf
            cells.append(f"{dt * 1e3:g} ms: " + (f"{err:6.2f} m" if ok else "diverged"))
        print(f"  {integ:8s} " + " | ".join(cells))


if __name__ == "__main__":
    main()
