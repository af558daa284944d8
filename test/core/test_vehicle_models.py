"""Single-track and kinematic models against analytic results (physical tolerances stated)."""
import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from vehicle_sim.core.units import GRAVITY_MPS2
from vehicle_sim.core.vehicle.factory import make_model, simulate
from vehicle_sim.core.vehicle.interface import Controls
from vehicle_sim.core.vehicle.params import VehicleParams, load_vehicle
from vehicle_sim.core.vehicle.single_track import S_R, S_U, S_X, controls_array

CAR = load_vehicle(Path(__file__).resolve().parents[2] / "config" / "vehicles" / "medium_car.yaml")
G = GRAVITY_MPS2


def variant(car: VehicleParams = CAR, *, mu: float | None = None, resist: bool = True,
            rear_coeff_scale: float = 1.0) -> VehicleParams:
    """CAR with another friction, drag/rolling resistance off, or a scaled rear stiffness."""
    tyre = dataclasses.replace(
        car.tyre, friction_coefficient=mu or car.tyre.friction_coefficient,
        rear_cornering_coeff_per_rad=car.tyre.rear_cornering_coeff_per_rad * rear_coeff_scale,
        rolling_resistance_coeff=car.tyre.rolling_resistance_coeff if resist else 0.0)
    aero = car.aero if resist else dataclasses.replace(car.aero, drag_area_m2=0.0)
    return dataclasses.replace(car, tyre=tyre, aero=aero)


def run(kind, x0, controls: Controls, car, dt=1e-3, n=1000, integrator="rk4"):
    return simulate(kind, np.asarray(x0, float), controls_array(controls)[None], car, dt, n,
                    integrator)


def st0(speed):
    return [0.0, 0.0, 0.0, speed, 0.0, 0.0]


# --- braking ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind, x0", [("single_track", st0(20.0)),
                                      ("kinematic", [0.0, 0.0, 0.0, 20.0])])
@pytest.mark.parametrize("mu", [1.0, 0.3])
def test_full_brake_distance_is_v2_over_2_mu_g(kind, x0, mu):
    """No drag/rolling resistance: distance v0^2 / (2 mu g) within 0.05 m (step 1 ms)."""
    traj = run(kind, x0, Controls(brake=1.0), variant(mu=mu, resist=False), n=9000)
    speed = traj[:, 3]
    assert speed[-1] == 0.0 and speed.min() >= 0.0
    assert traj[-1, 0] == pytest.approx(20.0 ** 2 / (2 * mu * G), abs=0.05)
    assert abs(traj[-1, 1]) < 1e-9


def test_full_brake_distance_with_drag_and_rolling_resistance():
    """dv/dt = -(mu + c_rr) g - k v^2 integrates to ln(1 + k v0^2 / c) / (2 k), within 0.05 m."""
    mu, crr = CAR.tyre.friction_coefficient, CAR.tyre.rolling_resistance_coeff
    k = 0.5 * CAR.aero.air_density_kgpm3 * CAR.aero.drag_area_m2 / CAR.chassis.mass_kg
    c = (mu + crr) * G
    traj = run("single_track", st0(20.0), Controls(brake=1.0), CAR, n=4000)
    assert traj[-1, S_X] == pytest.approx(math.log(1 + k * 400.0 / c) / (2 * k), abs=0.05)


@pytest.mark.parametrize("integrator", ["euler", "midpoint", "rk4"])
@pytest.mark.parametrize("kind", ["single_track", "kinematic"])
def test_brake_to_rest_never_reverses(kind, integrator):
    """Braking from 3 m/s (forward) and -3 m/s (reverse gear) ends exactly at rest and stays."""
    for speed, gear in ((3.0, 1), (-3.0, -1)):
        x0 = st0(speed) if kind == "single_track" else [0.0, 0.0, 0.0, speed]
        traj = run(kind, x0, Controls(brake=0.6, gear=gear, steer_rad=0.2), CAR, dt=0.01,
                   n=300, integrator=integrator)
        v = traj[:, 3]
        assert np.all(v * np.sign(speed) >= 0.0) and np.all(v[-50:] == 0.0)
        assert np.all(traj[-50:, :3] == traj[-1, :3])  # parked: no creeping


def test_sideways_slide_stops_in_v2_over_2_mu_g_without_yawing():
    """Sliding sideways at 10 m/s (u = 0): saturated tyres stop it at mu g (within 0.05 m)."""
    car = variant(resist=False)
    traj = run("single_track", [0.0, 0.0, 0.0, 0.0, 10.0, 0.0], Controls(brake=1.0), car, n=3000)
    assert traj[-1, 1] == pytest.approx(100.0 / (2 * car.tyre.friction_coefficient * G), abs=0.05)
    assert np.all(traj[:, [0, 2, S_U, S_R]] == 0.0)


# --- standstill and inputs ----------------------------------------------------------------
@pytest.mark.parametrize("kind", ["single_track", "kinematic"])
@pytest.mark.parametrize("controls", [Controls(), Controls(gear=0, steer_rad=0.4),
                                      Controls(throttle=0.2, brake=1.0)])
def test_standstill_stays_exactly_at_rest(kind, controls):
    model = make_model(kind, CAR, "rk4")
    model.reset(x_m=5.0, y_m=-2.0, yaw_rad=0.7)
    for _ in range(500):
        model.step(controls, 0.002)
    snap = model.snapshot()
    assert np.array_equal(snap.position_m, [5.0, -2.0, 0.0]) and snap.rpy_rad[2] == 0.7
    assert not np.any(snap.velocity_mps) and not np.any(snap.angular_velocity_radps)
    assert not np.any(snap.acceleration_mps2) and np.all(np.isfinite(snap.wheel_slip_ratio))


@pytest.mark.parametrize("kind", ["single_track", "kinematic"])
def test_reverse_gear_drives_backwards_up_to_its_limit(kind):
    model = make_model(kind, CAR, "rk4")
    model.reset()
    for _ in range(3000):  # 30 s at full throttle
        model.step(Controls(throttle=1.0, gear=-1), 0.01)
    snap = model.snapshot()
    assert snap.position_m[0] < -100.0 and snap.gear == -1
    assert snap.velocity_mps[0] == pytest.approx(-CAR.powertrain.max_reverse_speed_mps, abs=0.1)


def test_steer_beyond_limit_is_clamped():
    model = make_model("single_track", CAR, "euler")
    model.reset(speed_mps=2.0)
    model.step(Controls(steer_rad=2.0), 0.01)
    assert model.snapshot().steer_rad == CAR.steering.max_road_wheel_angle_rad


def test_constant_power_acceleration_above_traction_limit():
    """At 25 m/s full throttle gives P / u / m minus drag and rolling resistance (within 1%)."""
    model = make_model("single_track", CAR, "rk4")
    model.reset(speed_mps=25.0)
    model.step(Controls(throttle=1.0), 1e-4)
    u = model.snapshot().velocity_mps[0]
    m = CAR.chassis.mass_kg
    resist = 0.5 * CAR.aero.air_density_kgpm3 * CAR.aero.drag_area_m2 * u * u \
        + CAR.tyre.rolling_resistance_coeff * m * G
    expected = (CAR.powertrain.max_power_w / u - resist) / m
    assert model.snapshot().acceleration_mps2[0] == pytest.approx(expected, rel=0.01)


# --- turning ------------------------------------------------------------------------------
def _circle_radius(xy: np.ndarray) -> float:
    """Least-squares (Kasa) circle fit radius of 2-D points."""
    a = np.column_stack([2 * xy[:, 0], 2 * xy[:, 1], np.ones(len(xy))])
    b = (xy ** 2).sum(axis=1)
    cx, cy, c = np.linalg.lstsq(a, b, rcond=None)[0]
    return math.sqrt(c + cx * cx + cy * cy)


@pytest.mark.parametrize("kind, speed", [("kinematic", 2.5), ("single_track", 0.5),
                                         ("single_track", 1.5), ("single_track", 2.5)])
def test_low_speed_turning_radius_of_rear_axle_is_L_over_tan_delta(kind, speed):
    """Rear-axle path radius L / tan(delta) within 1% (delta = 0.1 rad, 20 s, no resistances)."""
    delta, car = 0.1, variant(resist=False)
    x0 = st0(speed) if kind == "single_track" else [0.0, 0.0, 0.0, speed]
    traj = run(kind, x0, Controls(steer_rad=delta), car, dt=0.01, n=2000)
    yaw = traj[:, 2]
    b = car.chassis.cg_to_rear_axle_m
    rear = np.column_stack([traj[:, 0] - b * np.cos(yaw), traj[:, 1] - b * np.sin(yaw)])
    expected = car.chassis.wheelbase_m / math.tan(delta)
    assert _circle_radius(rear[1000:]) == pytest.approx(expected, rel=0.01)


@pytest.mark.parametrize("rear_scale", [1.0, 2.0, 0.7])  # neutral, understeer, oversteer
def test_steady_state_yaw_rate_matches_linear_single_track(rear_scale):
    """r = u delta / (L + K_us u^2), K_us = m/L (b/Cf - a/Cr), at 15 m/s, delta 5 mrad (1%)."""
    car = variant(resist=False, rear_coeff_scale=rear_scale)
    delta = 0.005
    traj = run("single_track", st0(15.0), Controls(steer_rad=delta), car, dt=2e-3, n=2500)
    u, r = traj[-1, S_U], traj[-1, S_R]
    expected = u * delta / (car.chassis.wheelbase_m + car.understeer_gradient_s2pm() * u * u)
    assert r == pytest.approx(expected, rel=0.01)


def test_snapshot_lateral_acceleration_is_u_times_r_in_steady_turn():
    model = make_model("single_track", variant(resist=False), "rk4")
    model.reset(speed_mps=12.0)
    for _ in range(1500):
        model.step(Controls(steer_rad=0.02), 2e-3)
    snap = model.snapshot()
    u, r = snap.velocity_mps[0], snap.angular_velocity_radps[2]
    assert snap.acceleration_mps2[1] == pytest.approx(u * r, abs=0.01)
    assert snap.angular_acceleration_radps2[2] == pytest.approx(0.0, abs=1e-3)
    assert snap.wheel_slip_angle_rad[0] > 0.0 and snap.aligning_moment_nm < 0.0


def test_kinematic_snapshot_body_velocity_points_at_beta():
    model = make_model("kinematic", CAR, "rk4")
    model.reset(speed_mps=5.0)
    model.step(Controls(steer_rad=0.3), 1e-3)
    snap = model.snapshot()
    a, b = CAR.chassis.cg_to_front_axle_m, CAR.chassis.cg_to_rear_axle_m
    beta = math.atan(b * math.tan(0.3) / (a + b))
    assert math.atan2(snap.velocity_mps[1], snap.velocity_mps[0]) == pytest.approx(beta, abs=1e-12)


# --- integrator convergence ---------------------------------------------------------------
@pytest.mark.parametrize("integrator, order", [("euler", 1), ("midpoint", 2), ("rk4", 4)])
def test_integrator_global_error_order_on_single_track(integrator, order):
    """Log-log slope of the 1 s end-state error vs dt within 0.3 of the theoretical order."""
    x0 = [0.0, 0.0, 0.0, 15.0, -0.3, 0.1]  # slip angles keep their sign (Fiala is C1 at 0)
    controls = Controls(steer_rad=0.04, throttle=0.3)
    reference = run("single_track", x0, controls, CAR, dt=1e-4, n=10000)[-1]
    dts = np.array([0.04, 0.02, 0.01, 0.005])
    errors = [np.max(np.abs(run("single_track", x0, controls, CAR, dt=dt, n=round(1.0 / dt),
                                integrator=integrator)[-1] - reference)) for dt in dts]
    slope = np.polyfit(np.log(dts), np.log(errors), 1)[0]
    assert slope == pytest.approx(order, abs=0.3)

