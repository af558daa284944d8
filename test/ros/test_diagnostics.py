"""/diagnostics over real DDS: once per simulated second, stamped with the simulation time; the
watchdog braking without a command gives WARN, an injected IMU dropout ERROR, its removal OK."""
from __future__ import annotations

import itertools

import pytest
from vehicle_sim.msg import FaultCommand, FaultStatus

from test.ros.test_bridge_node import Rig as PlatformPeer
from test.ros.test_bridge_node import StateStream, start_bridge
from test.ros.test_sensor_nodes import Rig
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.conversions import to_ns
from vehicle_sim.nodes.diagnostics import ERROR, OK, WARN, faults_check, loop_check

diag = pytest.importorskip("diagnostic_msgs.msg")


class Listener:
    def __init__(self, node):
        self.node, self.got = node, []
        self.sub = node.create_subscription(diag.DiagnosticArray, "/diagnostics", self.got.append,
                                            qos.DIAGNOSTICS)

    def statuses(self, name: str, since: int = 0):
        return [(to_ns(m.header.stamp), s) for m in self.got[since:] for s in m.status
                if s.name == name]

    def level(self, name: str, since: int = 0) -> int | None:
        found = self.statuses(name, since)
        return found[-1][1].level[0] if found else None


@pytest.fixture
def listener(ros_node):
    li = Listener(ros_node)
    yield li
    ros_node.destroy_subscription(li.sub)


def test_dynamics_reports_the_watchdog_as_warn_once_per_sim_second(ros_node, listener,
                                                                   start_node):
    start_node("dynamics_node", params={"command_timeout_s": 0.2, "real_time_factor": 2.0})
    name = "vehicle_sim: physics loop"
    ros_node.spin_until(lambda: len(listener.statuses(name)) >= 3, what="three loop reports")
    found = listener.statuses(name)
    assert all(t % 1_000_000_000 == 0 for t, _ in found[1:]), "whole simulated seconds"
    stamps = [t for t, _ in found[1:]]
    assert all(b - a == 1_000_000_000 for a, b in itertools.pairwise(stamps)), stamps
    t, last = found[-1]
    assert last.level[0] == WARN and "watchdog" in last.message, last.message
    values = {kv.key: kv.value for kv in last.values}
    assert float(values["sim_time_s"]) == pytest.approx(t * 1e-9, abs=1e-3)
    assert last.hardware_id == "dynamics"
    assert listener.level("vehicle_sim: vehicle faults") == OK


def test_an_imu_dropout_is_an_error_until_cleared(ros_node, listener, start_node):
    rig = Rig(ros_node)
    try:
        start_node("imu_node")
        rig.wait_matched("/imu/data")
        name = "vehicle_sim: imu"
        rig.feed_until(lambda: listener.level(name) is not None, "the IMU's first report")
        assert listener.level(name) == OK
        answer = rig.command(FaultCommand.DROPOUT, "imu", 7)
        assert answer.state == FaultStatus.STATE_ACTIVE
        n = len(listener.got)
        rig.feed_until(lambda: listener.level(name, n) is not None, "a report with the fault")
        assert listener.level(name, n) == ERROR
        assert "dropout" in listener.statuses(name, n)[-1][1].message
        assert rig.command(FaultCommand.CLEAR, "imu", 7).state == FaultStatus.STATE_CLEARED
        n = len(listener.got)
        rig.feed_until(lambda: listener.level(name, n) is not None, "a report after the clear")
        assert listener.level(name, n) == OK
    finally:
        rig.close()


def test_levels_of_the_rules():
    from vehicle_sim.core.sim_loop import LoopStatus
    s = LoopStatus(sim_time_s=3.0, steps=3000, overruns=4, paused=False, real_time_factor=0.8,
                   lateness_s=(0.0, 1e-4, 2e-4), compute_p99_s=1e-4, command_timeout=False)
    ok = loop_check(s, mode="realtime", target_rtf=1.0, new_overruns=0)
    assert ok.level == WARN and "real-time factor 0.80" in ok.message  # 0.8 < 0.9 x 1.0
    fast = loop_check(s, mode="fast", target_rtf=1.0, new_overruns=0)
    assert fast.level == OK  # no real-time target in fast mode
    assert loop_check(s, mode="fast", target_rtf=1.0, new_overruns=2).level == WARN
    assert loop_check(s, mode="fast", target_rtf=1.0, new_overruns=0,
                      diverged="x is nan").level == ERROR
    assert faults_check("imu", []).level == OK
    assert faults_check("imu", ["bias_step"]).level == WARN
    assert faults_check("gps", ["bias_step", "no_fix"]).level == ERROR
    # a vehicle that no longer obeys its commands is an error, not a warning
    for kind in ("brake_failure", "steering_stuck", "engine_cut", "tyre_blowout"):
        assert faults_check("vehicle", [kind]).level == ERROR, kind


@pytest.fixture
def platform_peer():
    peer = PlatformPeer()
    yield peer
    peer.close()


def test_bridge_reports_a_silent_command_link_and_a_lost_platform_link(ros_node, listener,
                                                                       start_node, platform_peer):
    """No stack or rig command: the source is "none" (WARN); an injected platform LINK_LOSS is an
    ERROR on the platform link while it lasts."""
    start_bridge(ros_node, start_node, platform_peer)
    stream = StateStream(ros_node)
    faults = ros_node.create_publisher(FaultCommand, "faults/command", qos.EVENT)
    try:
        ros_node.spin_until(lambda: faults.get_subscription_count() > 0
                            and stream.pub.get_subscription_count() > 0, what="match")
        stream.start()
        ros_node.spin_until(lambda: listener.level("vehicle_sim: platform link") is not None,
                            what="the bridge's first report")
        assert listener.level("vehicle_sim: command source") == WARN
        assert listener.level("vehicle_sim: platform link") == OK
        assert listener.level("vehicle_sim: wheel link") == OK
        faults.publish(FaultCommand(id=1, target="platform", fault=FaultCommand.LINK_LOSS))
        ros_node.spin_until(lambda: listener.level("vehicle_sim: platform link") == ERROR,
                            what="platform link down")
        t_ns, down = listener.statuses("vehicle_sim: platform link")[-1]
        assert down.hardware_id == "bridge" and "down" in down.message
        assert t_ns % 1_000_000_000 == 0 and t_ns in stream.stamps  # a state's sim time
    finally:
        stream.stop()
        ros_node.destroy_publisher(faults)
