"""One warning line a period per kind of problem: a stream of bad input (hostile or broken)
gives one line a second, while a new kind of problem, or one from another source, is reported
at once. The kind is the problem with its values blanked (core.controls.problem_kind)."""
from __future__ import annotations

import math
import threading
import time

from vehicle_sim.core.controls import problem_kind

MAX_KINDS = 1024  # a choice: kinds remembered before the oldest are forgotten (bounded memory)


class WarningGate:
    def __init__(self, period_s: float = 1.0):
        self.period_s = period_s
        self._warned_at: dict[tuple[str, str], float] = {}  # (source, kind) -> wall time [s]
        self._lock = threading.Lock()  # the bridge's rig-input thread and its executor

    def due(self, source: str, problem: str) -> bool:
        """True when a warning of ``problem`` from ``source`` should be logged now."""
        now, key = time.monotonic(), (source, problem_kind(problem))
        with self._lock:
            if now - self._warned_at.get(key, -math.inf) < self.period_s:
                return False
            if len(self._warned_at) >= MAX_KINDS:
                self._warned_at.pop(next(iter(self._warned_at)))
            self._warned_at[key] = now
        return True
