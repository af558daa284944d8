"""A child process that ends when the process that started it ends, however that one ends.

Linux's ``prctl(PR_SET_PDEATHSIG, sig)`` sends ``sig`` to the child when its parent thread
exits, SIGKILL of the parent included; a parent that died before the call is caught by its pid.
Used by the physics process (SIGKILL: it holds nothing to save) and by the runner's nodes
(SIGINT: they shut down as on Ctrl-C, the recorder closes its file). Elsewhere nothing is done.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1  # linux/prctl.h
# looked up at import, in the parent: a pre-exec hook runs between fork and exec, where loading
# a library could wait for a lock another thread of the parent held at the fork
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None


def die_with_parent(parent_pid: int, sig: int = signal.SIGKILL) -> None:
    """Get ``sig`` when the parent ``parent_pid`` ends; exit at once if it already has (call it
    in the child, first thing: the pre-exec hook or main)."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before the prctl
        os._exit(1)
