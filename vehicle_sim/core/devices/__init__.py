"""Device I/O of the hardware bridge, without ROS and without bridge logic.

``udp`` (platform frames out, rig input packets in), ``serial_port`` (platform frames on a raw
8N1 serial line) and ``evdev_wheel`` (a force-feedback wheel). Each moves bytes or device values
and counts what went wrong; the node and the ``core.motion`` pipelines decide what to do.
"""
