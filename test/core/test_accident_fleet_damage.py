"""Damage of every body of the traffic's crash world (core/accident/fleet_damage.py through
traffic_crashes.py): a provoked rear-end shunt damages the follower's front and the leader's
rear, nothing else; the impulses are equal and opposite (one contact); a reset forgets them;
the book is bounded and bad bodies never raise."""
from __future__ import annotations

import numpy as np
import pytest

from vehicle_sim.core.accident import damage as dmg
from vehicle_sim.core.accident.crash_bodies import ContactReport
from vehicle_sim.core.accident.fleet_damage import BodyPose, FleetDamage
from vehicle_sim.core.accident.traffic_crashes import TrafficCrashes


def test_a_provoked_rear_end_damages_the_followers_front_and_the_leaders_rear():
    from test.core.test_traffic_instructor import road, sim_on, uid
    from vehicle_sim.core.traffic import agents as ag
    sim = sim_on(road())
    lead = sim.spawn(0, 200.0, speed=0.0, profile=ag.MODERATE)
    follow = sim.spawn(0, 150.0, speed=10.0, profile=ag.MODERATE)
    lead_id, follow_id = uid(sim, lead), uid(sim, follow)
    sim.instruct(lead_id, "stop_in_lane")
    sim.instruct(follow_id, "provoke_accident")
    crashes = TrafficCrashes(sim)
    changed: set[int] = set()
    for k in range(1, round(12.0 / 0.05) + 1):
        crashes.step(k * 50_000_000, 0.05, None)
        changed |= crashes.damage_changed
        sim.step(0.05, None)
    book = crashes.damage.states
    assert set(book) == {lead_id, follow_id} == changed
    front = book[follow_id].impulse_ns
    rear = book[lead_id].impulse_ns
    assert front[dmg.PART_FRONT_CENTRE] > 0.0 and rear[dmg.PART_REAR] > 0.0
    others = [p for p in range(dmg.N_PARTS) if p != dmg.PART_FRONT_CENTRE]
    assert front[others].sum() == 0.0, front
    assert rear[[p for p in range(dmg.N_PARTS) if p != dmg.PART_REAR]].sum() == 0.0, rear
    # one contact: the same impact impulse on both (action = reaction)
    assert front[dmg.PART_FRONT_CENTRE] == pytest.approx(rear[dmg.PART_REAR], rel=1e-9)
    # the impact: the follower came in at up to 10 m/s onto a car at rest; equal masses, so
    # the impulse per mass (the level's dv) lies between a touch and the closing speed
    dv = front[dmg.PART_FRONT_CENTRE] / sim.vehicle.chassis.mass_kg
    assert 0.3 < dv <= 10.0 + 0.5, dv
    crashes.reset()
    assert crashes.damage.states == {}


def contact(a_id, b_id, point, impulse, b_static=-1):
    return ContactReport(a_id=a_id, b_id=b_id, b_static=b_static, first=True, point_m=point,
                         normal=(1.0, 0.0), impulse_ns=impulse, a_part=0, b_part=0,
                         impact_impulse_ns=impulse)


def test_the_book_skips_unknown_sides_and_is_bounded():
    book = FleetDamage(part_margin_m=0.3, max_bodies=2)
    car = BodyPose(0.0, 0.0, 0.0, 4.0, 1.8, 1500.0)
    # a static on side B and the ego (-2, no pose given) are skipped; car 1's left side
    changed = book.add([contact(1, -1, (0.0, 0.9), 3000.0, b_static=0),
                        contact(-2, 1, (0.0, 0.9), 1000.0)], {1: car})
    assert changed == {1}
    assert book.states[1].impulse_ns[dmg.PART_LEFT_SIDE] == pytest.approx(4000.0)
    book.add([contact(2, 3, (2.0, 0.0), 100.0)], {2: car, 3: car})
    assert set(book.states) == {1, 2} and book.dropped == 1
    with pytest.raises(ValueError, match="part_margin_m"):
        FleetDamage(part_margin_m=float("nan"))
    assert np.all(book.states[2].levels() == 0)  # 100 N s on 1500 kg: a touch


@pytest.mark.parametrize("vehicle_file, crash_class", [("vehicles/medium_car.yaml", "medium"),
                                                       ("vehicles/truck.yaml", "light_truck"),
                                                       ("vehicles/van.yaml", "van")])
def test_the_agents_crash_as_their_vehicle_file_says(vehicle_file, crash_class):
    """Mass, yaw inertia and crash class (004 Fig. 12 damping) all from TrafficParams.
    vehicle_file: a 9.5 t truck agent crashed with a medium car's class before."""
    from test.core.test_traffic_instructor import road, sim_on
    from vehicle_sim.core.accident.crash_params import crash_class_index
    sim = sim_on(road(), vehicle_file=vehicle_file)
    c = sim.vehicle.chassis
    assert TrafficCrashes(sim).agent_body == (c.mass_kg, c.yaw_inertia_kgm2,
                                              crash_class_index(crash_class))


@pytest.mark.parametrize("vehicle_file, crash_class", [("vehicles/medium_car.yaml", "medium"),
                                                       ("vehicles/truck.yaml", "light_truck"),
                                                       ("vehicles/van.yaml", "van")])
def test_the_agents_are_published_as_the_kind_of_their_crash_class(tmp_path, vehicle_file,
                                                                   crash_class):
    """The ego's crash physics reads the agents' class from TrafficAgent.kind: truck agents
    crashed with the ego as medium cars while crashing with each other as trucks."""
    from vehicle_sim.core.accident.crash_params import crash_class_index, crash_classes
    from vehicle_sim.core.accident.traffic_world import TrafficWorld
    from vehicle_sim.core.traffic.node_params import TrafficNodeParams
    model = tmp_path / "traffic.yaml"
    model.write_text(f"initial_agents: 20\nzone: {{enabled: false}}\n"
                     f"vehicle_file: {vehicle_file}\n")
    world = TrafficWorld(TrafficNodeParams(params_file=str(model)))
    try:
        published = world.with_scene(world.sim.agents())
        assert len(published["uid"]) == 20
        assert set(crash_classes(published["kind"])) == {crash_class_index(crash_class)}
    finally:
        world.close()
