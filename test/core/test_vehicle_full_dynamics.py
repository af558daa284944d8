"""14-DOF model (full14) against analytic results; physical tolerances stated per test."""
import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from vehicle_sim.core.units import GRAVITY_MPS2
from vehicle_sim.core.vehicle.factory import make_model, simulate
from vehicle_sim.core.vehicle.full14.corners import rotation
from vehicle_sim.core.vehicle.full14.magic_formula import SURFACES, mf_pure
from vehicle_sim.core.vehicle.full14.model import Full14Model, equilibrium_state
from vehicle_sim.core.vehicle.full14.packing import pack_full
from vehicle_sim.core.vehicle.full14.state_layout import (
    O_FZ,
    O_RE,
    X_GEAR,
    X_LOCK,
    X_OMEGA,
    X_R,
    X_VX,
    X_X,
    X_Y,
    X_ZW,
)
from vehicle_sim.core.vehicle.full14.terrain import HeightmapParams, Terrain, TerrainParams
from vehicle_sim.core.vehicle.interface import Controls
from vehicle_sim.core.vehicle.params import VehicleParams, load_vehicle
from vehicle_sim.core.vehicle.single_track import controls_array

G = GRAVITY_MPS2
VEHICLES = Path(__file__).resolve().parents[2] / "config" / "vehicles"
CAR = load_vehicle(VEHICLES / "medium_car.yaml")
CLASSES = ("small_car", "medium_car", "large_car", "van", "truck")


def variant(car: VehicleParams = CAR, *, resist: bool = True, load_sensitivity: float | None = None,
            brake_force_n: float | None = None, rear_coeff_scale: float = 1.0) -> VehicleParams:
    """CAR without drag/rolling resistance, with another load sensitivity, brake force or
    rear cornering stiffness."""
    tyre = dataclasses.replace(
        car.tyre, rolling_resistance_coeff=car.tyre.rolling_resistance_coeff if resist else 0.0,
        rear_cornering_coeff_per_rad=car.tyre.rear_cornering_coeff_per_rad * rear_coeff_scale)
    aero = car.aero if resist else dataclasses.replace(car.aero, drag_area_m2=0.0)
    mf = car.magic_formula
    if load_sensitivity is not None:
        mf = dataclasses.replace(mf, load_sensitivity=load_sensitivity)
    brakes = car.brakes
    if brake_force_n is not None:
        brakes = dataclasses.replace(brakes, max_force_n=brake_force_n)
    return dataclasses.replace(car, tyre=tyre, aero=aero, magic_formula=mf, brakes=brakes)


def run(p: np.ndarray, x0: np.ndarray, controls: Controls, dt=1e-3, n=1000, integrator="rk4"):
    return simulate("full14", x0, controls_array(controls)[None], p, dt, n, integrator)


def neutral(x: np.ndarray) -> np.ndarray:
    """The state in neutral with the clutch open (no drivetrain event in the first step)."""
    x = x.copy()
    x[X_GEAR], x[X_LOCK] = 0.0, 0.0
    return x


def body_speed(x: np.ndarray) -> tuple[float, float]:
    vb = rotation(*x[3:6]).T @ x[6:9]
    return float(vb[0]), float(vb[1])


def locked_friction(car: VehicleParams, surface: str) -> float:
    """Longitudinal friction of a locked wheel (kappa = -1) from the Magic Formula written out:
    D = mu_x lambda_mu, B = K_x lambda_K / (C D), lambdas relative to the dry preset."""
    b, c, d, _ = SURFACES[surface]
    bd, cd, dd, _ = SURFACES["dry"]
    lam_mu, lam_k = d / dd, b * c * d / (bd * cd * dd)
    mf = car.magic_formula
    big_d = mf.longitudinal_friction * lam_mu
    big_b = mf.longitudinal_stiffness_per_load * lam_k / (mf.shape_x * big_d)
    return -mf_pure(-1.0, big_b, mf.shape_x, big_d, mf.curvature_x)


# --- statics --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", CLASSES)
def test_static_equilibrium_at_rest_without_drift(name):
    """Every vehicle class at rest: wheel loads sum to m g (1e-9 rel), front/rear split
    = m_s g (b, a) / L + unsprung weight, and nothing moves over 5 s (< 1 mm, < 1e-4 rad)."""
    car = load_vehicle(VEHICLES / f"{name}.yaml")
    model = make_model("full14", car, "rk4")
    model.reset(x_m=3.0, y_m=-2.0, yaw_rad=0.8)
    loads = model.wheel_loads_n()
    c, w = car.chassis, car.wheels
    m_s = c.mass_kg - 2 * (w.front_unsprung_mass_kg + w.rear_unsprung_mass_kg)
    assert loads.sum() == pytest.approx(c.mass_kg * G, rel=1e-9)
    front = m_s * G * c.cg_to_rear_axle_m / c.wheelbase_m + 2 * w.front_unsprung_mass_kg * G
    assert loads[:2].sum() == pytest.approx(front, rel=1e-9)
    for _ in range(5000):
        model.step(Controls(), 1e-3)
    snap = model.snapshot()
    assert np.allclose(snap.position_m[:2], [3.0, -2.0], atol=1e-3)
    assert snap.position_m[2] == pytest.approx(car.body.cg_height_m, abs=1e-3)
    assert np.allclose(snap.rpy_rad, [0.0, 0.0, 0.8], atol=1e-4)
    assert np.abs(snap.velocity_mps).max() < 1e-4


def test_parked_on_a_slope_with_brakes_does_not_creep():
    """5 % ramp (B-spline heightmap), full brake held: after settling (2 s) the body pitches
    with the ground (atan 0.05 within 3 mrad) and moves less than 1 mm in the next 8 s."""
    model = Full14Model(CAR, "rk4", terrain=_ramp(0.05))
    model.reset(x_m=0.0, y_m=0.0, yaw_rad=0.0)
    for _ in range(2000):
        model.step(Controls(brake=1.0, gear=0), 1e-3)
    start = model.snapshot()
    assert start.rpy_rad[1] == pytest.approx(math.atan(0.05), abs=3e-3)  # nose down the slope
    for _ in range(8000):
        model.step(Controls(brake=1.0, gear=0), 1e-3)
    assert np.linalg.norm(model.snapshot().position_m - start.position_m) < 1e-3


def _ramp(grade: float) -> TerrainParams:
    xs = np.arange(-60.0, 61.0, 10.0)
    heights = tuple(tuple(float(-grade * x) for x in xs) for _ in range(5))
    return TerrainParams(heightmap=HeightmapParams(origin_m=(-60.0, -20.0), spacing_m=10.0,
                                                   heights_m=heights))


def test_wheels_follow_a_bump_and_the_suspension_filters_it():
    """A 5 cm Gaussian bump (B-spline heightmap, 0.5 m grid) crossed at ~5 m/s in neutral:
    each wheel centre rises by the bump height (within 15 %), the body by less."""
    xs = np.arange(-10.0, 61.0, 0.5)
    row = tuple(float(0.05 * math.exp(-((x - 20.0) / 1.0) ** 2)) for x in xs)
    terrain = TerrainParams(heightmap=HeightmapParams(
        origin_m=(-10.0, -2.0), spacing_m=0.5, heights_m=(row,) * 9))
    peak = max(Terrain(terrain).height_m(x, 0.0) for x in np.linspace(18.0, 22.0, 801))
    model = Full14Model(CAR, "rk4", terrain=terrain)
    model.reset(speed_mps=5.0)
    z0, body0 = model.state[X_ZW:X_ZW + 4], model.state[2]
    rise, body = np.zeros(4), 0.0
    while model.state[X_X] < 30.0:
        model.step(Controls(gear=0), 1e-3)
        rise = np.maximum(rise, model.state[X_ZW:X_ZW + 4] - z0)
        body = max(body, model.state[2] - body0)
    assert rise == pytest.approx(np.full(4, peak), rel=0.15)
    assert 0.0 < body < rise.min()


def test_free_rolling_down_a_slope():
    """Neutral, no brakes on a 5 % downhill ramp along +x: dv/dt = g (sin t - c_rr cos t) m /
    (m + sum I_w / R^2) within 2 % (wheel inertia included), drag off."""
    car = variant(resist=True)
    car = dataclasses.replace(car, aero=dataclasses.replace(car.aero, drag_area_m2=0.0))
    model = Full14Model(car, "rk4", terrain=_ramp(0.05))
    model.reset(speed_mps=2.0)
    for _ in range(3000):
        model.step(Controls(gear=0), 1e-3)
    v1 = model.snapshot().velocity_mps[0]
    for _ in range(2000):
        model.step(Controls(gear=0), 1e-3)
    v2 = model.snapshot().velocity_mps[0]
    theta = math.atan(0.05)
    r = car.tyre.rolling_radius_m
    m_eff = car.chassis.mass_kg + 4 * car.wheels.spin_inertia_kgm2 / r ** 2
    expected = G * car.chassis.mass_kg / m_eff * (
        math.sin(theta) - car.tyre.rolling_resistance_coeff * math.cos(theta))
    assert (v2 - v1) / 2.0 == pytest.approx(expected, rel=0.02)


# --- longitudinal ---------------------------------------------------------------------------
@pytest.mark.parametrize("surface, v0, tol_m", [("dry", 20.0, 0.5), ("ice", 10.0, 1.0)])
def test_locked_wheel_braking_distance_is_v2_over_2_mu_g(surface, v0, tol_m):
    """Brakes strong enough to lock all wheels, no drag/rolling resistance, no load
    sensitivity: stopping distance v0^2 / (2 mu_lock g), mu_lock = MF at kappa = -1 on the
    surface (dry ~0.84, ice ~0.096), within tol (the first ~50 ms pass the friction peak)."""
    car = variant(resist=False, load_sensitivity=0.0, brake_force_n=40000.0)
    p = pack_full(car, TerrainParams(default_surface=surface))
    traj = run(p, neutral(equilibrium_state(p, speed_mps=v0)), Controls(brake=1.0, gear=0),
               n=int(3.0 * v0 / (locked_friction(car, surface) * G) * 1000))
    mu = locked_friction(car, surface)
    stop = int(np.argmax(traj[:, X_VX] <= 0.0))
    assert stop > 0
    assert traj[stop, X_X] == pytest.approx(v0 ** 2 / (2 * mu * G), abs=tol_m)
    assert abs(traj[-1, X_Y]) < 1e-6 and abs(traj[-1, X_X] - traj[stop, X_X]) < 0.05


def test_longitudinal_load_transfer_is_m_a_h_over_L():
    """Steady braking (no lock, pitch oscillation decayed after 3.5 s): front axle load gain
    = -m a_x h / L with h the height of the total CG (sprung CG and wheel centres), within 3 %
    (pitch and dive change the geometry slightly)."""
    car = variant(resist=False)
    model = make_model("full14", car, "rk4")
    static = model.wheel_loads_n()
    model.reset(speed_mps=25.0)
    for _ in range(3500):
        model.step(Controls(brake=0.4, gear=0), 1e-3)
    snap = model.snapshot()
    loads = model.wheel_loads_n()
    c, w, r = car.chassis, car.wheels, car.tyre.rolling_radius_m
    m_u = 2 * (w.front_unsprung_mass_kg + w.rear_unsprung_mass_kg)
    wheel_centre = r - 0.5 * static.mean() / car.wheels.tyre_vertical_stiffness_npm
    h = ((c.mass_kg - m_u) * car.body.cg_height_m + m_u * wheel_centre) / c.mass_kg
    a_x = snap.acceleration_mps2[0]
    assert a_x < -3.0
    gain = loads[:2].sum() - static[:2].sum()
    assert gain == pytest.approx(-c.mass_kg * a_x * h / c.wheelbase_m, rel=0.03)
    assert loads.sum() == pytest.approx(c.mass_kg * G, rel=0.01)


def test_lateral_load_transfer_is_m_ay_h_over_track():
    """Steady left turn (a_y ~ 3.6 m/s^2): sum over axles of (right - left load) * track / 2
    = m a_y h (total-CG height) within 2 %."""
    car = variant(resist=False)
    model = make_model("full14", car, "rk4")
    static = model.wheel_loads_n()
    model.reset(speed_mps=15.0)
    for _ in range(3000):
        model.step(Controls(steer_rad=0.04, gear=0), 1e-3)
    a_y = model.snapshot().acceleration_mps2[1]
    loads = model.wheel_loads_n()
    c, w, r = car.chassis, car.wheels, car.tyre.rolling_radius_m
    m_u = 2 * (w.front_unsprung_mass_kg + w.rear_unsprung_mass_kg)
    wheel_centre = r - 0.5 * static.mean() / w.tyre_vertical_stiffness_npm
    h = ((c.mass_kg - m_u) * car.body.cg_height_m + m_u * wheel_centre) / c.mass_kg
    moment = 0.5 * ((loads[1] - loads[0]) * car.body.front_track_m
                    + (loads[3] - loads[2]) * car.body.rear_track_m)
    assert a_y > 3.0
    assert moment == pytest.approx(c.mass_kg * a_y * h, rel=0.02)


def test_coasting_energy_loss_equals_drag_and_rolling_work():
    """Neutral coast from 25 m/s for 10 s: loss of kinetic energy (translation + wheel spin)
    equals the integral of drag power k |v|^3 and rolling power c_rr Fz R_e |omega| within 1 %."""
    model = make_model("full14", CAR, "rk4")
    model.reset(speed_mps=25.0)
    k = 0.5 * CAR.aero.air_density_kgpm3 * CAR.aero.drag_area_m2
    crr, iw = CAR.tyre.rolling_resistance_coeff, CAR.wheels.spin_inertia_kgm2

    def energy() -> float:
        x = model.state
        v2 = float(x[X_VX:X_VX + 3] @ x[X_VX:X_VX + 3])
        spin = float(np.sum(x[X_OMEGA:X_OMEGA + 4] ** 2))
        return 0.5 * CAR.chassis.mass_kg * v2 + 0.5 * iw * spin

    def power() -> float:
        x = model.state
        _, out = model.outputs()
        speed = float(np.linalg.norm(x[X_VX:X_VX + 3]))
        re = out[O_RE:O_RE + 4]
        return k * speed ** 3 + crr * float(np.sum(out[O_FZ:O_FZ + 4] * re
                                                  * np.abs(x[X_OMEGA:X_OMEGA + 4])))

    dt, work = 1e-3, 0.0
    e0 = energy()
    p_prev = power()
    for _ in range(10000):
        model.step(Controls(gear=0), dt)
        p_now = power()
        work += 0.5 * (p_prev + p_now) * dt
        p_prev = p_now
    assert e0 - energy() == pytest.approx(work, rel=0.01)
    assert e0 - energy() > 0.2 * e0


@pytest.mark.parametrize("integrator, order", [("euler", 1), ("midpoint", 2), ("rk4", 4)])
def test_integrator_order(integrator, order):
    """Steered coast, 0.4 s: halving dt divides the error by ~2^order (observed order within
    0.3), reference RK4 at dt = 62.5 us."""
    p = pack_full(CAR)
    x0 = neutral(equilibrium_state(p, speed_mps=15.0))
    u = Controls(steer_rad=0.05, gear=0)
    ref = run(p, x0, u, dt=0.4 / 6400, n=6400)[-1, :12]
    errors = [np.abs(run(p, x0, u, dt=0.4 / n, n=n, integrator=integrator)[-1, :12] - ref).max()
              for n in (200, 400)]
    assert math.log2(errors[0] / errors[1]) == pytest.approx(order, abs=0.3)


# --- lateral --------------------------------------------------------------------------------
@pytest.mark.parametrize("rear_scale", [1.5, 0.8])
def test_understeer_gradient_matches_axle_loads_and_cornering_stiffness(rear_scale):
    """Steady turn at 20 m/s, delta = 0.012 rad (a_y ~ 1.5-2.3 m/s^2): K = (delta - L r / u) /
    a_y equals m / L (b / C_f - a / C_r), C = coefficient * axle load, within 1.5e-4 s^2/m
    (understeer with a stiffer rear, oversteer with a softer one)."""
    car = variant(resist=False, rear_coeff_scale=rear_scale)
    model = make_model("full14", car, "rk4")
    loads = model.wheel_loads_n()
    c_f = car.tyre.front_cornering_coeff_per_rad * loads[:2].sum()
    c_r = car.tyre.rear_cornering_coeff_per_rad * loads[2:].sum()
    ch = car.chassis
    k_theory = ch.mass_kg / ch.wheelbase_m * (ch.cg_to_rear_axle_m / c_f
                                              - ch.cg_to_front_axle_m / c_r)
    p = pack_full(car)
    delta = 0.012
    x = run(p, neutral(equilibrium_state(p, speed_mps=20.0)), Controls(steer_rad=delta, gear=0),
            n=6000)[-1]
    u, _ = body_speed(x)
    r = x[X_R]
    k_measured = (delta - ch.wheelbase_m * r / u) / (u * r)
    assert k_measured == pytest.approx(k_theory, abs=1.5e-4)
    assert np.sign(k_measured) == np.sign(k_theory)


@pytest.mark.parametrize("wheel, side", [("front_left", 1.0), ("front_right", -1.0),
                                         ("rear_left", 1.0)])
def test_blow_out_pulls_the_car_to_that_side(wheel, side):
    """A blown tyre (grip x 0.3, radius x 0.85, rolling resistance x 20) at 25 m/s, no
    steering: after 2 s the car has yawed (> 0.5 deg) and moved (> 0.2 m) to that side."""
    model = make_model("full14", CAR, "rk4")
    model.reset(speed_mps=25.0)
    model.set_tyre_fault(wheel, grip_scale=0.3, radius_scale=0.85, rolling_resistance_scale=20.0)
    for _ in range(2000):
        model.step(Controls(gear=0), 1e-3)
    snap = model.snapshot()
    assert side * snap.rpy_rad[2] > math.radians(0.5)
    assert side * snap.position_m[1] > 0.2


def test_external_push_accelerates_the_free_car():
    """A 1500 N push along x at the CG of a car at rest in neutral without brakes (drag off):
    dv/dt = (F - c_rr m g) / (m + sum I_w / R^2) within 3 %; clearing it stops the push."""
    car = dataclasses.replace(CAR, aero=dataclasses.replace(CAR.aero, drag_area_m2=0.0))
    model = Full14Model(car, "rk4")
    model.set_external_wrench((1500.0, 0.0, 0.0))
    for _ in range(1000):
        model.step(Controls(gear=0), 1e-3)
    v1 = model.snapshot().velocity_mps[0]
    for _ in range(1000):
        model.step(Controls(gear=0), 1e-3)
    v2 = model.snapshot().velocity_mps[0]
    r, m = car.tyre.rolling_radius_m, car.chassis.mass_kg
    m_eff = m + 4 * car.wheels.spin_inertia_kgm2 / r ** 2
    assert v2 - v1 == pytest.approx((1500.0 - car.tyre.rolling_resistance_coeff * m * G) / m_eff,
                                    rel=0.03)
    model.set_external_wrench()
    model.step(Controls(gear=0), 1e-3)
    assert model.snapshot().acceleration_mps2[0] < 0.0
    with pytest.raises(ValueError, match="finite"):
        model.set_external_wrench((float("nan"), 0.0, 0.0))


def test_off_centre_push_yaws_the_car():
    """A lateral push ahead of the CG turns the nose away from it (positive yaw for +y)."""
    model = Full14Model(CAR, "rk4")
    model.reset(speed_mps=10.0)
    for _ in range(500):
        x = model.state
        nose = x[:3] + rotation(*x[3:6]) @ np.array([1.5, 0.0, 0.0])
        model.set_external_wrench((0.0, 3000.0, 0.0), nose)
        model.step(Controls(gear=0), 1e-3)
    assert model.snapshot().rpy_rad[2] > math.radians(1.0)


def test_tyre_fault_rejects_bad_values():
    model = make_model("full14", CAR, "euler")
    with pytest.raises(ValueError, match="grip_scale"):
        model.set_tyre_fault(0, grip_scale=-0.1)
    with pytest.raises(ValueError, match="wheel"):
        model.set_tyre_fault(7)


def test_snapshot_outputs_while_cornering():
    """Slip angles, aligning moment and lateral acceleration have consistent signs in a
    left turn; slip ratio follows 001's (omega - omega0) / omega0."""
    model = make_model("full14", CAR, "rk4")
    model.reset(speed_mps=15.0)
    for _ in range(3000):
        model.step(Controls(steer_rad=0.03, throttle=0.2), 1e-3)
    snap = model.snapshot()
    assert snap.angular_velocity_radps[2] > 0.0 and snap.acceleration_mps2[1] > 0.0
    assert np.all(snap.wheel_slip_angle_rad > 0.0)  # + slip -> + (leftward) force
    assert snap.aligning_moment_nm < 0.0  # the front tyres push the steering back to centre
    assert model.steering_wheel_torque_nm() == pytest.approx(
        snap.aligning_moment_nm / CAR.body.steering_ratio)
    assert snap.steer_rad == 0.03 and snap.gear >= 1 and snap.engine_rpm > 800.0
    _, out = model.outputs()
    v_rl = snap.velocity_mps[0] - snap.angular_velocity_radps[2] * CAR.body.rear_track_m / 2
    omega0 = v_rl / out[O_RE + 2]  # rear-left wheel: not steered
    assert snap.wheel_slip_ratio[2] == pytest.approx(
        (snap.wheel_speed_radps[2] - omega0) / omega0, abs=1e-3)
