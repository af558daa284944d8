"""One guard for numba's on-disk kernel cache of a package (traffic, vehicle, accident kernels).

Numba's cache (``cache=True``) only checks the file defining each function, not the kernels it
inlines from other modules nor the packed-layout constants it folds in; :func:`guard_package`
drops a package's cached kernels (every ``__pycache__`` below it) whenever any of its sources
changed, so an edit can never run with stale machine code.
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

# modules outside a guarded package whose constants its kernels fold in or whose kernels they
# call: the units (every package's), and what a package names (``guard_package``'s ``shared``:
# the box geometry for the traffic's collisions, it and the traffic's pair search for the
# accident broad phase)
CORE = Path(__file__).parent
SHARED_SOURCES = (CORE / "units.py",)


def sources_digest(package_dir: Path, shared: tuple[Path, ...] = ()) -> str:
    """SHA-1 over the relative names and contents of every .py file below ``package_dir``, of
    :data:`SHARED_SOURCES` and of ``shared``."""
    digest = hashlib.sha1()
    outside = (*SHARED_SOURCES, *shared)
    for src in [*sorted(package_dir.rglob("*.py")), *outside]:
        digest.update(str(src.relative_to(src.parents[1] if src in outside
                                          else package_dir)).encode())
        digest.update(src.read_bytes())
    return digest.hexdigest()


def guard_package(package_dir: Path, shared: tuple[Path, ...] = ()) -> None:
    """Delete the package's cached kernels (*.nbi, *.nbc) unless its sources, the shared
    constants and the ``shared`` modules its kernels call are unchanged since they were cached.
    A read-only install is left alone (numba then compiles in memory)."""
    stamp = package_dir / "__pycache__" / "numba_sources.sha1"
    digest = sources_digest(package_dir, shared)
    try:
        if stamp.exists() and stamp.read_text() == digest:
            return
        for cache in package_dir.rglob("__pycache__"):
            for f in list(cache.glob("*.nbi")) + list(cache.glob("*.nbc")):
                f.unlink(missing_ok=True)
        stamp.parent.mkdir(exist_ok=True)
        stamp.write_text(digest)
    except OSError:
        pass


def loaded_kernels(prefix: str = "vehicle_sim") -> dict[str, object]:
    """Every numba dispatcher (an ``@njit`` kernel) defined in an imported module whose name
    starts with ``prefix``, by ``module.name``."""
    from numba.core.registry import CPUDispatcher

    found = {}
    for mod_name, module in list(sys.modules.items()):
        if module is None or not mod_name.startswith(prefix):
            continue
        for name, value in list(vars(module).items()):
            if isinstance(value, CPUDispatcher) and value.__module__ == mod_name:
                found[f"{mod_name}.{name}"] = value
    return found


def compiled_signatures(prefix: str = "vehicle_sim") -> dict[str, frozenset]:
    """The argument types each loaded kernel has machine code for in this process (compiled
    here or loaded from the on-disk cache): a kernel called with new types compiles again."""
    return {name: frozenset(map(str, d.signatures)) for name, d in loaded_kernels(prefix).items()}


def cache_counts(prefix: str = "vehicle_sim") -> tuple[int, int]:
    """(signatures loaded from the on-disk cache, signatures compiled) over the loaded kernels
    of this process (numba's ``Dispatcher.stats``; kernels inlined into others have none)."""
    hits = misses = 0
    for d in loaded_kernels(prefix).values():
        hits += sum(d.stats.cache_hits.values())
        misses += sum(d.stats.cache_misses.values())
    return hits, misses
