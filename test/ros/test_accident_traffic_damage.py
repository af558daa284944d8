"""The damage of the traffic's bodies over DDS (issue 11): the real traffic node runs paper
002's scene A4 (config/scenes/a4_traffic.yaml) on the sim time this test publishes; the
scripted cars' per-part damage comes out latched on ``accidents/traffic_damage`` keyed by body
name, B's front and A's left side from collision 1 with equal impulses (one contact: action =
reaction); sim time going back (a new run) publishes the empty set.

The test plays the dynamics node's clock (no ego): nothing depends on delivery counts, the
traffic node steps on sim time only and the damage topic is reliable and latched."""
from __future__ import annotations

import time

import numpy as np
import pytest
from rosgraph_msgs.msg import Clock
from vehicle_sim.msg import VehicleDamage, VehicleDamageArray

from test.ros.test_traffic_instructor import Rig
from vehicle_sim.core.accident.damage import PART_NAMES
from vehicle_sim.core.accident.traffic_world import body_name
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.conversions import stamp, to_ns
from vehicle_sim.nodes.traffic_damage import TOPIC
from vehicle_sim.nodes.traffic_msgs import agent_ids
from vehicle_sim.paths import config_path

MS = 1_000_000
STEP = 50 * MS  # clock ticks of 50 ms: five 100 Hz traffic steps each (max_catch_up_steps 5)


@pytest.fixture
def rig(ros_node):
    r = Rig(ros_node)
    yield r
    r.close()


def _spin(node, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        node.test_executor.spin_once(timeout_sec=0.02)


def parts(d: VehicleDamage) -> dict[str, float]:
    """Impulse [N s] of each part hit (for the failure messages)."""
    return {PART_NAMES[k]: v for k, v in enumerate(d.impulse) if v > 0.0}


def test_scripted_cars_damage_is_published_latched_and_cleared_by_a_new_run(rig, start_node):
    got: list[VehicleDamageArray] = []
    rig.node.create_subscription(VehicleDamageArray, TOPIC, got.append, qos.LATCHED)
    proc = start_node("traffic_node", params={"use_sim_time": True},
                      params_file=str(config_path("scenes/a4_traffic.yaml")))
    rig.node.spin_until(lambda: got, timeout_s=60.0, what="the latched damage set at start")
    assert got[-1].bodies == [] and got[-1].source == "traffic"
    t = 0
    while t < 6000 * MS:  # A4: collision 1 at ~4.4 s, collision 2 at ~5.2 s of sim time
        t += STEP
        rig.step_to(t)
    rig.node.spin_until(lambda: len(got[-1].bodies) == 2, what="damage of both cars")
    last = got[-1]
    assert 4000 * MS < to_ns(last.header.stamp) <= t
    by_body = {d.body: d for d in last.bodies}
    assert set(by_body) == {"scripted/vehicleA", "scripted/vehicleB"}
    a, b = by_body["scripted/vehicleA"], by_body["scripted/vehicleB"]
    b_front = sum(b.impulse[:3])
    assert b_front > 0.0 and sum(b.impulse[3:]) == 0.0, parts(b)
    assert a.impulse[VehicleDamage.PART_LEFT_SIDE] == pytest.approx(b_front, rel=1e-6), parts(a)
    assert a.level[VehicleDamage.PART_LEFT_SIDE] >= VehicleDamage.LEVEL_LIGHT
    assert np.all(np.asarray(a.level) <= VehicleDamage.LEVEL_DESTROYED)
    # a new run: sim time goes back, the node re-anchors and publishes the empty set
    n = len(got)
    for k in range(1, 41):  # the clock from 0.05 s on (a sim-time timer fires a period after
        rig.clock.publish(Clock(clock=stamp(k * STEP)))  # a jump back)
        if len(got) > n and got[-1].bodies == []:
            break
        _spin(rig.node, 0.2)
    assert len(got) > n and got[-1].bodies == [], "no empty damage set after the new run"
    assert proc.proc.poll() is None
    # agents are named as the accident node names them
    uid = (3 << 40) | 17
    assert body_name(uid, None) == f"agent/{int(agent_ids(np.array([uid]))[0])}"
