"""The physics process of core.loop_process: build the loop from its LoopSetup, report ready,
wait for the start, run it and send its events (the protocol is in core.loop_process).

Started as ``python -c loop_process._CHILD PACKAGE_ROOT PARENT_PID REQ_FD EVT_FD SLOT_FD``: the
first statements of that line ignore SIGINT and SIGTERM (a terminal's Ctrl-C and a service manager's
SIGTERM to the whole group are for the node, which stops this process in order) and put the parent's
own copy of the package first on sys.path. Two threads: the loop (SimLoop.run, SCHED_FIFO where
permitted) is the only sender of events and takes the node's commands from the shared slot
(core.command_slot) before each step; the request thread applies the node's other requests.
"""
from __future__ import annotations

import os
import threading
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection

from vehicle_sim.core.accident.ego_crash import EgoCrash
from vehicle_sim.core.command_slot import CommandSlot
from vehicle_sim.core.dynamics_params import DynamicsParams
from vehicle_sim.core.loop_events import event, step_event
from vehicle_sim.core.loop_process import LoopSetup
from vehicle_sim.core.parent_death import die_with_parent
from vehicle_sim.core.realtime import (
    PLATFORM_LOOP_PRIORITY,
    freeze_start_heap,
    set_realtime_priority,
    shorten_switch_interval,
)
from vehicle_sim.core.sim_loop import Hooks, SimLoop, step_outputs
from vehicle_sim.core.vehicle.factory import build_model
from vehicle_sim.core.vehicle.interface import VehicleModel

def loop_model(setup: LoopSetup) -> VehicleModel:
    """The setup's vehicle model, compiled by one step (core.vehicle.factory.build_model)."""
    p = setup.params
    return build_model(p.model, setup.vehicle, p.integrator, p.dt_ns * 1e-9, setup.terrain)


def main(argv: list[str]) -> None:
    """The physics process (``PARENT_PID REQ_FD EVT_FD SLOT_FD``): build, report ready, wait for the
    start, run the loop (module docstring); exit 0, 1 (failed) or 2 (refused)."""
    die_with_parent(int(argv[0]))
    requests = Connection(int(argv[1]), writable=False)
    events = Connection(int(argv[2]), readable=False)
    try:
        kind, setup = requests.recv()
        if kind != "setup":
            raise ValueError(f"physics process: expected the setup first, got {kind!r}")
        code = _serve(setup, requests, events, CommandSlot(int(argv[3])))
    except BaseException:  # noqa: B036, BLE001 (anything: the parent must hear why)
        events.send_bytes(event(("failed", traceback.format_exc())))
        code = 1
    events.close()
    os._exit(code)


def _serve(setup: LoopSetup, requests: Connection, events: Connection,
           commands: CommandSlot) -> int:
    p = setup.params
    try:
        model = loop_model(setup)
    except (ValueError, FileNotFoundError) as exc:  # the setup's fault, not the code's
        events.send_bytes(event(("refused", f"{type(exc).__name__}: {exc}")))
        return 2
    loop = SimLoop(model, p, commands=commands.take)

    def send(msg: tuple) -> None:  # the loop thread is the only sender
        events.send_bytes(event(msg))

    hooks = Hooks(after_step=_step_sender(p, model, events.send_bytes),
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
    freeze_start_heap()  # no full collection of the start-up heap inside a period
    send(("ready",))
    start.wait()
    if not stop.is_set():
        shorten_switch_interval()
        loop.run(stop, hooks)
    send(("failed", errors[0]) if errors else ("ended",))
    return 1 if errors else 0


def _step_sender(p: DynamicsParams, model: VehicleModel,
                 send_bytes: Callable[[bytes], None]) -> Callable[[int, int], None]:
    def after_step(k: int, t_ns: int) -> None:
        clock, raw, state = step_outputs(p, k)
        if not (clock or raw or state):
            return
        snapshot = None
        if raw or state:
            snapshot = model.snapshot()
            snapshot.require_finite()  # NonFiniteState: the loop stops and reports it
        send_bytes(step_event(k, t_ns, snapshot))
    return after_step


def _take_requests(requests: Connection, loop: SimLoop, crash: EgoCrash | None,
                   start: threading.Event, stop: threading.Event, errors: list[str]) -> None:
    """The child's request thread: SimLoop's thread-safe methods, as the node's executor called
    them in one process; the end of the pipe (the node's close, or the node gone) stops the loop.
    One FIFO level below the loop: the loop never waits behind the machine's other work for the
    interpreter lock this thread holds (priority inversion); and under the bridge's platform
    loop (PLATFORM_LOOP_PRIORITY): FIFO threads of one level run to completion, so a request
    (the traffic agents for the crash physics, 20 Hz) held that loop up where both shared a
    core."""
    if loop.params.realtime_priority > 1:  # refused: as the node's thread
        set_realtime_priority(min(loop.params.realtime_priority - 1, PLATFORM_LOOP_PRIORITY - 1))
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
    if kind == "agents" and crash is not None:
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
