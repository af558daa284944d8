"""Vehicle YAML validation, packing and model selection errors."""
import dataclasses
import typing
from pathlib import Path

import numpy as np
import pytest
import yaml

from vehicle_sim.core.config import ConfigError
from vehicle_sim.core.units import GRAVITY_MPS2
from vehicle_sim.core.vehicle.factory import MODELS, make_model, simulate
from vehicle_sim.core.vehicle.params import P_FZF, P_FZR, P_MASS, VehicleParams, load_vehicle, pack

CAR_YAML = Path(__file__).resolve().parents[2] / "config" / "vehicles" / "medium_car.yaml"


def _write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "car.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_medium_car_loads_with_sourced_values():
    car = load_vehicle(CAR_YAML)
    assert car.chassis.mass_kg == pytest.approx(1225.887)
    assert car.tyre.front_cornering_coeff_per_rad == pytest.approx(21.92)  # -p_ky1 = mu C_S
    assert car.chassis.wheelbase_m == pytest.approx(2.39268)


def test_pack_static_axle_loads_sum_to_weight():
    p = pack(load_vehicle(CAR_YAML))
    assert p[P_FZF] + p[P_FZR] == pytest.approx(p[P_MASS] * GRAVITY_MPS2, rel=1e-12)
    assert p[P_FZF] / (p[P_FZF] + p[P_FZR]) == pytest.approx(1.50876 / 2.39268, rel=1e-9)


@pytest.mark.parametrize("group, key, value, words", [
    ("chassis", "mass_kg", -1225.0, ">= 100.0 kg"),
    ("tyre", "friction_coefficient", 0.0, ">= 0.05"),
    ("brakes", "front_bias", 1.5, "<= 1.0"),
    ("steering", "max_road_wheel_angle_rad", 2.0, "<"),
])
def test_out_of_range_field_is_refused_naming_it(tmp_path, group, key, value, words):
    data = yaml.safe_load(CAR_YAML.read_text())
    data[group][key] = value
    with pytest.raises(ConfigError) as err:
        load_vehicle(_write(tmp_path, data))
    assert f"{group}.{key}" in str(err.value) and words in str(err.value)


@pytest.mark.parametrize("group, key", [
    ("chassis", "mass_kg"), ("tyre", "rolling_radius_m"), ("aero", "drag_area_m2")])
def test_missing_physical_field_is_refused_naming_it(tmp_path, group, key):
    data = yaml.safe_load(CAR_YAML.read_text())
    del data[group][key]
    with pytest.raises(ConfigError) as err:
        load_vehicle(_write(tmp_path, data))
    assert f"{group}.{key}" in str(err.value) and "missing" in str(err.value)


def test_wheelbase_longer_than_body_is_refused(tmp_path):
    data = yaml.safe_load(CAR_YAML.read_text())
    data["chassis"]["length_m"] = 2.0
    with pytest.raises(ConfigError, match="chassis.*wheelbase"):
        load_vehicle(_write(tmp_path, data))


def test_inverted_blend_speeds_are_refused(tmp_path):
    data = yaml.safe_load(CAR_YAML.read_text())
    data["low_speed"] = {"blend_low_speed_mps": 3.0, "blend_high_speed_mps": 2.0}
    with pytest.raises(ConfigError, match="low_speed.*blend_high_speed_mps"):
        load_vehicle(_write(tmp_path, data))


def test_unknown_model_or_integrator_raises_naming_choices():
    car = load_vehicle(CAR_YAML)
    with pytest.raises(ValueError, match=r"'warp'.*single_track.*kinematic"):
        make_model("warp", car, "rk4")
    with pytest.raises(ValueError, match=r"'leapfrog'.*euler.*midpoint.*rk4"):
        make_model("single_track", car, "leapfrog")
    with pytest.raises(ValueError, match="'warp'"):
        simulate("warp", np.zeros(6), np.zeros((1, 6)), car, 0.01, 1)
    assert set(MODELS) == {"single_track", "kinematic", "full14"}


@pytest.mark.parametrize("group, key, value, words", [
    ("wheels", "tyre_vertical_stiffness_npm", 1e308, "must be <= 10000000.0 N/m"),
    ("chassis", "yaw_inertia_kgm2", 1e-300, "must be >= 10.0 kg m^2"),
    ("chassis", "mass_kg", 1e6, "must be <= 60000.0 kg"),
    ("suspension", "front_spring_npm", 1e-3, "must be >= 1000.0 N/m"),
])
def test_absurd_values_that_made_full14_nan_are_refused_at_load(tmp_path, group, key, value,
                                                                 words):
    """Issue 13: these loaded and made the full14 state NaN; now the file is refused, naming
    the file, the key and the bound."""
    data = yaml.safe_load(CAR_YAML.read_text())
    data[group][key] = value
    path = _write(tmp_path, data)
    with pytest.raises(ConfigError) as err:
        load_vehicle(path)
    assert str(path) in str(err.value) and f"{group}.{key}: {words}" in str(err.value)


def _numeric_fields(cls, prefix=""):
    for f in dataclasses.fields(cls):
        if dataclasses.is_dataclass(f.type):
            yield from _numeric_fields(f.type, f"{prefix}{f.name}.")
        elif f.type in ("float", "int", "tuple[float, ...]"):
            yield f"{prefix}{f.name}", f.metadata


def test_every_numeric_vehicle_field_has_plausibility_bounds():
    """Every number of a vehicle file is bounded below and above (documented in its spec)."""
    hints = typing.get_type_hints(VehicleParams)
    fields = []
    for name, cls in hints.items():
        if dataclasses.is_dataclass(cls):
            fields += [(f"{name}.{key}", meta) for key, meta in _numeric_fields(cls)]
    assert len(fields) > 60
    unbounded = [key for key, meta in fields
                 if (meta.get("ge") is None and meta.get("gt") is None)
                 or (meta.get("le") is None and meta.get("lt") is None)]
    assert unbounded == []
