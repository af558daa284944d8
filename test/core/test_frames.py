"""The reference-point law (core.frames) against rigid-body results worked by hand."""
import math
from pathlib import Path

import numpy as np
import pytest

from vehicle_sim.core.config import ConfigError, build
from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.frames import (
    PoseTwist,
    at_reference,
    cg_to_reference_m,
    cross3,
    mount_from_reference_m,
    point_velocity,
    specific_force,
    vehicle_reference_m,
)
from vehicle_sim.core.vehicle.factory import make_model
from vehicle_sim.core.vehicle.interface import Controls
from vehicle_sim.core.vehicle.params import load_vehicle

CONFIG = Path(__file__).resolve().parents[2] / "config" / "vehicles"
CAR = load_vehicle(CONFIG / "medium_car.yaml")


def body(x=0.0, y=0.0, yaw=0.0, v=(0.0, 0.0, 0.0), w=(0.0, 0.0, 0.0)) -> PoseTwist:
    return PoseTwist(np.array([x, y, 0.0]), np.array([0.0, 0.0, yaw]), np.array(v, float),
                     np.array(w, float))


def test_the_cg_is_the_identity():
    r = cg_to_reference_m("cg", 1.5, 0.55)
    state = body(3.0, 4.0, 0.3, v=(10.0, 0.4, 0.0), w=(0.0, 0.0, 0.5))
    ref = at_reference(state, r)
    for a, b in ((ref.position_m, state.position_m), (ref.velocity_mps, state.velocity_mps)):
        assert np.array_equal(a, b)


def test_rear_axle_of_a_yawing_car_moves_slower_sideways_by_yaw_rate_times_b():
    """CG at (10, 5) heading north (yaw 90 deg), 10 m/s forward, 0.3 m/s left, 0.5 rad/s left
    turn, b = 1.4 m, CG 0.5 m above the ground: the rear axle on the ground is 1.4 m south of
    and 0.5 m below the CG, and moves at (10, 0.3 - 0.5 * 1.4) = (10, -0.4) m/s in body axes."""
    r = cg_to_reference_m("rear_axle", 1.4, 0.5)
    assert np.allclose(r, [-1.4, 0.0, -0.5])
    ref = at_reference(body(10.0, 5.0, math.pi / 2, v=(10.0, 0.3, 0.0), w=(0.0, 0.0, 0.5)), r)
    assert np.allclose(ref.position_m, [10.0, 3.6, -0.5], atol=1e-12)
    assert np.allclose(ref.velocity_mps, [10.0, -0.4, 0.0], atol=1e-12)
    assert np.allclose(ref.rpy_rad, [0.0, 0.0, math.pi / 2])
    speed_cg, speed_ref = math.hypot(10.0, 0.3), math.hypot(10.0, -0.4)
    assert speed_ref > speed_cg  # the rear axle swings out on this slipping car


def test_a_pitched_body_moves_the_ground_point_along_its_own_axes():
    """Nose down 0.1 rad: the point 1.4 m behind and 0.5 m below the CG rises by
    1.4 sin(0.1) and moves 0.5 sin(0.1) forward (R(pitch) r)."""
    r = np.array([-1.4, 0.0, -0.5])
    pitched = PoseTwist(np.zeros(3), np.array([0.0, 0.1, 0.0]), np.zeros(3), np.zeros(3))
    p = at_reference(pitched, r).position_m
    c, s = math.cos(0.1), math.sin(0.1)
    assert np.allclose(p, [-1.4 * c - 0.5 * s, 0.0, 1.4 * s - 0.5 * c], atol=1e-12)


def test_kinematic_model_rear_axle_has_no_lateral_velocity():
    """The kinematic bicycle rolls without slip at the rear wheel: seen from the rear axle the
    turning car's lateral velocity vanishes, while the CG's does not (v sin(beta) > 0)."""
    model = make_model("kinematic", CAR, "rk4")
    model.reset(speed_mps=8.0)
    for _ in range(2000):
        model.step(Controls(steer_rad=0.1, throttle=0.2), 1e-3)
    s = model.snapshot()
    assert s.velocity_mps[1] > 0.05 and s.angular_velocity_radps[2] > 0.1
    r = vehicle_reference_m("rear_axle", CAR, "kinematic")
    ref = at_reference(PoseTwist(s.position_m, s.rpy_rad, s.velocity_mps,
                                 s.angular_velocity_radps), r)
    assert abs(ref.velocity_mps[1]) < 1e-6
    assert ref.velocity_mps[0] == pytest.approx(s.velocity_mps[0], abs=1e-12)


def test_sensor_mount_from_the_rear_axle():
    r = cg_to_reference_m("rear_axle", 1.4, 0.5)
    assert mount_from_reference_m((0.2, 0.0, 0.3), r) == pytest.approx((1.6, 0.0, 0.8))
    assert mount_from_reference_m((0.2, 0.0, 0.3), np.zeros(3)) == (0.2, 0.0, 0.3)


def test_reference_height_is_the_full_models_cg_height_and_zero_for_planar_models():
    full = load_vehicle(CONFIG / "medium_car.yaml")
    assert vehicle_reference_m("rear_axle", full, "single_track")[2] == 0.0
    if full.body is not None:
        assert vehicle_reference_m("rear_axle", full, "full14")[2] == -full.body.cg_height_m


def test_unknown_reference_point_and_odom_in_map_out_of_bounds_are_refused():
    with pytest.raises(ValueError, match="front_bumper"):
        cg_to_reference_m("front_bumper", 1.4, 0.5)
    with pytest.raises(ConfigError, match="base_link"):
        build(DynamicsParams, {"base_link": "front_bumper"}, source="test")
    with pytest.raises(ConfigError, match="yaw_rad"):
        build(DynamicsParams, {"odom_in_map": {"yaw_rad": 7.0}}, source="test")


def test_a_reference_pose_in_map_gives_the_cg_in_odom():
    """The inverse of map -> odom, then back from the reference point: placing the CG there and
    looking from the reference point again gives the pose that was asked for, in odom."""
    from vehicle_sim.core.frames import OdomInMap, cg_pose_in_odom
    odom_in_map = OdomInMap(x_m=100.0, y_m=-50.0, yaw_rad=0.3)
    r = np.array([-1.4, 0.3, 0.0])  # 1.4 m behind the CG and 0.3 m to its left
    x, y, yaw = cg_pose_in_odom(110.0, -30.0, 1.2, True, odom_in_map, r)
    assert yaw == pytest.approx(0.9)
    c, s = math.cos(0.3), math.sin(0.3)
    ref_odom = (c * 10.0 + s * 20.0, -s * 10.0 + c * 20.0)
    cy, sy = math.cos(yaw), math.sin(yaw)
    back = (x + cy * r[0] - sy * r[1], y + sy * r[0] + cy * r[1])  # CG + R(yaw) r
    assert back == pytest.approx(ref_odom, abs=1e-12)
    assert cg_pose_in_odom(3.0, 4.0, 4.0, False, odom_in_map, np.zeros(3)) == \
        pytest.approx((3.0, 4.0, 4.0 - 2 * math.pi))  # in odom already; yaw wrapped


def test_cross3_is_np_cross_bit_for_bit_for_arrays_and_sequences():
    rng = np.random.default_rng(4)
    for _ in range(200):
        a, b = rng.normal(size=3), rng.normal(size=3)
        assert cross3(a, b).tobytes() == np.cross(a, b).tobytes()
        assert cross3(a.tolist(), tuple(b)).tobytes() == np.cross(a, b).tobytes()


def test_point_velocity_and_specific_force_of_a_point_on_a_turning_body():
    # turning at 0.5 rad/s about z, a point 2 m ahead of the CG moves 1 m/s to the left and
    # feels 0.5 m/s^2 centripetal (towards the CG) plus alpha x r = 0.2 * 2 to the left
    r, w = [2.0, 0.0, 0.0], [0.0, 0.0, 0.5]
    assert point_velocity([10.0, 0.0, 0.0], w, r).tolist() == [10.0, 1.0, 0.0]
    f = specific_force([0.0, 0.0, 0.0], [0.0, 0.0, 0.2], w, r, 0.0, 0.0, 9.8)
    assert f == pytest.approx((-0.5, 0.4, 9.8), abs=1e-12)
    # pitched nose up by 0.1 rad at rest: gravity appears backwards on x
    f = specific_force([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], r, 0.0, 0.1, 9.8)
    assert f == pytest.approx((-9.8 * math.sin(0.1), 0.0, 9.8 * math.cos(0.1)), abs=1e-12)
