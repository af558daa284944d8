"""One-line progress display of a run (tqdm), for vehicle_sim_run and vehicle_sim_sweep.

Shown only when the output is a terminal: a CI log gets no progress lines at all. The run's
numbers come from the monitor node's progress lines (nodes/monitor_node.py), parsed here, so
no simulation process pays for the display.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

from tqdm import tqdm

PROGRESS_ENV = "VEHICLE_SIM_PROGRESS"  # "1": the monitor prints its progress lines
PROGRESS_MARK = "@progress"


@dataclass(frozen=True)
class RunProgress:
    sim_time_s: float
    duration_s: float
    real_time_factor: float
    agents: int
    accidents: int


def parse_progress(line: str) -> RunProgress | None:
    """A monitor progress line `@progress t duration rtf agents accidents`, else None."""
    parts = line.split()
    if len(parts) != 6 or parts[0] != PROGRESS_MARK:
        return None
    try:
        return RunProgress(float(parts[1]), float(parts[2]), float(parts[3]), int(parts[4]),
                           int(parts[5]))
    except ValueError:
        return None


def on_terminal() -> bool:
    return sys.stdout.isatty()


class ProgressLine:
    """The bar: simulated time of the duration (a counter when unbounded), RTF, agents,
    accidents. ``write`` prints other output above it."""

    def __init__(self, duration_s: float, description: str = "starting"):
        self.bar = tqdm(total=duration_s if duration_s > 0 else None, desc=description,
                        unit="s", file=sys.stdout, dynamic_ncols=True, leave=True,
                        bar_format="{n:.1f}/{total_fmt} s simulated |{bar}| {desc}"
                        if duration_s > 0 else "{n:.1f} s simulated, {desc}")

    def update(self, p: RunProgress) -> None:
        self.bar.n = min(p.sim_time_s, self.bar.total) if self.bar.total else p.sim_time_s
        self.bar.set_description_str(f"RTF {p.real_time_factor:.2f}, agents {p.agents}, "
                                     f"accidents {p.accidents}", refresh=True)

    def write(self, text: str) -> None:
        self.bar.write(text.rstrip("\n"), file=sys.stdout)

    def close(self) -> None:
        self.bar.close()
