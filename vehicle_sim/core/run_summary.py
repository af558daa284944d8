"""What a run did, accumulated from the published state and status (no ROS)."""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from vehicle_sim.core.accident.damage import LEVEL_NAMES
from vehicle_sim.core.accident.damage import PART_NAMES as DAMAGE_PARTS
from vehicle_sim.core.config import spec

MAX_RUN_DURATION_S = 1e7  # [s] ~116 days of simulated time: a bound, not a use


@dataclass(frozen=True)
class MonitorParams:
    duration: float = spec(0.0, unit="s", ge=0.0, le=MAX_RUN_DURATION_S)
    """end the run at this sim time, 0 = never"""
    record_dir: str = spec("runs")
    """folder for the JSON run summary ('' = none)"""


@dataclass
class RunSummary:
    sim_time_s: float = 0.0
    wall_time_s: float = 0.0
    state_samples: int = 0
    distance_m: float = 0.0
    max_speed_mps: float = 0.0
    final_position_m: tuple[float, float] = (0.0, 0.0)
    physics_steps: int = 0
    overruns: int = 0
    real_time_factor: float = 0.0  # the mean of the statuses' windows (add_status)
    lateness_p99_max_s: float = 0.0
    # status reports (1 Hz) with the watchdog braking after one without it (before the first
    # fresh command it brakes too: that is the start of a run, not a lost link)
    command_timeouts: int = 0
    rejected_commands: int = 0
    accidents: int = 0
    traffic_agents_max: int = 0
    notes: list[str] = field(default_factory=list)
    _last_xy: tuple[float, float] | None = None
    _windows: tuple[float, float, float] | None = None  # first, last sim time; wall [s]
    _commanded: bool = False  # a status without the watchdog braking has come

    def add_state(self, t_s: float, x_m: float, y_m: float, speed_mps: float) -> None:
        if self._last_xy is not None:
            self.distance_m += math.hypot(x_m - self._last_xy[0], y_m - self._last_xy[1])
        self._last_xy = (x_m, y_m)
        self.final_position_m = (x_m, y_m)
        self.sim_time_s = max(self.sim_time_s, t_s)
        self.state_samples += 1
        self.max_speed_mps = max(self.max_speed_mps, abs(speed_mps))

    def add_status(self, steps: int, overruns: int, rtf: float, lateness_p99_s: float,
                   command_timeout: bool, rejected: int, sim_s: float) -> None:
        """A SimStatus at sim time ``sim_s`` with ``rtf``, its window's real-time factor. The
        run's is their mean since the first status, each window's wall time its sim time
        over its rtf (the statuses' own figures: a late delivery or a pause of this reader
        changes nothing); the last window alone said 2.19 where 20 s of sim took 18 s."""
        self.physics_steps, self.overruns, self.rejected_commands = steps, overruns, rejected
        if self._windows is None:
            self._windows = (sim_s, sim_s, 0.0)
        first, last, wall = self._windows
        if sim_s > last and rtf > 0.0:  # a paused window (rtf 0) is no time of the run
            wall += (sim_s - last) / rtf
        self._windows = (first, max(last, sim_s), wall)
        self.real_time_factor = (max(last, sim_s) - first) / wall if wall > 0.0 else rtf
        self.lateness_p99_max_s = max(self.lateness_p99_max_s, lateness_p99_s)
        self._commanded = self._commanded or not command_timeout
        self.command_timeouts += int(command_timeout and self._commanded)

    def never_commanded(self) -> bool:
        """Statuses came and the watchdog braked in every one: no command was fresh at any
        status (none came, or each was stale again by the next status)."""
        return self._windows is not None and not self._commanded

    def as_dict(self) -> dict:
        out = asdict(self)
        for private in ("_last_xy", "_windows", "_commanded"):
            out.pop(private)
        return out

    def text(self) -> str:
        d = self.as_dict()
        lines = ["==== vehicle_sim run summary ===="]
        for key, value in d.items():
            if key == "notes":
                continue
            shown = f"{value:.3f}" if isinstance(value, float) else str(value)
            if isinstance(value, tuple):
                shown = ", ".join(f"{v:.2f}" for v in value)
            lines.append(f"{key:>22}: {shown}")
        lines += [f"{'note':>22}: {n}" for n in self.notes]
        return "\n".join(lines)


MAX_ACCIDENT_DETAILS = 1000  # bound of the summary's accident list (the count goes on)


def record_accident(summary: RunSummary, details: list[dict], *, time_s: float, event_id: int,
                    actor: str, victim: str, actor_part: int, victim_part: int,
                    impact_speed_mps: float, position_m: tuple[float, float], source: int,
                    fault_id: int) -> None:
    """One accident (AccidentEvent's fields: parts PART_*, source SOURCE_*): counted, and listed
    in ``details`` while it holds fewer than MAX_ACCIDENT_DETAILS."""
    summary.accidents += 1
    if len(details) < MAX_ACCIDENT_DETAILS:
        details.append({"time_s": time_s, "id": event_id, "actor": actor, "victim": victim,
                        "actor_part": int(actor_part), "victim_part": int(victim_part),
                        "impact_speed_mps": impact_speed_mps,
                        "position_m": [float(position_m[0]), float(position_m[1])],
                        "source": int(source), "fault_id": int(fault_id)})


def write_summary(summary: RunSummary, record_dir: str, accident_details: list[dict],
                  damage: dict[str, dict[str, list]]) -> str:
    """The summary's text with each damaged body's parts (VehicleDamage levels), written as
    JSON to ``record_dir``/summary-<wall time>.json unless record_dir is '' (the runner and
    vehicle_sim_sweep read that file); ``accident_details``: AccidentEvent parts per accident,
    ``damage``: per body its parts' impulse and level."""
    text = summary.text()
    for body, d in damage.items():  # parts hit, by VehicleDamage level
        hit = [f"{DAMAGE_PARTS[k]} {LEVEL_NAMES[lv]}" for k, lv in enumerate(d["level"]) if lv]
        text += f"\n{'damage ' + body:>22}: {', '.join(hit) or 'none'}"
    if record_dir:
        folder = Path(record_dir)
        data = summary.as_dict()
        data["accident_details"] = accident_details  # parts: AccidentEvent.PART_*
        data["damage"] = damage  # per body: VehicleDamage parts (impulse, level)
        try:  # the text is the run's result: a folder it cannot write to costs only the file
            path = write_new(folder, f"summary-{time.strftime('%Y%m%d-%H%M%S')}", ".json",
                             json.dumps(data, indent=2))
            text += f"\n{'written to':>22}: {path}"
        except OSError as exc:
            text += f"\n{'not written':>22}: {folder} ({exc.strerror or exc})"
    return text


MAX_NAME_CLASHES = 100  # summaries of one second in one folder before a write gives up


def write_new(folder: Path, stem: str, suffix: str, text: str) -> Path:
    """``text`` as a new file <stem><suffix> in ``folder`` (<stem>-<pid>[-<n>]<suffix> when that
    name is taken: never over another run's summary), whole or not at all: it is written to a
    hidden temporary file beside it and renamed (a full disk left a 0-byte summary, which
    vehicle_sim_sweep could not read, while the log said "not written"). OSError on failure."""
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{stem}-{os.getpid()}{suffix}.tmp"
    try:
        tmp.write_text(text)
        path = _claim(folder, stem, suffix)
        try:
            os.replace(tmp, path)
        except OSError:
            path.unlink(missing_ok=True)  # the empty file that held the name
            raise
    finally:
        tmp.unlink(missing_ok=True)  # gone already after a rename
    return path


def _claim(folder: Path, stem: str, suffix: str) -> Path:
    """A name no file has yet, created empty (exclusively: "x"), as recording_writer's
    McapRecording does for its MCAP files: <stem>, then <stem>-<pid>, then a counter."""
    names = [stem, f"{stem}-{os.getpid()}",
             *(f"{stem}-{os.getpid()}-{n}" for n in range(2, MAX_NAME_CLASHES))]
    for name in names:
        try:
            with open(folder / f"{name}{suffix}", "x"):
                return folder / f"{name}{suffix}"
        except FileExistsError:
            continue
    raise FileExistsError(f"{len(names)} files named {stem}[-...]{suffix} in {folder}")
