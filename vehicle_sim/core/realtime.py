"""Absolute-deadline pacing and lateness statistics for fixed-step loops (no ROS).

Deadline k of a loop started at wall time t0 with period T and real-time factor f is
t0 + k T / f: sleeping until an absolute deadline never accumulates drift, unlike relative
sleeps. A wake-up later than one period past its deadline counts as an overrun; after a long
stall (a pause, a debugger) the schedule is re-anchored instead of bursting to catch up.
Also what a process with such a loop sets once: the GIL switch interval, SCHED_FIFO priority and
a frozen start-up heap (no long full collection inside a period).
"""
from __future__ import annotations

import ctypes
import gc
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable

import numpy as np

_PR_SET_TIMERSLACK = 29  # linux/prctl.h


def tighten_timer_slack(slack_ns: int = 1000) -> bool:
    """Ask Linux for a 1 us timer slack on this thread (default 50 us) so sleeps wake on time."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_TIMERSLACK, slack_ns, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def set_realtime_priority(priority: int) -> str:
    """Give the calling thread SCHED_FIFO ``priority`` (1-99); return "" or why it was refused.

    Needs CAP_SYS_NICE or an `rtprio` limit (/etc/security/limits.conf) on real rigs. A FIFO
    thread that never sleeps would starve its core: use it only for a loop paced by deadlines.
    """
    if priority <= 0:
        return ""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except (AttributeError, OSError) as exc:
        return _refused(priority, exc)
    return ""


def _refused(priority: int, exc: Exception) -> str:
    return f"SCHED_FIFO priority {priority} refused ({exc}); running with normal scheduling"


DDS_THREADS = "dds."  # the name prefix of Fast DDS's threads (receive, events, async writers)
# SCHED_FIFO priority of the bridge's platform loop: a choice, one level below the physics loop
# (config/dynamics.yaml realtime_priority 20) so the physics wins a core both need; the dynamics
# node's own threads stay below it (DynamicsNode._threads_priority)
PLATFORM_LOOP_PRIORITY = 19


def set_threads_priority(priority: int, name_prefix: str) -> tuple[int, str]:
    """SCHED_FIFO ``priority`` for every thread of this process whose name (Linux: its comm)
    starts with ``name_prefix``; returns (how many were set, "" or why one was refused)."""
    if priority <= 0 or not sys.platform.startswith("linux"):
        return 0, ""
    done = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                name = f.read().strip()
            if name.startswith(name_prefix):
                os.sched_setscheduler(int(tid), os.SCHED_FIFO, os.sched_param(priority))
                done += 1
        except ProcessLookupError:
            continue  # the thread ended meanwhile
        except OSError as exc:
            return done, _refused(priority, exc)
    return done, ""


# GIL hand-over bound of a process with a real-time loop [s]. CPython's default (5 ms) is five
# 1 kHz periods: a loop thread that wakes while another thread of its process runs Python code
# waits up to that long before the interpreter asks the other thread to drop the lock, and that
# wait sets the loop's p99 lateness whenever the other thread is busy: the bridge's 500 Hz
# platform loop with a 200 Hz vehicle state arriving (two busy loops beside it) had p99 241 and
# 298 us at 0.2 ms against 77 and 66 us at 0.05 ms (a bare loop in the same runs: 45-55 us).
# 0.05 ms is a choice: a twentieth of a 1 kHz period; a hand-over costs the other thread a few
# microseconds, and only while the loop wants the lock (bench/bench_deadlines.py, README).
LOOP_SWITCH_INTERVAL_S = 0.00005


def shorten_switch_interval(interval_s: float = LOOP_SWITCH_INTERVAL_S) -> float:
    """Set this process's GIL switch interval to ``interval_s`` if that is shorter; returns
    the interval now in force [s]."""
    if not 0.0 < interval_s < float("inf"):
        raise ValueError(f"switch interval must be a finite time > 0 s, got {interval_s}")
    sys.setswitchinterval(min(sys.getswitchinterval(), interval_s))
    return sys.getswitchinterval()


def freeze_start_heap() -> None:
    """Collect, then move every object built so far (the interpreter's modules, rclpy, numba's
    compiled kernels, the models) into the collector's permanent generation (gc.freeze): a full
    collection then scans only what the run allocated since. Without it the traffic node at
    5,000 agents paused 44-201 ms in a full collection about every 2 s (gc.callbacks), each
    pause a step late (issue 14). Cyclic garbage among the frozen objects is never freed: call
    it once, when start-up is done."""
    gc.collect()
    gc.freeze()


def percentiles(samples: np.ndarray) -> tuple[float, float, float]:
    """(p50, p99, max) of ``samples``; zeros when there are none."""
    if samples.size == 0:
        return 0.0, 0.0, 0.0
    p50, p99 = np.percentile(samples, (50.0, 99.0))
    return float(p50), float(p99), float(samples.max())


class LatenessWindow:
    """Fixed-size ring of samples [s] with percentiles; preallocated, no allocation per sample."""

    def __init__(self, capacity: int = 4096):
        self._buf = np.zeros(capacity)
        self._n = 0

    def add(self, value_s: float) -> None:
        self._buf[self._n % self._buf.size] = value_s
        self._n += 1

    def percentiles(self) -> tuple[float, float, float]:
        """(p50, p99, max) over the samples in the window; zeros when empty."""
        return percentiles(self._buf[:min(self._n, self._buf.size)])

    def clear(self) -> None:
        self._n = 0


class Pacer:
    """Sleeps until absolute deadlines t0 + k * period / real_time_factor."""

    def __init__(self, period_s: float, real_time_factor: float = 1.0,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep,
                 reanchor_periods: int = 100):
        if period_s <= 0.0 or real_time_factor <= 0.0:
            raise ValueError("period_s and real_time_factor must be > 0")
        self._period, self._rtf = period_s, real_time_factor
        self._clock, self._sleep = clock, sleep
        self._reanchor = reanchor_periods
        self.overruns = 0
        self.reanchor()

    @property
    def wall_period_s(self) -> float:
        return self._period / self._rtf

    def reanchor(self) -> None:
        """Start a new schedule at the current time (after a pause or a rate change)."""
        self._t0 = self._clock()
        self._k = 0

    def set_real_time_factor(self, rtf: float) -> None:
        if rtf <= 0.0:
            raise ValueError("real_time_factor must be > 0")
        self._rtf = rtf
        self.reanchor()

    def wait(self) -> float:
        """Sleep until the next deadline; return the wake-up lateness [s] (>= 0)."""
        self._k += 1
        deadline = self._t0 + self._k * self.wall_period_s
        remaining = deadline - self._clock()
        if remaining > 0.0:
            self._sleep(remaining)
        lateness = max(0.0, self._clock() - deadline)
        if lateness > self.wall_period_s:
            self.overruns += 1
            if lateness > self._reanchor * self.wall_period_s:
                self.reanchor()
        return lateness


class LockstepBarrier:
    """Lets the loop advance frame f only after every peer acknowledged frame f - 1 (paper 003's
    heartbeat).

    Peers acknowledge with the sim time [ns] of the frame they finished, and the stamp [ns] of
    the newest vehicle command they published (0 = none). ``wait_for`` blocks until all named
    peers have reached ``t_ns`` and the newest such command has been received here
    (``command_received``; DDS may deliver an ack before a command sent earlier on another
    topic), or the timeout passes (returns False: the caller reports the stalled peers and keeps
    waiting, so no step is skipped).

    An ack is plausible only up to ``now_ns()``, the loop's simulation time: a peer cannot have
    finished a frame, or sent a command, later than the newest /clock it can have seen. An ack
    naming a later time (a foreign or broken process on the domain) is refused: recorded, it
    would release frames nobody finished, or make the loop wait for good for a command that
    will never come."""

    def __init__(self, peers: tuple[str, ...], now_ns: Callable[[], int] = lambda: 2**62):
        self._now_ns = now_ns
        self._acked = {p: -1 for p in peers}
        self._command_sent = 0  # newest command stamp announced by an ack [ns]
        self._command_seen = 0  # newest command stamp received [ns]
        self._cv = threading.Condition()

    @property
    def peers(self) -> tuple[str, ...]:
        return tuple(self._acked)

    def ack(self, peer: str, t_ns: int, command_ns: int = 0) -> str | None:
        """Record an acknowledgement; returns why it was not (None when it was): an unknown
        peer, or a frame or command stamp later than the loop's simulation time."""
        with self._cv:
            if peer not in self._acked:
                return "unknown peer"
            now = self._now_ns()
            if max(t_ns, command_ns) > now:
                return (f"implausible ack from {peer!r}: frame {t_ns * 1e-9:.3f} s, command "
                        f"{command_ns * 1e-9:.3f} s, after the simulation time {now * 1e-9:.3f} s")
            self._acked[peer] = max(self._acked[peer], t_ns)
            self._command_sent = max(self._command_sent, command_ns)
            self._cv.notify_all()
            return None

    def command_received(self, stamp_ns: int) -> None:
        """A vehicle command stamped ``stamp_ns`` has been applied."""
        with self._cv:
            self._command_seen = max(self._command_seen, stamp_ns)
            self._cv.notify_all()

    def _done(self, t_ns: int) -> bool:
        return (min(self._acked.values(), default=t_ns) >= t_ns
                and self._command_seen >= self._command_sent)

    def wait_for(self, t_ns: int, timeout_s: float) -> bool:
        with self._cv:
            return self._cv.wait_for(lambda: self._done(t_ns), timeout=timeout_s)

    def stalled(self, t_ns: int) -> list[str]:
        with self._cv:
            late = [p for p, t in self._acked.items() if t < t_ns]
            if self._command_seen < self._command_sent:
                late.append(f"the vehicle command stamped {self._command_sent * 1e-9:.3f} s")
            return late

    def release(self) -> None:
        """Wake any waiter (used on shutdown)."""
        with self._cv:
            self._acked = {p: 2**62 for p in self._acked}
            self._command_seen = 2**62
            self._cv.notify_all()


class FrameQueue:
    """A lockstep peer's /clock ticks, each processed once the peer's inputs for it are complete.

    ``tick(t_ns)`` queues a frame; ``pump()`` (call it after every input arrival too) processes
    queued frames in order while ``ready(t_ns)`` holds. With DDS delivering each topic in its
    own order, this is what makes a peer see the same inputs for a frame in every run."""

    def __init__(self, ready: Callable[[int], bool], process: Callable[[int], None]):
        self._ready, self._process = ready, process
        self._pending: deque[int] = deque()
        self._last = -1  # newest frame queued [ns]

    def tick(self, t_ns: int) -> bool:
        """Queue frame ``t_ns``; False if it is not newer than every frame seen (a repeat)."""
        if t_ns <= self._last:
            return False
        self._last = t_ns
        self._pending.append(t_ns)
        self.pump()
        return True

    def pump(self) -> None:
        while self._pending and self._ready(self._pending[0]):
            self._process(self._pending.popleft())

    @property
    def waiting(self) -> int:
        return len(self._pending)
