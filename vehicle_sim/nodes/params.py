"""Declare a node's typed ROS parameters from a core dataclass and validate them once."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TypeVar

from rcl_interfaces.msg import ParameterDescriptor, ParameterType, SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter

from vehicle_sim.core.config import ConfigError, build_flat, flat_fields, ros_owned

T = TypeVar("T")

_ROS_TYPES = {bool: ParameterType.PARAMETER_BOOL, int: ParameterType.PARAMETER_INTEGER,
              float: ParameterType.PARAMETER_DOUBLE, str: ParameterType.PARAMETER_STRING,
              tuple[str, ...]: ParameterType.PARAMETER_STRING_ARRAY,
              tuple[float, ...]: ParameterType.PARAMETER_DOUBLE_ARRAY,
              tuple[int, ...]: ParameterType.PARAMETER_INTEGER_ARRAY}


def declare_and_load(node: Node, cls: type[T]) -> T:
    """Declare every field of ``cls`` (dataclass defaults) and return the validated instance.

    Raises ConfigError naming the parameter for an unknown name (a typo in a parameter file),
    a wrong type or a value out of bounds, so the node refuses to start.
    """
    source = f"node {node.get_fully_qualified_name()}"
    overrides = dict(getattr(node, "_parameter_overrides", {}))
    fields = flat_fields(cls)
    known = {name for name, *_ in fields}
    for name in overrides:
        if name not in known and not ros_owned(name):
            raise ConfigError(source, name,
                              f"unknown parameter (known: {', '.join(sorted(known))})")
    values = {}
    for name, tp, default, meta in fields:
        ros_type = _ROS_TYPES.get(tp)
        if ros_type is None:
            raise TypeError(f"{cls.__name__}.{name}: no ROS parameter type for {tp}")
        unit = f" [{meta['unit']}]" if meta.get("unit") else ""
        descriptor = ParameterDescriptor(description=f"{meta.get('doc', '')}{unit}", type=ros_type)
        value = overrides[name].value if name in overrides else default
        if value is dataclasses.MISSING:
            raise ConfigError(source, name, "missing required parameter")
        if tp is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)  # `mass: 1200` in YAML is a valid double
        if isinstance(value, (list, tuple)):
            value = list(value)
        overrides.pop(name, None)
        node._parameter_overrides.pop(name, None)
        try:
            node.declare_parameter(name, value, descriptor)
        except Exception as exc:  # rclpy raises several types for a bad value
            raise ConfigError(source, name, f"{type(exc).__name__}: {exc}") from None
        values[name] = node.get_parameter(name).value
        if tp is not str and isinstance(values[name], (list, tuple)):
            values[name] = tuple(values[name])
    return build_flat(cls, values, source=source)


def validate_on_set(node: Node, cls: type[T], current: Callable[[], T],
                    dynamic: dict[str, Callable[[T], None]]) -> None:
    """Reject `ros2 param set` of read-only parameters; validate and apply the dynamic ones.

    ``dynamic`` maps a parameter name to the function that applies the new, validated
    parameter set (the whole frozen dataclass); every other parameter is read-only at run time.
    """
    source = f"node {node.get_fully_qualified_name()}"

    def on_set(changes: list[Parameter]) -> SetParametersResult:
        # qos_overrides.* are rclpy's own read-only parameters, declared with each publisher
        names = [c.name for c in changes if not ros_owned(c.name)]
        frozen = [n for n in names if n not in dynamic]
        if frozen:
            return SetParametersResult(successful=False,
                                       reason=f"read-only at run time: {', '.join(frozen)}")
        values = {name: getattr_path(current(), name) for name, *_ in flat_fields(cls)}
        values.update({c.name: c.value for c in changes if c.name in dynamic})
        try:
            updated = build_flat(cls, values, source=source)
        except ConfigError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        for name in names:
            dynamic[name](updated)
        return SetParametersResult(successful=True)

    node.add_on_set_parameters_callback(on_set)


def getattr_path(obj: object, dotted: str) -> object:
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj
