"""Parameters of the accident node (one source of truth; README table)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vehicle_sim.core.config import spec

# [s] the longest a traffic shard may be silent before its agents are dropped (this node's and
# the dynamics node's crash contacts): agents that old are tens of metres off (a choice)
AGENT_TIMEOUT_MAX_S = 5.0


# contact episodes and impact parts mean the same in the detector and in the crash world
# (CrashParams): one spec each, so the two defaults and bounds cannot drift apart
def release_s_spec() -> Any:
    """The ``release_s`` field: how long two bodies are apart before their episode ends."""
    return spec(0.5, unit="s", gt=0.0, le=60.0,
                doc="bodies apart this long (sim time) end a contact episode; the next touch is "
                    "a new (first) contact; a choice: longer than a rebound, shorter than a new "
                    "approach")


def part_margin_m_spec() -> Any:
    """The ``part_margin_m`` field: the corner band of the impact part (detect.py)."""
    return spec(0.1, unit="m", ge=0.0, lt=1.0,
                doc="contact point this close to equidistant from an end and a side face: a "
                    "corner hit, part unknown (a choice)")


@dataclass(frozen=True)
class AccidentParams:
    """Contact detection between the ego and the traffic agents (004 sec. 7.1, 002 parts)."""

    vehicle_file: str = spec("vehicles/medium_car.yaml")
    """ego vehicle file (box length and width), relative to config/"""
    ego_name: str = spec("ego")
    """actor/victim name of the ego vehicle"""
    frame_id: str = spec("map")
    """frame of the event position (odom = map, REP-105 identity)"""
    release_s: float = release_s_spec()
    part_margin_m: float = part_margin_m_spec()
    agent_timeout_s: float = spec(0.5, unit="s", gt=0.0, le=AGENT_TIMEOUT_MAX_S)
    """a traffic shard silent this long (sim time): its agents are dropped"""
    max_extrapolation_s: float = spec(0.2, unit="s", ge=0.0, le=2.0)
    """agents are moved at constant speed to the ego stamp, at most this far (a choice: at most 2 s,
    28 m at 14 m/s)"""
    agents_vs_agents: bool = spec(True)
    """also report contacts between two traffic agents"""
    map_file: str = spec("")
    """map whose static objects (trees, poles, barriers, buildings) are bodies of the detection,
    relative to config/; '' = none"""
    accident_template: str = spec("")
    """the traffic's accident template (config/accidents/): its vehicles are named scripted/<id> and
    its planned collisions reported with SOURCE_SCRIPTED; '' = none"""
    scenario: str = spec("")
    """scenario (name or file) whose schedule of faults and instructor actions this node publishes;
    '' = none"""
