"""What "stopped at a stop sign" means, once for the ego autopilot and the run report.

A stop sign asks for zero speed (e.g. Vienna Convention art. 18(3) with sign B2); a measured
speed is never exactly zero, so a full stop is a speed at or below ``FULL_STOP_MPS``: the ego's
default ``stop_sign_speed_mps`` (core.ego.params; the autopilot brakes to a standstill and goes
on at the first state below it) and the report's check (report.metrics.stop_signs_not_stopped).
No imports: the report reads it without loading the numba kernels.
"""

# [m/s] a choice: the measurement tolerance on zero speed; the traffic core's agents count as
# waiting below the same 0.1 m/s (kernels.agent_vehicle)
FULL_STOP_MPS = 0.1
