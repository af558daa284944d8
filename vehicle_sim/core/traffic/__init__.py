"""Urban traffic core of paper 004 (road network, drivers, lights, control zone) with the
sector hand-over of paper 003. Public entry point: ``vehicle_sim.core.traffic.sim.TrafficSim``.

Numba's on-disk cache (``cache=True``) only checks the file defining each function, not the
kernels it inlines from other modules; ``_guard_numba_cache`` drops this package's cached
kernels whenever any of its sources changed, so an edit can never run with stale machine code.
"""
from __future__ import annotations

import hashlib
from pathlib import Path


def _guard_numba_cache() -> None:
    here = Path(__file__).parent
    digest = hashlib.sha1()
    for src in sorted(here.glob("*.py")):
        digest.update(src.name.encode())
        digest.update(src.read_bytes())
    cache = here / "__pycache__"
    stamp = cache / "traffic_sources.sha1"
    try:
        if stamp.exists() and stamp.read_text() == digest.hexdigest():
            return
        cache.mkdir(exist_ok=True)
        for f in list(cache.glob("*.nbi")) + list(cache.glob("*.nbc")):
            f.unlink(missing_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:  # read-only install: numba falls back to compiling in memory
        pass


_guard_numba_cache()
