"""YAML read and written as ROS 2 reads parameters (rcl's parser), on libyaml where it is there.

``yaml_text(value)`` writes a value as one line rcl reads back as it (every string quoted).
``read(text)`` gives the data of one document:
- ``_ROS_FLOAT`` text is a number (rcl: strtod), a date is text (rcl has no timestamps);
- an alias (``*name``) is refused, as rcl refuses it (a few lines of nested aliases expand to
  gigabytes);
- nesting is refused past ``MAX_NESTING`` levels;
- a key twice in one mapping is refused (YAML 1.2 says keys are unique; PyYAML keeps the last,
  so a second ``schedule:`` would drop the first without a word).

With PyYAML's libyaml binding (``CSafeLoader``) a first pass over the parser's events makes the
alias and nesting checks, then the C composer builds the nodes: about 2.85x faster than the
pure-Python loader (bench/bench_yaml_read.py, a 4.9 M-character zone file: 6.55 s against
18.67 s). The C composer recurses once per level with no limit of its own (libyaml's own limit
is only in builds from 2024 on), hence the nesting check before it. Without libyaml the
pure-Python loader makes both checks as it composes.

The two PyYAML parsers differ on a few hand-written edge cases: libyaml reads a tab as a
separator (``a:\t1``) where the Python scanner refuses it, and refuses ``{b:}``, ``%YAML 1.3``
and a lone surrogate escape that the Python scanner reads; ``a: !`` is '' to one and None to the
other; their error words differ. libyaml is the parser rcl reads parameter files with, so
where PyYAML has it, its reading is the one that counts (test_ros_yaml).

Errors are PyYAML's (``yaml.YAMLError``, ``RecursionError``, ``ValueError`` for an integer past
Python's digit limit); ``core.config.parse_yaml`` words them as one line.
"""
from __future__ import annotations

import re
from typing import Any

import yaml

# deeper than any parameter, map or scene file needs (they nest 5 levels at most)
MAX_NESTING = 100

# The float forms of YAML 1.2 (1e-3, 1.0e3, -.5) that ROS 2 reads as numbers (rcl's parameter
# parser: strtod) and PyYAML's YAML 1.1 resolver leaves as strings.
_ROS_FLOAT = re.compile(r"""^[-+]?(?:[0-9]+(?:\.[0-9]*)?[eE][-+]?[0-9]+
                                |\.[0-9]+(?:[eE][-+]?[0-9]+)?)$""", re.X)
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_OPEN = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSE = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def _alias_refused(mark) -> yaml.YAMLError:
    return yaml.composer.ComposerError(None, None, "aliases (*name) are not supported", mark)


def _too_deep(mark) -> yaml.YAMLError:
    return yaml.composer.ComposerError(
        None, None, f"nested too deeply (more than {MAX_NESTING} levels)", mark)


class _UniqueKeys:
    """Constructs a mapping only if no key comes twice (merge keys ``<<`` aside: their
    overrides are what they are for)."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: set = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)  # cached for the super call
                try:
                    duplicate = key in seen
                except TypeError:  # unhashable: the super call words it
                    break
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", node.start_mark,
                        f"found duplicate key {key!r}", key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


class _PyLoader(_UniqueKeys, yaml.SafeLoader):
    """The pure-Python safe loader, refusing an alias and deep nesting as it composes."""

    _depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise _alias_refused(self.peek_event().start_mark)
        if not self.check_event(*_OPEN):
            return super().compose_node(parent, index)
        if self._depth >= MAX_NESTING:
            raise _too_deep(self.peek_event().start_mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_LIBYAML = getattr(yaml, "CSafeLoader", None)  # None: PyYAML built without libyaml


class _LibLoader(_UniqueKeys, _LIBYAML or yaml.SafeLoader):  # type: ignore[misc]
    """libyaml's safe loader (used only after ``_check_events``)."""


class _RosYamlDumper(yaml.SafeDumper):
    """PyYAML's safe dumper writing every string quoted: rcl reads an unquoted y, inf, 08 or
    0X10 as a bool or a number, a quoted scalar always as a string."""


_RosYamlDumper.add_representer(
    str, lambda dumper, text: dumper.represent_scalar("tag:yaml.org,2002:str", text, style="'"))


def _read_as_ros(loader: type) -> None:
    """``_ROS_FLOAT`` resolves to a float and no scalar to a timestamp (the class's own copy of
    SafeLoader's resolvers: those stay as they are)."""
    loader.add_implicit_resolver("tag:yaml.org,2002:float", _ROS_FLOAT, list("-+0123456789."))
    for resolvers in loader.yaml_implicit_resolvers.values():
        resolvers[:] = [(tag, rx) for tag, rx in resolvers if tag != _TIMESTAMP]


for _loader in (_PyLoader, _LibLoader):
    _read_as_ros(_loader)


def _check_events(text: str) -> None:
    """Refuse an alias or nesting past MAX_NESTING, from libyaml's events (no nodes built).
    libyaml's scanner may reach its own depth limit (1,000 in newer builds) first: that is
    worded as ours."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_LIBYAML):
            if isinstance(event, _OPEN):
                depth += 1
                if depth > MAX_NESTING:
                    raise _too_deep(event.start_mark)
            elif isinstance(event, _CLOSE):
                depth -= 1
            elif isinstance(event, yaml.AliasEvent):
                raise _alias_refused(event.start_mark)
    except yaml.MarkedYAMLError as exc:
        if "maximum nesting depth" in str(exc.problem):
            raise _too_deep(exc.problem_mark) from None
        raise


def read(text: str) -> Any:
    """The data of one YAML document read as ROS 2 reads it (module docstring)."""
    if _LIBYAML is None:
        return yaml.load(text, Loader=_PyLoader)  # a SafeLoader: no arbitrary objects
    _check_events(text)
    return yaml.load(text, Loader=_LibLoader)  # a safe loader: no arbitrary objects


def yaml_text(value: object) -> str:
    """A parameter value as one line of YAML that ROS 2 reads back as the same value
    (``-p name:=<text>``)."""
    text = yaml.dump(value, Dumper=_RosYamlDumper, default_flow_style=True, width=2**31 - 1)
    return text.strip().removesuffix("\n...").strip()
