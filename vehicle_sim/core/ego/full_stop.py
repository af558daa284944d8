"""What "stopped at a stop sign" means, once for the ego autopilot and the run report: the speed
and how near the line.

A stop sign asks for zero speed (e.g. Vienna Convention art. 18(3) with sign B2); a measured
speed is never exactly zero, so a full stop is a speed at or below ``FULL_STOP_MPS``: the ego's
default ``stop_sign_speed_mps`` (core.ego.params; the autopilot brakes to a standstill and goes
on at the first state below it) and the report's check (report.metrics.stop_signs_not_stopped).
No imports: the report reads it without loading the numba kernels.
"""

# [m/s] a choice: the measurement tolerance on zero speed
FULL_STOP_MPS = 0.1
# [m] a stop sign's stop is done with the ego's front bumper this near its stop point (a choice)
STOP_DONE_M = 1.0
# [m] a stop counts with the front bumper up to this before the stop line (a choice: the ego
# stops stop_margin_m before it, at most STOP_ZONE_MARGIN_M - STOP_DONE_M, and is done within
# STOP_DONE_M more); the report's zone of the centre is half the ego's length more
STOP_ZONE_MARGIN_M = 3.0
