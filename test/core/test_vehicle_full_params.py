"""Vehicle files with the full-model groups: loading, refusal of impossible values, factory."""
from pathlib import Path

import numpy as np
import pytest
import yaml

from vehicle_sim.core.config import ConfigError, load
from vehicle_sim.core.vehicle.factory import MODELS, make_model
from vehicle_sim.core.vehicle.full14.packing import pack_full, peak_slip, spring_compression
from vehicle_sim.core.vehicle.params import VehicleParams, load_vehicle

VEHICLES = Path(__file__).resolve().parents[2] / "config" / "vehicles"
CLASSES = ("small_car", "medium_car", "large_car", "van", "truck")


def _data() -> dict:
    return yaml.safe_load((VEHICLES / "medium_car.yaml").read_text())


def _write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "car.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("name", CLASSES)
def test_every_vehicle_class_loads_as_the_dynamics_node_does(name):
    """config.load(VehicleParams, path) (the node's call) and make_model("full14", ...)."""
    car = load(VehicleParams, VEHICLES / f"{name}.yaml")
    assert car.has_full_model
    model = make_model("full14", car, "rk4")
    assert model.name == "full14" and "full14" in MODELS
    assert np.all(np.isfinite(model.state))


def test_medium_car_full_groups_carry_the_sourced_values():
    car = load_vehicle(VEHICLES / "medium_car.yaml")
    assert car.wheels.tyre_vertical_stiffness_npm == pytest.approx(13000 * 14.5939, rel=1e-4)
    assert car.body.cg_height_m == pytest.approx(1.95 * 0.3048, rel=1e-4)
    assert car.drivetrain.drive_layout == "fwd"


@pytest.mark.parametrize("group, key, value, words", [
    ("chassis", "mass_kg", -1225.0, "chassis.mass_kg: must be >= 100.0 kg"),
    ("tyre", "friction_coefficient", 0.0, "tyre.friction_coefficient: must be >= 0.05"),
    ("drivetrain", "final_drive_ratio", 0.0, "drivetrain.final_drive_ratio: must be > 0.0"),
    ("drivetrain", "gear_ratios", [3.2, 0.0, 1.0], r"drivetrain.gear_ratios\[1\]: must be > 0.0"),
    ("drivetrain", "drive_layout", "6wd", "drivetrain.drive_layout: '6wd' is not one of"),
    ("wheels", "spin_inertia_kgm2", -1.0, "wheels.spin_inertia_kgm2: must be >= 0.05"),
    ("magic_formula", "shape_x", 2.5, "magic_formula.shape_x: must be < 2.0"),
    ("suspension", "front_spring_npm", "stiff", "suspension.front_spring_npm: expected a number"),
])
def test_impossible_values_are_refused_naming_the_field(tmp_path, group, key, value, words):
    data = _data()
    data[group][key] = value
    with pytest.raises(ConfigError, match=words):
        load_vehicle(_write(tmp_path, data))


def test_missing_field_and_missing_group_are_named(tmp_path):
    data = _data()
    del data["drivetrain"]["final_drive_ratio"]
    with pytest.raises(ConfigError, match="drivetrain.final_drive_ratio: missing"):
        load_vehicle(_write(tmp_path, data))
    data = _data()
    del data["magic_formula"]
    with pytest.raises(ConfigError, match="missing magic_formula"):
        load_vehicle(_write(tmp_path, data))


def test_cross_field_checks(tmp_path):
    data = _data()
    data["drivetrain"]["torque_curve_norm"] = [0.5, 1.0]
    with pytest.raises(ConfigError, match="same length"):
        load_vehicle(_write(tmp_path, data))
    data = _data()
    data["wheels"]["front_unsprung_mass_kg"] = 700.0
    with pytest.raises(ConfigError, match="unsprung masses exceed"):
        load_vehicle(_write(tmp_path, data))


def test_planar_file_still_serves_planar_models_but_not_full14(tmp_path):
    data = _data()
    for group in ("body", "suspension", "wheels", "magic_formula", "drivetrain"):
        del data[group]
    car = load_vehicle(_write(tmp_path, data))
    assert not car.has_full_model
    make_model("single_track", car, "rk4")
    with pytest.raises(ValueError, match="no full-model groups"):
        make_model("full14", car, "rk4")
    with pytest.raises(ValueError, match="no full-model groups"):
        pack_full(car)


def test_spring_compression_and_peak_slip_solve_their_equations():
    x = spring_compression(3000.0, 20000.0, 50.0)
    assert 20000.0 * x * (1 + 50.0 * x * x) == pytest.approx(3000.0, rel=1e-12)
    s = peak_slip(1.6411, 0.46403)  # MF peak: C atan(s - E (s - atan s)) = pi / 2
    assert 1.6411 * np.arctan(s - 0.46403 * (s - np.arctan(s))) == pytest.approx(np.pi / 2)
