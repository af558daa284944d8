"""The start-up heap of a process with a deadline loop is frozen (core.realtime.freeze_start_heap):
a full collection afterwards scans only what the run allocates, and start-up garbage is not
frozen with it. In a fresh interpreter: freezing is process-wide and cannot be undone here."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import gc, sys, weakref
sys.path.insert(0, sys.argv[1])
from vehicle_sim.core.realtime import freeze_start_heap
kept = [[i] for i in range(300_000)]  # a large start-up heap (rclpy, numba, the models)
class Node: pass
cycle = Node(); cycle.me = cycle; gone = weakref.ref(cycle); del cycle  # garbage in a cycle
freeze_start_heap()
later = [[i] for i in range(1_000)]  # what the run allocates
print(gc.get_freeze_count(), len(gc.get_objects()), int(gone() is None))
"""


def test_the_start_up_heap_is_frozen_and_a_full_collection_sees_only_new_objects():
    out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT)], capture_output=True,
                         text=True, timeout=60, check=True).stdout.split()
    frozen, tracked, cycle_freed = (int(v) for v in out)
    assert frozen >= 300_000  # the start-up heap: out of the collector's sight
    assert tracked < 20_000  # the run's own objects (and the interpreter's since)
    assert cycle_freed == 1  # collected before the freeze, not frozen with the rest
