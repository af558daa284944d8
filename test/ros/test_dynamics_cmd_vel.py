"""cmd_vel through the dynamics node's one command validation path, over real DDS (issue 13)."""
from __future__ import annotations

import math
import time

from geometry_msgs.msg import Twist
from vehicle_sim.msg import SimStatus, VehicleState

from vehicle_sim.nodes import qos


def test_a_non_finite_cmd_vel_is_rejected_not_applied_and_does_not_feed_the_watchdog(
        ros_node, start_node):
    """Before: linear.x = inf gave full throttle in gear 1, -inf full throttle in reverse, NaN a
    zero command that kept the watchdog fed."""
    proc = start_node("dynamics_node", params={"command_timeout_s": 0.3, "status_rate_hz": 20.0,
                                               "real_time_factor": 2.0})
    status: list[SimStatus] = []
    states: list[VehicleState] = []
    ros_node.create_subscription(SimStatus, "sim/status", status.append, qos.EVENT)
    ros_node.create_subscription(VehicleState, "vehicle/state", states.append, qos.STATE)
    twist = ros_node.create_publisher(Twist, "cmd_vel", qos.COMMAND)
    ros_node.spin_until(lambda: twist.get_subscription_count() > 0 and status and states,
                        what="cmd_vel match, first status and state")
    for k, value in enumerate((math.inf, -math.inf, math.nan), start=1):
        msg = Twist()
        msg.linear.x = value
        twist.publish(msg)  # keep-last-1: the next one only after this one was counted
        ros_node.spin_until(lambda k=k: status[-1].rejected_commands >= k,
                            what=f"cmd_vel linear.x = {value} rejected")
        mark, end = len(status), time.monotonic() + 0.3
        ros_node.spin_until(lambda m=mark, e=end: time.monotonic() > e and len(status) > m + 2,
                            what="statuses after the rejection")
        assert all(s.command_timeout for s in status[mark:]), "a rejected command feeds nothing"
    assert max(abs(s.twist.linear.x) for s in states) < 0.05, "the car never moved"
    out = proc.stop()
    assert "vehicle command rejected: cmd_vel linear.x is inf" in out, out
