"""Accident detection of paper 004 sec. 7.1 with the collision parts of paper 002.

Public API: :class:`vehicle_sim.core.accident.detect.AccidentDetector` (and its ``Body``,
``Contact`` records); parameters in :mod:`vehicle_sim.core.accident.params`.

Its numba kernels are disk-cached; ``numba_cache.guard_package`` drops them when a source of this
package (or a shared one: the box geometry, the traffic's pair search) changed.
"""
from __future__ import annotations

from pathlib import Path

from vehicle_sim.core.numba_cache import CORE, guard_package

NUMBA_SHARED = (CORE / "box_geometry.py",  # modules outside it whose kernels its kernels call
                CORE / "traffic" / "collisions.py")
guard_package(Path(__file__).parent, shared=NUMBA_SHARED)
