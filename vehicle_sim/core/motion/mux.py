"""Command mux between the autonomy stack and the human driver.

Starts on AUTONOMY. Takeover to DRIVER: the takeover button (rising edge), or the driver's
steering torque |T| >= ``takeover_torque_nm`` held continuously for ``takeover_hold_s`` (a short
spike resets the timer). Hand-back to AUTONOMY: the hand-back button only. This is the latch
only: which command that means, freshness, the driver fallback and what is published are
decided on top of it by ``arbiter``.
"""
from __future__ import annotations

import math
from enum import Enum

from vehicle_sim.core.motion.params import MuxParams


class Source(str, Enum):
    AUTONOMY = "autonomy"
    DRIVER = "driver"


class CommandMux:
    """Arbitration state; call ``step`` once per control cycle with monotonic time."""

    def __init__(self, params: MuxParams):
        self.params = params
        self.source = Source.AUTONOMY
        self._above_since: float | None = None

    def reset(self) -> None:
        """Back to autonomy with the torque timer cleared."""
        self.source, self._above_since = Source.AUTONOMY, None

    def step(self, now_s: float, driver_torque_nm: float, takeover_button: bool = False,
             handback_button: bool = False) -> str:
        """Update ``source`` from buttons and torque; why it switched this cycle ('' if not)."""
        reason = ""
        torque_high = math.isfinite(driver_torque_nm) and \
            abs(driver_torque_nm) >= self.params.takeover_torque_nm
        if not torque_high:
            self._above_since = None
        elif self._above_since is None:
            self._above_since = now_s
        if self.source is Source.AUTONOMY:
            if takeover_button:
                reason = "takeover button"
            elif torque_high and now_s - self._above_since >= self.params.takeover_hold_s:
                reason = "steering torque"
            if reason:
                self.source = Source.DRIVER
        elif handback_button:
            self.source, reason, self._above_since = Source.AUTONOMY, "hand-back button", None
        return reason
