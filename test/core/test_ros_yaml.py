"""Both readers of core.ros_yaml (libyaml's with its event checks, and the pure-Python one)
read every shipped file alike and refuse aliases and deep nesting; where the two PyYAML parsers
differ, libyaml (rcl's parser) is the reading of a machine that has it."""
from pathlib import Path

import pytest
import yaml

from vehicle_sim.core import ros_yaml
from vehicle_sim.core.config import ConfigError, parse_yaml

CONFIG = Path(__file__).resolve().parents[2] / "config"
needs_libyaml = pytest.mark.skipif(not getattr(yaml, "__with_libyaml__", False),
                                   reason="PyYAML without libyaml")


@pytest.fixture
def pure_python(monkeypatch):
    monkeypatch.setattr(ros_yaml, "_LIBYAML", None)


def shipped_files() -> list[Path]:
    files = sorted(CONFIG.rglob("*.yaml"))
    assert len(files) > 20, "the shipped config files"
    return files


@needs_libyaml
def test_libyaml_and_pure_python_read_every_shipped_file_alike(monkeypatch):
    texts = [p.read_text() for p in shipped_files()]
    fast = [ros_yaml.read(t) for t in texts]
    monkeypatch.setattr(ros_yaml, "_LIBYAML", None)
    assert [ros_yaml.read(t) for t in texts] == fast


@pytest.mark.parametrize("reader", ["libyaml", "pure_python"])
@pytest.mark.parametrize("text, words", [
    ("a: &x [1]\nb: *x\n", "at line 2, column 4: aliases (*name) are not supported"),
    ("a: " + "[" * 150 + "]" * 150 + "\n", "nested too deeply"),
    ("a:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(300)), "nested too deeply"),
    # a second schedule would drop the first without a word (PyYAML keeps the last)
    ("schedule: [{at_s: 1.0}]\nseed: 3\nschedule: [{at_s: 5.0}]\n",
     "at line 3, column 1: found duplicate key 'schedule'"),
    ("a:\n  speed_mps: 1.0\n  b: 2\n  speed_mps: 9.0\n", "found duplicate key 'speed_mps'"),
    ("1: a\n0x1: b\n", "found duplicate key 1"),  # one key, written two ways
])
def test_aliases_nesting_and_duplicate_keys_are_refused_in_one_line(request, reader, text, words):
    if reader == "pure_python":
        request.getfixturevalue("pure_python")
    elif not getattr(yaml, "__with_libyaml__", False):
        pytest.skip("PyYAML without libyaml")
    with pytest.raises(ConfigError) as err:
        parse_yaml(text, "f.yaml")
    assert words in str(err.value) and str(err.value).startswith("f.yaml: ")
    assert "\n" not in str(err.value)


@needs_libyaml
def test_nesting_up_to_the_bound_is_read():
    depth = ros_yaml.MAX_NESTING
    assert ros_yaml.read("[" * depth + "1" + "]" * depth) is not None
    with pytest.raises(yaml.YAMLError, match="nested too deeply"):
        ros_yaml.read("[" * (depth + 1) + "1" + "]" * (depth + 1))


@needs_libyaml
@pytest.mark.parametrize("text, lib, pure", [
    ("a:\t1\n", {"a": 1}, "ScannerError"),  # a tab as separator, as rcl (libyaml) reads it
    ("{b:}\n", "ScannerError", {"b": None}),
    ("a: !\n", {"a": ""}, {"a": None}),
    ("%YAML 1.3\n---\na: 1\n", "ParserError", {"a": 1}),
    ('a: "\\ud800"\n', "ScannerError", {"a": "\ud800"}),  # a lone surrogate escape
])
def test_where_the_parsers_differ_libyaml_is_the_reading(monkeypatch, text, lib, pure):
    """The documented differences (module docstring): a change of either parser shows here."""
    def outcome():
        try:
            return ros_yaml.read(text)
        except yaml.YAMLError as exc:
            return type(exc).__name__
    assert outcome() == lib
    monkeypatch.setattr(ros_yaml, "_LIBYAML", None)
    assert outcome() == pure


@pytest.mark.parametrize("reader", ["libyaml", "pure_python"])
def test_the_same_key_in_two_mappings_and_a_merge_key_are_read(request, reader):
    if reader == "pure_python":
        request.getfixturevalue("pure_python")
    text = "a: {x: 1}\nb: {x: 2}\nc:\n  x: 3\n  <<: {x: 4, y: 5}\n"
    assert ros_yaml.read(text) == {"a": {"x": 1}, "b": {"x": 2}, "c": {"x": 3, "y": 5}}
