"""SCHED_FIFO levels of a node process's threads, for the tests of the real-time priorities."""
from __future__ import annotations

import os
import subprocess
import sys


def fifo_levels(pid: int) -> dict[str, set[int]]:
    """SCHED_FIFO priorities of a process's threads, by thread name."""
    levels: dict[str, set[int]] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            if os.sched_getscheduler(int(tid)) == os.SCHED_FIFO:
                level = os.sched_getparam(int(tid)).sched_priority
                levels[name] = levels.get(name, set()) | {level}
        except (FileNotFoundError, ProcessLookupError):
            continue  # the thread ended meanwhile
    return levels


def fifo_permitted() -> bool:
    """Whether this machine lets a process here take SCHED_FIFO (a container may not)."""
    probe = "import os; os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0
