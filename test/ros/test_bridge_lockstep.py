"""The bridge as a lockstep peer (nodes.bridge_lockstep), a real process over real DDS: a /clock
tick is acknowledged once an autonomy command arrived at most stack_lag_s of sim time before it;
while the run waits, the command stays fresh (its age is sim time, not the wall clock); a stack
silent for stack_wait_s releases the frames with one warning, and its next command holds them
again."""
from __future__ import annotations

import time

from rosgraph_msgs.msg import Clock
from std_msgs.msg import String
from vehicle_sim.msg import LockstepAck, VehicleControl

from vehicle_sim.nodes import conversions as conv
from vehicle_sim.nodes import qos

MS = 1_000_000
FRAME_NS = 10 * MS
WAIT_S = 2.0  # the bridge's stack_wait_s here


def spin_for(node, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        node.test_executor.spin_once(timeout_sec=0.02)


class LockstepBridge:
    """A bridge_node in lockstep with the stack (stack_wait_s ``wait_s``), and this test's ends
    of it: its acks, active sources and forwarded controls; /clock and autonomy/control."""

    def __init__(self, ros_node, start_node, wait_s: float):
        self.proc = start_node("bridge_node", params={
            "mode": "lockstep", "lockstep": "true", "stack_lag_s": 0.1, "stack_wait_s": wait_s,
            "autonomy_timeout_s": 0.5, "platform_rate_hz": 100.0, "stats_period_s": 0.0})
        self.acks: list[int] = []
        self.sources: list[str] = []
        self.controls: list[VehicleControl] = []
        ros_node.create_subscription(LockstepAck, "/sim/lockstep_ack",
                                     lambda m: self.acks.append(conv.to_ns(m.stamp)),
                                     qos.LOCKSTEP_ACK_IN)
        ros_node.create_subscription(String, "bridge/active_source",
                                     lambda m: self.sources.append(m.data), qos.LATCHED)
        ros_node.create_subscription(VehicleControl, "vehicle/control", self.controls.append,
                                     qos.COMMAND)
        self.clock = ros_node.create_publisher(Clock, "/clock", qos.clock(lockstep=True))
        self.stack = ros_node.create_publisher(VehicleControl, "autonomy/control", qos.COMMAND)
        ros_node.spin_until(lambda: self.clock.get_subscription_count() > 0
                            and self.stack.get_subscription_count() > 0
                            and self.sources[-1:] == ["none"],
                            timeout_s=60.0, what="the bridge's /clock and autonomy readers")

    def tick(self, t_ns: int) -> None:
        self.clock.publish(Clock(clock=conv.stamp(t_ns)))

    def command(self, throttle: float) -> None:
        self.stack.publish(VehicleControl(throttle=throttle, gear=1))


def test_frames_wait_for_the_stack_and_a_silent_stack_releases_them(ros_node, start_node):
    bridge = LockstepBridge(ros_node, start_node, WAIT_S)
    proc, acks, sources, controls = bridge.proc, bridge.acks, bridge.sources, bridge.controls
    tick, command = bridge.tick, bridge.command

    # the first frame waits for the stack's first command (its wait is WAIT_S of wall time)
    tick(FRAME_NS)
    spin_for(ros_node, 0.5)
    assert acks == []
    command(0.1)
    ros_node.spin_until(lambda: acks == [FRAME_NS], what="the first frame's ack")
    # the command arrived before the first frame: it counts as of that frame (0.01 s), frames
    # up to 0.11 s go on, the next one waits, however long on the wall clock: the command is
    # fresh in sim time
    for k in range(2, 13):
        tick(k * FRAME_NS)
    ros_node.spin_until(lambda: acks[-1:] == [11 * FRAME_NS], what="frames up to 0.11 s")
    spin_for(ros_node, 1.0)  # twice the autonomy timeout of wall time
    assert acks[-1] == 11 * FRAME_NS and sources[-1] == "autonomy", (acks[-3:], sources)
    command(0.2)  # at frame 0.11 s: the run goes on to 0.21 s
    ros_node.spin_until(lambda: acks[-1:] == [12 * FRAME_NS], what="the held frame's ack")
    ros_node.spin_until(lambda: len(controls) >= 2, what="the forwarded commands")
    spin_for(ros_node, 0.2)
    assert [c.throttle for c in controls] == [0.1, 0.2]  # each forwarded once, as it came
    # the stack goes silent: frame 0.22 s waits WAIT_S, then the frames go on without it
    for k in range(13, 22):
        tick(k * FRAME_NS)
    ros_node.spin_until(lambda: acks[-1:] == [21 * FRAME_NS], what="frames up to 0.21 s")
    held_at = time.monotonic()
    tick(22 * FRAME_NS)
    ros_node.spin_until(lambda: acks[-1:] == [22 * FRAME_NS], timeout_s=3 * WAIT_S,
                        what="the release after stack_wait_s")
    assert time.monotonic() - held_at >= WAIT_S - 0.1
    for k in range(23, 100):  # released: no wait; 0.5 s of sim time after 0.11 s: stale
        tick(k * FRAME_NS)
    ros_node.spin_until(lambda: acks[-1:] == [99 * FRAME_NS] and sources[-1] == "none",
                        what="released frames, the stale stack no source")
    # the stack commands again (at frame 0.99 s): frames wait for it again from there
    command(0.3)
    ros_node.spin_until(lambda: sources[-1] == "autonomy", what="the stack back")
    for k in range(100, 112):
        tick(k * FRAME_NS)
    ros_node.spin_until(lambda: acks[-1:] == [109 * FRAME_NS], what="frames up to 1.09 s")
    spin_for(ros_node, 0.5)
    assert acks[-1] == 109 * FRAME_NS
    out = proc.stop()
    assert out.count("waits for a stack command on") == 1 and "autonomy/control" in out, out
    assert out.count("lockstep goes on without the stack") == 1, out
    assert "no stack command for 2 s of wall time at t=0.220 s" in out, out
    assert out.count("lockstep waits for them again") == 1, out


def test_a_bridge_respawned_in_mid_run_keeps_the_stack_that_kept_commanding(ros_node, start_node):
    """A bridge (re)started while the run is at 120 s: the stack's command that came before its
    first frame counts for that frame (no wait of stack_wait_s, here an hour: the test would
    time out), and it stays fresh across the jump of the stack clock from 0 to 120 s (before,
    it looked 120 s old: bridge/active_source went autonomy -> none -> autonomy)."""
    bridge = LockstepBridge(ros_node, start_node, 3600.0)
    acks, sources, tick = bridge.acks, bridge.sources, bridge.tick
    t0_ns = 120_000 * MS
    bridge.command(0.1)  # the stack commands on, as before
    ros_node.spin_until(lambda: sources[-1:] == ["autonomy"], what="the stack's command")
    tick(t0_ns)
    ros_node.spin_until(lambda: acks == [t0_ns], what="the first frame's ack, with no wait")
    spin_for(ros_node, 0.5)  # 50 platform cycles on the new stack clock, no new command
    assert sources[sources.index("autonomy"):] == ["autonomy"], sources
    # from here the lag counts in sim time: frames up to 120.1 s go on, the next one waits
    for k in range(1, 13):
        tick(t0_ns + k * FRAME_NS)
    ros_node.spin_until(lambda: acks[-1:] == [t0_ns + 10 * FRAME_NS], what="frames to 120.1 s")
    spin_for(ros_node, 0.5)
    assert acks[-1] == t0_ns + 10 * FRAME_NS, acks[-3:]
    bridge.command(0.2)
    ros_node.spin_until(lambda: acks[-1:] == [t0_ns + 12 * FRAME_NS], what="the held frames")
    out = bridge.proc.stop()
    assert "goes on without the stack" not in out, out
