"""The accident node as a real process: a synthetic ego state and agent array that overlap give
exactly one AccidentEvent with paper 002's parts and the simulation time of first contact; a
scenario's schedule goes out on faults/command ahead of its time; a bad schedule refuses to
start."""
from __future__ import annotations

import math

import pytest
from rosgraph_msgs.msg import Clock
from vehicle_sim.msg import (
    AccidentEvent,
    FaultCommand,
    TrafficAgent,
    TrafficAgentArray,
    VehicleState,
)

from test.core.test_fault_schedule import scenario_with
from vehicle_sim.core.fault_schedule import PUBLISH_LEAD_S
from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos
from vehicle_sim.paths import config_path

L, W = 4.298, 1.674  # config/vehicles/medium_car.yaml box, also used for the agent
T0_NS = 42_000_000_000  # contact at sim time 42 s
DT_NS = 10_000_000  # 100 Hz states


def state(t_ns: int, x: float, speed: float) -> VehicleState:
    msg = VehicleState()
    msg.header.stamp, msg.header.frame_id = conv.stamp(t_ns), "odom"
    msg.pose.position.x = x
    msg.pose.orientation.w = 1.0
    msg.twist.linear.x = speed
    return msg


def agent(agent_id: int, x: float, yaw: float, speed: float, ghost: bool = False,
          fault_id: int = 0) -> TrafficAgent:
    a = TrafficAgent(id=agent_id, speed=speed, length=L, width=W, ghost=ghost, fault_id=fault_id)
    a.pose.position.x = x
    a.pose.orientation = conv.quaternion_from_rpy(0.0, 0.0, yaw)
    return a


def test_overlaps_give_one_event_each_with_parts_and_stamp(ros_node, start_node, tmp_path):
    events: list[AccidentEvent] = []
    ros_node.create_subscription(AccidentEvent, "accidents", events.append, qos.EVENT)
    pub_state = ros_node.create_publisher(VehicleState, "vehicle/state", qos.STATE)
    pub_agents = ros_node.create_publisher(TrafficAgentArray, "traffic/agents", qos.STREAM)
    start_node("accident_node",
               params_file=str(config_path("accident.yaml")))
    ros_node.spin_until(lambda: pub_state.get_subscription_count() > 0
                        and pub_agents.get_subscription_count() > 0, what="accident node subs")
    # agent 42 stopped facing the ego 0.2 m into its front; ghost 7 (a shard's read-only copy)
    # also overlaps and must be ignored; the ego approaches from far at 8 m/s
    arr = TrafficAgentArray(agents=[agent(42, L - 0.2, math.pi, 0.0),
                                    agent(7, 0.0, 0.0, 0.0, ghost=True)])
    arr.header.stamp, arr.header.frame_id = conv.stamp(T0_NS), "map"
    for k in range(30, 0, -1):  # 0.3 s of far-away states while the agents arrive
        pub_agents.publish(arr)
        pub_state.publish(state(T0_NS - k * DT_NS, -50.0, 8.0))
        ros_node.test_executor.spin_once(timeout_sec=0.01)
    assert events == []
    for k in range(20):  # 0.2 s in contact, paced (keep-last-10 queues on both sides)
        pub_state.publish(state(T0_NS + k * DT_NS, 0.0, 8.0))
        ros_node.test_executor.spin_once(timeout_sec=0.02)
    ros_node.spin_until(lambda: len(events) >= 1, what="accident event")
    for _ in range(20):  # 1 s more for a (wrong) second event to arrive
        ros_node.test_executor.spin_once(timeout_sec=0.05)
    assert len(events) == 1
    e = events[0]
    assert conv.to_ns(e.header.stamp) == T0_NS and e.header.frame_id == "map"
    assert (e.actor, e.victim) == ("ego", "agent/42")
    assert (e.actor_part, e.victim_part) == (AccidentEvent.PART_FRONT, AccidentEvent.PART_FRONT)
    assert e.source == AccidentEvent.SOURCE_DETECTED and e.fault_id == 0
    assert e.impact_speed == pytest.approx(8.0, abs=1e-6)
    assert e.relative_velocity.x == pytest.approx(8.0, abs=1e-6)
    assert e.position.x == pytest.approx(0.5 * L - 0.1, abs=1e-6)
    assert abs(e.position.y) < 1e-6
    # agent 2 runs 0.1 m into the rear of agent 1 (same shard array, far from the ego): one
    # agent-agent event stamped with the array's time, however often the array repeats
    t1 = T0_NS + 5_000_000_000
    pair = TrafficAgentArray(agents=[agent(1, 100.0, 0.0, 2.0),  # 2 provoked by fault 31
                                     agent(2, 100.0 - L + 0.1, 0.0, 7.0, fault_id=31)])
    pair.header.frame_id = "map"
    for k in range(10):
        pair.header.stamp = conv.stamp(t1 + k * 50_000_000)
        pub_agents.publish(pair)
        ros_node.test_executor.spin_once(timeout_sec=0.05)
    ros_node.spin_until(lambda: len(events) >= 2, what="agent-agent event")
    for _ in range(10):
        ros_node.test_executor.spin_once(timeout_sec=0.05)
    assert len(events) == 2
    e = events[1]
    assert (e.actor, e.victim) == ("agent/2", "agent/1")
    assert (e.actor_part, e.victim_part) == (AccidentEvent.PART_FRONT, AccidentEvent.PART_REAR)
    assert conv.to_ns(e.header.stamp) == t1 and e.id == 2 and e.fault_id == 31
    assert e.impact_speed == pytest.approx(5.0, abs=1e-6)


def test_the_schedule_is_sent_ahead_of_its_sim_time(ros_node, start_node, tmp_path):
    path = scenario_with(tmp_path, [
        {"at_s": 10.0, "target": "traffic", "fault": "STEERING_STUCK", "id": 7, "channel": "3",
         "duration_s": 2.5},
        {"at_s": 2.5, "target": "vehicle", "fault": "BRAKE_FAILURE", "id": 4, "value": 0.25}])
    got: list[FaultCommand] = []
    ros_node.create_subscription(FaultCommand, "faults/command", got.append, qos.FAULT_COMMAND)
    clock = ros_node.create_publisher(Clock, "/clock", qos.RELIABLE_STREAM)
    start_node("accident_node", params={"use_sim_time": "true", "scenario": path})

    def tick(t_s: float, spins: int = 10) -> None:
        for _ in range(spins):
            clock.publish(Clock(clock=conv.stamp(round(t_s * 1e9))))
            ros_node.test_executor.spin_once(timeout_sec=0.05)

    def tick_until(n: int, t_s: float, what: str) -> None:
        """/clock at ``t_s`` until ``n`` commands arrived: a tick published before the node's
        reader matched the publisher is lost (volatile), the next one is not."""
        ros_node.spin_until(lambda: len(got) >= n or tick(t_s, 1), what=what)

    ros_node.spin_until(lambda: clock.get_subscription_count() > 0, what="accident node clock")
    tick_until(1, 1.0, "the first scheduled command")
    first = got[0]
    assert (first.target, first.fault, first.id) == ("vehicle", FaultCommand.BRAKE_FAILURE, 4)
    assert (first.value, first.at) == (0.25, 2.5)
    tick(10.0 - PUBLISH_LEAD_S - 0.5)  # not yet due to be sent
    assert len(got) == 1
    tick_until(2, 10.0 - PUBLISH_LEAD_S + 0.2, "the second scheduled command")
    second = got[1]
    assert (second.target, second.channel, second.at, second.duration) == (
        "traffic", "3", 10.0, 2.5)


def test_an_unknown_fault_in_the_schedule_refuses_to_start(assert_refuses, tmp_path):
    path = scenario_with(tmp_path, [{"at_s": 1.0, "target": "gps", "fault": "EXPLODE", "id": 1}])
    assert_refuses("accident_node", {"scenario": path}, "unknown fault 'EXPLODE'")


def test_the_engines_summary_sources_are_the_accident_events():
    """core cannot import the message: the lockstep engine keeps AccidentEvent's SOURCE_* values
    itself for its summary (which the sim_monitor fills from the message); a change of the
    message must change them."""
    from vehicle_sim.msg import AccidentEvent

    from vehicle_sim.core.engine import urban
    assert (urban.SOURCE_DETECTED, urban.SOURCE_SCRIPTED) == (
        AccidentEvent.SOURCE_DETECTED, AccidentEvent.SOURCE_SCRIPTED)


def test_a_first_clock_reading_late_skips_only_the_entries_whose_time_is_gone(
        ros_node, start_node, tmp_path):
    """The node reads the clock first at 5 s (a respawn, or fast mode on a loaded host): the
    entry at 2.5 s is gone (skipped, one line), the one at 6 s (inside its lead, not due yet)
    still goes out."""
    path = scenario_with(tmp_path, [
        {"at_s": 2.5, "target": "vehicle", "fault": "BRAKE_FAILURE", "id": 4, "value": 0.25},
        {"at_s": 6.0, "target": "vehicle", "fault": "ENGINE_CUT", "id": 5}])
    got: list[FaultCommand] = []
    ros_node.create_subscription(FaultCommand, "faults/command", got.append, qos.FAULT_COMMAND)
    clock = ros_node.create_publisher(Clock, "/clock", qos.RELIABLE_STREAM)
    proc = start_node("accident_node", params={"use_sim_time": "true", "scenario": path})
    ros_node.spin_until(lambda: clock.get_subscription_count() > 0, what="accident node clock")

    def tick() -> None:
        clock.publish(Clock(clock=conv.stamp(5_000_000_000)))
        ros_node.test_executor.spin_once(timeout_sec=0.05)
    ros_node.spin_until(lambda: got or tick(), what="the entry not yet due")
    assert [(c.id, c.fault, c.at) for c in got] == [(5, FaultCommand.ENGINE_CUT, 6.0)]
    out = proc.stop()
    assert "schedule: 1 entries due before t=5.000 s" in out, out
