"""The bridge as a lockstep peer: each /clock tick is acknowledged once the stack has commanded
recently enough in sim time (core.motion.stack_sync.StackSync), so a lockstep run waits for an
external stack instead of running ahead of it (scenario urban_stack in mode lockstep)."""
from __future__ import annotations

import time
from collections.abc import Callable

from rclpy.clock import Clock as RosClock
from rclpy.clock import ClockType
from rclpy.node import Node

from vehicle_sim.core.motion.node_params import BridgeNodeParams
from vehicle_sim.core.motion.stack_sync import StackSync
from vehicle_sim.nodes.lockstep_peer import LockstepPeer

RECHECK_S = 0.05  # wall time between two looks at a frame held for a silent stack


class BridgeLockstep:
    def __init__(self, node: Node, p: BridgeNodeParams, topics: tuple[str, ...],
                 restamp: Callable[[float], None]):
        """``restamp(now_s)``: the stack commands stored so far as if they came at sim time
        ``now_s`` (called at the first frame acknowledged, StackSync.frame_done)."""
        self.sync = StackSync(round(p.stack_lag_s * 1e9), p.stack_wait_s)
        self._restamp = restamp
        self._log = node.get_logger()
        self._told = False  # the first held frame is said once, with the topics it waits on
        self._topics = ", ".join(topics)
        self.peer = LockstepPeer(node, self._ready, self._frame, lambda: None)
        # the wait for a silent stack ends on the wall clock, with no message arriving
        node.create_timer(RECHECK_S, self.peer.pump,
                          clock=RosClock(clock_type=ClockType.STEADY_TIME))

    def on_command(self) -> None:
        """A stack command arrived (executor thread)."""
        line = self.sync.on_command()
        if line:
            self._log.info(line)
        self.peer.pump()

    def _ready(self, t_ns: int) -> bool:
        ok, line = self.sync.ready(t_ns, time.monotonic())
        if line:
            self._log.warning(line)
        if not ok and not self._told:
            self._told = True
            self._log.info(f"lockstep: t={t_ns * 1e-9:.3f} s waits for a stack command on "
                           f"{self._topics} (at most {self.sync.wait_s:g} s of wall time)")
        return ok

    def _frame(self, t_ns: int) -> tuple[int, int]:
        self.sync.frame_done(t_ns, self._restamp)
        return 0, 0  # no data output, no vehicle command of its own (it forwards on receipt)
