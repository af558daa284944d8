"""The run monitor (nodes.monitor_node) in this process: a bounded run's summary covers
[0, duration] to the sample, taking the state and the status at the duration itself and
nothing after it."""
from __future__ import annotations

from rclpy.parameter import Parameter

from vehicle_sim.msg import SimStatus, VehicleState
from vehicle_sim.nodes.conversions import stamp
from vehicle_sim.nodes.monitor_node import MonitorNode


def _state(t_ns: int, x_m: float) -> VehicleState:
    msg = VehicleState()
    msg.header.stamp = stamp(t_ns)
    msg.pose.position.x = x_m
    msg.twist.linear.x = 10.0
    return msg


def _status(t_ns: int) -> SimStatus:
    msg = SimStatus(sim_time=t_ns * 1e-9, steps=t_ns // 1_000_000, real_time_factor=1.0)
    msg.header.stamp = stamp(t_ns)
    return msg


def test_the_summary_ends_on_the_state_and_status_at_the_duration(ros_node):
    monitor = MonitorNode(context=ros_node.context, parameter_overrides=[
        Parameter("duration", value=30.0), Parameter("record_dir", value="")])
    try:
        for t_ms in (29_000, 29_990, 30_000, 30_010):  # 30 s in ns * 1e-9 is above 30.0
            monitor._on_state(_state(t_ms * 1_000_000, t_ms * 0.01))
        for t_ms in (29_000, 30_000, 30_015):
            monitor._on_status(_status(t_ms * 1_000_000))
        s = monitor.summary
        assert monitor.done
        assert s.state_samples == 3 and s.final_position_m == (300.0, 0.0), s
        assert abs(s.distance_m - 10.0) < 1e-9, s
        assert s.physics_steps == 30_000, "the status at the duration, not the one after it"
    finally:
        monitor.destroy_node()
