"""Platform presets load and validate; the motion pipeline runs end to end on each of them."""
import math
from pathlib import Path

import numpy as np
import pytest

from vehicle_sim.core.config import ConfigError, load
from vehicle_sim.core.motion.bridge import MotionBridge
from vehicle_sim.core.motion.params import PlatformParams
from vehicle_sim.core.motion.safety import Mode
from vehicle_sim.core.motion.wire import decode_binary, decode_text
from vehicle_sim.core.units import GRAVITY_MPS2

Z3 = np.zeros(3)
PRESETS = sorted((Path(__file__).parents[2] / "config" / "platforms").glob("*.yaml"))


def test_presets_exist():
    assert {p.stem.split("_")[0] for p in PRESETS} >= {"stewart6", "seat2", "seat3"}


def decode(params, payload):
    if params.wire.format == "binary":
        return decode_binary(payload, params.wire)[1]
    return decode_text(payload, params.wire, params.actuator_count)


@pytest.mark.parametrize("path", PRESETS, ids=lambda p: p.stem)
def test_pipeline_cues_braking_then_returns_to_neutral_when_state_stops(path):
    params = load(PlatformParams, path)
    bridge = MotionBridge(params)
    dt = 1.0 / params.washout.rate_hz
    neutral = decode(params, bridge.cycle(0.0).payload)
    frames = []
    for k in range(int(12.0 / dt)):
        t = k * dt
        if t < 8.0:  # braking at 4 m/s^2, then the state stream stops
            bridge.on_vehicle_state(t, np.array([-4.0, 0, 0]), Z3, Z3, Z3)
        frames.append(bridge.cycle(t))
    braking = frames[int(7.9 / dt)]
    assert braking.mode is Mode.ACTIVE and braking.pose[4] > 0.0  # braking: nose down (+ pitch)
    values = decode(params, braking.payload)
    assert np.all((values >= 0.0) & (values <= 1.0))
    assert values == pytest.approx(braking.actuator, abs=1.0 / ((1 << params.wire.bits) - 1))
    assert frames[-1].mode is Mode.NEUTRAL
    assert decode(params, frames[-1].payload) == pytest.approx(neutral, abs=1e-12)


def test_sustained_braking_tilt_matches_asin_on_the_stewart_preset():
    params = load(PlatformParams, next(p for p in PRESETS if p.stem.startswith("stewart6")))
    bridge = MotionBridge(params)
    dt = 1.0 / params.washout.rate_hz
    for k in range(int(30.0 / dt)):
        bridge.on_vehicle_state(k * dt, np.array([-2.0, 0, 0]), Z3, Z3, Z3)
        frame = bridge.cycle(k * dt)
    a_s = params.washout.trans_scale[0] * 2.0
    assert frame.pose[4] == pytest.approx(math.asin(a_s / GRAVITY_MPS2), abs=1e-4)
    assert frame.kinematics_ok


def test_pose_beyond_the_workspace_is_shrunk_to_a_reachable_one():
    params = load(PlatformParams, next(p for p in PRESETS if p.stem.startswith("stewart6")))
    bridge = MotionBridge(params)
    far = np.array(params.safety.pose_limit)
    assert not bridge.kinematics.inverse(far).ok
    pose, ik = bridge._reachable(far)
    assert ik.ok and 0.0 < pose[0] / far[0] < 1.0 and pose / far == pytest.approx(pose[0] / far[0])


@pytest.mark.parametrize("patch, key", [
    ({"kind": "seat3"}, "rig.dof"),
    ({"wire": {"axis_letters": "AB"}}, "axis_letters"),
    ({"washout": {"tilt_rate_limit_radps": -1.0}}, "washout.tilt_rate_limit_radps"),
    ({"rig": {"attach_xy_m": [[0.1, 0.2]]}}, "at least 2"),
    ({"safety": {"pose_limit": [0.1, 0.1]}}, "safety.pose_limit"),
    ({"mux": {"takeover_torque": 2.0}}, "mux.takeover_torque"),
])
def test_malformed_presets_name_the_problem(tmp_path, patch, key):
    import yaml
    f = tmp_path / "bad.yaml"
    f.write_text(yaml.safe_dump(patch))
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")) as err:
        load(PlatformParams, f)
    assert str(f) in str(err.value)
