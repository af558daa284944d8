"""Fuzz bench (issue 13): every target of test/fuzz/fuzz_targets.py with >= 10,000 cases.

Run: ``.venv/bin/python bench/bench_fuzz.py [N] [target substring ...]`` (N cases per target,
default 10,000). Prints per target the cases run, the failures found (0 expected; hypothesis
stops at the first one and prints the shrunk input) and the wall time. Derandomized, so a run
is repeatable; the test suite runs the same targets with a few hundred cases.
"""
from __future__ import annotations

import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test" / "fuzz"))

from fuzz_link import OUTCOMES
from fuzz_targets import TARGETS
from hypothesis import HealthCheck, Phase, given, settings


def run(name: str, n: int) -> tuple[int, int, float]:
    """(cases run, failures, wall seconds) of target ``name`` with ``n`` examples."""
    strategy, prop = TARGETS[name]
    count = [0]

    def counted(case) -> None:
        count[0] += 1
        prop(case)

    runner = settings(derandomize=True, deadline=None, database=None, max_examples=n,
                      phases=(Phase.explicit, Phase.generate, Phase.shrink),
                      suppress_health_check=list(HealthCheck))(given(strategy)(counted))
    t0 = time.perf_counter()
    failures = 0
    try:
        runner()
    except Exception:  # noqa: BLE001 - any failure of a property is counted and printed
        # a property failed: hypothesis re-raised it after shrinking
        failures = 1
        traceback.print_exc()
    return count[0], failures, time.perf_counter() - t0


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv and argv[0].isdigit() else 10_000
    wanted = [a for a in argv if not a.isdigit()]
    names = [t for t in TARGETS if not wanted or any(w in t for w in wanted)]
    print(f"{'target':26s} {'cases':>8s} {'failures':>8s} {'wall [s]':>9s}", flush=True)
    total = 0
    for name in names:
        cases, failures, wall = run(name, n)
        total += failures
        print(f"{name:26s} {cases:8d} {failures:8d} {wall:9.1f}", flush=True)
        if name == "rig link loss":
            print("    " + ", ".join(f"{k} {v}" for k, v in sorted(OUTCOMES.items())), flush=True)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
