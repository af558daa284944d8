"""The platform frames' deadlines, kept by compiled code that runs without the interpreter lock.

The bridge's platform loop in Python wakes late whenever another thread of its process (the ROS
executor) holds the interpreter lock: measured in the urban graph with the loop at 500 Hz, the
kernel woke it with p99 lateness 82-101 us (a bare loop: 97 us), and Python ran it 130-191 us
late, the difference being the wait for the lock (bench/bench_deadlines.py --bridge-rate-hz
500; README, Performance). So the deadlines are kept here: a numba ``nogil`` loop sleeps with
``clock_nanosleep`` to absolute deadlines t0 + k * period on the monotonic clock and at each one
sends the frame made for it with libc's ``sendto`` (non-blocking, to the one configured address).
The Python loop makes frame k ahead of its deadline (``FRAME_LEAD_S``) and ``put``s it. A frame
not put by its deadline is waited for up to ``GRACE`` of a period and sent when it comes
(``late``; its lateness counts the wait); one not put by then is not sent at all (``missed``):
the rig sees a gap, and never a repeated pose from a simulator that stopped (its own link
watchdog then acts).

Lateness here is when the frame left: the time past the deadline [ns] as the compiled loop
read the clock before ``sendto``. After an overrun the loop goes on with the first deadline
still ahead (no burst to catch up; the frames of the deadlines skipped are not sent).

Hand-over: frame k goes to slot ``k % SLOTS`` of a ring, tagged with k after its bytes; the
loop sends slot k's bytes only if its tag is k, from a copy taken before it checks the tag
again (so a slot the Python side refilled meanwhile, SLOTS periods later, is never sent torn).
This relies on the stores of one thread being seen in program order by the other, which
x86-64 guarantees (TSO) and this project's machines are; and the loop's polling keeps an
opaque call (the sleep) in each turn, so the compiler reads the shared values anew each time.
On a weakly ordered CPU (aarch64) a frame could leave with some of the bytes its slot held
before: binary frames carry a CRC the rig checks, text frames do not.
"""
from __future__ import annotations

import os
import socket
import struct
import threading
import time

import numba
import numpy as np
from numba import types

from vehicle_sim.core.realtime import set_realtime_priority, tighten_timer_slack

# [s] how long before its deadline the Python loop makes a frame, at most half a period: its own
# wake-up lateness (p99 up to ~0.2 ms with the executor busy, measured above) and a frame's work
# (~0.15 ms of CPU idle, ~0.3 ms with the urban graph running) fit in it. At 0.5 ms, 16% of the
# frames at 500 Hz were not made in time in the urban graph (bench/bench_deadlines.py
# --bridge-rate-hz 500); a choice, and the latency it adds to the motion cues
FRAME_LEAD_S = 0.001
SLOTS = 4  # frames in the hand-over ring (module docstring)
CAPACITY = 1 << 16  # lateness samples kept (131 s at 500 Hz; read every stats period)
ENTER_WAIT_S = 5.0  # [s] wall time to wait for the sender's thread to be in its compiled loop
CLOCK_MONOTONIC = 1  # Linux's clockid_t of time.monotonic_ns
TIMER_ABSTIME = 1
MSG_DONTWAIT = 0x40
EINTR = 4
NS = 1_000_000_000

# control: STOP and NEWEST (the newest frame put, -1 before any) written by Python, T0_NS once
# before the loop starts, DONE_K (the deadline index the loop is at) by the loop
STOP, NEWEST, T0_NS, DONE_K = range(4)
# stats: written by the loop only
IN_LOOP, TICKS, SENT, ERRORS, LAST_ERRNO, OVERRUNS, MISSED, LATE = range(8)
GRACE = 0.5  # of a period: how long past its deadline a frame not made yet is waited for
POLL_NS = 20_000  # [ns] how often the sender looks for it meanwhile

_clock_gettime = types.ExternalFunction("clock_gettime", types.int32(types.int32, types.voidptr))
_clock_nanosleep = types.ExternalFunction(
    "clock_nanosleep", types.int32(types.int32, types.int32, types.voidptr, types.voidptr))
_sendto = types.ExternalFunction("sendto", types.intp(
    types.int32, types.voidptr, types.uintp, types.int32, types.voidptr, types.uint32))
_errno_location = types.ExternalFunction("__errno_location", types.CPointer(types.int32)())


@numba.njit(nogil=True, cache=True)
def _now_ns(ts: np.ndarray) -> int:
    _clock_gettime(CLOCK_MONOTONIC, ts.ctypes.data)
    return ts[0] * NS + ts[1]


@numba.njit(nogil=True, cache=True)
def _send_loop(period_ns: int, fd: int, address: np.ndarray, slots: np.ndarray,
               lengths: np.ndarray, tags: np.ndarray, control: np.ndarray, stats: np.ndarray,
               lateness: np.ndarray, ts: np.ndarray, copy: np.ndarray) -> None:
    """Until control[STOP]: sleep to deadline k, send the frame tagged k (module docstring)."""
    stats[IN_LOOP] = 1
    t0, k = control[T0_NS], 0
    while control[STOP] == 0:
        k += 1
        deadline = t0 + k * period_ns
        ts[0], ts[1] = deadline // NS, deadline % NS
        while _clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, ts.ctypes.data, 0) == EINTR:
            ts[0], ts[1] = deadline // NS, deadline % NS
        if control[STOP]:
            break
        now = _now_ns(ts)
        control[DONE_K] = k  # first: from now on the Python side makes frame k + 1
        slot = k % slots.shape[0]
        if control[NEWEST] >= 0:  # frames are coming: wait up to GRACE of a period for frame k
            if tags[slot] != k:
                stats[LATE] += 1
                while tags[slot] < k and now - deadline < period_ns * GRACE:
                    ts[0], ts[1] = 0, POLL_NS
                    _clock_nanosleep(CLOCK_MONOTONIC, 0, ts.ctypes.data, 0)
                    now = _now_ns(ts)
            n = lengths[slot]
            copy[:n] = slots[slot, :n]
            if tags[slot] != k:  # not made in time (or refilled while copied: SLOTS late)
                stats[MISSED] += 1
            elif n > 0 and fd >= 0:
                if _sendto(fd, copy.ctypes.data, n, MSG_DONTWAIT, address.ctypes.data,
                           address.size) < 0:
                    stats[ERRORS] += 1
                    stats[LAST_ERRNO] = _errno_location()[0]
                else:
                    stats[SENT] += 1
        late = now - deadline
        lateness[stats[TICKS] % lateness.size] = max(late, 0)
        stats[TICKS] += 1
        if late > period_ns:  # the next deadline: the first still ahead
            stats[OVERRUNS] += 1
            k = (now - t0) // period_ns
            control[DONE_K] = k  # the Python side makes no frame for the deadlines skipped


def _sockaddr(host: str, port: int) -> np.ndarray:
    """struct sockaddr_in of an IPv4 host and port (what ``sendto`` takes)."""
    raw = (struct.pack("=H", socket.AF_INET) + struct.pack("!H", port)
           + socket.inet_aton(socket.gethostbyname(host)) + bytes(8))
    return np.frombuffer(raw, np.uint8).copy()


def warm_up() -> None:
    """The loop compiled, or loaded from numba's cache (returns at once: stopped)."""
    u8, i64 = np.zeros(16, np.uint8), np.zeros(4, np.int64)
    _send_loop(1, -1, u8, np.zeros((1, 1), np.uint8), i64, i64, np.array([1, -1, 0, 0]),
               np.zeros(8, np.int64), np.zeros(1, np.int64), np.zeros(2, np.int64), u8)
    _now_ns(np.zeros(2, np.int64))


class _Count:
    """A count of the loop's stats array, read as an int attribute."""

    def __init__(self, index: int, doc: str):
        self.index, self.__doc__ = index, doc

    def __get__(self, sender: FrameSender, owner: type) -> int:
        return int(sender.stats[self.index])


class FrameSender:
    """Sends each platform frame at its deadline from a compiled loop (module docstring).

    ``address``: the one (IPv4 host, port) frames go to, from a socket of its own, or None (no
    platform output: the deadlines are kept and measured all the same). The Python side asks
    ``next_deadline`` which frame to make and when it is due, and ``put``s it."""

    def __init__(self, period_s: float, frame_bytes: int,
                 address: tuple[str, int] | None = None, lead_s: float = FRAME_LEAD_S):
        if not 0.0 < period_s < float("inf") or frame_bytes < 1:
            raise ValueError("FrameSender: period_s must be > 0 and frame_bytes >= 1")
        self.period_ns = round(period_s * NS)
        self.lead_s = min(lead_s, 0.5 * period_s)
        self.address = address
        self._address = _sockaddr(*address) if address else np.zeros(16, np.uint8)
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM) if address else None
        self._fd = self._sock.fileno() if self._sock is not None else -1
        self._slots = np.zeros((SLOTS, frame_bytes), np.uint8)
        self._lengths = np.zeros(SLOTS, np.int64)
        self._tags = np.full(SLOTS, -1, np.int64)
        self._control = np.array([0, -1, 0, 0], np.int64)
        self.stats = np.zeros(8, np.int64)
        self._lateness = np.zeros(CAPACITY, np.int64)
        self._read = 0  # lateness samples taken so far
        self._last_k = 0  # the newest deadline index a frame was made for
        self._thread: threading.Thread | None = None
        self.refused = ""  # why the sender's thread runs with normal scheduling, if it does
        warm_up()

    def start(self, priority: int = 0) -> None:
        """The first deadline one period from now; ``priority``: SCHED_FIFO where permitted."""
        self._control[T0_NS] = time.monotonic_ns()
        self._thread = threading.Thread(target=self._run, args=(priority,), name="frames",
                                        daemon=True)
        self._thread.start()
        end = time.monotonic() + ENTER_WAIT_S
        while not self.stats[IN_LOOP] and time.monotonic() < end:
            time.sleep(0.001)

    def _run(self, priority: int) -> None:
        tighten_timer_slack()
        self.refused = set_realtime_priority(priority)
        _send_loop(self.period_ns, self._fd, self._address, self._slots, self._lengths,
                   self._tags, self._control, self.stats, self._lateness, np.zeros(2, np.int64),
                   np.zeros(self._slots.shape[1], np.uint8))

    def stop(self) -> None:
        """Ends the loop (within a period) and closes the socket."""
        self._control[STOP] = 1
        if self._thread is not None:
            self._thread.join(timeout=1.0 + 2 * self.period_ns / NS)
            if self._thread.is_alive():
                return  # the socket stays open for a loop that may still send
        if self._sock is not None:
            self._sock.close()

    def next_deadline(self) -> tuple[int, float]:
        """(k, when to make it [s, time.monotonic]): the next frame not made yet whose deadline
        the loop has not passed, and its deadline minus the lead."""
        k = max(int(self._control[DONE_K]) + 1, self._last_k + 1)
        self._last_k = k
        return k, (int(self._control[T0_NS]) + k * self.period_ns) / NS - self.lead_s

    def put(self, k: int, payload: bytes | None) -> None:
        """Frame ``k`` (``next_deadline``); None: nothing to send at that deadline (a link
        held down), which is no miss."""
        slot = k % SLOTS
        n = 0 if payload is None else len(payload)
        if n > self._slots.shape[1]:
            raise ValueError(f"frame of {n} bytes, more than the {self._slots.shape[1]} laid out")
        if n:
            self._slots[slot, :n] = np.frombuffer(payload, np.uint8)
        self._lengths[slot] = n
        self._tags[slot] = k  # after the bytes: the slot is complete (module docstring)
        self._control[NEWEST] = k

    def take_lateness(self) -> np.ndarray:
        """The lateness [s] of the deadlines passed since the last call (at most CAPACITY of
        them): when each frame left, or when the loop gave a missed one up."""
        ticks = int(self.stats[TICKS])
        start = max(self._read, ticks - CAPACITY)
        self._read = ticks
        idx = np.arange(start, ticks) % CAPACITY
        return self._lateness[idx] / NS

    @property
    def last_error(self) -> str:
        """The OS's words for the last failed send, or ""."""
        return os.strerror(int(self.stats[LAST_ERRNO])) if self.stats[ERRORS] else ""

    # counts so far, read from the loop's stats
    deadlines = _Count(TICKS, "deadlines passed")
    sent = _Count(SENT, "frames sent")
    errors = _Count(ERRORS, "sends the OS refused")
    late = _Count(LATE, "frames not made by their deadline (sent late, or missed)")
    missed = _Count(MISSED, "frames not sent: not made within GRACE of a period of their "
                            "deadline")
    overruns = _Count(OVERRUNS, "deadlines the loop woke more than a period late for")
