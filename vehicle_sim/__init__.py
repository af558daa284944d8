"""vehicle_sim: hardware-in-the-loop driving simulation for ROS 2."""
