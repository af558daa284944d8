"""The report's PNG plots (matplotlib, Agg backend: no display needed). One function per file;
each takes the Recording and returns nothing but the written figure."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from vehicle_sim.core.traffic.light_states import DARK, GREEN, RED, YELLOW  # noqa: E402
from vehicle_sim.report.data import Recording  # noqa: E402

LIGHT_COLOURS = {DARK: "grey", GREEN: "green", YELLOW: "orange", RED: "red"}  # by light state
DPI = 110


def _save(fig, path: Path) -> Path:
    """``fig`` as ``path``, closed even when it cannot be written (a full disk: OSError)."""
    try:
        fig.tight_layout()
        fig.savefig(path, dpi=DPI)
    finally:
        plt.close(fig)
    return path


def path_plot(rec: Recording, lanes: dict[str, np.ndarray], path: Path) -> Path:
    """Ego path over the lanes, agent tracks, the lights' last states and the accidents."""
    fig, ax = plt.subplots(figsize=(8, 8))
    for centre in lanes.values():
        ax.plot(centre[:, 0], centre[:, 1], color="0.85", lw=0.8, zorder=1)
    tracks: dict[int, list] = {}
    for _, table in rec.agents:
        for row in table:
            tracks.setdefault(int(row[0]), []).append(row[1:3])
    for i, points in enumerate(tracks.values()):
        xy = np.array(points)
        ax.plot(xy[:, 0], xy[:, 1], color="tab:blue", lw=0.6, alpha=0.5, zorder=2,
                label="traffic agents" if i == 0 else None)
        ax.plot(*xy[-1], "s", color="tab:blue", ms=3, zorder=3)
    if rec.lights:
        for state, x, y in rec.lights[-1][1].values():
            ax.plot(x, y, "o", color=LIGHT_COLOURS.get(state, "grey"), ms=4, zorder=3)
    if len(rec.state):
        ax.plot(rec.state[:, 1], rec.state[:, 2], color="black", lw=1.8, zorder=4, label="ego")
        ax.plot(*rec.state[0, 1:3], "^", color="black", ms=8, zorder=5, label="ego start")
    for k, acc in enumerate(rec.accidents):
        ax.plot(*acc["position_m"], "X", color="crimson", ms=12, zorder=6,
                label="accident" if k == 0 else None)
    ax.set_aspect("equal")
    ax.set_xlabel("x east [m]")
    ax.set_ylabel("y north [m]")
    ax.set_title(f"{rec.path.name}: ego path (lights: last state)")
    ax.legend(loc="upper right", fontsize=8)
    return _save(fig, path)


def _time_series_plot(rec: Recording, columns: dict[str, int], ylabel: str, path: Path) -> Path:
    """Columns of the ego state (label -> column) over simulation time, on one axis."""
    fig, ax = plt.subplots(figsize=(9, 3.5))
    for label, col in columns.items():
        ax.plot(rec.state[:, 0], rec.state[:, col], label=label)
    ax.set_xlabel("simulation time [s]")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend()
    return _save(fig, path)


def speed_plot(rec: Recording, path: Path) -> Path:
    return _time_series_plot(rec, {"ego forward speed": 4}, "speed [m/s]", path)


def acceleration_plot(rec: Recording, path: Path) -> Path:
    return _time_series_plot(rec, {"longitudinal": 7, "lateral": 8},
                             "acceleration at the CG [m/s²]", path)


def controls_plot(rec: Recording, path: Path) -> Path:
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    c = rec.control
    ax.plot(c[:, 0], c[:, 2], label="throttle")
    ax.plot(c[:, 0], c[:, 3], label="brake")
    ax.set_ylabel("pedal [0..1]")
    ax.legend(loc="upper right")
    ax2.plot(c[:, 0], np.degrees(c[:, 1]), color="tab:purple", label="road-wheel steering")
    ax2.set_ylabel("steering [deg]")
    ax2.set_xlabel("simulation time [s]")
    for t, source in rec.sources:
        for a in (ax, ax2):
            a.axvline(t, color="0.5", ls="--", lw=0.8)
        ax.annotate(f"source: {source}", (t, 1.02), xycoords=("data", "axes fraction"),
                    fontsize=8)
    for a in (ax, ax2):
        a.grid(alpha=0.3)
    return _save(fig, path)


def lateness_plot(rec: Recording, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(7, 3.5))
    if len(rec.status):
        ms = rec.status[:, 2:5] * 1e3
        bins = np.linspace(0.0, max(1e-3, float(ms.max())) * 1.05, 30)
        for col, name in ((0, "p50"), (1, "p99"), (2, "max")):
            ax.hist(ms[:, col], bins=bins, alpha=0.5, label=f"lateness {name}")
        ax.legend()
    ax.set_xlabel("loop wake-up lateness per status period [ms]")
    ax.set_ylabel("status reports")
    return _save(fig, path)


def sensor_error_plot(errors: dict[str, np.ndarray], path: Path) -> Path:
    """IMU and GNSS error against the ground truth (``errors``: name -> (n, 2) t, error)."""
    fig, axes = plt.subplots(len(errors) or 1, 1, figsize=(9, 2.2 * max(1, len(errors))),
                             sharex=True, squeeze=False)
    for ax, (name, data) in zip(axes[:len(errors), 0], errors.items(), strict=True):
        ax.plot(data[:, 0], data[:, 1], lw=0.7)
        ax.set_ylabel(name, fontsize=8)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("simulation time [s]")
    return _save(fig, path)
