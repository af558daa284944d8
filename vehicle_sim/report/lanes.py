"""The map of a recorded run as lane centre lines (for the path plot and the red-light check)
and its stop lines of stop signs (for the stop-sign check)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from vehicle_sim.core.config import ConfigError
from vehicle_sim.core.traffic.geometry import offset_path, sample_pieces
from vehicle_sim.core.traffic.mapfile import MapSpec, load_map
from vehicle_sim.paths import config_path


def load_lanes(map_file: str) -> tuple[dict[str, np.ndarray], MapSpec | None, str]:
    """Lane id -> (n, 5) x, y, h, s, k centre line; '' or a missing map gives no lanes and a
    note saying why (the report is still written)."""
    if not map_file:
        return {}, None, "no map named in the recording"
    path = Path(map_file) if Path(map_file).is_absolute() else config_path(map_file)
    try:
        spec = load_map(path)
    except (ConfigError, FileNotFoundError, OSError, ValueError) as exc:
        return {}, None, f"map not drawn: {exc}"
    lanes = {}
    for street in spec.streets:
        ref = street.reference
        centre = sample_pieces(ref.x_m, ref.y_m, ref.heading_rad,
                               [(p.length_m, p.curvature_1pm) for p in ref.pieces])
        for lane in street.lanes:
            lanes[lane.id] = offset_path(centre, lane.offset_m, lane.direction == "backward")
    return lanes, spec, ""


def light_headings(lanes: dict[str, np.ndarray], lights: list) -> dict[str, float]:
    """Heading [rad] of each light's lane ("signal:lane" ids) at the point nearest its stop line."""
    out: dict[str, float] = {}
    if not lights:
        return out
    for light_id, (_, x, y) in lights[-1][1].items():
        lane = lanes.get(light_id.rpartition(":")[2])
        if lane is not None:
            out[light_id] = float(lane[int(np.argmin(np.hypot(lane[:, 0] - x,
                                                                lane[:, 1] - y))), 2])
    return out


def stop_lines(lanes: dict[str, np.ndarray], spec: MapSpec | None) -> dict[str, tuple]:
    """"sign:lane" -> (x, y, heading) [m, m, rad] of the stop line of each stop sign ("stop"
    signals) on each of its lanes: ``distance_from_end_m`` before the lane's end, on its centre
    line (the map's convention, mapfile.Signal)."""
    out: dict[str, tuple] = {}
    for sig in (spec.signals if spec is not None else ()):
        if sig.kind != "stop":
            continue
        for lane_id in sig.lanes:
            lane = lanes.get(lane_id)
            if lane is None or len(lane) == 0:
                continue
            s_m = max(float(lane[-1, 3]) - sig.distance_from_end_m, float(lane[0, 3]))
            i = min(int(np.searchsorted(lane[:, 3], s_m)), len(lane) - 1)
            out[f"{sig.id}:{lane_id}"] = (float(lane[i, 0]), float(lane[i, 1]), float(lane[i, 2]))
    return out
