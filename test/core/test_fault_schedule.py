"""A scenario's schedule of faults (core/fault_schedule.py): validation at load, the order it is
sent in, and the hold-until-due queue every fault target uses."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from vehicle_sim.core.config import ConfigError
from vehicle_sim.core.fault_schedule import PendingFaults, ScheduledFault, publish_order
from vehicle_sim.core.faults import FaultRequest
from vehicle_sim.graph import load_scenario
from vehicle_sim.paths import config_path


def scenario_with(tmp_path, schedule) -> str:
    data = yaml.safe_load(config_path("scenarios/urban.yaml").read_text())
    data["schedule"] = schedule
    path = tmp_path / "scheduled.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_a_schedule_loads_with_its_scenario_in_time_order(tmp_path):
    s = load_scenario(scenario_with(tmp_path, [
        {"at_s": 12.5, "target": "traffic", "fault": "FULL_BRAKE", "id": 3,
         "channel": "nearest_ahead", "duration_s": 4.0},
        {"at_s": 2.0, "target": "vehicle", "fault": "BRAKE_FAILURE", "id": 1, "value": 0.5},
        {"at_s": 2.0, "target": "ego_driver", "fault": "LINK_DROP", "id": 2,
         "channel": "traffic/agents"}]))
    assert [(e.at_s, e.target) for e in publish_order(s.schedule)] == [
        (2.0, "vehicle"), (2.0, "ego_driver"), (12.5, "traffic")]
    req = s.schedule[0].request()
    assert (req.kind, req.channel, req.duration_s) == ("full_brake", "nearest_ahead", 4.0)
    assert s.schedule[0].at_ns == 12_500_000_000


@pytest.mark.parametrize("entry, words", [
    ({"at_s": 1.0, "target": "moon", "fault": "FREEZE", "id": 1}, "unknown target 'moon'"),
    ({"at_s": -1.0, "target": "gps", "fault": "FREEZE", "id": 1}, "schedule[0].at_s"),
    ({"at_s": float("nan"), "target": "gps", "fault": "FREEZE", "id": 1}, "schedule[0].at_s"),
    ({"at_s": 1.0, "target": "gps", "fault": "freeze", "id": 1}, "constant name"),
    ({"at_s": 1.0, "target": "gps", "fault": "FREEZE", "id": 0}, "id 0 is only for CLEAR"),
    ({"at_s": 1.0, "target": "gps", "fault": "FREEZE", "id": 2**32}, "schedule[0].id"),
    ({"at_s": 1.0, "target": "gps", "fault": "FREEZE", "id": 1, "when": 3}, "schedule[0].when"),
    ({"at_s": 1.0, "target": "gps", "fault": "FREEZE", "id": 1, "duration_s": 1e9},
     "schedule[0].duration_s"),
])
def test_a_bad_entry_is_one_error_naming_it(tmp_path, entry, words):
    with pytest.raises(ConfigError) as err:
        load_scenario(scenario_with(tmp_path, [entry]))
    assert words in str(err.value) and "\n" not in str(err.value)


def test_a_clear_of_every_fault_may_use_id_zero():
    assert ScheduledFault(at_s=3.0, target="imu", fault="CLEAR", id=0).request().kind == "clear"


def test_held_requests_come_out_at_their_time_in_time_then_arrival_order():
    q = PendingFaults(limit=3)
    a, b, c = (FaultRequest(i, "freeze") for i in (1, 2, 3))
    assert q.hold(b, 2_000) is None and q.hold(a, 1_000) is None and q.hold(c, 2_000) is None
    assert "refused" in q.hold(FaultRequest(4, "freeze"), 5)  # bounded
    assert q.due(999) == []
    assert q.due(1_000) == [a]
    assert q.due(10_000) == [b, c] and len(q) == 0


def test_the_readme_schedule_example_loads(tmp_path):
    readme = Path(__file__).resolve().parents[2] / "README.md"
    block = readme.read_text().split("```yaml\nschedule:", 1)[1].split("```", 1)[0]
    entries = yaml.safe_load("schedule:" + block)["schedule"]
    s = load_scenario(scenario_with(tmp_path, entries))
    assert [e.fault for e in s.schedule] == ["PROVOKE_ACCIDENT", "BRAKE_FAILURE", "LINK_DROP"]
