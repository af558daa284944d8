"""Benchmark of the traffic core: agent steps per second and real-time capacity at 20 Hz.

Run: ``.venv/bin/python bench/bench_traffic.py [N ...]``. For each agent count N a grid
city with ~12.5 agents per block (the density of the default map with 200 agents) is generated,
filled in whole-city mode, with an ego driving on the avenue (agents within 80 m use the
single-track model), warmed up, then timed. Goal (issue 4): 5,000 agents at 20 Hz in real time
in one process, <= 10 us per agent step, linear growth.
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a source checkout

from vehicle_sim.core.traffic.gridgen import GridSpec, generate
from vehicle_sim.core.traffic.mapfile import map_from_dict
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.traffic.params import TrafficParams, ZoneParams
from vehicle_sim.core.traffic.sim import TrafficSim

DT = 0.05  # 20 Hz
AGENTS_PER_BLOCK = 12.5


def run(n: int, steps: int = 200) -> tuple[float, float, float]:
    """(build seconds, mean step seconds, agents actually placed)."""
    blocks = max(2, math.ceil(math.sqrt(n / AGENTS_PER_BLOCK)))
    t0 = time.perf_counter()
    net = Network(map_from_dict(generate(GridSpec(blocks_x=blocks, blocks_y=blocks,
                                                  avenue_row=blocks // 2, decorate=False))))
    params = TrafficParams(capacity=n + 64, initial_agents=n, zone=ZoneParams(enabled=False))
    sim = TrafficSim(net, params, seed=1)
    build = time.perf_counter() - t0
    y = (blocks // 2) * 100.0 - 1.75
    for _ in range(20):
        sim.step(DT, (50.0, y, 0.0, 8.0))
    t0 = time.perf_counter()
    for k in range(steps):
        sim.step(DT, (50.0 + 8.0 * k * DT, y, 0.0, 8.0))
    return build, (time.perf_counter() - t0) / steps, sim.n_agents


def main() -> None:
    counts = [int(a) for a in sys.argv[1:]] or [100, 1000, 5000, 20000]
    print(f"{'agents':>7} {'blocks':>7} {'build s':>8} {'step ms':>8} {'us/agent':>9} "
          f"{'agent-steps/s':>14} {'RT factor @20Hz':>16} {'RT capacity':>12}")
    base = None
    for n in counts:
        build, step, placed = run(n)
        us = 1e6 * step / placed
        rt = DT / step
        base = base or us
        print(f"{placed:>7.0f} {math.ceil(math.sqrt(n / AGENTS_PER_BLOCK)):>7d} {build:>8.1f} "
              f"{1e3 * step:>8.2f} {us:>9.2f} {placed / step:>14.0f} {rt:>16.1f} "
              f"{placed * rt:>12.0f}")
    print("RT capacity = agents x real-time factor: agents steppable at 20 Hz at this density.")


if __name__ == "__main__":
    main()
