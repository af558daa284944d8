"""Common start-up and shutdown of every vehicle_sim node process.

- A malformed or unknown parameter (ConfigError/ValueError) makes the node refuse to start:
  one fatal log line naming it, exit code 2.
- SIGINT/SIGTERM stop the node's own threads first, then rclpy, so no thread publishes into a
  context that is already shut down.
- SIGUSR1 prints every thread's Python stack to stderr (faulthandler): the runner sends it to a
  node that does not stop, so the log shows where it hangs.
- The DDS clean-up at the end (destroying the node and its participant) is bounded: under load
  Fast DDS has been seen to block in it for good (1 of 8 loaded runs here, inside
  ``Node.destroy_node``); after ``CLEANUP_TIMEOUT_S`` the process says so and exits. The node's
  own work, ``stop()`` included, is finished by then.
"""
from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
from collections.abc import Callable

import rclpy
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from vehicle_sim.core.config import ConfigError

CLEANUP_TIMEOUT_S = 5.0  # below the runner's STOP_GRACE_S (10 s), so it never needs SIGTERM
# a parameter override of the wrong type or value for a parameter rclpy itself declares
ParameterException = (InvalidParameterTypeException, InvalidParameterValueException)


def run(factory: Callable[[], Node], name: str, args: list[str] | None = None,
        done: Callable[[Node], bool] = lambda node: False) -> int:
    """Create the node, spin it until a signal (or ``done(node)``), then clean up.

    The node may define ``start()`` (called after construction) and ``stop()`` (called before
    rclpy shuts down).
    """
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
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
    getattr(node, "start", lambda: None)()
    try:
        while not stop.is_set() and rclpy.ok() and not done(node):
            executor.spin_once(timeout_sec=0.05)
    finally:
        getattr(node, "stop", lambda: None)()
        watchdog = threading.Timer(CLEANUP_TIMEOUT_S, _cleanup_hung, args=(name,))
        watchdog.daemon = True
        watchdog.start()
        executor.remove_node(node)
        node.destroy_node()
        rclpy.try_shutdown()
        watchdog.cancel()
    return 0


def _cleanup_hung(name: str) -> None:
    print(f"[{name}] DDS clean-up still blocked after {CLEANUP_TIMEOUT_S:g} s (the node's "
          "work is done): exiting without it", file=sys.stderr, flush=True)
    faulthandler.dump_traceback(all_threads=True)
    sys.stdout.flush()
    os._exit(0)
