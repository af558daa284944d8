"""Engine, clutch, gearbox, differentials and brakes of the full model (paper 001)."""
import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from vehicle_sim.core.vehicle.full14.discrete import carrier_speed, discrete_update
from vehicle_sim.core.vehicle.full14.drivetrain import (
    choose_gear, curve_norm, engine_torque, total_ratio)
from vehicle_sim.core.vehicle.full14.model import Full14Model, equilibrium_state
from vehicle_sim.core.vehicle.full14.packing import F_IE, F_IW, F_KDRIVE, pack_full
from vehicle_sim.core.vehicle.full14.params import RPM_TO_RADPS
from vehicle_sim.core.vehicle.full14.state_layout import X_ENGINE, X_GEAR, X_LOCK, X_OMEGA, X_VX
from vehicle_sim.core.vehicle.full14.terrain import FrictionZone, TerrainParams
from vehicle_sim.core.vehicle.interface import Controls
from vehicle_sim.core.vehicle.params import load_vehicle

CAR = load_vehicle(Path(__file__).resolve().parents[2] / "config" / "vehicles" / "medium_car.yaml")
DT = CAR.drivetrain
P = pack_full(CAR)


def with_drivetrain(**changes):
    return dataclasses.replace(CAR, drivetrain=dataclasses.replace(DT, **changes))


def drive(model: Full14Model, controls: Controls, seconds: float) -> None:
    for _ in range(round(seconds / 1e-3)):
        model.step(controls, 1e-3)


def test_engine_torque_is_curve_times_throttle_minus_friction():
    """001: T = throttle * peak * curve(omega) - (f0 + f1 omega); curve piecewise linear."""
    w = 3400.0 * RPM_TO_RADPS  # halfway between the 3000 and 3800 rpm breakpoints
    assert curve_norm(w, P) == pytest.approx(0.5 * (0.95 + 1.0))
    expected = (0.6 * DT.peak_torque_nm * 0.975 - DT.friction_torque_nm
                - DT.friction_nm_per_radps * w)
    assert engine_torque(w, 0.6, P) == pytest.approx(expected)
    over = (DT.max_rpm + 10.0) * RPM_TO_RADPS  # rev limiter: friction only
    assert engine_torque(over, 1.0, P) == pytest.approx(
        -DT.friction_torque_nm - DT.friction_nm_per_radps * over)
    below = (DT.idle_rpm - 200.0) * RPM_TO_RADPS  # idle governor fully open
    assert engine_torque(below, 0.0, P) == pytest.approx(
        DT.peak_torque_nm * curve_norm(below, P) - DT.friction_torque_nm
        - DT.friction_nm_per_radps * below)


def test_gear_ratios_and_automatic_choice():
    assert total_ratio(2, P) == pytest.approx(DT.gear_ratios[1] * DT.final_drive_ratio)
    assert total_ratio(-1, P) == pytest.approx(-DT.reverse_ratio * DT.final_drive_ratio)
    assert total_ratio(0, P) == 0.0
    at_limiter = DT.max_rpm * RPM_TO_RADPS / total_ratio(1, P)
    assert choose_gear(1, at_limiter, 0.0, 1.0, P) == 2  # no torque in first at the limiter
    slow = 1200.0 * RPM_TO_RADPS / total_ratio(3, P)  # 1200 rpm in third: second pulls harder
    assert choose_gear(3, slow, 0.0, 1.0, P) == 2
    assert choose_gear(1, 0.0, 0.0, 1.0, P) == 1 and choose_gear(1, 0.0, 0.0, 0.0, P) == 1
    top = len(DT.gear_ratios)
    past_top = 1.05 * DT.max_rpm * RPM_TO_RADPS / total_ratio(top, P)  # gearing-limited speed
    assert [choose_gear(top, past_top, 0.0, t, P) for t in (1.0, 0.3, 0.0)] == [top] * 3, \
        "no downshift into an over-revving gear at top speed"
    cruise = 20.0 / CAR.tyre.rolling_radius_m  # 72 km/h: full throttle keeps the strong gear,
    full = _settle(2, cruise, 1.0)  # light throttle climbs to a gear above 1500 rpm
    light = _settle(2, cruise, 0.2)
    assert light > full
    assert cruise * total_ratio(light, P) >= DT.clutch_engage_rpm * RPM_TO_RADPS


def _settle(gear: int, carrier: float, throttle: float) -> int:
    for _ in range(len(DT.gear_ratios)):
        gear = choose_gear(gear, carrier, 0.0, throttle, P)
    return gear


def test_automatic_launch_upshifts_and_respects_the_rev_limit():
    """Full throttle from rest: 0-100 km/h in 8-16 s (an 88 hp, 1.2 t car), gears 1 -> 3 in
    order, engine never above max_rpm + 2 %."""
    model = Full14Model(CAR, "rk4")
    gears, rpm_max, t_100 = [1], 0.0, None
    for k in range(20000):
        model.step(Controls(throttle=1.0), 1e-3)
        x = model.state
        rpm_max = max(rpm_max, x[X_ENGINE] / RPM_TO_RADPS)
        if int(x[X_GEAR]) != gears[-1]:
            gears.append(int(x[X_GEAR]))
        if t_100 is None and x[X_VX] >= 100 / 3.6:  # straight along +x
            t_100 = (k + 1) * 1e-3
    assert gears[:3] == [1, 2, 3] and np.all(np.diff(gears) == 1)
    assert rpm_max <= DT.max_rpm * 1.02
    assert t_100 is not None and 8.0 <= t_100 <= 16.0


def test_locked_clutch_ties_engine_to_the_wheels():
    model = Full14Model(CAR, "rk4")
    model.reset(speed_mps=20.0)
    drive(model, Controls(throttle=0.3), 3.0)
    x = model.state
    carrier = 0.5 * (x[X_OMEGA] + x[X_OMEGA + 1])  # front-wheel drive
    assert x[X_LOCK] == 1.0
    assert x[X_ENGINE] == pytest.approx(total_ratio(int(x[X_GEAR]), P) * carrier, rel=1e-12)


def _locked_share(dt_s: float) -> float:
    """Share of the steps with the clutch locked: a full-throttle launch through the gears,
    then part throttle."""
    model = Full14Model(CAR, "rk4")
    locked = []
    for controls, seconds in ((Controls(throttle=1.0), 6.0), (Controls(throttle=0.2), 3.0)):
        for _ in range(round(seconds / dt_s)):
            model.step(controls, dt_s)
            locked.append(model.state[X_LOCK])
    return float(np.mean(locked))


def test_a_slipping_clutch_locks_at_a_1_ms_step_as_at_0_2_ms():
    """Inside the slip band the engine / wheel-spin mode is too stiff for RK4 at 1 ms: waiting
    for the slip to settle there, the clutch slipped in a two-step cycle and never locked in
    first gear (locked 21 % of this run at 1 ms against 77 % at 0.2 ms). Locking when the
    capacity can close the slip within the step makes the step size a detail."""
    assert _locked_share(1e-3) == pytest.approx(_locked_share(2e-4), abs=0.02)


def _slipping(slip_radps: float) -> np.ndarray:
    """Rolling at 12 m/s in its gear, clutch open, engine ``slip_radps`` above the carrier."""
    x = equilibrium_state(P, speed_mps=12.0)
    x[X_LOCK] = 0.0
    x[X_ENGINE] = total_ratio(int(x[X_GEAR]), P) * carrier_speed(x, P) + slip_radps
    return x


def test_the_lock_closes_the_slip_and_keeps_angular_momentum():
    x = _slipping(3.0)
    before = x.copy()
    u = np.array([0.0, 0.2, 0.0, 0.0, 1.0, 0.0])  # steer, throttle, brake, clutch, gear, hb
    discrete_update(x, u, P, 1e-3)
    ratio = total_ratio(int(x[X_GEAR]), P)
    assert x[X_LOCK] == 1.0 and x[X_ENGINE] == ratio * carrier_speed(x, P)
    impulse = -P[F_IE] * (x[X_ENGINE] - before[X_ENGINE])  # [N m s], taken from the engine
    assert impulse > 0.0
    for i in range(4):  # ... and given to the driven wheels through the gear, no more, no less
        given = P[F_IW] * (x[X_OMEGA + i] - before[X_OMEGA + i])
        assert given == pytest.approx(P[F_KDRIVE + i] * ratio * impulse, rel=1e-9, abs=1e-12)


def test_a_clutch_short_of_capacity_keeps_slipping():
    """Pedal almost down: 5 % of the capacity cannot hold the engine's full-throttle torque,
    so the clutch stays open even with the speeds within the slip band."""
    x = _slipping(0.3)
    before = x.copy()
    u = np.array([0.0, 1.0, 0.0, 0.95, 1.0, 0.0])
    discrete_update(x, u, P, 1e-3)
    assert x[X_LOCK] == 0.0 and x[X_ENGINE] == before[X_ENGINE]


def test_stopping_in_drive_does_not_stall_the_engine():
    """001's automatic disengagement: full braking to rest in D, then 3 s held: the clutch is
    open, the engine idles (within 100 rpm) and the car stays put."""
    model = Full14Model(CAR, "rk4")
    model.reset(speed_mps=15.0)
    drive(model, Controls(brake=1.0), 6.0)
    snap = model.snapshot()
    assert abs(snap.velocity_mps[0]) < 1e-3 and model.state[X_LOCK] == 0.0
    assert snap.engine_rpm == pytest.approx(DT.idle_rpm, abs=100.0)


def test_neutral_gives_no_drive_and_the_engine_stays_below_the_limiter():
    model = Full14Model(CAR, "rk4")
    drive(model, Controls(throttle=1.0, gear=0), 3.0)
    snap = model.snapshot()
    assert abs(snap.velocity_mps[0]) < 1e-3 and snap.gear == 0
    assert DT.max_rpm * 0.95 < snap.engine_rpm <= DT.max_rpm * 1.02


def test_manual_gears_and_reverse():
    model = Full14Model(with_drivetrain(transmission="manual"), "rk4")
    drive(model, Controls(throttle=1.0, gear=1), 4.0)
    first = model.snapshot()
    assert first.gear == 1 and first.velocity_mps[0] > 5.0
    drive(model, Controls(throttle=1.0, gear=2), 2.0)
    assert model.snapshot().gear == 2
    model.reset()
    drive(model, Controls(throttle=0.5, gear=-1), 4.0)
    snap = model.snapshot()
    assert snap.gear == -1 and snap.velocity_mps[0] < -2.0


def test_pressed_clutch_pedal_disengages():
    model = Full14Model(with_drivetrain(transmission="manual"), "rk4")
    drive(model, Controls(throttle=1.0, clutch=1.0, gear=1), 3.0)
    snap = model.snapshot()
    assert abs(snap.velocity_mps[0]) < 1e-6 and snap.engine_rpm > 0.95 * DT.max_rpm


def test_viscous_clutch_drives():
    model = Full14Model(with_drivetrain(clutch_type="viscous"), "rk4")
    drive(model, Controls(throttle=1.0), 4.0)
    assert model.snapshot().velocity_mps[0] > 5.0 and model.state[X_LOCK] == 0.0


def test_handbrake_locks_the_rear_wheels_only():
    model = Full14Model(CAR, "rk4")
    model.reset(speed_mps=10.0)
    drive(model, Controls(handbrake=True, gear=0), 0.3)
    spin = model.snapshot().wheel_speed_radps
    assert np.all(np.abs(spin[2:]) < 0.05) and np.all(spin[:2] > 20.0)


def test_split_friction_braking_yaws_towards_the_grippy_side():
    """Left wheels on ice, right wheels dry, 0.6 brake at 20 m/s (no ABS): the dry side brakes
    harder and the car yaws right (clockwise) by more than 3 degrees within 0.5 s."""
    split = TerrainParams(zones=(FrictionZone(surface="ice", polygon_m=(
        (-50.0, 0.0), (400.0, 0.0), (400.0, 10.0), (-50.0, 10.0))),))
    model = Full14Model(CAR, "rk4", split)
    model.reset(speed_mps=20.0)
    drive(model, Controls(brake=0.6, gear=0), 0.5)
    assert model.snapshot().rpy_rad[2] < -math.radians(3.0)


def test_four_wheel_drive_outaccelerates_front_drive_on_ice():
    """Traction-limited launch on ice: 4wd (50/50) gains at least 1.5 x the speed of fwd."""
    ice = TerrainParams(default_surface="ice")
    gains = {}
    for name, car in (("fwd", CAR), ("4wd", with_drivetrain(drive_layout="4wd",
                                                           front_torque_share=0.5))):
        model = Full14Model(car, "rk4", ice)
        drive(model, Controls(throttle=1.0), 4.0)
        gains[name] = model.snapshot().velocity_mps[0]
    assert gains["4wd"] >= 1.5 * gains["fwd"] > 0.0


def test_limited_slip_beats_open_differential_on_split_friction():
    """Left wheels on ice, right on dry: the open differential spins the ice wheel and limits
    both to its torque; the limited-slip coupling sends torque to the dry side."""
    split = TerrainParams(zones=(FrictionZone(surface="ice", polygon_m=(
        (-50.0, 0.0), (400.0, 0.0), (400.0, 10.0), (-50.0, 10.0))),))
    speeds = {}
    for name, car in (("open", CAR), ("lsd", with_drivetrain(differential="limited_slip",
                                                            limited_slip_nms=30.0))):
        model = Full14Model(car, "rk4", split)
        drive(model, Controls(throttle=1.0), 3.0)
        speeds[name] = model.snapshot()
    assert speeds["open"].wheel_speed_radps[0] > 5 * speeds["open"].wheel_speed_radps[1]
    assert speeds["lsd"].velocity_mps[0] > 2.0 * speeds["open"].velocity_mps[0]
    assert math.isfinite(speeds["lsd"].rpy_rad[2])
