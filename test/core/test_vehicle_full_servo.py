"""Paper 000 PD-servo trajectory follower driving the 14-DOF model."""
import math
from pathlib import Path

import numpy as np
import pytest

from vehicle_sim.core.vehicle.factory import make_model
from vehicle_sim.core.vehicle.params import load_vehicle
from vehicle_sim.core.vehicle.servo import (
    PDServo, ServoParams, lead_in, servo_vehicle, turn_direction)

CAR = load_vehicle(Path(__file__).resolve().parents[2] / "config" / "vehicles" / "medium_car.yaml")


def test_turn_direction_is_eq_2_of_paper_000():
    """D = d_up . (u x d_fw): a target on the left gives D < 0, on the right D > 0."""
    d, theta = turn_direction(np.zeros(2), np.array([1.0, 1.0]), np.array([1.0, 0.0]))
    assert d < 0.0 and theta == pytest.approx(math.pi / 4)
    d, theta = turn_direction(np.zeros(2), np.array([0.0, -2.0]), np.array([1.0, 0.0]))
    assert d > 0.0 and theta == pytest.approx(math.pi / 2)


def test_lead_in_is_a_straight_run_up_along_the_first_tangent():
    t = np.arange(0.0, 1.0, 0.1)
    xy = np.column_stack([np.cos(t), np.sin(t)])
    times, points = lead_in(t, xy, 0.5)
    extra = len(points) - len(xy)
    assert extra >= 1 and np.linalg.norm(points[0] - xy[0]) >= 0.5
    step = xy[1] - xy[0]
    assert np.allclose(np.diff(points[:extra + 1], axis=0), step)
    assert np.allclose(np.diff(times), 0.1)


def test_bad_trajectories_are_refused():
    with pytest.raises(ValueError, match="strictly increasing"):
        PDServo(ServoParams(), servo_vehicle(CAR), np.array([0.0, 0.0]), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="matching"):
        PDServo(ServoParams(), servo_vehicle(CAR), np.array([0.0, 1.0]), np.zeros((3, 2)))


def test_servo_follows_a_figure_eight():
    """Figure eight 80 m x 40 m in 40 s (up to 8.9 m/s, a_y up to ~2.5 m/s^2) sampled at 30
    frames/s; full14 at 1 kHz, servo at 100 Hz. Distance to the trajectory point of the same
    time: max < 1.0 m, mean < 0.5 m."""
    radius, omega = 20.0, 2 * math.pi / 40.0
    t = np.arange(0.0, 40.0 + 1e-9, 1 / 30)
    xy = np.column_stack([2 * radius * np.sin(omega * t), radius * np.sin(2 * omega * t)])
    servo = PDServo(ServoParams(), servo_vehicle(CAR), t, xy)
    model = make_model("full14", CAR, "rk4")
    v0, p0 = servo.vel[0], servo.xy[0]
    model.reset(p0[0], p0[1], math.atan2(v0[1], v0[0]), float(np.linalg.norm(v0)))
    now, errors, controls = servo.start_time_s, [], None
    for k in range(round((40.0 - now) / 1e-3)):
        if k % 10 == 0:
            snap = model.snapshot()
            yaw = snap.rpy_rad[2]
            c, s = math.cos(yaw), math.sin(yaw)
            vb = snap.velocity_mps
            velocity = np.array([c * vb[0] - s * vb[1], s * vb[0] + c * vb[1]])
            controls = servo.command(now, snap.position_m, yaw, velocity)
            if now >= 0.0:
                errors.append(np.linalg.norm(servo.target(now)[0] - snap.position_m[:2]))
        model.step(controls, 1e-3)
        now += 1e-3
    assert len(errors) > 3900
    assert max(errors) < 1.0 and np.mean(errors) < 0.5
