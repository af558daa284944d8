"""The planar models' snapshot kernels and step against the Python code they replaced (bit for bit,
over states that reach every branch), and the held controls a model reuses between steps."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from vehicle_sim.core.vehicle.factory import make_model
from vehicle_sim.core.vehicle.interface import Controls, VehicleSnapshot
from vehicle_sim.core.vehicle.params import (
    P_A, P_CAF, P_FZF, P_FZR, P_MU, P_TRAIL, load_vehicle)
from vehicle_sim.core.vehicle.single_track import (
    S_R, S_U, S_V, S_X, S_Y, S_YAW, U_GEAR, blend_weight, brake_demands, single_track_f,
    tyre_state)

CAR = load_vehicle(Path(__file__).resolve().parents[2] / "config" / "vehicles" / "medium_car.yaml")


def reference_snapshot(x, u, p, radius_m) -> VehicleSnapshot:
    """SingleTrackModel.snapshot as it was: Python around the jitted forces."""
    delta, fxf, fxr, _, fyf, _, taf, tar, capf = np.array(tyre_state(x, u, p))
    dx = single_track_f(x, u, p)
    vx, vy, r = x[S_U], x[S_V], x[S_R]
    w = blend_weight(math.hypot(vx, vy), p)
    bf, br = brake_demands(u, p)
    v_front = vx * math.cos(delta) + (vy + p[P_A] * r) * math.sin(delta)

    def locked(fx, demand, limit):
        return demand > 0.0 and vx != 0.0 and fx * vx < 0.0 and abs(fx) >= limit * (1 - 1e-9)

    spin, slip = np.zeros(4), np.zeros(4)
    for i, (v, lock) in enumerate(((v_front, locked(fxf, bf, p[P_MU] * p[P_FZF])),) * 2 +
                                  ((vx, locked(fxr, br, p[P_MU] * p[P_FZR])),) * 2):
        spin[i] = 0.0 if lock else v / radius_m
        slip[i] = (spin[i] * radius_m - v) / max(abs(v), 0.5)
    moment = 0.0
    if capf > 0.0:
        lam = min(p[P_CAF] * abs(taf) / (3.0 * capf), 1.0)
        moment = -(p[P_TRAIL] * 3.0 * (1.0 - lam) ** 3 / (3.0 - 3.0 * lam + lam * lam)) * fyf
    alpha_f, alpha_r = w * math.atan(taf), w * math.atan(tar)
    return VehicleSnapshot(
        position_m=np.array([x[S_X], x[S_Y], 0.0]), rpy_rad=np.array([0.0, 0.0, x[S_YAW]]),
        velocity_mps=np.array([vx, vy, 0.0]), angular_velocity_radps=np.array([0.0, 0.0, r]),
        acceleration_mps2=np.array([dx[S_U] - vy * r, dx[S_V] + vx * r, 0.0]),
        angular_acceleration_radps2=np.array([0.0, 0.0, dx[S_R]]),
        wheel_speed_radps=spin, wheel_slip_ratio=slip,
        wheel_slip_angle_rad=np.array([alpha_f, alpha_f, alpha_r, alpha_r]),
        steer_rad=float(delta), gear=int(u[U_GEAR]), engine_rpm=0.0,
        aligning_moment_nm=w * moment)


def cases(n: int):
    """States from standstill to 40 m/s forward and back, sliding, with every kind of input."""
    rng = np.random.default_rng(11)
    speeds = np.concatenate([[0.0, 0.3, 1.0, 2.0, -1.5], rng.uniform(-8.0, 40.0, n - 5)])
    for k, speed in enumerate(speeds):
        x = np.array([rng.uniform(-500, 500), rng.uniform(-500, 500), rng.uniform(-4, 4),
                      speed, rng.normal(0.0, 1.0) * (k % 3 == 0), rng.normal(0.0, 0.5)])
        c = Controls(steer_rad=rng.uniform(-0.7, 0.7), throttle=rng.uniform() * (k % 2),
                     brake=rng.uniform() * (k % 4 == 1) + (k % 7 == 3), gear=int(k % 3) - 1,
                     clutch=rng.uniform() * (k % 5 == 0), handbrake=k % 11 == 4)
        yield x, c


def test_single_track_snapshot_is_the_python_one_bit_for_bit():
    model = make_model("single_track", CAR, "rk4")
    locked = blended = moments = 0
    for x, c in cases(3000):
        model._x = x
        model._hold(c)
        snap = model.snapshot()
        ref = reference_snapshot(x, model._u, model._p, CAR.tyre.rolling_radius_m)
        assert np.array_equal(snap.to_vector(), ref.to_vector()), (x, c)
        assert (type(snap.steer_rad), type(snap.gear)) == (float, int)
        locked += bool(np.any(snap.wheel_speed_radps == 0.0) and x[S_U] != 0.0)
        blended += 0.0 < blend_weight(math.hypot(x[S_U], x[S_V]), model._p) < 1.0
        moments += snap.aligning_moment_nm != 0.0
    assert min(locked, blended, moments) > 50  # the branches were all taken


@pytest.mark.parametrize("kind", ["single_track", "kinematic", "full14"])
def test_same_controls_object_or_equal_ones_give_the_same_steps(kind):
    """A model reuses the input array of the Controls object it holds; equal new objects, and
    the same object again after a reset (which holds released controls), step alike."""
    held, fresh = make_model(kind, CAR, "rk4"), make_model(kind, CAR, "rk4")
    c = Controls(steer_rad=0.1, throttle=0.6)
    for model in (held, fresh):
        model.reset(0.0, 0.0, 0.3, 5.0)
    for _ in range(50):
        held.step(c, 1e-3)
        fresh.step(Controls(steer_rad=0.1, throttle=0.6), 1e-3)
    assert np.array_equal(held.state, fresh.state)
    held.reset(0.0, 0.0, 0.3, 5.0)
    assert held.snapshot().steer_rad == 0.0  # released by the reset
    other = make_model(kind, CAR, "rk4")
    other.reset(0.0, 0.0, 0.3, 5.0)
    held.step(c, 1e-3)
    other.step(Controls(steer_rad=0.1, throttle=0.6), 1e-3)
    assert np.array_equal(held.state, other.state)
    assert held.snapshot().steer_rad == pytest.approx(0.1)
