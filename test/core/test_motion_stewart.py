"""Hexapod IK/FK round trip, stroke and joint checks, and the 2/3-DOF rig mappings."""
import math

import numpy as np
import pytest

from vehicle_sim.core.config import ConfigError, build
from vehicle_sim.core.motion.params import StewartParams, VerticalRigParams
from vehicle_sim.core.motion.stewart import StewartPlatform, VerticalActuatorRig

HEX = StewartPlatform(StewartParams())


def test_neutral_and_pure_heave_lengths_match_geometry():
    p = StewartParams()
    b, q = np.array(p.base_joints_m[0]), np.array(p.platform_joints_m[0])
    dxy2 = float(np.sum((q - b)[:2] ** 2))
    for z in (0.0, 0.05, -0.05):
        expected = math.sqrt(dxy2 + (p.neutral_height_m + z) ** 2)
        assert HEX.lengths(np.array([0, 0, z, 0, 0, 0])) == pytest.approx(expected, abs=1e-12)


def test_ik_fk_round_trip_for_random_reachable_poses():
    rng = np.random.default_rng(6)
    span = np.array([0.08, 0.08, 0.05, 0.15, 0.15, 0.2])
    checked = 0
    while checked < 40:
        pose = rng.uniform(-span, span)
        ik = HEX.inverse(pose)
        if not ik.ok:
            continue
        found = HEX.forward(ik.lengths_m)
        assert HEX.lengths(found) == pytest.approx(ik.lengths_m, abs=1e-6)
        assert found == pytest.approx(pose, abs=1e-6)  # and it is the same pose
        checked += 1


def test_out_of_stroke_and_joint_angle_limits_are_flagged():
    ik = HEX.inverse(np.array([0.0, 0.0, 0.2, 0.0, 0.0, 0.0]))
    assert not ik.ok and any("outside" in s for s in ik.problems)
    assert np.all(ik.actuator > 1.0)  # normalised beyond the stroke, so the caller can see it
    stiff = StewartPlatform(StewartParams(max_joint_angle_rad=math.radians(2.0)))
    ik = stiff.inverse(np.array([0.05, 0.0, 0.0, 0.0, 0.0, 0.0]))
    assert not ik.ok and any("joint angle" in s for s in ik.problems)
    assert not HEX.inverse(np.array([np.nan, 0, 0, 0, 0, 0])).ok


def test_geometry_validation():
    with pytest.raises(ConfigError, match="stroke"):
        build(StewartParams, {"leg_min_m": 0.7, "leg_max_m": 0.8}, source="t")
    with pytest.raises(ConfigError, match="exactly 6"):
        build(StewartParams, {"base_joints_m": [[0, 0, 0]] * 5}, source="t")


def test_two_dof_rig_pitch_and_roll_extensions():
    rig = VerticalActuatorRig(VerticalRigParams())  # actuators at (-0.4, +-0.25), 0.1 m stroke
    theta = 0.05  # nose down: points behind the pivot rise by 0.4 sin(theta)
    ik = rig.inverse(np.array([0, 0, 0.03, 0, theta, 0]))  # heave ignored on 2-DOF
    assert ik.lengths_m == pytest.approx([0.4 * math.sin(theta)] * 2, abs=1e-12)
    assert ik.actuator == pytest.approx(0.5 + 0.4 * math.sin(theta) / 0.1, abs=1e-12)
    phi = 0.05  # + roll raises the left (y > 0) actuator
    ext = rig.inverse(np.array([0, 0, 0, phi, 0, 0])).lengths_m
    assert ext == pytest.approx([0.25 * math.sin(phi), -0.25 * math.sin(phi)], abs=1e-12)
    assert not rig.inverse(np.array([0, 0, 0, 0, 0.2, 0])).ok


def test_three_dof_rig_heave():
    rig = VerticalActuatorRig(VerticalRigParams(
        dof="pitch_roll_heave", attach_xy_m=((0.45, 0.0), (-0.35, 0.3), (-0.35, -0.3))))
    ik = rig.inverse(np.array([0, 0, 0.02, 0, 0, 0]))
    assert ik.ok and ik.lengths_m == pytest.approx([0.02] * 3, abs=1e-12)
