"""Stewart-platform (6-6 hexapod) kinematics and vertical-actuator rig mappings.

Pose: (x, y, z [m], roll, pitch, yaw [rad]) of the platform frame relative to its neutral pose
(origin ``neutral_height_m`` above the base origin, axes parallel), REP-103 axes,
R = Rz(yaw) Ry(pitch) Rx(roll). Leg i joins base joint b_i (base frame) and platform joint p_i
(platform frame): l_i = | t + h e_z + R p_i - b_i |.
Joint deflection: angle between a leg's current direction, seen from the joint's own body
(base frame for b_i, platform frame for p_i), and its direction in the neutral pose.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vehicle_sim.core.motion.params import StewartParams, VerticalRigParams
from vehicle_sim.core.motion.small_vectors import clamp
from vehicle_sim.core.rotations import rpy_to_matrix


@dataclass(frozen=True)
class IKResult:
    """Leg lengths [m], normalised actuator values [0..1 over the stroke] and limit findings."""

    lengths_m: np.ndarray
    actuator: np.ndarray
    joint_angle_rad: np.ndarray  # (6, 2): base-joint and platform-joint deflection per leg
    ok: bool
    problems: tuple[str, ...]


class StewartPlatform:
    """Inverse kinematics with stroke/joint checks, and a Newton forward kinematics."""

    def __init__(self, params: StewartParams):
        self.params = params
        self.base = np.asarray(params.base_joints_m, dtype=float)
        self.plat = np.asarray(params.platform_joints_m, dtype=float)
        self.home = np.array([0.0, 0.0, params.neutral_height_m])
        legs0 = self._legs(np.zeros(6))
        self._dir0 = legs0 / np.linalg.norm(legs0, axis=1, keepdims=True)

    def _legs(self, pose: np.ndarray, rot: np.ndarray | None = None) -> np.ndarray:
        """Leg vectors b_i -> p_i in the base frame; ``rot``: the pose's rotation, if known."""
        rot = rpy_to_matrix(pose[3], pose[4], pose[5]) if rot is None else rot
        return pose[:3] + self.home + self.plat @ rot.T - self.base

    def lengths(self, pose: np.ndarray) -> np.ndarray:
        """The six leg lengths [m] for a pose (no limit checks)."""
        return np.linalg.norm(self._legs(np.asarray(pose, dtype=float)), axis=1)

    def inverse(self, pose: np.ndarray) -> IKResult:
        """Leg lengths for ``pose`` with stroke and joint-angle checks (``ok`` False if not)."""
        pose = np.asarray(pose, dtype=float)
        p = self.params
        if pose.shape != (6,) or not np.all(np.isfinite(pose)):
            nan = np.full(6, np.nan)
            return IKResult(nan, nan, np.full((6, 2), np.nan), False,
                            ("pose is not 6 finite values",))
        rot = rpy_to_matrix(pose[3], pose[4], pose[5])
        legs = self._legs(pose, rot)
        lengths = np.sqrt(np.sum(legs * legs, axis=1))  # np.linalg.norm's arithmetic
        unit = legs / lengths[:, None]
        cos_b = clamp(np.sum(unit * self._dir0, axis=1), -1.0, 1.0)
        cos_p = clamp(np.sum((unit @ rot) * self._dir0, axis=1), -1.0, 1.0)
        angles = np.stack([np.arccos(cos_b), np.arccos(cos_p)], axis=1)
        problems = []
        worst = angles.max(axis=1)
        bad_length = ~((lengths >= p.leg_min_m) & (lengths <= p.leg_max_m))
        if bad_length.any() or (worst > p.max_joint_angle_rad).any():  # the words only then
            for i in range(6):
                if bad_length[i]:
                    problems.append(f"leg {i} length {lengths[i]:.4f} m outside "
                                    f"[{p.leg_min_m}, {p.leg_max_m}] m")
                if worst[i] > p.max_joint_angle_rad:
                    problems.append(f"leg {i} joint angle {np.degrees(worst[i]):.1f} deg above "
                                    f"{np.degrees(p.max_joint_angle_rad):.1f} deg")
        actuator = (lengths - p.leg_min_m) / (p.leg_max_m - p.leg_min_m)
        return IKResult(lengths, actuator, angles, not problems, tuple(problems))

    def forward(self, lengths_m: np.ndarray, guess: np.ndarray | None = None,
                tol_m: float = 1e-12, max_iter: int = 50) -> np.ndarray:
        """Pose whose leg lengths are ``lengths_m``, by Newton's method from ``guess`` (neutral).

        Uses a central-difference Jacobian; raises ValueError if it does not converge.
        """
        target = np.asarray(lengths_m, dtype=float)
        x = np.zeros(6) if guess is None else np.array(guess, dtype=float)
        h = 1e-7
        for _ in range(max_iter):
            r = self.lengths(x) - target
            if np.max(np.abs(r)) < tol_m:
                return x
            jac = np.empty((6, 6))
            for j in range(6):
                d = np.zeros(6)
                d[j] = h
                jac[:, j] = (self.lengths(x + d) - self.lengths(x - d)) / (2.0 * h)
            x = x - np.linalg.solve(jac, r)
        raise ValueError("forward kinematics did not converge "
                         f"(residual {np.max(np.abs(r)):.3e} m)")


class VerticalActuatorRig:
    """2-DOF (pitch/roll about a fixed pivot) or 3-DOF (plus heave) rig of vertical actuators.

    Actuator i is attached at (x_i, y_i, 0) in the platform frame; its extension is the height
    change of that point, z_i = heave - x_i sin(pitch) + y_i cos(pitch) sin(roll) (REP-103: positive
    pitch lowers points ahead of the pivot, positive roll raises the left side). The value sent
    is 0.5 + z_i / stroke (0..1, 0.5 = neutral mid-stroke); heave is ignored for 2-DOF.
    """

    def __init__(self, params: VerticalRigParams):
        self.params = params
        self.xy = np.asarray(params.attach_xy_m, dtype=float)

    def extensions(self, pose: np.ndarray) -> np.ndarray:
        """Actuator extensions [m] from neutral for a pose (x, y ignored; yaw ignored)."""
        heave = pose[2] if self.params.dof == "pitch_roll_heave" else 0.0
        roll, pitch = pose[3], pose[4]
        return (heave - self.xy[:, 0] * np.sin(pitch)
                + self.xy[:, 1] * np.cos(pitch) * np.sin(roll))

    def inverse(self, pose: np.ndarray) -> IKResult:
        """Normalised actuator values with a stroke check (same result type as the hexapod)."""
        pose = np.asarray(pose, dtype=float)
        n = len(self.xy)
        if pose.shape != (6,) or not np.all(np.isfinite(pose)):
            nan = np.full(n, np.nan)
            return IKResult(nan, nan, np.zeros((n, 2)), False, ("pose is not 6 finite values",))
        ext = self.extensions(pose)
        half = 0.5 * self.params.stroke_m
        problems = tuple(f"actuator {i} extension {e:.4f} m outside +-{half} m"
                         for i, e in enumerate(ext) if abs(e) > half)
        return IKResult(ext, 0.5 + ext / self.params.stroke_m, np.zeros((n, 2)), not problems,
                        problems)
