"""examples/minimal_stack.py in a process of its own, as a user starts it beside a run: its map
loaded before the run starts (the run waits for its first command, but the run's own
wall-clock timeout counts from its start), stopped with Ctrl-C. Shared by
test_minimal_stack.py and bench/bench_stack_lockstep.py."""
from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

STACK = Path(__file__).resolve().parents[2] / "examples" / "minimal_stack.py"
LOAD_TIMEOUT_S = 120.0  # wall time for its imports and the map


class StackProcess:
    """``with StackProcess(osm, "x,y") as stack:`` the stack runs with its map loaded; on exit
    it gets SIGINT (killed after 20 s); ``output`` holds what it printed."""

    def __init__(self, osm: Path, goal: str):
        self.args = [sys.executable, str(STACK), "--map", str(osm), "--goal", goal]
        self._lines: list[str] = []
        self._ready = threading.Event()

    @property
    def output(self) -> str:
        return "".join(self._lines)

    def __enter__(self) -> subprocess.Popen:
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self._ready.wait(LOAD_TIMEOUT_S) or self.proc.poll() is not None:
            self.__exit__()
            raise RuntimeError(f"the stack did not load its map:\n{self.output[-3000:]}")
        return self.proc

    def __exit__(self, *_exc) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout=5)

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._lines.append(line)
            if "map loaded" in line:
                self._ready.set()
