"""The parameter loader refuses malformed input with a message naming source, key and reason."""
from dataclasses import dataclass

import pytest

from vehicle_sim.core.config import (
    SEED_MAX,
    ConfigError,
    build,
    build_flat,
    flat_fields,
    load,
    parse_yaml,
    spec,
)
from vehicle_sim.core.ros_yaml import yaml_text


@dataclass(frozen=True)
class Tyre:
    mu: float = spec(1.0, unit="-", gt=0.0)


@dataclass(frozen=True)
class Axle:
    tyre: Tyre = Tyre()
    track_m: float = spec(1.5, unit="m", gt=0.0)


@dataclass(frozen=True)
class Car:
    mass_kg: float = spec(unit="kg", gt=0.0)
    gears: tuple[float, ...] = spec((3.5, 2.0), unit="-", gt=0.0)
    model: str = spec("single_track", choices=("single_track", "kinematic"))
    tyre: Tyre = Tyre()
    rear: Axle = Axle(Tyre(0.8), 1.6)  # a group whose default is not its class's defaults


@dataclass(frozen=True)
class Run:
    seed: int = spec(0, ge=0, le=SEED_MAX)
    step_s: float = spec(0.01, unit="s", gt=0.0, le=1.0)
    label: str = spec("")


def test_valid_nested_mapping_builds_frozen_instance():
    car = build(Car, {"mass_kg": 1200, "tyre": {"mu": 0.3}}, source="t")
    assert car.mass_kg == 1200.0 and car.tyre.mu == 0.3 and car.gears == (3.5, 2.0)
    with pytest.raises(AttributeError):
        car.mass_kg = 3  # type: ignore[misc]


def test_a_group_given_in_part_keeps_the_rest_of_its_default_instance():
    """rear: {track_m: 1.7} changes one value of Car's rear axle; its tyre stays 0.8 (the
    group's default), not Axle()'s 1.0 (the traffic's aggressive driver turned into the class
    defaults this way, and a pedal axis into a steering axis)."""
    car = build(Car, {"mass_kg": 1, "rear": {"track_m": 1.7}}, source="t")
    assert car.rear == Axle(Tyre(0.8), 1.7)
    car = build(Car, {"mass_kg": 1, "rear": {"tyre": {}}}, source="t")
    assert car.rear == Axle(Tyre(0.8), 1.6)
    flat = build_flat(Car, {"mass_kg": 1, "rear.track_m": 1.7}, source="node")
    assert flat.rear == Axle(Tyre(0.8), 1.7)


def test_shipped_groups_given_in_part_keep_their_defaults():
    from dataclasses import replace

    from vehicle_sim.core.motion.params import InputParams
    from vehicle_sim.core.traffic.params import AGGRESSIVE, TrafficParams
    traffic = build(TrafficParams, {"aggressive": {"speed_factor": 1.2}}, source="t")
    assert traffic.aggressive == replace(AGGRESSIVE, speed_factor=1.2)
    pedal = InputParams().throttle
    inputs = build(InputParams, {"throttle": {"invert": True}}, source="t")
    assert inputs.throttle == replace(pedal, invert=True) and not inputs.throttle.bipolar


@pytest.mark.parametrize("data, key, words", [
    ({}, "mass_kg", "missing"),
    ({"mass_kg": -1}, "mass_kg", "> 0.0 kg"),
    ({"mass_kg": float("nan")}, "mass_kg", "finite"),
    ({"mass_kg": "heavy"}, "mass_kg", "number"),
    ({"mass_kg": 1, "tyre": {"mu": 0}}, "tyre.mu", "> 0.0"),
    ({"mass_kg": 1, "gears": [1.0, 0.0]}, "gears[1]", "> 0.0"),
    ({"mass_kg": 1, "model": "warp"}, "model", "not one of"),
    ({"mass_kg": 1, "wings": 2}, "wings", "unknown parameter"),
])
def test_bad_values_name_the_key(data, key, words):
    with pytest.raises(ConfigError) as err:
        build(Car, data, source="car.yaml")
    assert err.value.key == key and words in str(err.value) and "car.yaml" in str(err.value)


def test_malformed_yaml_names_file_and_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("mass_kg: 1\ntyre: {mu: [\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: malformed YAML at line \d+"):
        load(Car, path)


def test_flat_round_trip_uses_dataclass_defaults():
    fields = {name: default for name, _, default, _ in flat_fields(Car)}
    assert fields["tyre.mu"] == 1.0 and "mass_kg" in fields
    car = build_flat(Car, {"mass_kg": 900.0, "tyre.mu": 0.5}, source="node")
    assert car.tyre.mu == 0.5


@pytest.mark.parametrize("text, key, words", [
    ("mass_kg: " + "9" * 400 + "\n", "mass_kg", "number too large (400 digits)"),
    ("mass_kg: -" + "9" * 400 + "\n", "mass_kg", "number too large (400 digits)"),
    ("mass_kg: 1\n1: 2\nzz: 3\n", "1", "unknown parameter"),  # keys of two types
    ("mass_kg: 1\ntyre: " + "[" * 5000 + "]" * 5000 + "\n", "", "nested too deeply"),
    ("mass_kg: " + "9" * 5000 + "\n", "", "unreadable value"),  # past Python's int digit limit
])
def test_hostile_files_are_refused_with_one_line_naming_file_and_key(tmp_path, text, key, words):
    path = tmp_path / "car.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load(Car, path)
    assert err.value.key == key and words in str(err.value) and "car.yaml" in str(err.value)
    assert "\n" not in str(err.value) and len(str(err.value)) < 400


def test_a_file_that_is_not_utf8_is_refused_naming_it(tmp_path):
    path = tmp_path / "car.yaml"
    path.write_bytes(b"mass_kg: 1\nname: \xff\xfe\n")
    with pytest.raises(ConfigError, match=r"car.yaml: not UTF-8 text"):
        load(Car, path)


def test_a_huge_file_is_refused_before_parsing(tmp_path):
    path = tmp_path / "car.yaml"
    path.write_text("mass_kg: 1\n" + "#" * 10_000_001 + "\n")
    with pytest.raises(ConfigError, match=r"car.yaml: more than the \d+ characters"):
        load(Car, path)


def test_dynamics_model_choices_are_the_vehicle_factory_models():
    import dataclasses

    from vehicle_sim.core.dynamics_params import DynamicsParams
    from vehicle_sim.core.vehicle.factory import MODELS
    field = {f.name: f for f in dataclasses.fields(DynamicsParams)}["model"]
    assert field.metadata["choices"] == MODELS


def test_floats_written_as_ros_2_reads_them_are_numbers(tmp_path):
    """1e-3 and 1.0e3 are numbers to rcl's parameter parser (and YAML 1.2) but strings to
    PyYAML's YAML 1.1: a noise density written 1e-3 was refused as 'expected a number'."""
    path = tmp_path / "run.yaml"
    path.write_text("step_s: 1e-3\nlabel: '1e3'\n")
    assert load(Run, path) == Run(step_s=0.001, label="1e3")
    for text, value in (("1.0e-2", 0.01), ("-2E+1", -20.0), (".5e-1", 0.05), ("-.5", -0.5),
                        ("+.5", 0.5)):
        assert parse_yaml(text, "t") == value, text
    for text in ("1e", "e3", "1e3e3", "0x1e3", "1_0e-1"):  # strtod stops at the '_'
        assert not isinstance(parse_yaml(text, "t"), float), text


def test_dates_are_text_and_aliases_are_refused_as_ros_2_does(tmp_path):
    """rcl has no timestamp type (record_dir:=2024-01-08 is a folder name) and refuses aliases,
    which PyYAML would expand: 400 characters of nested aliases took ~1 s, 560 ~15 min."""
    assert parse_yaml("2024-01-08", "t") == "2024-01-08"
    bomb = "a: &a [x, x]\n" + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, "
                                       f"*{chr(97 + i)}]\n" for i in range(20))
    path = tmp_path / "run.yaml"
    path.write_text(bomb + "label: *u\n")
    with pytest.raises(ConfigError, match=r"run.yaml: malformed YAML at line 2.*aliases"):
        load(Run, path)


@pytest.mark.parametrize("value", [1e-3, 1000.0, "1e3", ".5e1", "text", True, 7, [1.5, "2e0"],
                                   "y", "inf", "08", "0X10", "2024-01-08", "a: b"])
def test_a_parameter_written_for_ros_reads_back_as_the_same_value(value):
    """(-p name:=<text>) a string stays a string, whatever it looks like (quoted: rcl's reading
    of each is test/ros/test_parameter_text.py)."""
    back = parse_yaml(yaml_text(value), "t")
    assert back == value and type(back) is type(value)


def test_integer_bounds_are_exact_and_a_huge_integer_is_one_short_line():
    assert build(Run, {"seed": SEED_MAX}, source="t").seed == SEED_MAX
    with pytest.raises(ConfigError,
                       match=r"seed: must be <= 9223372036854775807, got 9223372036854775808$"):
        build(Run, {"seed": 2**63}, source="t")  # as floats the two are equal
    with pytest.raises(ConfigError, match=r"seed: number too large \(41 digits\)"):
        build(Run, {"seed": 10**40}, source="t")
