"""Common start-up and shutdown of every vehicle_sim node process.

- A malformed or unknown parameter (ConfigError/ValueError) makes the node refuse to start:
  one fatal log line naming it, exit code 2.
- SIGINT/SIGTERM stop the node's own threads first, then rclpy, so no thread publishes into a
  context that is already shut down.
- SIGUSR1 prints every thread's Python stack to stderr (faulthandler): the runner sends it to a
  node that does not stop, so the log shows where it hangs.
"""
from __future__ import annotations

import faulthandler
import signal
import threading
from collections.abc import Callable

import rclpy
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from vehicle_sim.core.config import ConfigError

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
        executor.remove_node(node)
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
