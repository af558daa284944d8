"""Fuzz suite (issue 13): each target of fuzz_targets with a few hundred derandomized cases.

bench/bench_fuzz.py runs the same targets with >= 10,000 cases each. REGRESSIONS holds the
inputs that once broke a property; they run first, every time.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_targets import TARGETS

EXAMPLES = {"vehicle fault sequences": 200, "raw file bytes": 200}

REGRESSIONS = {
    # a NUL byte: PyYAML's ReaderError has no mark and its text spans two lines
    "raw file bytes": [("vehicle medium_car", b"\x00"), ("map 2x2 grid", b"a: 1\n\x07")],
}


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_fuzz(name: str) -> None:
    strategy, prop = TARGETS[name]
    test = given(strategy)(prop)
    for case in REGRESSIONS.get(name, ()):
        test = example(case)(test)
    settings(derandomize=True, deadline=None, database=None,
             max_examples=EXAMPLES.get(name, 300),
             suppress_health_check=list(HealthCheck))(test)()
