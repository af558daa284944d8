"""Physics, traffic, sensor and hardware models of vehicle_sim.

Nothing under ``vehicle_sim.core`` imports rclpy or message types: it runs and is tested on a
machine with no ROS installed. Nodes in ``vehicle_sim.nodes`` convert messages at the edge.
"""
