"""Rules of the tree's shape that a refactor could silently break: core/ is free of ROS, and the
physical constants of core/units.py are written once."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import vehicle_sim

PACKAGE = Path(vehicle_sim.__file__).parent
ROS_MODULES = ("rclpy", "rosidl", "builtin_interfaces", "launch", "launch_ros")


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _ros_imports(path: Path) -> list[str]:
    return [name for name in _imports(path)
            if name.split(".")[0] in ROS_MODULES or name.split(".")[0].endswith("_msgs")
            or name.startswith(("vehicle_sim.nodes", "vehicle_sim.msg"))]


def test_core_imports_nothing_of_ros(tmp_path):
    core = sorted((PACKAGE / "core").rglob("*.py"))
    assert len(core) > 50
    offenders = {str(p.relative_to(PACKAGE)): _ros_imports(p) for p in core if _ros_imports(p)}
    assert offenders == {}
    # the check sees what it is for: a core module with a ROS import is caught
    bad = tmp_path / "bad.py"
    bad.write_text("from rclpy.node import Node\nimport geometry_msgs.msg\n"
                   "from vehicle_sim.nodes import qos\n")
    assert _ros_imports(bad) == ["rclpy.node", "geometry_msgs.msg", "vehicle_sim.nodes"]


GRAVITY_LITERAL = re.compile(r"(?<![\d.])9\.8\d*(?!\d)")


def _gravity_literals(text: str) -> list[int]:
    """Lines (1-based) with a standard-gravity number in code, not in a comment or docstring."""
    hits = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Constant) and isinstance(node.value, float) \
                and GRAVITY_LITERAL.fullmatch(repr(node.value)):
            hits.append(node.lineno)
    return hits


def test_standard_gravity_is_written_once():
    units = PACKAGE / "core" / "units.py"
    assert _gravity_literals(units.read_text()) != []
    offenders = {str(p.relative_to(PACKAGE)): _gravity_literals(p.read_text())
                 for p in sorted(PACKAGE.rglob("*.py")) if p != units}
    assert {k: v for k, v in offenders.items() if v} == {}
    assert _gravity_literals("G = 9.81  # 9.80665 in a comment\nx = 19.81\n") == [1]
