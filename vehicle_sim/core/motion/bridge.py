"""Motion-platform pipeline for the bridge node: vehicle state -> bytes for the rig.

    head_cues (cueing) -> ClassicalWashout -> MotionSafety -> kinematics -> wire encoder

The node calls ``on_vehicle_state`` whenever a vehicle state arrives and ``cycle`` once per
platform period (``1 / washout.rate_hz``, on absolute deadlines), then writes ``frame.payload``
to its socket / serial port. The latest cue is held between states (zero-order hold). When the
kinematics reject a pose (stroke or joint angle), the pose is shrunk towards neutral along the
line from neutral (bisection) to the farthest reachable point, and the frame reports it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vehicle_sim.core.motion.cueing import head_cues
from vehicle_sim.core.motion.params import PlatformParams
from vehicle_sim.core.motion.safety import Mode, MotionSafety
from vehicle_sim.core.motion.stewart import IKResult, StewartPlatform, VerticalActuatorRig
from vehicle_sim.core.motion.washout import ClassicalWashout
from vehicle_sim.core.motion.wire import encode_binary, encode_text, frame_bytes


@dataclass(frozen=True)
class MotionFrame:
    """One platform cycle: bytes to send, the safe pose, actuator values (0..1) and status.

    positions_m: what the actuators do in metres (Stewart: leg lengths; vertical rigs: extension
    from mid-stroke). limited: the washout command was clipped by the pose limits, was
    non-finite, or was shrunk to stay reachable (velocity/acceleration limiting not included).
    """

    payload: bytes
    pose: np.ndarray
    actuator: np.ndarray
    mode: Mode
    kinematics_ok: bool
    problems: tuple[str, ...]
    positions_m: np.ndarray | None = None
    limited: bool = False


class MotionBridge:
    """Owns the cueing, safety and kinematics state of one platform."""

    def __init__(self, params: PlatformParams):
        self.params = params
        self.washout = ClassicalWashout(params.washout, params.cueing.gravity_mps2)
        self.safety = MotionSafety(params.safety, self.washout.dt_s)
        self.kinematics = (StewartPlatform(params.stewart) if params.kind == "stewart6"
                           else VerticalActuatorRig(params.rig))
        rest = np.array([0.0, 0.0, params.cueing.gravity_mps2])
        self._cue = (rest, np.zeros(3))
        self._rest = self._cue
        neutral = self.kinematics.inverse(np.zeros(6))
        if not neutral.ok:
            raise ValueError(f"neutral pose is not reachable: {neutral.problems}")
        self._last_actuator = neutral.actuator  # last values sent (diagnostics)
        self._pose_limit = np.asarray(params.safety.pose_limit, dtype=float)
        self._seq = 0

    @property
    def cue(self) -> tuple[np.ndarray, np.ndarray]:
        """Latest (specific force [m/s^2], angular velocity [rad/s]) at the head, base_link axes."""
        return self._cue[0].copy(), self._cue[1].copy()

    @property
    def frame_bytes(self) -> int:
        """Size [bytes] of every frame this platform sends (fixed by wire format and axes)."""
        return frame_bytes(self.params.wire, len(self._last_actuator))

    def on_vehicle_state(self, now_s: float, accel_cg_mps2: np.ndarray, omega_radps: np.ndarray,
                         alpha_radps2: np.ndarray, rpy_rad: np.ndarray) -> None:
        """Take a vehicle state (VehicleSnapshot fields: CG, base_link); feeds the watchdog."""
        self._cue = head_cues(self.params.cueing, accel_cg_mps2, omega_radps, alpha_radps2, rpy_rad)
        self.safety.state_received(now_s)

    def cycle(self, now_s: float, paused: bool = False) -> MotionFrame:
        """Advance one platform period and return the frame to send."""
        if self.safety.mode in (Mode.NEUTRAL, Mode.ESTOP):
            self.washout.reset()  # restart cleanly from neutral after a stop
        pose_cmd = self.washout.step(*(self._rest if paused else self._cue))
        out = self.safety.step(pose_cmd, now_s, paused)
        pose, ik = out.values, self.kinematics.inverse(out.values)
        problems = ik.problems
        if not ik.ok:
            pose, ik = self._reachable(out.values)
        self._last_actuator = ik.actuator
        limited = bool(out.nonfinite or problems or np.any(np.abs(pose_cmd) > self._pose_limit))
        return MotionFrame(self._encode(ik.actuator), pose, ik.actuator.copy(), out.mode,
                           not problems, problems, ik.lengths_m.copy(), limited)

    def _reachable(self, pose: np.ndarray, iterations: int = 16) -> tuple[np.ndarray, IKResult]:
        """Farthest reachable pose s * pose, s in [0, 1] (neutral is reachable), by bisection."""
        lo, best = 0.0, self.kinematics.inverse(np.zeros(6))
        hi = 1.0
        for _ in range(iterations):
            mid = 0.5 * (lo + hi)
            ik = self.kinematics.inverse(mid * pose)
            if ik.ok:
                lo, best = mid, ik
            else:
                hi = mid
        return lo * pose, best

    def estop(self) -> None:
        """Latch the e-stop (ramp to neutral, hold)."""
        self.safety.estop()

    def clear_estop(self) -> bool:
        """Release the e-stop if the rig is at rest at neutral."""
        return self.safety.clear_estop()

    def link_restored(self) -> None:
        """Every output to the rig is back after a loss: resume from neutral, soft start."""
        self.safety.resume_from_neutral()

    def _encode(self, actuator: np.ndarray) -> bytes:
        wire = self.params.wire
        if wire.format == "binary":
            self._seq = (self._seq + 1) & 0xFF
            return encode_binary(actuator, self._seq, wire)
        return encode_text(actuator, wire)
