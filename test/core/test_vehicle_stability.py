"""full14 step limit (full14/stability.py): a vehicle whose stiffest mode the integrator cannot
integrate at the physics step is refused when the loop's model is built, with one line naming
the mode and its parameters, instead of going non-finite at run time."""
import dataclasses
from pathlib import Path

import numpy as np
import pytest
import yaml

from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.loop_process import LoopProcess, LoopSetup, LoopSetupRefused
from vehicle_sim.core.vehicle.factory import build_model, simulate
from vehicle_sim.core.vehicle.full14.model import equilibrium_state
from vehicle_sim.core.vehicle.full14.packing import pack_full
from vehicle_sim.core.vehicle.full14.stability import STEP_MARGIN, check_step, step_limit
from vehicle_sim.core.vehicle.params import VehicleParams, load_vehicle
from vehicle_sim.core.vehicle.planar import U_STEER, U_THROTTLE

CONFIG = Path(__file__).resolve().parents[2] / "config"
VEHICLES = sorted((CONFIG / "vehicles").glob("*.yaml"))
MEDIUM = CONFIG / "vehicles" / "medium_car.yaml"
DT_S = 1e-3  # DynamicsParams' default physics_rate_hz


def _variant(tmp_path: Path, **groups: dict) -> VehicleParams:
    """medium_car.yaml with some values changed, loaded from a file as the node loads it."""
    data = yaml.safe_load(MEDIUM.read_text())
    for group, values in groups.items():
        data[group].update(values)
    path = tmp_path / "car.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_vehicle(path)


def _replace(car: VehicleParams, group: str, **values) -> VehicleParams:
    return dataclasses.replace(car, **{group: dataclasses.replace(getattr(car, group), **values)})


def _shipped_steps() -> set[tuple[str, float]]:
    """(integrator, physics step [s]) of config/dynamics.yaml and config/scenes/*dynamics*."""
    defaults, found = DynamicsParams(), set()
    for path in [CONFIG / "dynamics.yaml", *sorted((CONFIG / "scenes").glob("*dynamics*.yaml"))]:
        params = yaml.safe_load(path.read_text())["/**"]["ros__parameters"]
        rate = float(params.get("physics_rate_hz", defaults.physics_rate_hz))
        found.add((params.get("integrator", defaults.integrator), 1.0 / rate))
    return found


def _finite_runs(car: VehicleParams, integrator: str, dt_s: float) -> tuple[bool, bool]:
    """(2 s at rest, 2 s of a 0.1 rad step steer from 15 m/s at part throttle) stay finite."""
    p = pack_full(car)
    n = round(2.0 / dt_s)
    rest = simulate("full14", equilibrium_state(p), np.zeros((1, 6)), p, dt_s, n, integrator)
    steer = np.zeros((1, 6))
    steer[0, U_STEER], steer[0, U_THROTTLE] = 0.1, 0.3
    turn = simulate("full14", equilibrium_state(p, speed_mps=15.0), steer, p, dt_s, n,
                    integrator)
    return bool(np.isfinite(rest).all()), bool(np.isfinite(turn).all())


@pytest.mark.parametrize("groups, words", [
    ({"body": {"roll_inertia_kgm2": 1.0, "pitch_inertia_kgm2": 1.0}},
     ["body pitch", "body.pitch_inertia_kgm2 1 kg m^2"]),
    ({"suspension": {"front_bump_damping_nspm": 2e5}},
     ["front wheel hop", "suspension.front_bump_damping_nspm 2e+05 N s/m",
      "wheels.front_unsprung_mass_kg 32.84 kg"]),
])
def test_the_probe_vehicles_are_refused_with_one_line_naming_the_mode(tmp_path, groups, words):
    """The hostile-input probe's vehicles (each value within its bounds) went -inf at 0.011 s
    and NaN at step 3720 at the default 1 kHz RK4: the loop's model is refused instead."""
    car = _variant(tmp_path, **groups)
    with pytest.raises(ValueError) as refused:
        build_model("full14", car, "rk4", DT_S)
    line = str(refused.value)
    assert "\n" not in line
    for word in [*words, repr(car.name), "needs a physics step below",
                 "the physics step is 1 ms (rk4)"]:
        assert word in line, line


def test_the_physics_process_refuses_the_vehicle_as_the_node_does(tmp_path):
    """Real-time runs build the model in the physics process: its refusal is the node's
    (LoopSetupRefused, a ValueError: exit 2 with one line)."""
    car = _variant(tmp_path, body={"roll_inertia_kgm2": 1.0, "pitch_inertia_kgm2": 1.0})
    params = DynamicsParams(model="full14", mode="realtime", map_file="")
    with pytest.raises(LoopSetupRefused, match="body pitch .* physics step is 1 ms"):
        LoopProcess(LoopSetup(params, car))


def test_every_shipped_vehicle_is_accepted_at_every_shipped_step():
    steps = _shipped_steps() | {(integrator, DT_S) for integrator in ("euler", "midpoint", "rk4")}
    assert ("rk4", DT_S) in steps
    worst = 0.0
    for path in VEHICLES:
        car = load_vehicle(path)
        for integrator, dt_s in steps:
            ratio = check_step(car, integrator, dt_s).ratio(dt_s)
            assert ratio <= STEP_MARGIN, (path.name, integrator, dt_s, ratio)
            worst = max(worst, ratio)
    assert worst < 0.25  # the shipped files are far from the bound (worst: large_car, 0.2 Euler)
    build_model("full14", load_vehicle(MEDIUM), "rk4", DT_S)


def _at_the_bound(at, stiffer_below: bool) -> float:
    """The value v at which at(v)'s step ratio at 1 ms RK4 is STEP_MARGIN (bisection on log v;
    stiffer_below: smaller values are stiffer, as an inertia)."""
    lo, hi = 1e-3, 1e7
    for _ in range(60):
        mid = (lo * hi) ** 0.5
        if (step_limit(at(mid), "rk4").ratio(DT_S) > STEP_MARGIN) == stiffer_below:
            lo = mid
        else:
            hi = mid
    return lo if stiffer_below else hi


@pytest.mark.parametrize("group, fields, stiffer_below, mode", [
    ("body", ("pitch_inertia_kgm2",), True, "body pitch"),
    ("suspension", ("front_bump_damping_nspm", "front_rebound_damping_nspm"), False,
     "front wheel hop"),
])
def test_the_bound_separates_vehicles_that_integrate_from_ones_that_diverge(
        group, fields, stiffer_below, mode):
    """Just inside the bound (margin included) the model integrates 2 s at rest and 2 s of a
    step steer; a vehicle refused for the same mode, with the step twice its stable step, goes
    non-finite at rest within 2 s: the bound is the integrator's, not an arbitrary number."""
    car = load_vehicle(MEDIUM)

    def at(value: float) -> VehicleParams:
        return _replace(car, group, **{f: value for f in fields})

    bound = _at_the_bound(at, stiffer_below)
    inside = at(bound * (1.02 if stiffer_below else 0.98))
    limit = check_step(inside, "rk4", DT_S)
    assert limit.mode.name == mode and 0.9 * STEP_MARGIN < limit.ratio(DT_S) <= STEP_MARGIN
    assert _finite_runs(inside, "rk4", DT_S) == (True, True)
    # 4x stiffer: the ratio ~2, twice the stable step (not only beyond the margin)
    beyond = at(bound / 4.0 if stiffer_below else bound * 4.0)
    with pytest.raises(ValueError, match=mode):
        check_step(beyond, "rk4", DT_S)
    assert step_limit(beyond, "rk4").ratio(DT_S) > 1.5
    assert _finite_runs(beyond, "rk4", DT_S)[0] is False


def test_euler_at_50_hz_is_refused_as_it_diverges():
    """Explicit Euler at 50 Hz on medium_car (the runtime-divergence configuration of
    test_realtime_loop): its wheel hop and tyre modes are outside Euler's disk |1 + z| <= 1,
    the model goes non-finite within a second at 20 m/s; the loop's model is refused."""
    car = load_vehicle(MEDIUM)
    with pytest.raises(ValueError, match=r"physics step is 20 ms \(euler\)"):
        build_model("full14", car, "euler", 0.02)
    p = pack_full(car)
    u = np.zeros((1, 6))
    u[0, U_STEER], u[0, U_THROTTLE] = 0.1, 0.5
    run = simulate("full14", equilibrium_state(p, speed_mps=20.0), u, p, 0.02, 100, "euler")
    assert not np.isfinite(run).all()
