"""A bound on a node process's last seconds that holds even while the interpreter lock is taken.

The ROS clean-up at a node process's end has been seen to spin for seconds inside Fast DDS with
Python's interpreter lock held (gdb stacks from a clean-clone CI run and a local repeat): in
``rmw_destroy_node``, the last node of the process destroys the DDS participant, whose
``DomainParticipant::set_listener(nullptr, timeout)`` (Fast DDS 3.2) waits for a discovery
callback in flight (a peer's endpoints going away as the whole graph stops). That wait returns
at once and takes the participant's mutex again, over and over; the callback thread, which
needs the mutex to finish, seldom gets it on a loaded machine. A watchdog thread in Python needs
the interpreter lock to run, and faulthandler's own ``exit`` always ends with code 1.

This guard is compiled code that runs without the lock (numba, ``nogil``): it sleeps in libc's
``usleep`` towards an absolute deadline on the monotonic clock and, unless released first,
writes its line to stderr and calls ``_exit`` with the process's exit code. What the process
wrote to Python's ``sys.stdout`` after its last flush is lost then (stderr is unbuffered).
Loaded from numba's cache it costs ~2 ms in a process that already runs
numba code, ~0.3 s in one that does not (numba's start).
"""
from __future__ import annotations

import threading
import time

import numba
import numpy as np
from numba import types

TICK_US = 10_000  # [us] how often the guard looks whether it was released
ENTER_WAIT_S = 5.0  # [s] wall time to wait for the guard's thread to be in its compiled loop
CLOCK_MONOTONIC = 1  # Linux's clockid_t of time.monotonic_ns

_usleep = types.ExternalFunction("usleep", types.int32(types.uint32))
_exit = types.ExternalFunction("_exit", types.void(types.int32))
_write = types.ExternalFunction("write", types.intp(types.int32, types.voidptr, types.uintp))
_clock_gettime = types.ExternalFunction("clock_gettime", types.int32(types.int32, types.voidptr))


@numba.njit(nogil=True, cache=True)
def _wait_then_exit(deadline_ns: int, flags: np.ndarray, timespec: np.ndarray,
                    message: np.ndarray, code: int) -> None:
    """Until the monotonic clock reaches deadline_ns [ns] (an absolute deadline: sleeps that
    run long do not add up), unless flags[1] = 1 (released); flags[0] = 1 once in the loop."""
    flags[0] = 1
    while not flags[1]:
        _clock_gettime(CLOCK_MONOTONIC, timespec.ctypes.data)
        left_ns = deadline_ns - (timespec[0] * 1_000_000_000 + timespec[1])
        if left_ns <= 0:
            _write(2, message.ctypes.data, message.size)
            _exit(code)
        _usleep(min(TICK_US, left_ns // 1000 + 1))


def warm_up() -> None:
    """The guard's kernel compiled, or loaded from numba's cache (returns at once: released)."""
    _wait_then_exit(0, np.array([0, 1], np.uint8), np.zeros(2, np.int64), np.zeros(1, np.uint8),
                    0)


class ExitGuard:
    """Ends the process with ``code`` after ``seconds``, writing ``message`` (one line), unless
    :meth:`release` comes first. Once ``armed``, the guard's thread no longer needs the
    interpreter lock; not armed (its thread did not start within ENTER_WAIT_S), it bounds
    nothing and the caller needs another bound."""

    def __init__(self, seconds: float, code: int, message: str):
        deadline_ns = time.monotonic_ns() + round(seconds * 1e9)
        self._flags = np.zeros(2, np.uint8)
        text = (message.rstrip("\n") + "\n").encode(errors="backslashreplace")
        # here too, though run_nodes loads it at start (then one cheap dispatch), so an ExitGuard
        # made elsewhere never compiles inside its thread, where it would need the lock long
        warm_up()
        self._thread = threading.Thread(
            target=_wait_then_exit, name="exit_guard", daemon=True,
            args=(deadline_ns, self._flags, np.zeros(2, np.int64),
                  np.frombuffer(text, np.uint8).copy(), int(code)))
        self._thread.start()
        end = time.monotonic() + ENTER_WAIT_S
        while not self._flags[0] and time.monotonic() < end:  # past the lock-taking dispatch
            time.sleep(0.001)
        self.armed = bool(self._flags[0])

    def release(self) -> None:
        self._flags[1] = 1
        self._thread.join(timeout=1.0)
