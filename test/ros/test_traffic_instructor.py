"""The instructor (paper 004 sec. 7) on the real traffic node over DDS, through the service
traffic/instruct and through FaultCommand target `traffic`; and a loss of communication
(LINK_DROP) on the real ego_driver node's traffic/agents input.

The test plays the dynamics node: it publishes /clock and vehicle/state with sim times it
chooses (the traffic node steps on sim time only), so nothing depends on delivery counts.
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import pytest
import yaml
from rosgraph_msgs.msg import Clock
from vehicle_sim.msg import (
    FaultCommand,
    FaultStatus,
    TrafficAgent,
    TrafficAgentArray,
    VehicleControl,
    VehicleState,
)
from vehicle_sim.srv import Instruct

from test.ros.test_traffic_node import ego_state
from vehicle_sim.core.units import GRAVITY_MPS2
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.conversions import quaternion_from_rpy, rpy_from_quaternion, stamp, to_ns
from vehicle_sim.paths import config_path

MS = 1_000_000
DT = 50 * MS  # the traffic node's 20 Hz step
SIM = {"use_sim_time": True, "publish_markers": False}
AGENT_MU = 1.0489  # the agents' car, medium_car.yaml: tyre.friction_coefficient


pytestmark = pytest.mark.usefixtures("warm_traffic")  # test/ros/conftest.py


class Rig:
    """Publishes /clock, vehicle/state, faults/command; collects agents and fault answers."""

    def __init__(self, node):
        self.node = node
        self.agents: dict[int, TrafficAgentArray] = {}  # by stamp
        self.status: list[FaultStatus] = []
        self.subs = [node.create_subscription(TrafficAgentArray, "traffic/agents",
                                              self._on_agents, qos.STATE),
                     node.create_subscription(FaultStatus, "faults/status", self.status.append,
                                              qos.EVENT)]
        self.clock = node.create_publisher(Clock, "/clock", qos.STREAM)
        self.state = node.create_publisher(VehicleState, "vehicle/state", qos.STATE)
        self.faults = node.create_publisher(FaultCommand, "faults/command", qos.FAULT_COMMAND)

    def close(self):
        for sub in self.subs:
            self.node.destroy_subscription(sub)
        for pub in (self.clock, self.state, self.faults):
            self.node.destroy_publisher(pub)

    def _on_agents(self, msg: TrafficAgentArray) -> None:
        self.agents[to_ns(msg.header.stamp)] = msg

    def send_ego(self, t_ns: int, x: float, y: float, yaw: float, speed: float) -> None:
        self.state.publish(ego_state(t_ns, x, y, yaw, speed))

    def step_to(self, t_ns: int) -> TrafficAgentArray:
        """Tick /clock to t_ns (re-sent every 0.2 s: best effort) until agents of t_ns are in."""
        deadline = time.monotonic() + 30.0
        while t_ns not in self.agents:
            assert time.monotonic() < deadline, f"no agents stamped {t_ns / 1e9:.2f} s"
            self.clock.publish(Clock(clock=stamp(t_ns)))
            resend = time.monotonic() + 0.2
            while t_ns not in self.agents and time.monotonic() < resend:
                self.node.test_executor.spin_once(timeout_sec=0.01)
        return self.agents[t_ns]

    def answer(self, fault_id: int, state: int) -> FaultStatus:
        self.node.spin_until(lambda: any(s.id == fault_id and s.state == state
                                         for s in self.status),
                             what=f"faults/status id {fault_id} state {state}")
        return next(s for s in self.status if s.id == fault_id and s.state == state)


@pytest.fixture
def rig(ros_node):
    r = Rig(ros_node)
    yield r
    r.close()


def city(tmp_path: Path) -> str:
    path = tmp_path / "city.yaml"
    path.write_text(yaml.safe_dump({"initial_agents": 40, "zone": {"enabled": False}}))
    return str(path)


def by_id(msg: TrafficAgentArray, agent_id: int) -> TrafficAgent:
    return next(a for a in msg.agents if a.id == agent_id)


def test_instructor_service_and_fault_commands_answer_and_act(rig, start_node, tmp_path):
    proc = start_node("traffic_node", params={**SIM, "params_file": city(tmp_path)})
    rig.node.spin_until(lambda: rig.state.get_subscription_count() > 0
                        and rig.faults.get_subscription_count() > 0, what="traffic node")
    t = 1000 * MS
    msg = rig.step_to(t)
    movers = sorted((a for a in msg.agents if a.speed > 5.0), key=lambda a: a.id)
    braker, target = movers[0], movers[1]
    for _ in range(4):  # the ego 8 m behind `target` on its lane, a few steps in
        yaw = rpy_from_quaternion(target.pose.orientation)[2]
        rig.send_ego(t, target.pose.position.x - 8.0 * math.cos(yaw),
                     target.pose.position.y - 8.0 * math.sin(yaw), yaw, 0.0)
        _spin(rig.node, lambda: False, 0.1)
        t += DT
        target = by_id(rig.step_to(t), target.id)
    # FaultCommand path: provoke the agent ahead of the ego
    rig.faults.publish(FaultCommand(id=5, target="traffic", fault=FaultCommand.PROVOKE_ACCIDENT,
                                    channel="nearest_ahead"))
    on = rig.answer(5, FaultStatus.STATE_ACTIVE)
    assert on.fault == FaultCommand.PROVOKE_ACCIDENT and on.target == "traffic"
    assert on.message == f"PROVOKE_ACCIDENT active until cleared (agent {target.id})"
    # service path: full brake on an agent by id, for 1 s of sim time
    client = rig.node.create_client(Instruct, "traffic/instruct")
    assert client.wait_for_service(timeout_sec=10.0)
    t_cmd = t + DT  # the step held (computed ahead): the action counts from its time
    done = client.call_async(Instruct.Request(action="full_brake", agent=str(braker.id),
                                              duration=1.0))
    rig.node.spin_until(done.done, what="traffic/instruct answer")
    res = done.result()
    assert res.accepted and res.agent_id == braker.id, res.message
    assert res.message.startswith("FULL_BRAKE active until t=") and f"(agent {braker.id})" in \
        res.message
    assert rig.answer(res.id, FaultStatus.STATE_ACTIVE).fault == FaultCommand.FULL_BRAKE
    # the step after t was computed ahead, when the agents of t went out (compute_ahead): the
    # command acts from the next one
    t += DT
    assert by_id(rig.step_to(t), braker.id).acceleration > -AGENT_MU * GRAVITY_MPS2 + 1.0
    t += DT
    a = by_id(rig.step_to(t), braker.id)
    assert a.acceleration == pytest.approx(-AGENT_MU * GRAVITY_MPS2, abs=0.01)  # 004 eq. 13
    # bad requests: refused with one line, the node keeps stepping
    rig.faults.publish(FaultCommand(id=7, target="traffic", fault=FaultCommand.CUT_IN,
                                    channel="999999"))
    assert rig.answer(7, FaultStatus.STATE_REJECTED).message == \
        "CUT_IN: no agent with id 999999 in this traffic"
    rig.faults.publish(FaultCommand(id=9, target="traffic", fault=FaultCommand.FULL_BRAKE,
                                    channel=str(0xFF000001)))  # a scripted scene's vehicle
    assert "are the scripted accident scene's vehicles (4278190081 is one)" in \
        rig.answer(9, FaultStatus.STATE_REJECTED).message
    rig.faults.publish(FaultCommand(id=8, target="traffic", fault=FaultCommand.FREEZE))
    assert "not applicable to traffic" in rig.answer(8, FaultStatus.STATE_REJECTED).message
    done = client.call_async(Instruct.Request(action="fly", agent="nearest_ahead"))
    rig.node.spin_until(done.done, what="traffic/instruct answer")
    assert not done.result().accepted and "FLY: not applicable" in done.result().message
    for _ in range(19):  # 1 s on: the full brake's duration elapses
        t += DT
        rig.step_to(t)
    off = rig.answer(res.id, FaultStatus.STATE_CLEARED)
    assert off.message == "duration elapsed" and to_ns(off.header.stamp) == t_cmd + 1000 * MS
    assert by_id(rig.agents[t], braker.id).acceleration > -AGENT_MU * GRAVITY_MPS2 + 1.0
    rig.faults.publish(FaultCommand(id=5, target="traffic", fault=FaultCommand.CLEAR))
    assert rig.answer(5, FaultStatus.STATE_CLEARED).message == "cleared"
    assert proc.proc.poll() is None


def test_link_drop_on_the_ego_drivers_traffic_agents_drops_then_recovers(ros_node, start_node):
    """An agent stopped 15 m ahead of the ego in its lane: the ego driver brakes; with its
    traffic/agents link dropped it no longer sees it (after its 0.5 s input timeout) and drives
    on; when the fault's 2 s end, it brakes again."""
    controls: dict[int, VehicleControl] = {}
    status: list[FaultStatus] = []
    ros_node.create_subscription(VehicleControl, "autonomy/control",
                                 lambda m: controls.__setitem__(to_ns(m.header.stamp), m),
                                 qos.COMMAND)
    ros_node.create_subscription(FaultStatus, "faults/status", status.append, qos.EVENT)
    clock = ros_node.create_publisher(Clock, "/clock", qos.STREAM)
    state = ros_node.create_publisher(VehicleState, "vehicle/state", qos.STATE)
    agents = ros_node.create_publisher(TrafficAgentArray, "traffic/agents", qos.AGENTS_IN)
    faults = ros_node.create_publisher(FaultCommand, "faults/command", qos.FAULT_COMMAND)
    start_node("ego_driver_node", params={"use_sim_time": True},
               params_file=str(config_path("ego_driver.yaml")))
    ros_node.spin_until(lambda: faults.get_subscription_count() > 0
                        and agents.get_subscription_count() > 0, timeout_s=60.0,
                        what="ego_driver node")
    ego_x, y = 30.0, -1.75  # on h0_0_f0, heading east (test_ego_driver_node)

    def frame(t_ns: int) -> VehicleControl:
        """Inputs of sim time t_ns, then the tick; the command of t_ns."""
        s = VehicleState(child_frame_id="base_link", model="test")
        s.header.stamp, s.header.frame_id = stamp(t_ns), "odom"
        s.pose.position.x, s.pose.position.y = ego_x, y
        s.pose.orientation = quaternion_from_rpy(0.0, 0.0, 0.0)
        s.twist.linear.x = 6.0
        state.publish(s)
        lead = TrafficAgent(id=1, state=TrafficAgent.STATE_STOPPED, length=4.3, width=1.7,
                            lane_id="h0_0_f0")
        lead.pose.position.x, lead.pose.position.y, lead.pose.orientation.w = ego_x + 15.0, y, 1.0
        arr = TrafficAgentArray(source="traffic", agents=[lead])
        arr.header.stamp, arr.header.frame_id = stamp(t_ns), "map"
        agents.publish(arr)
        deadline = time.monotonic() + 20.0
        done = lambda: max(controls, default=-1) >= t_ns  # noqa: E731
        while not done():  # the tick, re-sent every 0.2 s (best effort, as the dynamics)
            assert time.monotonic() < deadline, f"no command at {t_ns / 1e9:.2f} s"
            clock.publish(Clock(clock=stamp(t_ns)))
            _spin(ros_node, done, 0.2)
        return controls[max(controls)]

    period = 20 * MS  # 50 Hz control
    t = 1000 * MS
    for _ in range(10):
        t += period
        before = frame(t)
    assert before.brake > 0.2  # brakes for the stopped agent (IDM: about -3.5 m/s^2)
    faults.publish(FaultCommand(id=3, target="ego_driver", fault=FaultCommand.LINK_DROP,
                                channel="traffic/agents", duration=2.0))
    ros_node.spin_until(lambda: any(s.id == 3 for s in status), what="LINK_DROP answer")
    on = next(s for s in status if s.id == 3)
    assert on.state == FaultStatus.STATE_ACTIVE and on.target == "ego_driver", on.message
    dropped = []
    for _ in range(60):  # 1.2 s: past the 0.5 s input timeout, inside the fault's 2 s
        t += period
        dropped.append(frame(t))
    assert dropped[-1].brake < 0.1  # sees no agent (at most a curve ahead)
    for _ in range(60):  # 1.2 s more: the fault ended, the agents come through again
        t += period
        after = frame(t)
    assert any(s.id == 3 and s.state == FaultStatus.STATE_CLEARED for s in status)
    assert after.brake > 0.2
    faults.publish(FaultCommand(id=4, target="ego_driver", fault=FaultCommand.LINK_DELAY,
                                channel="traffic/agents", value=99.0))
    ros_node.spin_until(lambda: any(s.id == 4 for s in status), what="LINK_DELAY answer")
    bad = next(s for s in status if s.id == 4)
    assert bad.state == FaultStatus.STATE_REJECTED and "delay value must be in (0, 10]" in \
        bad.message


def _spin(node, done, seconds: float) -> None:
    end = time.monotonic() + seconds
    while not done() and time.monotonic() < end:
        node.test_executor.spin_once(timeout_sec=0.01)


def test_link_delay_holds_each_message_for_its_delay_of_sim_time_bounded():
    """LinkFaults alone (no DDS): the order is kept, a message stamped s goes out at the first
    sim time >= s + delay, the queue is bounded, and the link recovers in order when it ends."""
    from vehicle_sim.core.faults import ActiveFault, FaultRequest
    from vehicle_sim.nodes import link_faults as lf

    links = lf.LinkFaults("ego_driver", ("traffic/agents",))
    delay = FaultRequest(1, lf.LINK_DELAY, "traffic/agents", 0.3)
    assert links.check(delay, []) is None
    assert "not a gated subscription" in links.check(
        FaultRequest(1, lf.LINK_DROP, "vehicle/state"), [])
    assert "not applicable to ego_driver" in links.check(FaultRequest(1, "freeze"), [])
    for bad in (0.0, -1.0, math.nan, lf.MAX_DELAY_S + 1.0):
        assert "delay value" in links.check(FaultRequest(1, lf.LINK_DELAY, "traffic/agents",
                                                          bad), [])
    links.update([ActiveFault(delay, None)])
    out = []
    for k in range(10):  # 20 Hz messages stamped at their arrival
        t = k * DT
        out += [(t, m) for m in links.offer("traffic/agents", k, t, t)]
    assert out == [(t, (t - 300 * MS) // DT) for t in range(300 * MS, 450 * MS + 1, DT)]
    links.update([])  # the fault ended: the rest goes out at once, in order, then live
    assert links.release("traffic/agents", 460 * MS) == [4, 5, 6, 7, 8, 9]
    assert links.offer("traffic/agents", 10, 500 * MS, 500 * MS) == [10]
    links.update([ActiveFault(delay, None)])
    for k in range(lf.MAX_HELD + 50):
        links.offer("traffic/agents", k, 0, 0)
    assert len(links.links["traffic/agents"].held) == lf.MAX_HELD
    assert links.counts("traffic/agents")[0] == 50  # the oldest were dropped


def test_crashed_agents_go_out_as_state_crashed_in_both_encoders():
    """A crashed agent of the core is STATE_CRASHED in traffic/agents (the CDR encoder and the
    message builder alike), whatever its speed; the others keep DRIVING / STOPPED."""
    from rclpy.serialization import deserialize_message

    from vehicle_sim.core.traffic.kernels import layout as lay
    from vehicle_sim.core.traffic.sim import TrafficSim
    from vehicle_sim.nodes import traffic_msgs as tm

    sim = TrafficSim.from_files(config_path("maps/urban_grid.yaml"))
    slots = [sim.spawn(0, s, speed=v) for s, v in ((20.0, 5.0), (40.0, 0.0), (60.0, 5.0))]
    sim.mark_crashed([int(sim.store.ai[lay.AI_UID, slots[2]])])
    a = sim.agents()
    assert a["crashed"].tolist() == [False, False, True]
    owner = [0, 0, 0]
    raw = tm.AgentEncoder(sim.network.lane_names).encode(a, owner, 5, "map")
    built = tm.agents_msg(a, owner, sim.network.lane_names, 5, "map")
    for msg in (deserialize_message(raw, TrafficAgentArray), built):
        assert [x.state for x in msg.agents] == [TrafficAgent.STATE_DRIVING,
                                                  TrafficAgent.STATE_STOPPED,
                                                  TrafficAgent.STATE_CRASHED]
