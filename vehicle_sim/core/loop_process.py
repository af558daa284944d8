"""The real-time physics loop in a process of its own (issue 14), free of ROS.

In one process with the ROS executor, the fixed-step loop waits for the interpreter lock whenever
a callback (a message converted to Python, a publish) holds it: that, not the sleep, was most of
its p99 lateness. Here the loop (core.sim_loop.SimLoop, the model and the ego's crash) runs alone
in a child process; the node's process keeps the ROS side. Both ends speak over two one-way
pipes of pickled tuples:

- node -> physics: ``command``, ``pause``, ``steps``, ``reset``, ``fault``, ``rtf``, ``agents``,
  ``start``, ``stop`` (LoopProcess's methods, the same as SimLoop's);
- physics -> node: ``ready``; ``step`` (k, t_ns and, when a state is due, the snapshot);
  ``status``; ``faults``; ``diverged``; ``damage`` and ``contact`` (the ego's crash); ``failed``
  (a traceback); ``refused`` (the setup is invalid: LoopSetupRefused, a ValueError, so the node
  refuses to start with exit 2); ``ended``. ``LoopProcess.run`` calls the node's hooks with them,
  in order, from the node's loop thread, as SimLoop.run would.

A node that falls behind (a burst of callbacks) does not publish stale samples: a step event with
newer events already waiting reaches ``after_step`` marked stale, and the node skips its
high-rate raw state (counted); /clock and the lower-rate state still go out, in order.

The child runs in a session of its own and ignores SIGINT from its first line, so a terminal's
Ctrl-C or a SIGTERM to the node's process group reaches the node only, which stops the loop in
order (closing the request pipe ends it too). It dies with the node (PR_SET_PDEATHSIG, which
Linux ties to the thread that started it: the node's main thread, which lives as long as the
node). Any other end of the child is a failure. Lockstep and fast runs keep the loop in the
node's thread: they wait on their peers, not on deadlines.
"""
from __future__ import annotations

import ctypes
import fcntl
import os
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

from vehicle_sim.core.accident.ego_crash import EgoCrash, EgoCrashSetup
from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.faults import FaultRequest
from vehicle_sim.core.realtime import set_realtime_priority, shorten_switch_interval
from vehicle_sim.core.sim_loop import Hooks, SimLoop, step_outputs
from vehicle_sim.core.vehicle.factory import build_model
from vehicle_sim.core.vehicle.full14.terrain import TerrainParams
from vehicle_sim.core.vehicle.interface import Controls, VehicleModel
from vehicle_sim.core.vehicle.params import VehicleParams

_PR_SET_PDEATHSIG = 1  # linux/prctl.h
_F_SETPIPE_SZ = 1031  # linux/fcntl.h
# ~250 step events with a state (~1 KB pickled): a node busy for a quarter of a second does not
# hold up the loop, and what waits in the pipe is published or skipped as stale (module doc)
PIPE_BYTES = 1 << 18
_CHILD = ("import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); import sys; "
          "from vehicle_sim.core.loop_process import _child_main; _child_main(sys.argv[1:])")
READY_TIMEOUT_S = 600.0  # building the model compiles numba kernels on a cold cache (minutes)


class LoopProcessFailed(RuntimeError):
    """The physics process failed (its traceback is printed) or ended unasked."""


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


def loop_model(setup: LoopSetup) -> VehicleModel:
    """The setup's vehicle model, compiled by one step (core.vehicle.factory.build_model)."""
    p = setup.params
    return build_model(p.model, setup.vehicle, p.integrator, p.dt_ns * 1e-9, setup.terrain)


class LoopProcess:
    """SimLoop's interface for the node, with the loop in a child process (module docstring).
    The constructor returns once the child has built its model (or raises LoopProcessFailed)."""

    barrier = None  # real time only: no lockstep barrier

    def __init__(self, setup: LoopSetup, ready_timeout_s: float = READY_TIMEOUT_S):
        # a fresh interpreter (not multiprocessing's spawn, which re-runs the parent's main
        # script: a ROS node's executable has no __main__ guard) that imports this very package
        req_in, req_out = os.pipe()
        evt_in, evt_out = os.pipe()
        self.pipe_problem = _widen(evt_out)
        package_root = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [package_root, *filter(None, [os.environ.get("PYTHONPATH")])])}
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(os.getpid()), str(req_in), str(evt_out)],
            pass_fds=(req_in, evt_out), env=env, stdin=subprocess.DEVNULL,
            start_new_session=True)
        os.close(req_in)
        os.close(evt_out)
        self._requests = Connection(req_out, readable=False)
        self._events = Connection(evt_in, writable=False)
        self._send_lock = threading.Lock()
        self._close_lock = threading.Lock()
        self._closed = False
        self._send(("setup", setup))
        self.dt_ns = setup.params.dt_ns
        self.k = 0
        self.priority_problem = ""
        self._paused = False
        self._active_faults: list[str] = []
        self._stopping = False
        self.stale_steps = 0  # step events that reached after_step marked stale
        self.on_damage: Callable[[int, list[float], list[int]], None] = lambda t, i, lv: None
        self.on_contact: Callable[[str], None] = lambda line: None
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
        self._send(("command", controls))

    def pause(self, paused: bool) -> None:
        self._paused = paused
        self._send(("pause", paused))

    def request_steps(self, n: int) -> None:
        self._send(("steps", n))

    def request_reset(self, x_m: float, y_m: float, yaw_rad: float, speed_mps: float) -> None:
        self._send(("reset", (x_m, y_m, yaw_rad, speed_mps)))

    def request_fault(self, req: FaultRequest, at_ns: int = 0) -> None:
        self._send(("fault", req, at_ns))

    def set_real_time_factor(self, rtf: float) -> None:
        self._send(("rtf", rtf))

    def set_agents(self, agents: tuple) -> None:
        """The traffic agents of the ego's crash contacts (core.accident.ego_crash)."""
        self._send(("agents", agents))

    def active_fault_kinds(self) -> list[str]:
        return list(self._active_faults)

    # ---- the node's loop thread ----------------------------------------------------------------
    def run(self, stop: threading.Event, hooks: Hooks) -> None:
        """Start the loop and call ``hooks`` with its events until it ends (``stop``, or a
        diverged state); LoopProcessFailed if the child fails or dies. Once ``stop`` is set, only
        the child's end is awaited: no hook is called."""
        try:
            self._send(("start",))
            self._run(stop, hooks)
        finally:
            self.close()

    def _run(self, stop: threading.Event, hooks: Hooks) -> None:
        while True:
            if stop.is_set() and not self._stopping:
                self._stopping = True
                self._send(("stop",))
            msg = self._next(0.05)
            if msg is None:
                if self._proc.poll() is None:
                    continue
                if self._stopping:  # closed by stop() meanwhile
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
            stale = self._waiting()
            self.stale_steps += stale
            hooks.after_step(self.k, t_ns, snapshot, stale)
        elif kind == "status":
            _, status, self.priority_problem = msg
            hooks.status(status)
        elif kind == "faults":
            _, t_ns, changes, self._active_faults = msg
            hooks.faults_changed(t_ns, changes)
        elif kind == "diverged":
            hooks.diverged(msg[1], msg[2])
        elif kind == "damage":
            self.on_damage(*msg[1:])
        elif kind == "contact":
            self.on_contact(msg[1])

    def close(self, timeout_s: float = 2.0) -> None:
        """Stop the child and reap it, killed if it does not end in time; once, from any thread.
        Closing the request pipe is the stop (the child reads its end): it never blocks, even
        while another thread's send waits on a full pipe of a frozen child."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = self._stopping = True
        self._requests.close()
        try:
            self._proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout_s)
        self._events.close()

    def _send(self, msg: tuple) -> None:
        with self._send_lock:
            try:
                self._requests.send(msg)
            except OSError:  # the child has gone (run() reports it) or the pipe is closed
                pass

    def _next(self, timeout_s: float) -> tuple | None:
        try:
            if self._events.poll(timeout_s):
                return self._events.recv()
        except (EOFError, OSError):
            self._reap()
        return None

    def _waiting(self) -> bool:
        try:
            return self._events.poll(0)
        except OSError:
            return False

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
    """The event pipe PIPE_BYTES wide; "" or why not (e.g. over /proc/sys/fs/pipe-max-size)."""
    try:
        fcntl.fcntl(fd, _F_SETPIPE_SZ, PIPE_BYTES)
    except OSError as exc:
        return f"event pipe left at the system's default size ({exc})"
    return ""


def _die_with_parent(parent_pid: int) -> None:
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before the prctl
        os._exit(1)


def _child_main(argv: list[str]) -> None:
    """The physics process (``python -c _CHILD PARENT_PID REQ_FD EVT_FD``):
    build, report ready, wait for start, run the loop (module docstring)."""
    _die_with_parent(int(argv[0]))
    requests = Connection(int(argv[1]), writable=False)
    events = Connection(int(argv[2]), readable=False)
    try:
        kind, setup = requests.recv()
        if kind != "setup":
            raise ValueError(f"physics process: expected the setup first, got {kind!r}")
        code = _serve(setup, requests, events)
    except BaseException:  # noqa: B036, BLE001 (anything: the parent must hear why)
        events.send(("failed", traceback.format_exc()))
        code = 1
    events.close()
    os._exit(code)


def _serve(setup: LoopSetup, requests: Connection, events: Connection) -> int:
    p = setup.params
    try:
        model = loop_model(setup)
    except (ValueError, FileNotFoundError) as exc:  # the setup's fault, not the code's
        events.send(("refused", f"{type(exc).__name__}: {exc}"))
        return 2
    loop = SimLoop(model, p)
    send = events.send  # the loop thread is the only sender
    hooks = Hooks(after_step=_step_sender(p, model, send),
                  status=lambda s: send(("status", s, loop.priority_problem)),
                  faults_changed=lambda t, ch: send(("faults", t, ch, loop.active_fault_kinds())),
                  diverged=lambda t, why: send(("diverged", t, why)))
    crash = None
    if setup.crash is not None:
        crash = EgoCrash(setup.crash, model, lambda t, i, lv: send(("damage", t, i, lv)),
                         lambda line: send(("contact", line)))
        hooks.before_step, hooks.reset_done = crash.before_step, crash.reset_done
    start, stop = threading.Event(), threading.Event()
    errors: list[str] = []  # a request that raised: the loop stops and the parent hears it
    threading.Thread(target=_take_requests, args=(requests, loop, crash, start, stop, errors),
                     name="requests", daemon=True).start()
    send(("ready",))
    start.wait()
    if not stop.is_set():
        shorten_switch_interval()
        loop.run(stop, hooks)
    send(("failed", errors[0]) if errors else ("ended",))
    return 1 if errors else 0


def _step_sender(p: DynamicsParams, model: VehicleModel,
                 send: Callable[[tuple], None]) -> Callable[[int, int], None]:
    def after_step(k: int, t_ns: int) -> None:
        clock, raw, state = step_outputs(p, k)
        if not (clock or raw or state):
            return
        snapshot = None
        if raw or state:
            snapshot = model.snapshot()
            snapshot.require_finite()  # NonFiniteState: the loop stops and reports it
        send(("step", k, t_ns, snapshot))
    return after_step


def _take_requests(requests: Connection, loop: SimLoop, crash: EgoCrash | None,
                   start: threading.Event, stop: threading.Event, errors: list[str]) -> None:
    """The child's request thread: SimLoop's thread-safe methods, as the node's executor called
    them in one process; the end of the pipe (the node's close, or the node gone) stops the loop.
    One FIFO level below the loop: the loop never waits behind the machine's other work for the
    interpreter lock this thread holds (priority inversion)."""
    if loop.params.realtime_priority > 1:
        set_realtime_priority(loop.params.realtime_priority - 1)  # refused: as the node's thread
    while True:
        try:
            msg = requests.recv()
        except (EOFError, OSError):
            msg = ("stop",)
        try:
            _take(msg, loop, crash, start)
        except Exception:  # noqa: BLE001 (a request the loop refused: the parent hears why)
            errors.append(traceback.format_exc())
            msg = ("stop",)
        if msg[0] == "stop":
            stop.set()
            start.set()
            return


def _take(msg: tuple, loop: SimLoop, crash: EgoCrash | None, start: threading.Event) -> None:
    kind = msg[0]
    if kind == "command":
        loop.set_command(msg[1])
    elif kind == "agents" and crash is not None:
        crash.set_agents(msg[1])
    elif kind == "pause":
        loop.pause(msg[1])
    elif kind == "steps":
        loop.request_steps(msg[1])
    elif kind == "reset":
        loop.request_reset(*msg[1])
    elif kind == "fault":
        loop.request_fault(msg[1], msg[2])
    elif kind == "rtf":
        loop.set_real_time_factor(msg[1])
    elif kind == "start":
        start.set()
