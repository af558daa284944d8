"""Benchmark of the crash world (issue 11): contact handling cost per step against a bare pass.

Run: ``.venv/bin/python bench/bench_contacts.py [N ...]``. N medium cars drive east and west in
lanes 3.5 m apart, 12 m bumper to bumper (a dense town street), at 10 m/s; ``max(1, N // 500)``
head-on pairs are placed 5 cm apart so that a few pairs are in contact. Each 20 Hz step the
traffic would call ``CrashWorld.step`` (broad phase over all bodies, narrow phase and crash model
only for candidate pairs). The reference measured in the same run is a bare numpy pass over the
same arrays (constant-velocity update of every pose) and the numba broad phase alone. 004's
argument (sec. 7.2): with sub-models only for pairs in contact the cost grows ~linearly in N.
"""
from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a source checkout

from vehicle_sim.core.accident.crash_bodies import DYNAMIC, BodyArrays  # noqa: E402
from vehicle_sim.core.accident.crash_params import crash_class_index  # noqa: E402
from vehicle_sim.core.accident.crash_world import CrashWorld  # noqa: E402

DT = 0.05  # the traffic node's 20 Hz
L, W, M, IZ = 4.298, 1.674, 1225.887, 1538.853
PER_LANE = 40


def town(n: int) -> BodyArrays:
    """n cars in lanes (odd lanes westbound) plus head-on pairs in contact (module docstring)."""
    pairs = max(1, n // 500)
    free = n - 2 * pairs
    lane, slot = np.divmod(np.arange(free), PER_LANE)
    x = slot * (L + 12.0) + 20.0 * pairs
    y = lane * 3.5
    yaw = np.where(lane % 2, math.pi, 0.0)
    px = np.repeat(np.arange(pairs) * 20.0, 2) + np.tile([0.0, L + 0.05], pairs)
    pyaw = np.tile([0.0, math.pi], pairs)
    xs, ys = np.concatenate((x, px)), np.concatenate((y, np.full(2 * pairs, -10.0)))
    yaws = np.concatenate((yaw, pyaw))
    vel = np.column_stack((10.0 * np.cos(yaws), 10.0 * np.sin(yaws), np.zeros(n)))
    return BodyArrays(ids=np.arange(n), mode=np.full(n, DYNAMIC),
                      pose=np.column_stack((xs, ys, yaws)), vel=vel,
                      size=np.tile([L, W], (n, 1)), mass_kg=np.full(n, M),
                      yaw_inertia_kgm2=np.full(n, IZ),
                      crash_class=np.full(n, crash_class_index("medium")))


def timed(fn, steps: int) -> float:
    t0 = time.perf_counter()
    for k in range(steps):
        fn(k)
    return (time.perf_counter() - t0) / steps


def run(n: int, steps: int = 40) -> tuple[float, float, float, int]:
    """(crash world step s, broad phase alone s, bare numpy pass s, contacts seen)."""
    world = CrashWorld()
    b = town(n)
    world.step(0, DT, town(n))  # compile / warm the pybullet pools
    world.reset()
    seen = 0

    def crash_step(k):
        nonlocal seen
        out = world.step(round(k * DT * 1e9), DT, b)
        seen += len(out.contacts)
        b.pose += b.vel * DT  # the traffic's own models, here constant velocity
        rows = np.searchsorted(b.ids, out.ids)
        b.pose[rows], b.vel[rows] = out.states[:, :3], out.states[:, 3:]

    crash = timed(crash_step, steps)
    fresh = town(n)
    broad = timed(lambda k: world.candidates(fresh, DT), steps)
    bare = timed(lambda k: fresh.pose.__iadd__(fresh.vel * DT), steps)
    return crash, broad, bare, seen


def main() -> None:
    counts = [int(a) for a in sys.argv[1:]] or [10, 100, 1000, 5000]
    print(f"load average (1/5/15 min): {os.getloadavg()}")
    print(f"{'bodies':>7} {'pairs':>6} {'contacts':>9} {'step ms':>8} {'us/body':>8} "
          f"{'broad ms':>9} {'bare ms':>8} {'step/broad':>11}")
    for n in counts:
        crash, broad, bare, seen = run(n)
        print(f"{n:>7d} {max(1, n // 500):>6d} {seen:>9d} {1e3 * crash:>8.2f} "
              f"{1e6 * crash / n:>8.2f} {1e3 * broad:>9.3f} {1e3 * bare:>8.3f} "
              f"{crash / broad:>11.1f}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
