"""vehicle_sim_report <recording.mcap> [--out DIR]: PNG plots and a summary JSON of a run."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from vehicle_sim.report import plots
from vehicle_sim.report.data import read_recording
from vehicle_sim.report.lanes import light_headings, load_lanes, stop_lines
from vehicle_sim.report.metrics import summarize
from vehicle_sim.report.sensors import error_stats, sensor_errors


def write_report(recording: Path, out: Path,
                 gnss_origin: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> dict[str, Path]:
    """Write <stem>-*.png and <stem>-report.json into ``out``; returns what was written.
    Raises ValueError (one line) for an unreadable or empty recording, and for an ``out`` it
    cannot write to (a full disk, a folder not writable: a traceback of vehicle_sim_report
    and of the runner, which report ValueError in one line)."""
    rec = read_recording(recording)
    if len(rec.state) < 2:
        raise ValueError(f"{recording}: fewer than 2 /vehicle/state messages, nothing to report")
    lanes, spec, map_note = load_lanes(rec.map_file)
    summary = summarize(rec, light_headings(lanes, rec.lights), stop_lines(lanes, spec))
    errors = sensor_errors(rec, gnss_origin)
    summary["sensor_errors"] = error_stats(errors)
    summary["notes"] = [*([map_note] if map_note else []), *rec.notes, *summary["notes"]]
    try:
        return _write(rec, lanes, errors, summary, out)
    except OSError as exc:
        raise ValueError(f"{out}: report not written ({exc.strerror or exc})") from None


def _write(rec, lanes, errors, summary: dict, out: Path) -> dict[str, Path]:
    """The plots and the summary JSON of ``rec`` into ``out``; OSError when it cannot write,
    ValueError (naming the recording) when the summary is no JSON."""
    out.mkdir(parents=True, exist_ok=True)
    stem = rec.path.stem
    files = {
        "path": plots.path_plot(rec, lanes, out / f"{stem}-path.png"),
        "speed": plots.speed_plot(rec, out / f"{stem}-speed.png"),
        "acceleration": plots.acceleration_plot(rec, out / f"{stem}-acceleration.png"),
        "controls": plots.controls_plot(rec, out / f"{stem}-controls.png"),
        "lateness": plots.lateness_plot(rec, out / f"{stem}-lateness.png"),
        "sensors": plots.sensor_error_plot(errors, out / f"{stem}-sensors.png"),
    }
    summary["plots"] = {k: p.name for k, p in files.items()}
    files["summary"] = out / f"{stem}-report.json"
    try:  # read_recording left NaN and infinities out: a JSON reader refuses them
        text = json.dumps(summary, indent=2, allow_nan=False)
    except ValueError as exc:
        raise ValueError(f"{rec.path}: report not written ({exc})") from None
    files["summary"].write_text(text)
    return files


def _origin(text: str) -> tuple[float, float, float]:
    try:
        lat, lon, alt = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not LAT,LON,ALT") from None
    if not (-90 <= lat <= 90 and -180 <= lon <= 180 and -1e4 <= alt <= 1e5):
        raise argparse.ArgumentTypeError(f"{text!r}: latitude, longitude or altitude out of range")
    return lat, lon, alt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="vehicle_sim_report", description=__doc__)
    parser.add_argument("recording", type=Path, help="MCAP file written by record:=true")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder of the report (default: next to the recording)")
    parser.add_argument("--gnss-origin", type=_origin, default=(0.0, 0.0, 0.0),
                        help="LAT,LON,ALT of the GNSS receiver's ENU origin [deg, deg, m] "
                             "(default 0,0,0: the shipped presets)")
    options = parser.parse_args(argv)
    if not options.recording.is_file():
        print(f"vehicle_sim_report: {options.recording}: no such file", file=sys.stderr)
        return 2
    try:
        files = write_report(options.recording, options.out or options.recording.parent,
                             options.gnss_origin)
    except ValueError as exc:
        print(f"vehicle_sim_report: {exc}", file=sys.stderr)
        return 2
    for name, path in files.items():
        print(f"{name:>13}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
