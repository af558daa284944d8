"""Where the installed package keeps its launch/ and config/ files (share/vehicle_sim).

Order: the ament index (a sourced ROS 2 workspace, or AMENT_PREFIX_PATH naming the venv), then
the prefix of the running interpreter (a pip install into a venv puts share/ there), then the
source tree (running from a checkout).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

PACKAGE = "vehicle_sim"


def share_dir() -> Path:
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if prefix and (Path(prefix) / "share" / PACKAGE / "config").is_dir():
            return Path(prefix) / "share" / PACKAGE
    candidate = Path(sys.prefix) / "share" / PACKAGE
    if (candidate / "config").is_dir():
        return candidate
    source = Path(__file__).resolve().parent.parent
    if (source / "config").is_dir():
        return source
    raise FileNotFoundError(f"share/{PACKAGE} not found under AMENT_PREFIX_PATH, {sys.prefix} "
                            f"or the source tree; is vehicle_sim installed?")


def config_path(name: str | os.PathLike) -> Path:
    """An absolute path as is; a relative one under share/vehicle_sim/config."""
    path = Path(name)
    return path if path.is_absolute() else share_dir() / "config" / path


def executable(name: str) -> Path:
    """A node executable: lib/vehicle_sim/<name> (colcon) or bin/<name> (pip venv); a name
    with a path separator is refused (it would escape those folders)."""
    if not name or os.sep in name or (os.altsep and os.altsep in name) or name in (".", ".."):
        raise FileNotFoundError(f"executable {name!r}: a plain name of a vehicle_sim executable "
                                f"is expected, not a path")
    candidates = [share_dir().parent.parent / "lib" / PACKAGE / name,
                  Path(sys.executable).parent / name]
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(f"executable {name!r} not found in {', '.join(map(str, candidates))}")
