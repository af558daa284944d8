"""Urban traffic core of paper 004 (road network, drivers, lights, control zone) with the
sector hand-over of paper 003. Public entry point: ``vehicle_sim.core.traffic.sim.TrafficSim``.

Its numba kernels are disk-cached; ``numba_cache.guard_package`` drops them when a source of this
package, or a module outside it whose kernels its kernels call (the box geometry of its
collisions, the vehicle models' drive law), changed (numba itself only checks the defining
file).
"""
from __future__ import annotations

from pathlib import Path

from vehicle_sim.core.numba_cache import CORE, guard_package

NUMBA_SHARED = (CORE / "box_geometry.py",  # modules outside it whose kernels its kernels call
                CORE / "vehicle" / "drive_law.py")
guard_package(Path(__file__).parent, shared=NUMBA_SHARED)
