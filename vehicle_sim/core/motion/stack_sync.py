"""Lockstep with an external stack: sim time runs at most ``lag_ns`` ahead of its newest command.

An autonomy stack is no lockstep peer: it speaks only standard topics. In lockstep the bridge
(which receives its commands) acknowledges a frame once a stack command has arrived at most
``lag_ns`` of sim time before it, so a stack starved of CPU slows the run down instead of
falling behind it (CARLA's ROS bridge does the same in its synchronous mode with
``synchronous_mode_wait_for_vehicle_control_command``). A command's time is the frame the bridge
had acknowledged when it arrived: unstamped commands (cmd_vel) count as well, and a stack that
stamps its commands with its own clock cannot run the simulation ahead.

A stack that goes silent must not hold the run forever: after ``wait_s`` of wall time without a
command the frames go on without it (released), its commands time out in sim time and the
vehicle brakes (the arbiter's and the dynamics node's watchdogs); its next command holds the
frames again. The first frame waits ``wait_s`` too: the run starts once the stack answers its
first odometry. A bridge respawned in mid-run knows no frame yet (``frame_ns`` 0) while the
run is at, say, 120 s: until it acknowledges its first frame, any command counts, so the stack
that kept commanding does not hold the run ``wait_s``; that first frame is then the command's
time, here as in the arbiter (``frame_done``'s restamp), and from it the lag counts as above.
"""
from __future__ import annotations

from collections.abc import Callable


class StackSync:
    """Whether the bridge may acknowledge a lockstep frame (module docstring). The bridge
    changes it from its executor thread only; :meth:`now_s` (one int read) from any."""

    def __init__(self, lag_ns: int, wait_s: float):
        if lag_ns <= 0 or not wait_s > 0.0:
            raise ValueError(f"StackSync needs lag_ns > 0 and wait_s > 0, got {lag_ns}, {wait_s}")
        self.lag_ns, self.wait_s = lag_ns, wait_s
        self.frame_ns = 0  # the newest frame acknowledged [ns]
        self.command_frame_ns: int | None = None  # frame_ns when the newest command arrived
        self.released = False  # the stack was silent wait_s: frames go on without it
        self._waiting_since: float | None = None  # wall time [s] the current wait began
        self._acked = False  # a frame was acknowledged (frame_ns is the run's sim time)

    def on_command(self) -> str | None:
        """A stack command arrived; a line to log when it ends a release, else None."""
        self.command_frame_ns = self.frame_ns
        self._waiting_since = None
        if not self.released:
            return None
        self.released = False
        return (f"stack commands again at t={self.frame_ns * 1e-9:.3f} s: lockstep waits for "
                f"them again")

    def ready(self, t_ns: int, now_s: float) -> tuple[bool, str | None]:
        """May frame ``t_ns`` be acknowledged at wall time ``now_s`` [s]; a line to log when
        this call releases the frames (the stack has been silent ``wait_s``)."""
        heard = self.command_frame_ns is not None and (
            not self._acked or t_ns - self.command_frame_ns <= self.lag_ns)
        if heard or self.released:
            self._waiting_since = None
            return True, None
        if self._waiting_since is None:
            self._waiting_since = now_s
        if now_s - self._waiting_since < self.wait_s:
            return False, None
        self.released = True
        return True, (f"no stack command for {self.wait_s:g} s of wall time at t="
                      f"{t_ns * 1e-9:.3f} s: lockstep goes on without the stack (its commands "
                      f"time out, the vehicle brakes) until it commands again")

    def frame_done(self, t_ns: int, restamp: Callable[[float], None]) -> None:
        """Frame ``t_ns`` was acknowledged. At the first, :meth:`now_s` jumps from 0 to the
        run's time: ``restamp(new now_s)`` first restamps what was timed on the old clock (the
        arbiter's stack commands), before the clock moves, so a reader on another thread
        never sees them as 120 s old (a respawned bridge dropped the stack for a frame); the
        newest command's frame moves to the same time."""
        frame_ns = max(self.frame_ns, t_ns)
        if not self._acked:
            restamp(frame_ns * 1e-9)
            if self.command_frame_ns is not None:  # the command's time, as the arbiter's
                self.command_frame_ns = frame_ns
        self.frame_ns, self._acked = frame_ns, True

    def now_s(self) -> float:
        """Sim time [s] of the newest frame: the arbiter's clock for the stack's freshness in
        lockstep (its wall-clock timeout would fire while the run waits for the stack)."""
        return self.frame_ns * 1e-9
