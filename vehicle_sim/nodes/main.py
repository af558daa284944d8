"""Common start-up and shutdown of every vehicle_sim node process.

- A malformed or unknown parameter (ConfigError/ValueError), or a ROS argument rcl cannot
  parse (a malformed ``--params-file``), makes the node refuse to start: one fatal line naming
  it, exit code 2.
- ``warm_up`` (compiling the node's numba kernels, vehicle_sim.warm) runs before the node is
  created: a node joins the ROS graph only once it can keep up with simulated time, and the
  clock owner (which waits for every node of the graph) starts the simulation after that.
- SIGINT/SIGTERM stop the node's own threads first, then rclpy, so no thread publishes into a
  context that is already shut down.
- SIGUSR1 prints every thread's Python stack to stderr (faulthandler): the runner sends it to a
  node that does not stop, so the log shows where it hangs.
- The ROS clean-up at the end (destroy_node, rclpy shutdown) is bounded: under load it has been
  seen to block for good inside ``Node.destroy_node`` (the rcl/rmw node teardown; 1 of 8 fast
  runs under 4 busy loops here); after ``CLEANUP_TIMEOUT_S`` the process prints its stacks, says
  so and exits with the node's exit code. Everything the node does at the end belongs in its
  ``stop()`` (files, summaries) and its code in ``exit_code()``: both run before the clean-up.
"""
from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable

import rclpy
from rclpy._rclpy_pybind11 import RCLError
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from vehicle_sim.core.config import ConfigError

CLEANUP_TIMEOUT_S = 5.0  # below the runner's STOP_GRACE_S (10 s), so it never needs SIGTERM
# a parameter override of the wrong type or value for a parameter rclpy itself declares
ParameterException = (InvalidParameterTypeException, InvalidParameterValueException)


def run(factory: Callable[[], Node], name: str, args: list[str] | None = None,
        done: Callable[[Node], bool] = lambda node: False,
        warm_up: Callable[[], None] = lambda: None) -> int:
    """Create the node, spin it until a signal (or ``done(node)``), then clean up; returns the
    exit code (2: refused to start; 1: an error escaped the node; else ``node.exit_code()``).
    ``warm_up()`` runs first, before the node exists in the ROS graph.

    The node may define ``start()`` (called after construction), ``stop()`` (called before
    rclpy shuts down) and ``exit_code()`` (default 0).
    """
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    try:
        warm_up()
    except KeyboardInterrupt:  # stopped before it started
        return 0
    except Exception as exc:  # the node still runs; it compiles at first use instead
        print(f"[WARN] [{name}]: kernel warm-up failed ({type(exc).__name__}: {exc}); "
              f"compiling at first use", file=sys.stderr)
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    except RCLError as exc:  # e.g. a malformed --params-file: rcl's own message names it
        print(f"[FATAL] [{name}]: refusing to start: {_first_line(exc)}", file=sys.stderr)
        return 2
    try:
        node = factory()
    except (ConfigError, ValueError, FileNotFoundError, *ParameterException) as exc:
        rclpy.logging.get_logger(name).fatal(f"refusing to start: {exc}")
        rclpy.try_shutdown()
        return 2
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    error = ""
    try:
        getattr(node, "start", lambda: None)()
        while not stop.is_set() and rclpy.ok() and not done(node):
            executor.spin_once(timeout_sec=0.05)
    except BaseException:
        error = traceback.format_exc()
        raise
    finally:
        code = _finish(node, failed=bool(error))
        watchdog = threading.Timer(CLEANUP_TIMEOUT_S, _cleanup_hung, args=(name, code, error))
        watchdog.daemon = True
        watchdog.start()
        try:
            executor.remove_node(node)
            node.destroy_node()
            rclpy.try_shutdown()
        finally:
            watchdog.cancel()
    return code


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


def _cleanup_hung(name: str, code: int, error: str) -> None:
    print(f"{error}[{name}] ROS clean-up still blocked after {CLEANUP_TIMEOUT_S:g} s (the "
          f"node's work is done): exiting with code {code} without it", file=sys.stderr,
          flush=True)
    faulthandler.dump_traceback(all_threads=True)
    sys.stdout.flush()
    os._exit(code)
