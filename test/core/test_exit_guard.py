"""core.exit_guard: the bound that ends a process whose clean-up spins holding the interpreter
lock (real processes, real C code that keeps the lock)."""
from __future__ import annotations

import subprocess
import sys
import time

from vehicle_sim import warm
from vehicle_sim.core.exit_guard import ExitGuard
from vehicle_sim.core.numba_cache import compiled_signatures

HOLDS_THE_LOCK = """
import re
from vehicle_sim.core.exit_guard import ExitGuard
guard = ExitGuard(0.5, 7, "[probe] still blocked: exiting with code 7")
re.match(r"(a+)+$", "a" * 48 + "b")  # backtracks for hours without letting the lock go
print("not reached", flush=True)
"""


def test_a_guard_ends_a_process_that_holds_the_interpreter_lock_with_its_code_and_line():
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-c", HOLDS_THE_LOCK], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 7, result.stdout + result.stderr
    assert result.stderr.strip().endswith("[probe] still blocked: exiting with code 7")
    assert "not reached" not in result.stdout
    assert time.monotonic() - start >= 0.5


def test_a_released_guard_lets_the_process_go_on_and_its_warm_up_leaves_nothing_to_compile():
    warm.warm_exit_guard()
    before = compiled_signatures()
    guard = ExitGuard(0.2, 9, "must not appear")
    guard.release()
    time.sleep(0.4)  # past the bound: a guard that was not released would have ended us
    after = compiled_signatures()
    assert {n: s - before.get(n, frozenset()) for n, s in after.items()
            if s - before.get(n, frozenset())} == {}
