"""Typed, validated, read-only parameters loaded from YAML or flat ROS parameters.

Every parameter set in vehicle_sim is a frozen dataclass whose fields carry their unit and bounds
in ``spec(...)`` metadata and their meaning in the docstring under them (core.field_docs).
``build(cls, data, source=...)`` validates a mapping once and returns the frozen instance; any
problem raises :class:`ConfigError` naming the source (file or node), the dotted key and the
reason. Nested dataclasses map to nested YAML mappings, or to dotted names in flat ROS
parameters (``vehicle.mass_kg``).

No ROS import here: nodes call :func:`flat_fields` to declare typed parameters with the
dataclass defaults (the one source of truth) and :func:`build_flat` to validate what was set.
"""
from __future__ import annotations

import dataclasses
import math
import re
import stat
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml

from vehicle_sim.core import ros_yaml
from vehicle_sim.core.field_docs import field_docs

T = TypeVar("T")
# a parameter, map or scenario file larger than this is refused before parsing (the largest
# shipped file is ~40 kB; a map of a few hundred streets stays well below)
MAX_FILE_CHARS = 10_000_000
# ids in files (maps, scene templates): what a log line, an OSM export and the traffic
# network's names (a connector is "<node>:<from>><to>") can carry as they are
ID_PATTERN = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
# the largest seed: a ROS 2 integer parameter is an int64 (rcl_interfaces/ParameterValue)
SEED_MAX = 2**63 - 1


class ConfigError(ValueError):
    """A parameter file or parameter set is malformed; the message names source, key and reason."""

    def __init__(self, source: str, key: str, reason: str):
        self.source, self.key, self.reason = source, key, reason
        where = f"{source}: {key}" if key else source
        super().__init__(f"{where}: {reason}")


def spec(default: Any = dataclasses.MISSING, *, unit: str = "", doc: str = "",
         ge: float | None = None, le: float | None = None,
         gt: float | None = None, lt: float | None = None,
         choices: tuple | None = None) -> Any:
    """A dataclass field with its unit and bounds (read by validation and docs). Its meaning is
    the docstring under it; ``doc`` is for a field with no class body (``make_dataclass``) and for
    one spec that two classes share."""
    meta = {"unit": unit, "doc": doc, "ge": ge, "le": le, "gt": gt, "lt": lt, "choices": choices}
    if isinstance(default, (list, dict)):
        raise TypeError("use a tuple for sequence defaults (frozen parameters)")
    return dataclasses.field(default=default, metadata=meta)


def parse_yaml(text: str, source: str, key: str = "") -> Any:
    """YAML text (a file's, or one launch argument's) as data; malformed text raises
    ConfigError naming ``source`` and ``key``."""
    try:
        return ros_yaml.read(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        # one line: a ReaderError (a control character) has no mark, its text spans two lines
        problem = " ".join((getattr(exc, "problem", None) or str(exc)).split())
        raise ConfigError(source, key, f"malformed YAML{line}: {problem}") from None
    except RecursionError:
        raise ConfigError(source, key, "nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits (int() refuses it)
        raise ConfigError(source, key, f"unreadable value: {exc}") from None


def shown_name(name: str) -> str:
    """A name of a file as an error line shows it: quoted, at most 64 characters."""
    return repr(name) if len(name) <= 64 else f"{name[:64]!r}... ({len(name)} characters)"


def id_problem(name: str) -> str | None:
    """Why ``name`` cannot be an id of a file (ID_PATTERN), else None."""
    if ID_PATTERN.fullmatch(name):
        return None
    return f"{shown_name(name)} is not 1-64 of A-Z a-z 0-9 _ . -"


def load_yaml(path: str | Path) -> dict:
    """Read a YAML mapping; malformed YAML or a non-mapping top level raises ConfigError."""
    path = Path(path)
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO or a device would block the open
            raise ConfigError(str(path), "", "not a regular file")
        with path.open(encoding="utf-8") as f:
            text = f.read(MAX_FILE_CHARS + 1)  # never more: a huge file
    except OSError as exc:
        raise ConfigError(str(path), "", f"cannot read file ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(str(path), "", f"not UTF-8 text (byte {exc.start}: "
                                         f"{exc.object[exc.start:exc.start + 1]!r})") from None
    if len(text) > MAX_FILE_CHARS:
        raise ConfigError(str(path), "", f"more than the {MAX_FILE_CHARS} characters a "
                                         f"parameter file may have")
    data = parse_yaml(text, str(path))
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(str(path), "", f"top level must be a mapping, got {type(data).__name__}")
    return data


def load(cls: type[T], path: str | Path, section: str | None = None) -> T:
    """Load and validate ``cls`` from a YAML file (optionally one top-level section of it)."""
    data = load_yaml(path)
    if section is not None:
        if section not in data:
            raise ConfigError(str(path), section, "missing section")
        data = data[section]
    return build(cls, data, source=str(path))


def build(cls: type[T], data: Any, *, source: str, prefix: str = "", base: Any = None) -> T:
    """Validate a (nested) mapping into the frozen dataclass ``cls``.

    A key the mapping leaves out keeps its value in ``base`` (an instance of ``cls``) when one is
    given, else the field's default. A nested group that is given in part starts from the
    group's default instance, so ``aggressive: {speed_factor: 1.2}`` changes one value of
    AGGRESSIVE, never turns the other values into the class defaults."""
    if not isinstance(data, Mapping):
        raise ConfigError(source, prefix, f"expected a mapping, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(str(k) for k in set(data) - set(fields))  # YAML keys may be non-strings
    if unknown:
        raise ConfigError(source, _join(prefix, unknown[0]),
                          f"unknown parameter (known: {', '.join(sorted(fields))})")
    values = {}
    for name, f in fields.items():
        key = _join(prefix, name)
        given = _given(f, base)
        if name not in data:
            if given is dataclasses.MISSING:
                raise ConfigError(source, key, "missing required parameter")
            values[name] = given
            continue
        values[name] = _convert(hints[name], data[name], f.metadata, source, key,
                                None if given is dataclasses.MISSING else given)
    try:
        return cls(**values)
    except (ValueError, TypeError) as exc:  # __post_init__ cross-field checks
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(source, prefix, str(exc)) from None


# parameters a node's file may set that are not its dataclass's: declared by rclpy, by a part
# every node shares (lockstep_peer.GRAPH_PARAM), or rclpy's QoS overrides
ROS_OWNED = ("use_sim_time", "start_type_description_service", "lockstep_graph")


def ros_owned(name: str) -> bool:
    """A parameter name that belongs to ROS, not to a node's dataclass (ROS_OWNED)."""
    return name in ROS_OWNED or name.startswith("qos_overrides.")


def flat_fields(cls: type) -> list[tuple[str, type, Any, dict]]:
    """(dotted name, scalar type, default, metadata) for every leaf field of ``cls``; the
    metadata's ``doc`` is the field's docstring (core.field_docs) where spec() was given none."""
    out = []
    docs = field_docs(cls)
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        if dataclasses.is_dataclass(tp):
            for name, sub_tp, default, meta in flat_fields(tp):
                if f.default is not dataclasses.MISSING:
                    default = _get_path(f.default, name)
                out.append((f"{f.name}.{name}", sub_tp, default, meta))
        else:
            meta = dict(f.metadata)
            meta["doc"] = meta.get("doc") or docs.get(f.name, "")
            out.append((f.name, tp, f.default, meta))
    return out


def build_flat(cls: type[T], flat: Mapping[str, Any], *, source: str) -> T:
    """Validate flat dotted parameters (as ROS gives them) into ``cls``."""
    nested: dict = {}
    for key, value in flat.items():
        node = nested
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(source, key, "is both a value and a group")
        node[parts[-1]] = value
    return build(cls, nested, source=source)


def describe(cls: type) -> list[tuple[str, str, str, str]]:
    """(name, type, default, unit + doc) rows for documentation tables."""
    rows = []
    for name, tp, default, meta in flat_fields(cls):
        shown = "required" if default is dataclasses.MISSING else repr(default)
        unit = f"[{meta.get('unit')}] " if meta.get("unit") else ""
        rows.append((name, getattr(tp, "__name__", str(tp)), shown, unit + meta.get("doc", "")))
    return rows


def _get_path(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _given(f: dataclasses.Field, base: Any) -> Any:
    """The value a field has when its key is left out: ``base``'s, else its default."""
    if base is not None:
        return getattr(base, f.name)
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return f.default


def _convert(tp: Any, value: Any, meta: Mapping, source: str, key: str,
             base: Any = None) -> Any:
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        return build(tp, value, source=source, prefix=key, base=base)
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(value, (list, tuple)):
            raise ConfigError(source, key, f"expected a list, got {type(value).__name__}")
        if len(args) == 2 and args[1] is Ellipsis:
            items = [_convert(args[0], v, meta, source, f"{key}[{i}]") for i, v in enumerate(value)]
        else:
            if len(value) != len(args):
                raise ConfigError(source, key, f"expected {len(args)} items, got {len(value)}")
            items = [_convert(a, v, meta, source, f"{key}[{i}]")
                     for i, (a, v) in enumerate(zip(args, value))]
        return tuple(items)
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(source, key, f"expected true/false, got {_short(value)}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(source, key, f"expected an integer, got {_short(value)}")
        digits = len(str(abs(value)))
        if digits > 30:  # an error line with every digit would not be one readable line
            raise ConfigError(source, key, f"number too large ({digits} digits)")
        _check_bounds(value, meta, source, key)  # as an int: float(2**63) == float(SEED_MAX)
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(source, key, f"expected a number, got {_short(value)}")
        value = _as_float(value, source, key)
        if not math.isfinite(value):
            raise ConfigError(source, key, f"must be finite, got {value}")
        _check_bounds(value, meta, source, key)
        return value
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(source, key, f"expected a string, got {_short(value)}")
        choices = meta.get("choices")
        if choices and value not in choices:
            raise ConfigError(source, key, f"{_short(value)} is not one of {', '.join(choices)}")
        return value
    raise ConfigError(source, key, f"unsupported parameter type {tp!r}")


def _as_float(value: float, source: str, key: str) -> float:
    try:
        return float(value)
    except OverflowError:  # an integer of hundreds of digits
        digits = len(str(abs(value)))
        raise ConfigError(source, key, f"number too large ({digits} digits)") from None


def _short(value: Any) -> str:
    """repr of a value, cut to a readable length for an error line."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:77]}..."


def _check_bounds(value: float | int, meta: Mapping, source: str, key: str) -> None:
    unit = f" {meta['unit']}" if meta.get("unit") else ""
    checks = (("ge", lambda b: value >= b, ">="), ("le", lambda b: value <= b, "<="),
              ("gt", lambda b: value > b, ">"), ("lt", lambda b: value < b, "<"))
    for name, ok, sign in checks:
        bound = meta.get(name)
        if bound is not None and not ok(bound):
            raise ConfigError(source, key, f"must be {sign} {bound}{unit}, got {value}{unit}")
    choices = meta.get("choices")
    if choices and value not in choices:
        raise ConfigError(source, key, f"{value} is not one of {choices}")
