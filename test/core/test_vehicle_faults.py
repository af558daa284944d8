"""Vehicle faults: what the broken car does, fault bookkeeping on simulation time, rejections."""
import math
import threading
from pathlib import Path

import pytest

from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.faults import FaultRequest
from vehicle_sim.core.sim_loop import Hooks, SimLoop
from vehicle_sim.core.vehicle.factory import make_model
from vehicle_sim.core.vehicle.faults import VehicleFaults
from vehicle_sim.core.vehicle.interface import Controls
from vehicle_sim.core.vehicle.params import load_vehicle

CAR = load_vehicle(Path(__file__).resolve().parents[2] / "config" / "vehicles" / "medium_car.yaml")
DT = 1e-3


def drive(faults: VehicleFaults, controls: Controls, seconds: float) -> None:
    for _ in range(round(seconds / DT)):
        faults.model.step(faults.apply(controls), DT)


def speed_after(fault: FaultRequest | None, controls: Controls, v0: float = 20.0,
                seconds: float = 0.5) -> float:
    model = make_model("single_track", CAR, "rk4")
    model.reset(speed_mps=v0)
    faults = VehicleFaults(model)
    if fault is not None:
        assert faults.command(fault, 0, 0.0)[0].state == "active"
    drive(faults, controls, seconds)
    return float(model.snapshot().velocity_mps[0])


def test_brake_failure_scales_the_braking_deceleration():
    """Brake pedal 0.5 (5.7 m/s^2, below the tyres' limit): with 25 % effectiveness the
    deceleration beyond coasting (drag, rolling resistance) is a quarter of the healthy one."""
    press = Controls(brake=0.5, gear=0)
    coast = 20.0 - speed_after(None, Controls(gear=0))
    healthy = 20.0 - speed_after(None, press) - coast
    broken = 20.0 - speed_after(FaultRequest(1, "brake_failure", value=0.25), press) - coast
    assert healthy > 2.0, "the healthy car must brake hard enough to tell"
    assert broken / healthy == pytest.approx(0.25, abs=0.01)
    gone = 20.0 - speed_after(FaultRequest(1, "brake_failure", value=0.0), press) - coast
    assert abs(gone) < 1e-6, "no brakes: the car only coasts"


def test_engine_cut_leaves_no_drive_and_stuck_steering_holds_the_angle():
    full = Controls(throttle=1.0)
    assert speed_after(None, full, v0=10.0) > 10.5
    assert speed_after(FaultRequest(2, "engine_cut"), full, v0=10.0) < 10.0
    faults = VehicleFaults(make_model("single_track", CAR, "rk4"))
    faults.command(FaultRequest(3, "steering_stuck"), 0, steer_rad=0.05)
    out = faults.apply(Controls(steer_rad=-0.2, throttle=0.3, brake=0.1))
    assert (out.steer_rad, out.throttle, out.brake) == (0.05, 0.3, 0.1)


def stepped_with_fault(request: FaultRequest, at_ns: int = 0, throttle: float = 0.0
                       ) -> tuple[SimLoop, list[tuple[int, str, str]]]:
    """A paused loop given ``request`` (for ``at_ns``), then stepped exactly 10 times; the
    fault changes it reported (t_ns, kind, state)."""
    loop = SimLoop(make_model("single_track", CAR, "rk4"), DynamicsParams(mode="fast"))
    changes: list[tuple[int, str, str]] = []
    hooks = Hooks(after_step=lambda k, t: None, status=lambda s: None,
                  faults_changed=lambda t, cs: changes.extend((t, c.kind, c.state) for c in cs))
    loop.set_command(Controls(throttle=throttle))
    loop.pause(True)
    stop = threading.Event()
    thread = threading.Thread(target=loop.run, args=(stop, hooks))
    thread.start()
    try:
        loop.request_fault(request, at_ns)
        loop.request_steps(10)
        for _ in range(300):
            if loop.k >= 10:
                break
            threading.Event().wait(0.01)
    finally:
        stop.set()
        thread.join(timeout=2)
    return loop, changes


def test_duration_counts_simulation_steps_and_clear_restores_the_car():
    loop, changes = stepped_with_fault(FaultRequest(7, "engine_cut", duration_s=0.004),
                                       throttle=1.0)
    assert changes == [(0, "engine_cut", "active"), (4_000_000, "engine_cut", "cleared")]
    assert not loop.faults.active and loop.k == 10


def test_a_fault_for_a_later_time_applies_at_that_step():
    _, changes = stepped_with_fault(FaultRequest(3, "engine_cut", duration_s=0.002),
                                    at_ns=6_000_000)
    assert changes == [(6_000_000, "engine_cut", "active"), (8_000_000, "engine_cut", "cleared")]


@pytest.mark.parametrize("request_, words", [
    (FaultRequest(1, "tyre_blowout", channel="front_left"), "channel must name a tyre"),
    (FaultRequest(1, "tyre_blowout", channel="fl"), "needs model full14"),
    (FaultRequest(1, "brake_failure", value=1.5), "remaining brake effectiveness in [0, 1]"),
    (FaultRequest(1, "brake_failure", value=math.nan), "remaining brake effectiveness"),
    (FaultRequest(1, "engine_cut", duration_s=-1.0),
     "duration must be finite, >= 0 and <= 1e+06 s"),
    (FaultRequest(1, "engine_cut", channel="fl"), "takes no channel"),
    (FaultRequest(1, "wings_off"), "unknown vehicle fault 'wings_off'"),
    (FaultRequest(9, "clear"), "no active vehicle fault with id 9"),
])
def test_impossible_faults_are_rejected_with_the_reason(request_, words):
    faults = VehicleFaults(make_model("single_track", CAR, "rk4"))
    (change,) = faults.command(request_, 0, 0.0)
    assert change.state == "rejected" and words in change.message
    assert not faults.active


@pytest.mark.parametrize("clear_id", [None, 4, 0])
def test_blowout_pulls_the_full_model_to_that_side_until_cleared(clear_id):
    """fl blown at 25 m/s, wheel straight: yaw > 0.5 deg to the left after 2 s; cleared
    (by its id, or all), the car runs straight (< 0.05 deg)."""
    model = make_model("full14", CAR, "rk4")
    model.reset(speed_mps=25.0)
    faults = VehicleFaults(model)
    (on,) = faults.command(FaultRequest(4, "tyre_blowout", channel="fl"), 0, 0.0)
    assert on.message == "tyre_blowout front_left active until cleared"
    if clear_id is not None:
        assert [c.state for c in faults.command(FaultRequest(clear_id, "clear"), 0, 0.0)] == [
            "cleared"]
    drive(faults, Controls(gear=0), 2.0)
    yaw_deg = math.degrees(model.snapshot().rpy_rad[2])
    if clear_id is None:
        assert yaw_deg > 0.5
    else:
        assert abs(yaw_deg) < 0.05
