"""Paper 002's worked example A4 as the shipped scenario ``accident_a4``, run for real (runner,
every node over DDS, lockstep): both collisions (B's front into A's left side, then A's front
into tree1) are reported on ``accidents`` with SOURCE_SCRIPTED, in order, by the planned bodies,
within 1 m and 0.1 s of the plan, collision 1 with the planned parts and collision 2 with A's
front (a tree has no parts). The scripted cars' damage is in the run summary."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

from vehicle_sim.core.accident.damage import PART_NAMES as DAMAGE_PARTS
from vehicle_sim.core.accident.detect import PART_NAMES
from vehicle_sim.core.accident.scene import VEHICLE_FILES, AccidentScene
from vehicle_sim.core.vehicle.params import load_vehicle
from vehicle_sim.paths import config_path

RUNNER = str(Path(sys.executable).parent / "vehicle_sim_run")
SOURCE_SCRIPTED = 1  # AccidentEvent.SOURCE_SCRIPTED


def test_accident_a4_happens_as_planned(tmp_path):
    result = subprocess.run([RUNNER, "--scenario", "accident_a4", "--mode", "lockstep",
                             "--duration", "8", "--record_dir", str(tmp_path), "--timeout",
                             "200"], capture_output=True, text=True, timeout=260)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    summary = json.loads(next(tmp_path.glob("summary-*.json")).read_text())
    events = summary["accident_details"]
    vehicles = {k: load_vehicle(config_path(f)) for k, f in VEHICLE_FILES.items()}
    planned = AccidentScene(config_path("accidents/a4.yaml"), vehicles, start_s=1.0).planned
    assert len(events) == 2, events
    assert events[0]["time_s"] < events[1]["time_s"]
    for p, e in zip(planned, events, strict=True):
        victim = f"static/{p.victim}" if p.victim == "tree1" else f"scripted/{p.victim}"
        assert (e["actor"], e["victim"]) == (f"scripted/{p.actor}", victim), e
        assert e["source"] == SOURCE_SCRIPTED, e
        assert math.dist(e["position_m"], p.position_m) <= 1.0, (e, p.position_m)
        assert abs(e["time_s"] - p.time_s) <= 0.1, (e, p.time_s)
        print(f"collision {p.index}: planned {p.actor} {p.actor_part} -> {p.victim} "
              f"{p.victim_part} at {p.time_s:.2f} s ({p.position_m[0]:.2f}, "
              f"{p.position_m[1]:.2f}); happened {PART_NAMES[e['actor_part']]} -> "
              f"{PART_NAMES[e['victim_part']]} at {e['time_s']:.2f} s "
              f"({e['position_m'][0]:.2f}, {e['position_m'][1]:.2f}), "
              f"{e['impact_speed_mps']:.1f} m/s")
    first, second = events
    assert (PART_NAMES[first["actor_part"]], PART_NAMES[first["victim_part"]]) == (
        planned[0].actor_part, planned[0].victim_part)
    assert PART_NAMES[second["actor_part"]] == planned[1].actor_part == "front"
    # the scripted cars' damage reaches the run summary (traffic node -> monitor over DDS)
    damage = summary["damage"]
    assert {"scripted/vehicleA", "scripted/vehicleB"} <= set(damage), sorted(damage)
    assert damage["scripted/vehicleA"]["level"][DAMAGE_PARTS.index("left_side")] >= 1
    assert sum(damage["scripted/vehicleB"]["impulse_ns"][:3]) > 0.0  # B's front
