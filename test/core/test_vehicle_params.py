"""Vehicle YAML validation, packing and model selection errors."""
from pathlib import Path

import numpy as np
import pytest
import yaml

from vehicle_sim.core.config import ConfigError
from vehicle_sim.core.units import GRAVITY_MPS2
from vehicle_sim.core.vehicle.factory import MODELS, make_model, simulate
from vehicle_sim.core.vehicle.params import P_FZF, P_FZR, P_MASS, load_vehicle, pack

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
    ("chassis", "mass_kg", -1225.0, "> 0.0 kg"),
    ("tyre", "friction_coefficient", 0.0, "> 0.0"),
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
