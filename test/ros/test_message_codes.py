"""core cannot import the generated messages, so it keeps its own copies of their enum codes:
each copy must equal the .msg constant it stands for (a change of a message must change the core
too), and code outside core uses the core's constant, not a third copy."""
from __future__ import annotations

import ast
from pathlib import Path

from vehicle_sim.msg import AccidentEvent, TrafficAgent, TrafficLight, VehicleDamage

from vehicle_sim.core.accident import damage, detect
from vehicle_sim.core.accident.scene import KIND_CODES
from vehicle_sim.core.engine import urban
from vehicle_sim.core.traffic import light_states as lights
from vehicle_sim.report import metrics


def assigned(module) -> set[str]:
    """Names a module assigns at its top level (not those it imports)."""
    tree = ast.parse(Path(module.__file__).read_text())
    return {t.id for node in tree.body if isinstance(node, ast.Assign) for target in node.targets
            for t in ast.walk(target) if isinstance(t, ast.Name)}


def test_light_states_are_the_traffic_light_messages():
    assert (lights.GREEN, lights.YELLOW, lights.RED, lights.DARK) == (
        TrafficLight.STATE_GREEN, TrafficLight.STATE_YELLOW, TrafficLight.STATE_RED,
        TrafficLight.STATE_DARK)
    # the light controller, the junction kernel, the autopilot, the traffic messages and the
    # report hold no copy of their own (an equal one would pass a value check): none assigns them
    from vehicle_sim.core.ego import autopilot
    from vehicle_sim.core.traffic import lights as controller
    from vehicle_sim.core.traffic.kernels import junction
    from vehicle_sim.nodes import traffic_msgs
    for module in (controller, junction, autopilot, traffic_msgs, metrics):
        assert not assigned(module) & {"GREEN", "YELLOW", "RED", "DARK"}, module.__name__


def test_scene_vehicle_kinds_are_the_traffic_agent_messages():
    assert KIND_CODES == {"car": TrafficAgent.KIND_CAR, "truck": TrafficAgent.KIND_TRUCK}


def test_accident_sources_and_parts_are_the_accident_event_messages():
    assert (urban.SOURCE_DETECTED, urban.SOURCE_SCRIPTED) == (
        AccidentEvent.SOURCE_DETECTED, AccidentEvent.SOURCE_SCRIPTED)
    assert (detect.PART_FRONT, detect.PART_REAR, detect.PART_LEFTSIDE, detect.PART_RIGHTSIDE,
            detect.PART_UNKNOWN) == (AccidentEvent.PART_FRONT, AccidentEvent.PART_REAR,
                                     AccidentEvent.PART_LEFTSIDE, AccidentEvent.PART_RIGHTSIDE,
                                     AccidentEvent.PART_UNKNOWN)


def test_damage_parts_and_levels_are_the_vehicle_damage_messages():
    assert (damage.PART_FRONT_LEFT, damage.PART_FRONT_CENTRE, damage.PART_FRONT_RIGHT,
            damage.PART_REAR, damage.PART_LEFT_SIDE, damage.PART_RIGHT_SIDE) == (
        VehicleDamage.PART_FRONT_LEFT, VehicleDamage.PART_FRONT_CENTRE,
        VehicleDamage.PART_FRONT_RIGHT, VehicleDamage.PART_REAR, VehicleDamage.PART_LEFT_SIDE,
        VehicleDamage.PART_RIGHT_SIDE)
    # levels are indices of LEVEL_NAMES in the core
    levels = [getattr(VehicleDamage, f"LEVEL_{name.upper()}") for name in damage.LEVEL_NAMES]
    assert levels == list(range(len(damage.LEVEL_NAMES)))
