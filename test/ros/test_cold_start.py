"""Cold start: after the kernel warm-up (vehicle_sim.warm) the traffic node's first steps compile
nothing, and a fresh process loads every kernel the warm-up compiled from numba's disk cache.

No timing: "compiles nothing" is numba's own record of the argument types each kernel has
machine code for (Dispatcher.signatures) and of where it came from (Dispatcher.stats)."""
from __future__ import annotations

import os
import subprocess
import sys

from vehicle_sim import warm
from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.numba_cache import compiled_signatures
from vehicle_sim.core.traffic.node_params import TrafficNodeParams
from vehicle_sim.core.accident.traffic_world import make_crashes, make_sim


def _node_steps(params: TrafficNodeParams, steps: int = 5) -> None:
    """What the traffic node runs per step (traffic_node.step): crash world, then traffic, with
    the ego at the dynamics node's initial pose, then without an ego."""
    sim, _ = make_sim(params)
    _, crashes = make_crashes(params, sim)
    i = DynamicsParams().initial
    dt_s = params.dt_ns * 1e-9
    for k in range(1, steps + 1):
        ego = (i.x_m + 5.0 * k * dt_s, i.y_m, i.yaw_rad, 5.0) if k < steps else None
        crashes.step(k * params.dt_ns, dt_s, ego)
        sim.step(dt_s, ego)
        sim.agents(include_ghosts=True)


def test_after_the_warm_up_the_traffic_nodes_first_steps_compile_nothing():
    warm.warm_traffic()
    before = compiled_signatures()
    # (kernels called from Python; the kernels they call are linked into their machine code)
    assert sum(len(s) for s in before.values()) >= 5, "the warm-up ran the traffic kernels"
    for params_file in ("", "traffic/city.yaml"):  # urban (control zone), whole city
        _node_steps(TrafficNodeParams(params_file=params_file))
    after = compiled_signatures()
    new = {k: sorted(after[k] - before.get(k, frozenset())) for k in after
           if after[k] - before.get(k, frozenset())}
    assert not new, f"kernels compiled in the node's first steps: {new}"


def test_a_fresh_process_loads_every_kernel_of_the_warm_up_from_the_disk_cache(tmp_path):
    """The warm-up writes the cache the nodes read (here an empty NUMBA_CACHE_DIR of the
    test's own): a second process with the same cache compiles no signature."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    first = subprocess.run([sys.executable, "-m", "vehicle_sim.warm", "traffic", "accident"],
                           env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    probe = ("from vehicle_sim import warm; from vehicle_sim.core.numba_cache import "
             "cache_counts; warm.warm_traffic(); warm.warm_accident(); print(*cache_counts())")
    second = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                            text=True, timeout=600)
    assert second.returncode == 0, second.stderr
    hits, misses = map(int, second.stdout.split()[-2:])
    assert misses == 0, f"{misses} signatures compiled again (cache hits {hits})"
    assert hits >= 5, f"only {hits} signatures loaded from the cache"


WARM_ORDER = """
import rclpy
from rclpy.node import Node
from vehicle_sim.nodes.main import run

def warm():
    print("warm-up, node in the graph:", rclpy.ok(), flush=True)

def broken():
    raise RuntimeError("no cache here")

class Probe(Node):
    def __init__(self):
        super().__init__("warm_probe")
        print("node created", flush=True)

codes = [run(Probe, "warm_probe", done=lambda node: True, warm_up=w) for w in (warm, broken)]
print("exit codes", *codes, flush=True)
"""


def test_the_warm_up_runs_before_the_node_joins_the_graph_and_a_failed_one_still_starts_it():
    result = subprocess.run([sys.executable, "-c", WARM_ORDER], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines == ["warm-up, node in the graph: False", "node created", "node created",
                     "exit codes 0 0"], result.stdout
    warned = [line for line in result.stderr.splitlines() if "warm-up failed" in line]
    assert len(warned) == 1 and "RuntimeError: no cache here" in warned[0], result.stderr
