"""The lockstep engine (issue 14): a scenario's cores stepped in one process, in a fixed order,
with ROS only at the edges (nodes.engine_node)."""
