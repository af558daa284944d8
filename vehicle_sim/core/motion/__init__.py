"""Motion-platform and steering-rig bridge core (issue 6): pure Python, no ROS, no I/O.

Modules: ``cueing`` (specific force at the head), ``washout`` (classical washout),
``stewart`` (hexapod and 2/3-DOF kinematics), ``safety`` (limits, watchdog, e-stop),
``wire`` (rig byte formats), ``ffb`` (force feedback), ``input_map``, ``mux`` (the takeover
latch), ``steering`` (the per-cycle steering-rig pipeline), ``arbiter`` (the active source and the
command to publish), ``bridge`` (the per-cycle motion pipeline) and ``params`` (frozen
parameters; presets in config/platforms). Device I/O is in ``core.devices``.
"""
