"""Our rear-end chain template (config/accidents/rear_end_chain.yaml) as the shipped scenario
``accident_rear_end_chain``, run for real (runner, every node over DDS, lockstep): both planned
collisions are reported on ``accidents`` with SOURCE_SCRIPTED, in the planned order, by the
planned bodies with the planned parts (front -> rear), within 1.5 m and 0.5 s of the plan (the
issue's 1.5 m; 0.5 s: the servo tracks its plan within ~0.3 s and a pushed car is slower than
planned. Measured in core at 100 Hz: 3.49 s / 0.02 m and 5.06 s / 0.76 m, planned 3.485 s and
4.970 s). Every car hit has its damage in the run summary."""
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


def test_rear_end_chain_happens_as_planned(tmp_path):
    result = subprocess.run([RUNNER, "--scenario", "accident_rear_end_chain", "--mode",
                             "lockstep", "--duration", "7", "--record_dir", str(tmp_path),
                             "--timeout", "200"], capture_output=True, text=True, timeout=260)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    summary = json.loads(next(tmp_path.glob("summary-*.json")).read_text())
    events = summary["accident_details"]
    vehicles = {k: load_vehicle(config_path(f)) for k, f in VEHICLE_FILES.items()}
    planned = AccidentScene(config_path("accidents/rear_end_chain.yaml"), vehicles,
                            start_s=1.0).planned
    assert len(events) == len(planned), events
    for p, e in zip(planned, events, strict=True):
        assert (e["actor"], e["victim"]) == (f"scripted/{p.actor}", f"scripted/{p.victim}"), e
        assert (PART_NAMES[e["actor_part"]], PART_NAMES[e["victim_part"]]) == (
            p.actor_part, p.victim_part), e
        assert e["source"] == SOURCE_SCRIPTED, e
        print(f"collision {p.index}: planned {p.actor} {p.actor_part} -> {p.victim} "
              f"{p.victim_part} at {p.time_s:.3f} s ({p.position_m[0]:.2f}, "
              f"{p.position_m[1]:.2f}); happened at {e['time_s']:.3f} s "
              f"({e['position_m'][0]:.2f}, {e['position_m'][1]:.2f}), "
              f"{e['impact_speed_mps']:.2f} m/s")
        assert math.dist(e["position_m"], p.position_m) <= 1.5, (e, p.position_m)
        assert abs(e["time_s"] - p.time_s) <= 0.5, (e, p.time_s)
    assert [e["time_s"] for e in events] == sorted(e["time_s"] for e in events)
    damage = summary["damage"]
    rear, front = DAMAGE_PARTS.index("rear"), slice(0, 3)
    assert sum(damage["scripted/car1"]["impulse_ns"][front]) > 0.0, damage
    assert damage["scripted/car2"]["impulse_ns"][rear] > 0.0, damage
    assert sum(damage["scripted/car2"]["impulse_ns"][front]) > 0.0, damage
    assert damage["scripted/car3"]["impulse_ns"][rear] > 0.0, damage
