"""Safety between motion cueing and the rig: limits, rate limits, soft start, watchdog, e-stop.

Works on any vector of per-axis commands (the platform pose by default, with ``SafetyParams``
limits about a neutral vector). Order each cycle: sanitise (NaN/inf -> last safe command, or
neutral before any) and clamp; pick the target from the mode; move towards it with a
velocity- and acceleration-limited follower that brakes in time (no overshoot); clamp again.

Modes: NEUTRAL (at rest, waiting for fresh state) -> SOFT_START (target blended from neutral to
the command over ``soft_start_s``) -> ACTIVE. Stale vehicle state (older than
``watchdog_timeout_s``) or a paused sim -> RETURNING (target neutral) -> NEUTRAL. ``estop()``
latches ESTOP: target neutral whatever arrives, until ``clear_estop()`` succeeds at rest.
``resume_from_neutral()`` (a link to the rig came back) restarts the output from neutral.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from vehicle_sim.core.motion.params import SafetyParams
from vehicle_sim.core.motion.small_vectors import clamp


class Mode(str, Enum):
    NEUTRAL = "neutral"
    SOFT_START = "soft_start"
    ACTIVE = "active"
    RETURNING = "returning"
    ESTOP = "estop"


@dataclass(frozen=True)
class SafetyOutput:
    """Safe values for this cycle, the mode, and how many command entries were non-finite."""

    values: np.ndarray
    mode: Mode
    nonfinite: int


class OutputLimiter:
    """Clamp to [lower, upper]; non-finite entries hold the previous safe value (neutral first)."""

    def __init__(self, lower: np.ndarray, upper: np.ndarray, neutral: np.ndarray):
        self.lower, self.upper = np.asarray(lower, float), np.asarray(upper, float)
        self.last = clamp(np.asarray(neutral, float), self.lower, self.upper)

    def apply(self, values: np.ndarray) -> tuple[np.ndarray, int]:
        """(safe values, number of non-finite entries replaced)."""
        v = np.array(values, dtype=float).reshape(self.last.shape)
        bad = ~np.isfinite(v)
        v[bad] = self.last[bad]
        self.last = clamp(v, self.lower, self.upper)
        return self.last.copy(), int(bad.sum())


class RateLimiter:
    """Second-order follower: |velocity| <= v_max, |acceleration| <= a_max per axis, braking so
    that it reaches the target without overshoot (discrete braking curve)."""

    def __init__(self, v_max: np.ndarray, a_max: np.ndarray, dt_s: float, start: np.ndarray):
        self.v_max, self.a_max = np.asarray(v_max, float), np.asarray(a_max, float)
        self.dt = dt_s
        self.x = np.array(start, dtype=float)
        self.v = np.zeros_like(self.x)

    def reset(self, x: np.ndarray) -> None:
        """Place the follower at ``x`` at rest."""
        self.x, self.v = np.array(x, dtype=float), np.zeros_like(self.x)

    def step(self, target: np.ndarray) -> np.ndarray:
        """Advance one step towards ``target``; returns the new position (a copy)."""
        e = np.asarray(target, float) - self.x
        ad = self.a_max * self.dt
        # largest speed from which a stop within |e| is still possible in discrete steps
        v_stop = np.sqrt(2.0 * self.a_max * np.abs(e) + 0.25 * ad * ad) - 0.5 * ad
        v_des = np.sign(e) * np.minimum(np.minimum(self.v_max, v_stop), np.abs(e) / self.dt)
        self.v = clamp(self.v + clamp(v_des - self.v, -ad, ad), -self.v_max, self.v_max)
        self.x = self.x + self.v * self.dt
        return self.x.copy()

    def at_rest(self, x: np.ndarray, tol: float = 1e-9) -> bool:
        """True when at ``x`` and not moving."""
        return bool(np.all(np.abs(self.x - x) <= tol) and np.all(np.abs(self.v) <= tol))


class MotionSafety:
    """Watchdog state machine + limiter. Call ``state_received`` on every fresh vehicle state,
    ``step`` once per platform cycle."""

    def __init__(self, params: SafetyParams, dt_s: float, neutral: np.ndarray | None = None):
        self.params, self.dt = params, dt_s
        lim = np.asarray(params.pose_limit, float)
        self.neutral = np.zeros(len(lim)) if neutral is None else np.asarray(neutral, float)
        self.limiter = OutputLimiter(self.neutral - lim, self.neutral + lim, self.neutral)
        self.follower = RateLimiter(params.velocity_limit, params.accel_limit, dt_s, self.neutral)
        self.mode = Mode.NEUTRAL
        self._last_state_s: float | None = None
        self._start_s = 0.0

    def state_received(self, now_s: float) -> None:
        """Mark that a fresh vehicle state arrived at ``now_s`` (feeds the watchdog)."""
        self._last_state_s = now_s

    def estop(self) -> None:
        """Latch the emergency stop: ramp to neutral and stay there."""
        self.mode = Mode.ESTOP

    def clear_estop(self) -> bool:
        """Release the latch only when the rig rests at neutral; returns whether it was released."""
        if self.mode is Mode.ESTOP and self.follower.at_rest(self.neutral):
            self.mode = Mode.NEUTRAL
            return True
        return False

    def resume_from_neutral(self) -> None:
        """The rig's link came back: the controller parked at neutral meanwhile (its receive
        watchdog), so the output starts there again, with a soft start (an e-stop stays)."""
        self.follower.reset(self.neutral)  # where the rig is (an e-stop ramps there too)
        if self.mode is not Mode.ESTOP:
            self.mode = Mode.NEUTRAL

    def step(self, command: np.ndarray, now_s: float, paused: bool = False) -> SafetyOutput:
        """Safe output for this cycle from the desired ``command``."""
        cmd, nonfinite = self.limiter.apply(command)
        fresh = (self._last_state_s is not None
                 and now_s - self._last_state_s <= self.params.watchdog_timeout_s)
        target = self.neutral
        if self.mode is not Mode.ESTOP:
            if fresh and not paused:
                target = self._running_target(cmd, now_s)
            elif self.mode in (Mode.SOFT_START, Mode.ACTIVE):
                self.mode = Mode.RETURNING
        out = clamp(self.follower.step(target), self.limiter.lower, self.limiter.upper)
        if self.mode is Mode.RETURNING and self.follower.at_rest(self.neutral):
            self.mode = Mode.NEUTRAL
        return SafetyOutput(out, self.mode, nonfinite)

    def _running_target(self, cmd: np.ndarray, now_s: float) -> np.ndarray:
        if self.mode in (Mode.NEUTRAL, Mode.RETURNING):
            self.mode, self._start_s = Mode.SOFT_START, now_s
        if self.mode is Mode.SOFT_START:
            T = self.params.soft_start_s
            b = 1.0 if T <= 0.0 else min(1.0, (now_s - self._start_s) / T)
            if b >= 1.0:
                self.mode = Mode.ACTIVE
            s = b * b * (3.0 - 2.0 * b)  # smoothstep: zero slope at both ends
            return self.neutral + s * (cmd - self.neutral)
        return cmd


