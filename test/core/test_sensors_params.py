"""Sensor presets load into working models; malformed preset files are refused naming the key."""
from pathlib import Path

import numpy as np
import pytest
import yaml

from vehicle_sim.core.config import ConfigError, load
from vehicle_sim.core.sensors import GnssModel, GnssParams, ImuModel, ImuParams, TrueState

PRESETS = Path(__file__).resolve().parents[2] / "config" / "sensors"


@pytest.mark.parametrize("name, cls", [("imu_adis16448", ImuParams),
                                       ("imu_mems_consumer", ImuParams),
                                       ("gnss_consumer", GnssParams), ("gnss_rtk", GnssParams)])
def test_presets_load_and_run(name, cls):
    params = load(cls, PRESETS / f"{name}.yaml")
    model = (ImuModel if cls is ImuParams else GnssModel)(params, seed=1)
    outs = [model.update(k / 100, TrueState()) for k in range(100)]  # 1 s at rest at the origin
    if cls is ImuParams:  # turn-on + drift bias sigma ~0.2 m/s^2 in both presets
        f = np.array([o.linear_acceleration_mps2 for o in outs])
        assert np.all(np.abs(f - [0.0, 0.0, params.gravity_mps2]) < 1.0)
    else:  # consumer GM sigma 1.5 m / 3 m: 20 m is > 6 sigma
        fixes = [f for o in outs for f in o]
        assert len(fixes) >= 8 and all(np.linalg.norm(f.position_enu_m) < 20.0 for f in fixes)


def test_adis_preset_carries_the_rotors_values():
    p = load(ImuParams, PRESETS / "imu_adis16448.yaml")
    assert p.gyro.noise_density == 3.39e-4 and p.gyro.turn_on_bias_sigma == 8.7e-3
    assert p.accel.noise_density == 4.0e-3 and p.accel.turn_on_bias_sigma == 0.196
    # the Gauss-Markov bias equals RotorS's walk density bounded by its correlation time
    assert p.gyro.bias_gm_sigma == pytest.approx(3.88e-5 * np.sqrt(1000.0 / 2), rel=1e-3)
    assert p.accel.bias_gm_sigma == pytest.approx(6e-3 * np.sqrt(300.0 / 2), rel=1e-3)


def _write(tmp_path: Path, preset: str, edit) -> Path:
    data = yaml.safe_load((PRESETS / f"{preset}.yaml").read_text())
    edit(data)
    out = tmp_path / "bad.yaml"
    out.write_text(yaml.safe_dump(data))
    return out


@pytest.mark.parametrize("preset, cls, edit, key, words", [
    ("imu_adis16448", ImuParams, lambda d: d["gyro"].update(noise_density=-1.0),
     "gyro.noise_density", ">= 0"),
    ("imu_adis16448", ImuParams, lambda d: d["accel"].update(nois_density=1.0),
     "accel.nois_density", "unknown"),
    ("imu_adis16448", ImuParams, lambda d: d.update(rate_hz="fast"), "rate_hz", "number"),
    ("imu_adis16448", ImuParams, lambda d: d.update(lever_arm_m=[0.1, 0.2]),
     "lever_arm_m", "3 items"),
    ("imu_mems_consumer", ImuParams, lambda d: d["gyro"].update(bias_gm_tau_s=0.0),
     "gyro", "correlation time"),
    ("gnss_consumer", GnssParams, lambda d: d.update(outage_mode="blackout"),
     "outage_mode", "not one of"),
    ("gnss_consumer", GnssParams, lambda d: d["origin"].update(latitude_deg=91.0),
     "origin.latitude_deg", "<= 90"),
    ("gnss_rtk", GnssParams, lambda d: d["urban"].update(sigma_scale=0.5),
     "urban.sigma_scale", ">= 1"),
])
def test_malformed_presets_are_refused_naming_the_key(tmp_path, preset, cls, edit, key, words):
    path = _write(tmp_path, preset, edit)
    with pytest.raises(ConfigError, match=words) as err:
        load(cls, path)
    assert err.value.key == key and str(path) in str(err.value)


def test_broken_yaml_is_refused(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("rate_hz: 10\ngyro: [unclosed\n")
    with pytest.raises(ConfigError, match="malformed YAML"):
        ImuModel.from_file(path, seed=0)
