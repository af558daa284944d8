"""The traffic node's fault target (nodes.instructor_link.TrafficFaults) on a real TrafficSim and
a real rclpy node (not spun: the calls are the ones its callbacks make), for combinations of
requests that are each valid or each refused: a refused request leaves no agent instructed,
an id reused by a link fault takes the agent's blame with it, a selector of non-ASCII digits is
refused in one line (it killed the node), id 0 injects nothing."""
from __future__ import annotations

import numpy as np
import pytest
import rclpy
from vehicle_sim.srv import Instruct

from vehicle_sim.core.accident.traffic_world import make_sim
from vehicle_sim.core.faults import ACTIVE, REJECTED, FaultRequest
from vehicle_sim.core.traffic.kernels import layout as lay
from vehicle_sim.core.traffic.node_params import TrafficNodeParams
from vehicle_sim.nodes import traffic_msgs as tm
from vehicle_sim.nodes.instructor_link import TrafficFaults
from vehicle_sim.nodes.link_faults import LinkFaults

pytestmark = pytest.mark.usefixtures("warm_traffic")  # test/ros/conftest.py


@pytest.fixture
def traffic(ros_node):
    """(TrafficFaults, sim, uid of agent A, its TrafficAgent.id) at sim time 1 s."""
    sim, _ = make_sim(TrafficNodeParams(map_file="maps/urban_grid.yaml",
                                        params_file="traffic/city.yaml"))
    for _ in range(20):
        sim.step(0.05)
    node = rclpy.create_node("traffic", context=ros_node.context)
    faults = TrafficFaults(node, sim, LinkFaults("traffic", ("vehicle/state",)),
                           now_ns=lambda: 1_000_000_000)
    uid = int(sim.agents()["uid"][0])
    yield faults, sim, uid, int(tm.agent_ids([uid])[0])
    node.destroy_node()


def action(sim, uid: int) -> int:
    slot = np.flatnonzero(sim.store.ai[lay.AI_UID] == uid)[0]
    return int(sim.store.ai[lay.AI_INSTR, slot])


def blame(faults: TrafficFaults, uid: int) -> int:
    return int(faults.fault_ids(np.array([uid]))[0])


@pytest.mark.parametrize("selector", ["²", "٣", "1²"])
def test_a_selector_of_other_digits_is_refused_in_one_line(traffic, selector):
    faults, sim, uid, _ = traffic
    changes = faults.command(FaultRequest(3, "provoke_accident", selector))
    assert [c.state for c in changes] == [REJECTED]
    assert "PROVOKE_ACCIDENT:" in changes[0].message, changes[0].message
    assert action(sim, uid) == lay.INS_NONE and not faults.book.active


def test_a_service_request_refused_for_its_length_instructs_no_agent(traffic):
    faults, sim, uid, agent_id = traffic
    req = Instruct.Request(id=77, action="provoke_accident", agent="0" * 300 + str(agent_id))
    resp = faults._on_instruct(req, Instruct.Response())
    assert not resp.accepted and "channel" in resp.message, resp.message
    assert action(sim, uid) == lay.INS_NONE and not faults.book.active and not faults.agent_of


def test_id_zero_injects_nothing_and_instructs_no_agent(traffic):
    faults, sim, uid, agent_id = traffic
    changes = faults.command(FaultRequest(0, "provoke_accident", str(agent_id)))
    assert [c.state for c in changes] == [REJECTED]
    assert "id 0 is only for CLEAR" in changes[0].message
    assert action(sim, uid) == lay.INS_NONE and blame(faults, uid) == 0
    vehicle = faults.book.command(FaultRequest(0, "engine_cut"), 0)  # every book alike
    assert [c.state for c in vehicle] == [REJECTED]


def test_a_refused_request_leaves_the_other_faults_as_they_were(traffic):
    """id 5 brakes A; an id 0 request on B, refused by the book after B was chosen: A still
    brakes and carries fault 5, B drives normally."""
    faults, sim, uid, agent_id = traffic
    assert faults.command(FaultRequest(5, "full_brake", str(agent_id)))[0].state == ACTIVE
    other = int(sim.agents()["uid"][1])
    refused = faults.command(FaultRequest(0, "provoke_accident",
                                          str(int(tm.agent_ids([other])[0]))))
    assert [c.state for c in refused] == [REJECTED]
    assert action(sim, uid) == lay.INS_FULL_BRAKE and blame(faults, uid) == 5
    assert action(sim, other) == lay.INS_NONE and blame(faults, other) == 0


def test_an_instructor_id_reused_by_a_link_fault_takes_the_agents_blame_away(traffic):
    faults, sim, uid, agent_id = traffic
    assert faults.command(FaultRequest(5, "full_brake", str(agent_id)))[0].state == ACTIVE
    assert blame(faults, uid) == 5
    link = faults.command(FaultRequest(5, "link_drop", "vehicle/state"))
    assert ACTIVE in [c.state for c in link], link
    assert action(sim, uid) == lay.INS_NONE and blame(faults, uid) == 0


def test_a_flood_of_one_kind_of_rejection_is_one_line_a_new_kind_is_one_more(monkeypatch):
    """The gate of the rejection lines (fault links, the fault desk, the bridge's stack
    inputs): values do not make a new kind; another kind or another source does."""
    from vehicle_sim.nodes import warning_gate
    clock = [100.0]
    monkeypatch.setattr(warning_gate.time, "monotonic", lambda: clock[0])
    gate = warning_gate.WarningGate(period_s=1.0)
    said = [gate.due("vehicle", f"BRAKE_FAILURE: value must be in [0, 1], got {v}")
            for v in (float("nan"), 2.0, -1.0, 1e300)]
    assert said == [True, False, False, False]
    assert gate.due("vehicle", "ENGINE_CUT: id 0 is only for CLEAR")
    assert gate.due("imu", "BRAKE_FAILURE: value must be in [0, 1], got 3")
    clock[0] += 1.0
    assert gate.due("vehicle", "BRAKE_FAILURE: value must be in [0, 1], got 5")
    for k in range(3 * warning_gate.MAX_KINDS):  # hostile names: memory stays bounded
        gate.due(f"node{k}", "x")
    assert len(gate._warned_at) <= warning_gate.MAX_KINDS
