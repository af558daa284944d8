"""The real-time physics loop in a process of its own (issue 14), free of ROS.

In one process with the ROS executor, the fixed-step loop waits for the interpreter lock whenever
a callback (a message converted to Python, a publish) holds it: that, not the sleep, was most of
its p99 lateness. Here the loop (core.sim_loop.SimLoop, the model and the ego's crash) runs alone
in a child process (core.loop_child); the node's process keeps the ROS side. The newest driver
command goes through shared memory (core.command_slot), which the loop reads before each step;
everything else over two one-way pipes of pickled tuples:

- node -> physics: ``setup`` (first), ``pause``, ``steps``, ``reset``, ``fault``, ``rtf``,
  ``agents``, ``start``, ``stop`` (LoopProcess's methods, the same as SimLoop's);
- physics -> node (core.loop_events: a step as a flat vector, anything else pickled): ``ready``;
  ``step`` (k, t_ns and, when a state is due, the snapshot);
  ``status``; ``faults``; ``diverged``; ``damage`` and ``contact`` (the ego's crash); ``failed``
  (a traceback); ``refused`` (the setup is invalid: LoopSetupRefused, a ValueError, so the node
  refuses to start with exit 2); ``ended``. ``LoopProcess.run`` calls the node's hooks with them,
  in order, from the node's loop thread, as SimLoop.run would.

No call of the node blocks on the child: requests are written without blocking (a full pipe means
the child stopped reading: run() kills it and reports a failure), and close() never waits on the
pipe. A command the loop has not taken within COMMAND_TAKE_TIMEOUT_S (plus two wall periods of a
step), with no event from it meanwhile and the event pipe drained, means the same, and so does a
running (not paused) child that sends no step for as long (plus two event periods): the child is
frozen, run() kills it and reports a failure. A node that falls behind (a burst of callbacks) does
not publish stale samples: a step event with a newer step already waiting reaches ``after_step``
marked stale, and the node skips its high-rate raw state (counted); /clock and the lower-rate state
still go out, in order.

The child runs in a session of its own and ignores SIGINT and SIGTERM, so a terminal's Ctrl-C or
a service manager's SIGTERM to the group reaches the node only, which stops the loop in order
(the end of the request pipe ends it too). It dies with the node (PR_SET_PDEATHSIG, which Linux
ties to the thread that started it: the node's main thread, which lives as long as the node). Any
other end of the child is a failure. Lockstep and fast runs keep the loop in the node's thread:
they wait on their peers, not on deadlines.
"""
from __future__ import annotations

import fcntl
import math
import os
import select
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection

from vehicle_sim.core.accident.ego_crash import EgoCrashSetup
from vehicle_sim.core.command_slot import CommandSlot
from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.faults import FaultRequest
from vehicle_sim.core.loop_events import decode
from vehicle_sim.core.sim_loop import Hooks
from vehicle_sim.core.vehicle.full14.terrain import TerrainParams
from vehicle_sim.core.vehicle.interface import Controls
from vehicle_sim.core.vehicle.params import VehicleParams

_F_SETPIPE_SZ = 1031  # linux/fcntl.h
# ~850 step events with a state (~300 bytes, core.loop_events): a node busy for most of a second
# does not hold up the loop, and what waits in the pipe is published or skipped as stale (module
# doc)
PIPE_BYTES = 1 << 18
_CHILD = ("import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
          "signal.signal(signal.SIGTERM, signal.SIG_IGN); import sys; sys.path[0] = sys.argv[1]; "
          "from vehicle_sim.core.loop_child import main; main(sys.argv[2:])")
READY_TIMEOUT_S = 600.0  # building the model compiles numba kernels on a cold cache (minutes)
STOP_TIMEOUT_S = 2.0  # a child that has not ended this long after the stop is killed (close())
# a command the loop has not taken this long (plus two wall periods of a step) after it was
# written, or after the start: the child is frozen and killed (its loop takes the newest command
# before every step, and every <= 50 ms while paused)
COMMAND_TAKE_TIMEOUT_S = 2.0


class LoopProcessFailed(RuntimeError):
    """The physics process failed (its traceback is printed), stopped reading or ended unasked."""


class LoopSetupRefused(ValueError):
    """The physics process could not build its loop from the setup (a bad vehicle, model or
    terrain): the node refuses to start, as if it had built the model itself."""


@dataclass(frozen=True)
class LoopSetup:
    """Everything the physics process builds its loop from (picklable)."""

    params: DynamicsParams
    vehicle: VehicleParams
    terrain: TerrainParams | None = None
    crash: EgoCrashSetup | None = None


class LoopProcess:
    """SimLoop's interface for the node, with the loop in a child process (module docstring).
    The constructor returns once the child has built its model (or raises LoopSetupRefused,
    LoopProcessFailed)."""

    barrier = None  # real time only: no lockstep barrier

    def __init__(self, setup: LoopSetup, ready_timeout_s: float = READY_TIMEOUT_S,
                 take_timeout_s: float = COMMAND_TAKE_TIMEOUT_S):
        # a fresh interpreter (not multiprocessing's spawn, which re-runs the parent's main
        # script: a ROS node's executable has no __main__ guard) that imports this very copy of
        # the package: its root is the child's sys.path[0]
        req_in, req_out = os.pipe()
        evt_in, evt_out = os.pipe()
        self._slot = CommandSlot()
        widened = [_widen(evt_out), _widen(req_out)]  # both tried, the first refusal logged
        self.pipe_problem = next((why for why in widened if why), "")
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
            __file__))))
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD, package_root, str(os.getpid()), str(req_in),
             str(evt_out), str(self._slot.fd)], pass_fds=(req_in, evt_out, self._slot.fd),
            stdin=subprocess.DEVNULL,
            start_new_session=True)
        os.close(req_in)
        os.close(evt_out)
        self._requests = Connection(req_out, readable=False)
        self._events = Connection(evt_in, writable=False)
        # its own poll object: Connection.poll builds a selector per call (~15 us against ~2,
        # twice per event)
        self._event_poll = select.poll()
        self._event_poll.register(evt_in, select.POLLIN)
        self._received: deque[tuple] = deque()  # read from the pipe ahead of their dispatch
        self._send_lock = threading.Lock()
        self._closed = False
        self._unsent = 0  # requests the full pipe refused (the child stopped reading)
        # (sequence number, time.monotonic() [s]) of the oldest command written since the child
        # last took one; None: every command written was taken
        self._untaken: tuple[int, float] | None = None
        self._take_timeout_s = take_timeout_s
        self._rtf = setup.params.real_time_factor
        self._last_event_s = 0.0  # time.monotonic() of the last event read [s]
        self._started_s = float("inf")  # time.monotonic() of run()'s start
        self.dt_ns = setup.params.dt_ns
        # the longest wall period of a step the child may still sleep out [s] (_period_bound_s):
        # after the factor went up, the slower one until it has passed
        self._slowest_period_s = self.dt_ns * 1e-9 / self._rtf
        self._rtf_changed_s = 0.0  # time.monotonic() of the last factor change [s]
        p = setup.params
        # at most this many steps between two events of a running child (core.sim_loop's
        # step_outputs: /clock, the raw state, the state)
        self._event_every_steps = min(p.clock_decimation, p.every(p.state_rate_hz),
                                      p.raw_state_decimation or p.clock_decimation)
        self._resumed_s = 0.0  # time.monotonic() of the last pause or resume [s]
        self._diverged = False  # the child's loop stopped stepping for good (no more events)
        self._end_k = p.end_step  # the child holds there (the run's duration): no more events
        self.k = 0
        self.priority_problem = ""
        self._paused = False
        self._active_faults: list[str] = []
        self._stopping = False
        self.stale_steps = 0  # step events that reached after_step marked stale
        self.on_damage: Callable[[int, list[float], list[int]], None] = lambda t, i, lv: None
        self.on_contact: Callable[[str], None] = lambda line: None
        try:
            self._requests.send(("setup", setup))  # the fresh child reads it at once
        except OSError:
            pass  # it has gone: the wait below reports why
        os.set_blocking(req_out, False)  # from now on (module docstring)
        msg = self._next(ready_timeout_s)
        if msg is None or msg[0] != "ready":
            self.close()
            if msg is not None and msg[0] == "refused":
                raise LoopSetupRefused(msg[1])
            raise LoopProcessFailed(self._why(msg, "while building the model"))

    # ---- SimLoop's interface (any thread of the node) ----------------------------------------
    @property
    def t_ns(self) -> int:
        return self.k * self.dt_ns

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def pid(self) -> int:
        return self._proc.pid

    def set_command(self, controls: Controls) -> None:
        """The newest command, for the loop's next step (shared memory, module docstring)."""
        with self._send_lock:
            if self._closed:
                return
            seq = self._slot.write(controls)
            if self._untaken is None:
                self._untaken = (seq, time.monotonic())

    def pause(self, paused: bool) -> None:
        if paused != self._paused:  # the mark first: _silent may run between these lines
            self._resumed_s = time.monotonic()
        self._paused = paused
        self._send(("pause", paused))

    def request_steps(self, n: int) -> None:
        self._send(("steps", n))

    def request_reset(self, x_m: float, y_m: float, yaw_rad: float, speed_mps: float) -> None:
        self._send(("reset", (x_m, y_m, yaw_rad, speed_mps)))

    def request_fault(self, req: FaultRequest, at_ns: int = 0) -> None:
        self._send(("fault", req, at_ns))

    def set_real_time_factor(self, rtf: float) -> None:
        self._slowest_period_s = max(self._slowest_period_s, self.dt_ns * 1e-9 / rtf)
        self._rtf_changed_s = time.monotonic()
        self._rtf = rtf
        self._send(("rtf", rtf))

    def set_agents(self, agents: tuple) -> None:
        """The traffic agents of the ego's crash contacts (core.accident.ego_crash)."""
        self._send(("agents", agents))

    def active_fault_kinds(self) -> list[str]:
        return list(self._active_faults)

    # ---- the node's loop thread ----------------------------------------------------------------
    def run(self, stop: threading.Event, hooks: Hooks) -> None:
        """Start the loop and call ``hooks`` with its events until it ends (``stop``, or a
        diverged state); LoopProcessFailed if the child fails, dies or stops reading. Once
        ``stop`` is set, only the child's end is awaited: no hook is called."""
        try:
            self._started_s = time.monotonic()
            self._send(("start",))
            self._run(stop, hooks)
        finally:
            self.close()

    def _run(self, stop: threading.Event, hooks: Hooks) -> None:
        stop_by = float("inf")
        while True:
            if stop.is_set() and not self._stopping:
                self._stopping = True
                stop_by = time.monotonic() + STOP_TIMEOUT_S
                self._send(("stop",))
            if self._unsent and not self._stopping:
                self._proc.kill()
                raise LoopProcessFailed(
                    f"physics process stopped reading its requests at t={self.t_ns * 1e-9:.3f} "
                    f"s (its request pipe is full): killed")
            msg = self._next(0.05)
            if msg is None:
                # judged only with the event pipe drained: a node that stalled (its pipe full,
                # the child blocked sending) is not a frozen child
                alive = self._proc.poll() is None  # an ended child: reported below, as it ended
                if alive and self._untaken is not None and not self._stopping \
                        and self._command_stuck():
                    self._proc.kill()
                    raise LoopProcessFailed(
                        f"physics process stopped taking commands at t={self.t_ns * 1e-9:.3f} s "
                        f"(none taken and no event for {self._take_bound_s():.1f} s): killed")
                if alive and self._silent():
                    self._proc.kill()
                    raise LoopProcessFailed(
                        f"physics process sent no step after t={self.t_ns * 1e-9:.3f} s for "
                        f"{self._silence_bound_s():.1f} s while running: killed")
                if alive and time.monotonic() < stop_by:
                    continue
                if self._stopping:  # closed by stop() meanwhile, or deaf to the stop
                    return
                raise LoopProcessFailed(self._why(None, f"at t={self.t_ns * 1e-9:.3f} s"))
            if msg[0] == "failed":
                raise LoopProcessFailed(self._why(msg, f"at t={self.t_ns * 1e-9:.3f} s"))
            if msg[0] == "ended":
                return
            if not self._stopping:
                self._dispatch(msg, hooks)

    def _dispatch(self, msg: tuple, hooks: Hooks) -> None:
        kind = msg[0]
        if kind == "step":
            _, self.k, t_ns, snapshot = msg
            stale = self._newer_step_waits()
            self.stale_steps += stale
            hooks.after_step(self.k, t_ns, snapshot, stale)
        elif kind == "status":
            _, status, self.priority_problem = msg
            hooks.status(status)
        elif kind == "faults":
            _, t_ns, changes, self._active_faults = msg
            hooks.faults_changed(t_ns, changes)
        elif kind == "diverged":
            self._diverged = True
            hooks.diverged(msg[1], msg[2])
        elif kind == "damage":
            self.on_damage(*msg[1:])
        elif kind == "contact":
            self.on_contact(msg[1])

    def close(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """Stop the child and reap it, killed if it does not end in time; once, from any thread.
        The end of the request pipe is the stop (the child reads it)."""
        with self._send_lock:  # a send in progress finishes first (it never blocks)
            if self._closed:
                return
            self._closed = self._stopping = True
            self._requests.close()
            self._slot.close()
        try:
            self._proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout_s)
        self._events.close()

    def _send(self, msg: tuple) -> None:
        """Write ``msg`` without blocking; a full pipe (the child stopped reading; what it holds
        is then cut short) is counted for run(), which kills the child and reports it."""
        with self._send_lock:
            if self._closed:
                return
            if self._unsent:  # the stream is cut short: nothing more goes in
                self._unsent += 1
                return
            try:
                self._requests.send(msg)
            except BlockingIOError:
                self._unsent += 1
            except OSError:  # the child has gone: run() reports it
                pass

    def _period_bound_s(self) -> float:
        """The longest wall period of a step the child may still be sleeping out [s]: after a
        factor change, the old one until it has surely passed."""
        if time.monotonic() - self._rtf_changed_s > self._slowest_period_s:
            self._slowest_period_s = self.dt_ns * 1e-9 / self._rtf
        return self._slowest_period_s

    def _silence_bound_s(self) -> float:
        return self._take_timeout_s + 2.0 * self._event_every_steps * self._period_bound_s()

    def _silent(self) -> bool:
        """Running (not paused, stopping, diverged or held at the run's end) and no event for
        the bound, the event pipe drained: a frozen child, even when no command comes to find
        it."""
        if self._paused or self._stopping or self._diverged or 0 < self._end_k <= self.k:
            return False
        since_s = max(self._last_event_s, self._started_s, self._resumed_s)
        return time.monotonic() - since_s > self._silence_bound_s()

    def _take_bound_s(self) -> float:
        return self._take_timeout_s + 2.0 * self._period_bound_s()

    def _command_stuck(self) -> bool:
        """Whether the oldest untaken command, and the last event, are older than the bound
        (clears it once the child took it or a newer one)."""
        with self._send_lock:
            if self._untaken is None or self._closed:
                return False
            seq, written_s = self._untaken
            if self._slot.taken() >= seq:
                self._untaken = None
                return False
        since_s = max(written_s, self._started_s, self._last_event_s)
        return time.monotonic() - since_s > self._take_bound_s()

    def _next(self, timeout_s: float) -> tuple | None:
        if self._received:
            return self._received.popleft()
        try:
            if self._event_poll.poll(math.ceil(timeout_s * 1e3)):  # [ms]
                self._last_event_s = time.monotonic()
                return decode(self._events.recv_bytes())
        except (EOFError, OSError):
            self._reap()
        return None

    def _newer_step_waits(self) -> bool:
        """Whether a later step event is already here (reads what the pipe holds, in order)."""
        try:
            while self._event_poll.poll(0):
                self._last_event_s = time.monotonic()
                self._received.append(decode(self._events.recv_bytes()))
        except (EOFError, OSError):
            pass  # the end: _next finds it
        return any(m[0] == "step" for m in self._received)

    def _reap(self) -> None:
        try:
            self._proc.wait(1.0)
        except subprocess.TimeoutExpired:
            pass

    def _why(self, msg: tuple | None, when: str) -> str:
        if msg is not None and msg[0] == "failed":
            sys.stderr.write(msg[1])
            return f"physics process failed {when}: {msg[1].strip().splitlines()[-1]}"
        self._reap()
        return f"physics process ended {when} (exit code {self._proc.returncode})"


def _widen(fd: int) -> str:
    """The pipe PIPE_BYTES wide; "" or why not (e.g. over /proc/sys/fs/pipe-max-size)."""
    try:
        fcntl.fcntl(fd, _F_SETPIPE_SZ, PIPE_BYTES)
    except OSError as exc:
        return f"physics process pipes left at the system's default size ({exc})"
    return ""

