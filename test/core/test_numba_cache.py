"""The numba cache guard drops a package's cached kernels when any source they depend on
changed: the package's own files, nested ones, and the shared constants (units.py)."""
import re
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


def _core_imports(path: Path) -> set[Path]:
    """The files of the vehicle_sim.core modules ``path`` imports."""
    import ast
    core = numba_cache.CORE
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("vehicle_sim.core"):
            base = core.joinpath(*node.module.split(".")[2:])
            for candidate in (base.with_suffix(".py"),
                              *(base / f"{a.name}.py" for a in node.names)):
                if candidate.is_file():
                    out.add(candidate)
    return out


def _defines_kernels(path: Path, cached: bool = False) -> bool:
    pattern = r"^@njit\(.*cache=True" if cached else r"^@njit"
    return re.search(pattern, path.read_text(), re.MULTILINE) is not None


def test_every_kernel_module_a_guarded_packages_cached_kernels_reach_is_in_its_digest():
    """A cached kernel calling a kernel of another module holds that module's machine code in
    the cache: every module with kernels that a guarded package's cached-kernel files reach
    (through its own files, transitively) outside the package must be in SHARED_SOURCES or the
    package's NUMBA_SHARED. (A kernel called from Python runs from its own package's cache.)"""
    import importlib
    for name in ("traffic", "vehicle", "accident"):
        package = importlib.import_module(f"vehicle_sim.core.{name}")
        root = numba_cache.CORE / name
        covered = {*numba_cache.SHARED_SOURCES, *package.NUMBA_SHARED}
        todo = [p for p in root.rglob("*.py") if _defines_kernels(p, cached=True)]
        seen: set[Path] = set()
        while todo:
            path = todo.pop()
            if path in seen:
                continue
            seen.add(path)
            for dep in _core_imports(path):
                if root not in dep.parents:
                    if not _defines_kernels(dep):
                        continue
                    assert dep in covered, f"core/{name}: {path.name} reaches kernels of {dep}"
                todo.append(dep)
