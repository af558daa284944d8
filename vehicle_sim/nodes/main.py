"""Common start-up and shutdown of every vehicle_sim node process.

- A malformed or unknown parameter (ConfigError/ValueError), or a ROS argument rcl cannot
  parse (a malformed ``--params-file``), makes the node refuse to start: one fatal line naming
  it, exit code 2.
- Several nodes may share a process and its executor (``run_nodes``; vehicle_sim_compose, the
  ``process`` of a scenario's nodes): each with its own ROS arguments, all ending together.
- ``warm_up`` (compiling the node's numba kernels, vehicle_sim.warm) runs before the node is
  created: a node joins the ROS graph only once it can keep up with simulated time, and the
  clock owner (which waits for every node of the graph) starts the simulation after that.
- SIGINT/SIGTERM stop the node's own threads first, then rclpy, so no thread publishes into a
  context that is already shut down.
- SIGUSR1 prints every thread's Python stack to stderr (faulthandler): the runner sends it to a
  node that does not stop, so the log shows where it hangs.
- The ROS clean-up at the end (destroy_node, rclpy shutdown) is bounded: under load it has been
  seen to block inside ``Node.destroy_node`` (the rcl/rmw node teardown; 1 of 8 fast runs under
  4 busy loops here), with the interpreter lock held (core.exit_guard): after
  ``CLEANUP_TIMEOUT_S`` the process prints its stacks and, ``STACKS_S`` later, says so and exits
  with the node's exit code. The executor and the nodes are released inside that bound too
  (their destructors have blocked as well). Everything the node does at the end
  belongs in its ``stop()`` (files, summaries) and its code in ``exit_code()``: both run before
  the clean-up.
"""
from __future__ import annotations

import faulthandler
import gc
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass

import rclpy
from rclpy._rclpy_pybind11 import RCLError, UnknownROSArgsError
from rclpy.clock import ClockType
from rclpy.context import Context
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.executors import Executor, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from vehicle_sim.core.config import ConfigError
from vehicle_sim.core.exit_guard import ExitGuard
from vehicle_sim.core.exit_guard import warm_up as warm_exit_guard
from vehicle_sim.core.realtime import freeze_start_heap

CLEANUP_TIMEOUT_S = 5.0  # below the runner's STOP_GRACE_S (10 s), so it never needs SIGTERM
STACKS_S = 0.5  # [s] after the stacks at CLEANUP_TIMEOUT_S, the guard ends the process
# ROS arguments rcl cannot parse, or does not know
ROSArgsError = (RCLError, UnknownROSArgsError)
# a parameter override of the wrong type or value for a parameter rclpy itself declares
ParameterException = (InvalidParameterTypeException, InvalidParameterValueException)


# which executor spins a node process: "events" (rclpy's EventsExecutor, in C++: the urban graph
# at real time takes ~1.1 core instead of ~1.7 of two, and its physics loop overruns less;
# bench/bench_deadlines.py, README Performance) or "single" (rclpy's SingleThreadedExecutor, in
# Python). "events" falls back to "single" where rclpy has none (before Kilted), and for a
# process with a timer on simulated time: the EventsExecutor drives such timers from clock-jump
# callbacks, and a traffic or ego-driver timer stalled at times under it (tests that tick /clock
# by hand), never under the SingleThreadedExecutor
EXECUTOR_ENV = "VEHICLE_SIM_EXECUTOR"
EXECUTORS = ("events", "single")


def executor_choice() -> str:
    """$VEHICLE_SIM_EXECUTOR, else "events"; ValueError naming an unknown one."""
    choice = os.environ.get(EXECUTOR_ENV) or "events"
    if choice not in EXECUTORS:
        raise ValueError(f"{EXECUTOR_ENV}={choice!r} is not one of {', '.join(EXECUTORS)}")
    return choice


def has_sim_time_timer(node: Node) -> bool:
    """A timer of ``node`` runs on its ROS clock while that follows /clock (use_sim_time)."""
    return bool(node.get_parameter("use_sim_time").value) and any(
        timer.clock.clock_type == ClockType.ROS_TIME for timer in node.timers)


def make_executor(choice: str, nodes: list[Node],
                  context: Context | None = None) -> tuple[Executor, str]:
    """The executor for ``nodes`` and a line saying which one and why."""
    timed = [node.get_name() for node in nodes if has_sim_time_timer(node)]
    if choice == "events" and not timed:
        try:
            from rclpy.experimental import EventsExecutor  # rclpy >= 9 (Kilted)
        except ImportError:
            return (SingleThreadedExecutor(context=context),
                    "SingleThreadedExecutor (this rclpy has no EventsExecutor)")
        return EventsExecutor(context=context), "EventsExecutor"
    why = (f"{EXECUTOR_ENV}=single" if choice == "single"
           else f"a timer on simulated time in {', '.join(timed)}")
    return SingleThreadedExecutor(context=context), f"SingleThreadedExecutor ({why})"


@dataclass(frozen=True)
class NodeEntry:
    """How a process runs one node class: ``factory(**options)`` makes the node (``options``:
    rclpy Node keyword arguments, e.g. ``cli_args`` of a composed process), ``done(node)`` ends
    the process, ``warm_up()`` compiles its kernels first (vehicle_sim.warm)."""

    factory: Callable[..., Node]
    name: str
    done: Callable[[Node], bool] = lambda node: False
    warm_up: Callable[[], None] = lambda: None


def run(factory: Callable[..., Node], name: str, args: list[str] | None = None,
        done: Callable[[Node], bool] = lambda node: False,
        warm_up: Callable[[], None] = lambda: None) -> int:
    """One node in its process (:func:`run_nodes` with one entry and the process's ROS
    arguments)."""
    return run_nodes([(NodeEntry(factory, name, done, warm_up), [])], args)


def run_nodes(members: list[tuple[NodeEntry, list[str]]], args: list[str] | None = None) -> int:
    """Create the nodes (each with its own ROS arguments; [] = the process's), spin them in one
    executor until a signal or any ``done(node)``, then clean up; returns the exit code (2: one
    refused to start; 1: an error escaped a node; else the first non-zero ``exit_code()``).
    Every ``warm_up()`` runs first, before any node exists in the ROS graph.

    A node may define ``start()`` (called after construction), ``stop()`` (called before
    rclpy shuts down) and ``exit_code()`` (default 0).
    """
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    label = "+".join(entry.name for entry, _ in members)
    stop = threading.Event()  # first: a signal during the warm-up or the start ends it cleanly
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        choice = executor_choice()
    except ValueError as exc:
        print(f"[FATAL] [{label}]: refusing to start: {exc}", file=sys.stderr)
        return 2
    for name, warm_up in [(entry.name, entry.warm_up) for entry, _ in members] + [
            (label, warm_exit_guard)]:
        try:
            warm_up()
        except Exception as exc:  # the node still runs; it compiles at first use instead
            print(f"[WARN] [{name}]: kernel warm-up failed ({type(exc).__name__}: {exc}); "
                  f"compiling at first use", file=sys.stderr)
    if stop.is_set():  # stopped before it started
        return 0
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    except ROSArgsError as exc:  # e.g. a malformed --params-file: rcl's own message names it
        print(f"[FATAL] [{label}]: refusing to start: {_first_line(exc)}", file=sys.stderr)
        return 2
    nodes, code = _create(members, stop)
    started: list[Node] = []  # stop() and exit_code() are for nodes whose start() ran
    error, executor = "", None
    try:
        if code is None:
            # full collections scan only what the run allocates; before start(): a node's
            # real-time thread would wait out this collection
            freeze_start_heap()
            for _, node in nodes:
                getattr(node, "start", lambda: None)()
                started.append(node)
            executor, which = make_executor(choice, [node for _, node in nodes])
            names = "+".join(node.get_name() for _, node in nodes)
            nodes[0][1].get_logger().info(f"{names}: spinning with rclpy's {which}")
            for _, node in nodes:
                executor.add_node(node)
            while (not stop.is_set() and rclpy.ok()
                   and not any(entry.done(node) for entry, node in nodes)):
                executor.spin_once(timeout_sec=0.05)
    except BaseException:
        error = traceback.format_exc()
        raise
    finally:
        codes = [_finish(node, failed=bool(error)) for node in started]
        if code is None or error:
            code = next((c for c in codes if c), 1 if error else 0)
        guard = _bound_cleanup(label, code, error)
        try:
            for _, node in nodes:
                if executor is not None:
                    executor.remove_node(node)
                node.destroy_node()
            _shut_down(executor, label)
            # the last references go here, so the destructors of the executor and of the
            # nodes' entities run inside the guard's bound and not after this returns (a
            # gps node hung there once, in an EventHandler's __exit__, until the runner killed
            # it); the nodes were created before the heap was frozen: unfrozen, so a node held
            # in a reference cycle is collected too
            executor = node = None
            nodes.clear()
            started.clear()
            gc.unfreeze()
            gc.collect()
            rclpy.try_shutdown()
        finally:
            if guard is not None:
                guard.release()
            faulthandler.cancel_dump_traceback_later()
    return code


def _create(members: list[tuple[NodeEntry, list[str]]],
            stop: threading.Event) -> tuple[list[tuple[NodeEntry, Node]], int | None]:
    """The nodes, one after the other; with the exit code when the process must not go on
    (2: one refused to start, naming it; 1: one failed to start; 0: stopped by a signal
    meanwhile)."""
    nodes: list[tuple[NodeEntry, Node]] = []
    for entry, cli_args in members:
        if stop.is_set():
            return nodes, 0
        try:
            nodes.append((entry, entry.factory(**({"cli_args": cli_args} if cli_args else {}))))
        except ROSArgsError as exc:  # a node's own malformed ROS arguments
            print(f"[FATAL] [{entry.name}]: refusing to start: {_first_line(exc)}",
                  file=sys.stderr)
            return nodes, 2
        except (ConfigError, ValueError, FileNotFoundError, *ParameterException) as exc:
            rclpy.logging.get_logger(entry.name).fatal(f"refusing to start: {exc}")
            return nodes, 2
        except Exception as exc:  # a fault of the code, not of the input: the created end too
            traceback.print_exc()
            rclpy.logging.get_logger(entry.name).fatal(f"failed to start: {exc}")
            return nodes, 1
    return nodes, 0 if stop.is_set() else None


def _shut_down(executor: Executor | None, label: str) -> None:
    """The executor's own shutdown; an error there is one line, the clean-up goes on."""
    if executor is None:
        return
    try:
        executor.shutdown()
    except Exception as exc:  # e.g. the EventsExecutor failing to clear a callback
        print(f"[WARN] [{label}]: executor shutdown failed ({type(exc).__name__}: {exc})",
              file=sys.stderr)


def _first_line(exc: BaseException) -> str:
    """rcl's error text without the C source locations it appends (", at /path/file.c:N")."""
    return str(exc).split(", at ")[0].strip()


def _finish(node: Node, failed: bool) -> int:
    """The node's ``stop()``, then its exit code (1 if it failed or ``stop()`` raised)."""
    try:
        getattr(node, "stop", lambda: None)()
        return 1 if failed else int(getattr(node, "exit_code", lambda: 0)())
    except Exception:  # reported here; the clean-up still runs, bounded
        traceback.print_exc()
        return 1


def _bound_cleanup(label: str, code: int, error: str) -> ExitGuard | None:
    """The clean-up's bound, set without raising: stacks at CLEANUP_TIMEOUT_S, then the guard's
    line and exit with the node's code, both without the interpreter lock (which the rcl/rmw
    teardown has held while it spun); if no guard can be had, faulthandler ends the process
    (code 1) in its place, after one line saying so."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # the runner's end of the pipe is gone
            pass
    faulthandler.dump_traceback_later(CLEANUP_TIMEOUT_S, exit=False)
    try:
        guard = ExitGuard(CLEANUP_TIMEOUT_S + STACKS_S, code, _blocked_line(label, code, error))
        if guard.armed:
            return guard
        why = "its thread did not start"
    except Exception as exc:  # numba, a thread: the clean-up still runs, bounded another way
        why = f"{type(exc).__name__}: {exc}"
    print(f"[WARN] [{label}]: no exit guard ({why}); a clean-up that blocks ends with code 1",
          file=sys.stderr)
    faulthandler.dump_traceback_later(CLEANUP_TIMEOUT_S + STACKS_S, exit=True)
    return None


def _blocked_line(name: str, code: int, error: str) -> str:
    return (f"{error}[{name}] ROS clean-up still blocked after {CLEANUP_TIMEOUT_S:g} s (the "
            f"node's work is done): exiting with code {code} without it")
