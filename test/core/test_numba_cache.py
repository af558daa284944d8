"""The numba cache guard drops a package's cached kernels when any source they depend on
changed: the package's own files, nested ones, and the shared constants (units.py)."""
from pathlib import Path

from vehicle_sim.core import numba_cache


def _package(tmp_path: Path) -> tuple[Path, Path]:
    pkg = tmp_path / "pkg"
    (pkg / "kernels" / "__pycache__").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "kernels" / "law.py").write_text("G = 9.8\n")
    return pkg, pkg / "kernels" / "__pycache__" / "law.f-1.py311.nbi"


def test_cached_kernels_survive_unchanged_sources_and_go_when_any_source_changes(tmp_path,
                                                                              monkeypatch):
    shared = tmp_path / "units.py"
    shared.write_text("GRAVITY_MPS2 = 9.80665\n")
    monkeypatch.setattr(numba_cache, "SHARED_SOURCES", (shared,))
    pkg, cached = _package(tmp_path)
    numba_cache.guard_package(pkg)
    cached.write_bytes(b"machine code")
    numba_cache.guard_package(pkg)
    assert cached.exists(), "unchanged sources: the cache stays"
    (pkg / "kernels" / "law.py").write_text("G = 9.81\n")
    numba_cache.guard_package(pkg)
    assert not cached.exists(), "a nested source changed"
    cached.write_bytes(b"machine code")
    numba_cache.guard_package(pkg)
    shared.write_text("GRAVITY_MPS2 = 9.81\n")
    numba_cache.guard_package(pkg)
    assert not cached.exists(), "a shared constant changed"


def test_a_module_a_package_names_as_shared_drops_its_cache_when_it_changes(tmp_path):
    """core/accident's broad phase calls kernels of core/box_geometry.py: a change there drops
    the accident package's cache, and only the caches of the packages that name it."""
    geometry = tmp_path / "core" / "box_geometry.py"
    geometry.parent.mkdir()
    geometry.write_text("def half_extent(): pass\n")
    pkg, cached = _package(tmp_path)
    other = tmp_path / "other"
    (other / "__pycache__").mkdir(parents=True)
    (other / "law.py").write_text("")
    other_cached = other / "__pycache__" / "law.f-1.py311.nbi"
    for guard in (lambda: numba_cache.guard_package(pkg, shared=(geometry,)),
                  lambda: numba_cache.guard_package(other)):
        guard()
    cached.write_bytes(b"machine code")
    other_cached.write_bytes(b"machine code")
    geometry.write_text("def half_extent(): return 1\n")
    numba_cache.guard_package(pkg, shared=(geometry,))
    numba_cache.guard_package(other)
    assert not cached.exists(), "a shared module it names changed"
    assert other_cached.exists(), "a package that does not name it keeps its cache"
