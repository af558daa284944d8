"""Command mux between the autonomy stack and the human driver.

Starts on AUTONOMY. Takeover to DRIVER: the takeover button (rising edge), or the driver's
steering torque |T| >= ``takeover_torque_nm`` held continuously for ``takeover_hold_s`` (a short
spike resets the timer). Hand-back to AUTONOMY: the hand-back button only. The caller passes
both commands and gets the active one; commands are opaque objects here. Freshness, the
driver fallback and what is published are decided on top of this latch by ``arbiter``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Generic, TypeVar

from vehicle_sim.core.motion.params import MuxParams

C = TypeVar("C")


class Source(str, Enum):
    AUTONOMY = "autonomy"
    DRIVER = "driver"


@dataclass(frozen=True)
class MuxResult(Generic[C]):
    """The command to apply, its source, and why the source changed this cycle ('' if not)."""

    command: C
    source: Source
    switched_because: str


class CommandMux:
    """Arbitration state; call ``step`` once per control cycle with monotonic time."""

    def __init__(self, params: MuxParams):
        self.params = params
        self.source = Source.AUTONOMY
        self._above_since: float | None = None

    def reset(self) -> None:
        """Back to autonomy with the torque timer cleared."""
        self.source, self._above_since = Source.AUTONOMY, None

    def step(self, now_s: float, autonomy_cmd: C, driver_cmd: C, driver_torque_nm: float,
             takeover_button: bool = False, handback_button: bool = False) -> MuxResult[C]:
        """Update the source from buttons and torque, return the active command."""
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
        cmd = driver_cmd if self.source is Source.DRIVER else autonomy_cmd
        return MuxResult(cmd, self.source, reason)
