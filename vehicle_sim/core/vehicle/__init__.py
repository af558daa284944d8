"""Vehicle models (kinematic, single-track, 14-DOF), their parameters, tyres and faults.

Its numba kernels are disk-cached with the packed parameter layouts folded in as constants;
``numba_cache.guard_package`` drops them when a source of this package changed (numba itself
only checks the defining file).
"""
from __future__ import annotations

from pathlib import Path

from vehicle_sim.core.numba_cache import guard_package

NUMBA_SHARED = ()  # its kernels call none outside it (units.py: every package's)
guard_package(Path(__file__).parent, shared=NUMBA_SHARED)
