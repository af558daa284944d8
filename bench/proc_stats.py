"""Linux /proc readings the benches share: CPU time and memory of a process and of the node
processes a runner started (no third-party package needed)."""
from __future__ import annotations

import os
import threading
from pathlib import Path

TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")
PAGE_B = os.sysconf("SC_PAGE_SIZE")


def cpu_s(pid: int) -> float:
    """User + system CPU time of a process [s] (/proc/<pid>/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * TICK_S


def rss_b(pid: int) -> int:
    """Resident set size of a process [bytes] (/proc/<pid>/statm, second field)."""
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_B


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children of all its threads, recursively)."""
    found, todo = [], [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*"):
            try:
                kids = [int(k) for k in (task / "children").read_text().split()]
            except OSError:
                continue
            found += kids
            todo += kids
    return found


def node_name(pid: int) -> str:
    """The node's executable name (a console script run by python: its script's name); for
    vehicle_sim_compose, its nodes' executables joined by '+'; a node's physics process
    (core.loop_process) its node's name + '/physics'."""
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    words = [Path(a.decode(errors="replace")).name for a in argv if a]
    if any("core.loop_child import main" in w for w in words):  # core.loop_process
        ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        return f"{node_name(ppid)}/physics"
    if "vehicle_sim_compose" in words:  # "<exe> --ros-args ... --" per node
        after = words[words.index("vehicle_sim_compose") + 1:]
        return "+".join(w for i, w in enumerate(after)
                        if i + 1 < len(after) and after[i + 1] == "--ros-args")
    return next((w for w in words if not w.startswith("python")), words[0] if words else "?")


class NodeSampler(threading.Thread):
    """Samples, once per ``period_s``, the CPU time and RSS of every process below ``root``; the
    last sample of each survives the process (its final CPU time is lost when it exits)."""

    def __init__(self, root: int, period_s: float = 0.5):
        super().__init__(daemon=True)
        self.root, self.period_s = root, period_s
        self.cpu: dict[int, float] = {}
        self.first_cpu: dict[int, float] = {}  # CPU time at the first sample after ``mark()``
        self.marked = threading.Event()
        self.rss: dict[int, list[int]] = {}
        self.names: dict[int, str] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(self.period_s):
            try:
                pids = descendants(self.root)
            except OSError:
                continue
            for pid in pids:
                try:
                    self.names.setdefault(pid, node_name(pid))
                    self.cpu[pid] = cpu_s(pid)
                    if self.marked.is_set():
                        self.first_cpu.setdefault(pid, self.cpu[pid])
                    self.rss.setdefault(pid, []).append(rss_b(pid))
                except OSError:
                    pass  # exited between the listing and the read

    def mark(self) -> None:
        """Start of the window ``cpu_by_node(since_mark=True)`` counts (e.g. after start-up)."""
        self.marked.set()

    def cpu_by_node(self, since_mark: bool = False) -> dict[str, float]:
        """CPU seconds per node name (respawned processes of one node add up), in all or since
        ``mark()``."""
        out: dict[str, float] = {}
        for pid, seconds in self.cpu.items():
            start = self.first_cpu.get(pid, 0.0) if since_mark else 0.0
            out[self.names[pid]] = out.get(self.names[pid], 0.0) + seconds - start
        return out
