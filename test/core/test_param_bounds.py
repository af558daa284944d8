"""Every numeric parameter is bounded on both sides, and every default lies within its bounds.

A value a user types is refused in one line by the loader (core/config.py) only where the field
declares a bound: an unbounded traffic ``capacity: 1000000000000`` ended the node in a traceback
("Unable to allocate 240. TiB"), an unbounded ``command_timeout_s: 1e300`` switched the dynamics
node's command watchdog off without a word.
"""
from __future__ import annotations

import dataclasses
import importlib
import typing
from pathlib import Path

import pytest

import vehicle_sim
from vehicle_sim.core import config

PACKAGE = Path(vehicle_sim.__file__).parent
ROS_SIDE = ("nodes", "live", "msg")  # import rclpy; they declare no parameter fields (tested)


def _modules_with_fields() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] not in ROS_SIDE and "spec(" in path.read_text():
            names.append(".".join(("vehicle_sim", *rel.with_suffix("").parts)))
    return names


def _parameter_classes() -> list[type]:
    classes = []
    for name in _modules_with_fields():
        module = importlib.import_module(name)
        classes += [obj for obj in vars(module).values()
                    if isinstance(obj, type) and dataclasses.is_dataclass(obj)
                    and obj.__module__ == name]
    return classes


def _is_numeric(tp) -> bool:
    if tp in (int, float):
        return True
    return typing.get_origin(tp) is tuple and any(
        _is_numeric(a) for a in typing.get_args(tp) if a is not Ellipsis)


def _numeric_fields(cls: type):
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if "unit" in f.metadata and not f.metadata.get("choices") and _is_numeric(hints[f.name]):
            yield f


def _numbers(value):
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from _numbers(v)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield value


CLASSES = _parameter_classes()


def test_the_walk_finds_the_parameter_classes():
    names = {c.__name__ for c in CLASSES}
    assert {"DynamicsParams", "TrafficParams", "WashoutParams", "ImuParams", "BodyParams",
            "PlannerParams", "MonitorParams", "NodeSpec"} <= names and len(CLASSES) > 80
    for side in ROS_SIDE:
        declaring = [str(p.relative_to(PACKAGE)) for p in (PACKAGE / side).rglob("*.py")
                     if "spec(" in p.read_text()]
        assert declaring == []


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_every_numeric_field_has_a_lower_and_an_upper_bound(cls):
    open_ended = []
    for f in _numeric_fields(cls):
        m = f.metadata
        if (m["ge"] is None and m["gt"] is None) or (m["le"] is None and m["lt"] is None):
            open_ended.append(f.name)
    assert open_ended == []


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_every_numeric_default_lies_within_its_bounds(cls):
    for f in _numeric_fields(cls):
        if f.default is not dataclasses.MISSING:
            for value in _numbers(f.default):
                config._check_bounds(value, f.metadata, cls.__name__, f.name)
