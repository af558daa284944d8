"""The run's summary from a Recording: pure functions of the recorded arrays (no ROS, no I/O).

Rule violations: a red light is run when the ego's centre crosses a stop line (along its lane,
within half a lane width of the line's centre) while the newest light message before that time
shows the light red. Time-to-collision (TTC) to the agent ahead: gap between the bounding boxes
along the ego's heading over the closing speed, for agents whose centre lies within a lane
half-width of the ego's centre line ahead of it (the usual car-following definition, e.g.
Hayward 1972; the lane half-width corridor is a choice for a single-lane leader).
A stop sign is not stopped at when the ego's centre crosses its stop line (as for a red light)
and its speed was never at or below ``FULL_STOP_MPS`` (core.ego.full_stop: the ego autopilot's
own "stop done" speed, one constant) while its centre was within :func:`stop_zone_m` before the
line on that approach: half the ego's length (the recording's vehicle file, as for the TTC)
plus ``STOP_ZONE_MARGIN_M`` (a full stop at the line: e.g. Vienna Convention art. 18(3) with
sign B2; the margin is a choice, below).
"""
from __future__ import annotations

import math

import numpy as np

from vehicle_sim.core.config import ConfigError
from vehicle_sim.core.ego.full_stop import FULL_STOP_MPS, STOP_ZONE_MARGIN_M  # (no kernels)
from vehicle_sim.core.traffic.light_states import RED  # TrafficLight.STATE_RED (no kernels)
from vehicle_sim.core.vehicle.params import load_vehicle
from vehicle_sim.paths import config_path
from vehicle_sim.report.data import Recording

LANE_HALF_WIDTH_M = 1.75  # half of the 3.5 m lanes of the shipped maps (a choice)
# the ego's length when a recording names no vehicle file (one written before it did): the
# default ego's, config/vehicles/medium_car.yaml
DEFAULT_VEHICLE_FILE = "vehicles/medium_car.yaml"
TTC_MAX_S = 60.0  # TTC beyond this is reported as none (no conflict)


def _crossings(state: np.ndarray, x: float, y: float, heading: float | None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indices where the centre crosses the line at (x, y), along [m], lateral [m])."""
    dx, dy = state[:, 1] - x, state[:, 2] - y
    hh = state[:, 3] if heading is None else np.full(len(state), heading)
    along = dx * np.cos(hh) + dy * np.sin(hh)
    lateral = -dx * np.sin(hh) + dy * np.cos(hh)
    crossed = np.nonzero((along[:-1] < 0.0) & (along[1:] >= 0.0)
                         & (np.abs(lateral[1:]) < LANE_HALF_WIDTH_M))[0] + 1
    return crossed, along, lateral


def path_length_m(xy: np.ndarray) -> float:
    """Length [m] of the polyline through the rows of ``xy`` (n, 2)."""
    return float(np.sum(np.hypot(*np.diff(xy, axis=0).T))) if len(xy) > 1 else 0.0


def red_lights_run(state: np.ndarray, lights: list, lane_heading: dict[str, float]) -> list[dict]:
    """Red lights the ego ran: one entry per crossing (time, light id, position).

    ``lane_heading`` gives the heading [rad] of a light's lane at its stop line by light id;
    lights not in it are judged with the ego's own heading."""
    if len(state) < 2 or not lights:
        return []
    times = np.array([t for t, _ in lights])
    found = []
    for light_id, (_, lx, ly) in lights[-1][1].items():
        crossed, _, _ = _crossings(state, lx, ly, lane_heading.get(light_id))
        for i in crossed:
            k = int(np.searchsorted(times, state[i, 0], side="right")) - 1
            if k >= 0 and lights[k][1].get(light_id, (-1,))[0] == RED:
                found.append({"time_s": float(state[i, 0]), "light": light_id,
                              "position_m": [float(lx), float(ly)]})
    return sorted(found, key=lambda v: v["time_s"])


def stop_zone_m(ego_length: float) -> float:
    """How far [m] before a stop line the centre of an ego ``ego_length`` [m] long may be for a
    stop there to count: its front bumper within STOP_ZONE_MARGIN_M of the line."""
    return 0.5 * ego_length + STOP_ZONE_MARGIN_M


def stop_signs_not_stopped(state: np.ndarray, lines: dict[str, tuple], ego_length: float
                           ) -> list[dict]:
    """Stop signs the ego (``ego_length`` [m] long) passed without stopping: one entry per
    crossing (time, sign:lane id, position, the lowest speed on the approach); ``lines`` from
    lanes.stop_lines."""
    found = []
    if len(state) < 2:
        return found
    zone = stop_zone_m(ego_length)
    for sign, (x, y, heading) in lines.items():
        crossed, along, lateral = _crossings(state, x, y, heading)
        near = (along >= -zone) & (along < 0.0) & (np.abs(lateral) < LANE_HALF_WIDTH_M)
        for i in crossed:
            j = i - 1
            while j > 0 and near[j - 1]:
                j -= 1  # back to where this approach entered the zone
            lowest = float(np.min(np.abs(state[j:i, 4]))) if near[i - 1] else float("inf")
            if lowest > FULL_STOP_MPS:
                found.append({"time_s": float(state[i, 0]), "sign": sign,
                              "position_m": [float(x), float(y)],
                              "min_speed_in_zone_mps": lowest if math.isfinite(lowest) else None})
    return sorted(found, key=lambda v: v["time_s"])


def ego_length_m(vehicle_file: str) -> tuple[float, str]:
    """The ego's length [m] from the recording's vehicle file ('': DEFAULT_VEHICLE_FILE), and a
    note when that file cannot be read here (renamed, another machine's path): the default car's
    length is used then, and the report is still written."""
    try:
        return load_vehicle(config_path(vehicle_file or DEFAULT_VEHICLE_FILE)).chassis.length_m, ""
    except (ConfigError, OSError) as exc:
        default = load_vehicle(config_path(DEFAULT_VEHICLE_FILE)).chassis.length_m
        return default, f"ego box of {DEFAULT_VEHICLE_FILE} used: {exc}"


def min_time_to_collision(state: np.ndarray, agents: list, ego_length: float) -> dict | None:
    """The smallest TTC [s] to an agent ahead over the run (bumper to bumper, the ego
    ``ego_length`` [m] long), with its time and agent id."""
    if len(state) == 0 or not agents:
        return None
    best: dict | None = None
    for t, table in agents:
        if len(table) == 0:
            continue
        i = min(int(np.searchsorted(state[:, 0], t)), len(state) - 1)
        _, x, y, yaw, vx = state[i, :5]
        c, s = math.cos(yaw), math.sin(yaw)
        dx, dy = table[:, 1] - x, table[:, 2] - y
        along, lateral = dx * c + dy * s, -dx * s + dy * c
        gap = along - 0.5 * (ego_length + table[:, 5])
        closing = vx - table[:, 4] * np.cos(table[:, 3] - yaw)
        ahead = (along > 0.0) & (np.abs(lateral) < LANE_HALF_WIDTH_M) & (gap > 0.0) & \
            (closing > 1e-3)
        if not ahead.any():
            continue
        ttc = np.where(ahead, gap / np.where(ahead, closing, 1.0), np.inf)
        j = int(np.argmin(ttc))
        if ttc[j] < TTC_MAX_S and (best is None or ttc[j] < best["ttc_s"]):
            best = {"ttc_s": float(ttc[j]), "time_s": float(t), "agent": int(table[j, 0]),
                    "gap_m": float(gap[j]), "closing_speed_mps": float(closing[j])}
    return best


def summarize(rec: Recording, lane_heading: dict[str, float],
              stop_lines: dict[str, tuple] | None = None) -> dict:
    """The report's JSON: distance, speeds, accidents, red lights run, stop signs not stopped at
    (``stop_lines``: lanes.stop_lines), min TTC, RTF; ``notes``: what it could not read."""
    st = rec.state
    # status reports from before the first step (sim time 0) have no achieved RTF yet
    rtf = rec.status[rec.status[:, 0] > 0.0, 1] if len(rec.status) else np.zeros(0)
    ego_accidents = [a for a in rec.accidents if "ego" in (a["actor"], a["victim"])]
    ego_m, ego_note = ego_length_m(rec.vehicle_file)
    return {
        "recording": rec.path.name,
        "map_file": rec.map_file,
        "sim_time_s": float(st[-1, 0]) if len(st) else 0.0,
        "state_samples": int(len(st)),
        "distance_m": path_length_m(st[:, 1:3]),
        "max_speed_mps": float(np.max(np.abs(st[:, 4]))) if len(st) else 0.0,
        "mean_speed_mps": float(np.mean(np.abs(st[:, 4]))) if len(st) else 0.0,
        "max_abs_lateral_accel_mps2": float(np.max(np.abs(st[:, 8]))) if len(st) else 0.0,
        "max_abs_longitudinal_accel_mps2": float(np.max(np.abs(st[:, 7]))) if len(st) else 0.0,
        "accidents": len(rec.accidents),
        "ego_accidents": len(ego_accidents),
        "accident_details": rec.accidents,
        "red_lights_run": red_lights_run(st, rec.lights, lane_heading),
        "stop_signs_not_stopped": stop_signs_not_stopped(st, stop_lines or {}, ego_m),
        "min_ttc": min_time_to_collision(st, rec.agents, ego_m),
        "traffic_agents_max": max((len(a) for _, a in rec.agents), default=0),
        "real_time_factor_mean": float(np.mean(rtf)) if len(rtf) else 0.0,
        "real_time_factor_min": float(np.min(rtf)) if len(rtf) else 0.0,
        "lateness_p99_max_s": float(np.max(rec.status[:, 3])) if len(rec.status) else 0.0,
        "notes": [ego_note] if ego_note else [],
    }
