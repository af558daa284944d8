"""The lockstep engine's cores alone, with no ROS: where a frame's time goes (issue 14).

Builds the engine of ``--engine true`` (core.engine.urban.UrbanEngine, its parameters read from
the scenario's declaration by vehicle_sim.engine_setup, seed 3) with edges that drop every output,
and times each part of its frames with the wall clock (the engine itself never reads it):
- dynamics: the physics steps (SimLoop with the ego's crash wrench) and their snapshots;
- imu + gnss: the sensor models at their nodes' rates;
- traffic: the traffic steps (crash world, agents, scene) and their agents' hand-over to the
  ego's crash physics and the autopilot;
- ego driver: the autopilot's updates;
- accident detection: the accident node's law, the ego at every state, the agents among
  themselves at every traffic step.
Prints the wall time per 20 ms frame of each and of the whole, the simulated seconds per wall
second, and a bare Python loop of the same number of iterations as the reference of the same run,
with the load average. ROS's part (the edges' messages and DDS) is bench/bench_lockstep.py's
engine row.

    .venv/bin/python bench/bench_lockstep_cores.py [simulated seconds, default 60]
"""
from __future__ import annotations

import os
import sys
import time
from collections import defaultdict

from vehicle_sim import graph
from vehicle_sim.core.engine.urban import UrbanEngine
from vehicle_sim.engine_setup import engine_params

SEED = 3
WARM_S = 2.0  # [s] simulated before timing: kernels compiled, the city filled


class Drop:
    """Edges that take every output and keep nothing."""

    def __getattr__(self, name):
        return lambda *args: None


def timed(engine: UrbanEngine, cost: dict[str, float]) -> None:
    """Wrap the engine's parts so that their wall time adds up in ``cost`` [s]."""
    def wrap(obj, attr: str, label: str) -> None:
        inner = getattr(obj, attr)

        def call(*args, **kwargs):
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                cost[label] += time.perf_counter() - start
        setattr(obj, attr, call)
    wrap(engine.loop, "step", "dynamics")
    wrap(engine.model, "snapshot", "dynamics")
    wrap(engine.imu, "update", "imu + gnss")
    wrap(engine.gnss, "update", "imu + gnss")
    wrap(engine, "_traffic", "traffic (+ agent-agent accidents)")
    wrap(engine, "_control", "ego driver")
    if engine.watch is not None:
        wrap(engine.watch, "ego", "accident detection (ego)")
        wrap(engine.watch, "agents", "accident detection (agents)")


def bare(iterations: int) -> float:
    """Wall time of an empty Python loop of ``iterations`` [s]."""
    start = time.perf_counter()
    n = 0
    for _ in range(iterations):
        n += 1
    return time.perf_counter() - start


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    args = graph.resolve_args({"seed": str(SEED), "mode": "lockstep"})
    engine = UrbanEngine(engine_params(graph.load_scenario("urban"), args), Drop())
    d = engine.p.dynamics
    frame_s = d.lockstep_frame_steps * d.dt_ns * 1e-9
    for _ in range(round(WARM_S / frame_s)):
        engine.frame()
    cost: dict[str, float] = defaultdict(float)
    timed(engine, cost)
    frames = round(seconds / frame_s)
    start = time.perf_counter()
    for _ in range(frames):
        engine.frame()
    wall = time.perf_counter() - start
    engine.close()
    print(f"lockstep engine cores, no ROS: {seconds:g} s simulated after {WARM_S:g} s, seed "
          f"{SEED}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"  {frames} frames of {frame_s * 1e3:.0f} ms: wall {wall / frames * 1e3:.3f} ms per "
          f"frame, {seconds / wall:.1f}x real time ({engine.summary.traffic_agents_max} agents "
          f"at most, {engine.summary.accidents} accidents, ego {engine.summary.distance_m:.0f} m)")
    # (traffic's line includes the agent-agent detection it calls)
    for name, total in sorted(cost.items(), key=lambda kv: -kv[1]):
        print(f"    {name:36s} {total / frames * 1e3:7.3f} ms per frame")
    rest = wall - sum(cost.values()) + cost.get("accident detection (agents)", 0.0)
    print(f"    {'the rest (step bookkeeping)':36s} {rest / frames * 1e3:7.3f} ms per frame")
    ref = bare(frames * d.lockstep_frame_steps)
    print(f"  bare loop of the same {d.lockstep_frame_steps} iterations per frame: "
          f"{ref / frames * 1e3:.4f} ms per frame; cores / bare: {wall / ref:.0f}")
    print(f"  load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
