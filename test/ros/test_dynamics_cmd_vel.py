"""cmd_vel through the one command validation path, over real DDS (issue 13).

Since issue 12 cmd_vel is a source of the bridge's mux (nodes/stack_inputs.py): the bridge
checks it (core/controls.py) before its controller, and the dynamics node gets only the mux's
VehicleControl. The meaning is the same: a non-finite cmd_vel is not applied and does not feed
the watchdog."""
from __future__ import annotations

import math

from geometry_msgs.msg import Twist
from vehicle_sim.msg import SimStatus, VehicleState

from vehicle_sim.nodes import qos


def test_a_non_finite_cmd_vel_is_rejected_not_applied_and_does_not_feed_the_watchdog(
        ros_node, start_node):
    """Before: linear.x = inf gave full throttle in gear 1, -inf full throttle in reverse, NaN a
    zero command that kept the watchdog fed."""
    start_node("dynamics_node", params={"command_timeout_s": 0.3, "status_rate_hz": 20.0,
                                        "real_time_factor": 2.0})
    bridge = start_node("bridge_node", params={"platform_rate_hz": 100.0})
    status: list[SimStatus] = []
    states: list[VehicleState] = []
    ros_node.create_subscription(SimStatus, "sim/status", status.append, qos.EVENT)
    ros_node.create_subscription(VehicleState, "vehicle/state", states.append, qos.STATE)
    twist = ros_node.create_publisher(Twist, "cmd_vel", qos.COMMAND)
    ros_node.spin_until(lambda: twist.get_subscription_count() > 0 and status and states,
                        timeout_s=60.0, what="cmd_vel match, first status and state")
    for value in (math.inf, -math.inf, math.nan):
        msg = Twist()
        msg.linear.x = value
        mark = len(status)
        # each for a while (20 statuses at 20 Hz): the bridge's loop runs meanwhile
        while len(status) < mark + 20:
            twist.publish(msg)
            seen = len(status)
            ros_node.spin_until(lambda n=seen: len(status) > n, what="next status")
        assert all(s.command_timeout for s in status[mark:]), "a rejected command feeds nothing"
        assert all(s.rejected_commands == 0 for s in status), "nothing reached the vehicle"
    assert max(abs(s.twist.linear.x) for s in states) < 0.05, "the car never moved"
    out = bridge.stop()
    assert "cmd_vel: rejected: cmd_vel linear.x is inf" in out, out
