"""Numba kernels of one traffic step, on the packed arrays of ``layout``.

- ``step``: the step over all agents (orchestration);
- ``agent_driver``: one agent's references and steering (004 sec. 6), on the scalar laws of
  ``driver_law`` that the ego autopilot uses too;
- ``junction``: junction entry (004 sec. 6.3); ``lane_change``: overtaking lane changes;
- ``agent_vehicle``: the agents' vehicle model (single-track near the ego, kinematic elsewhere);
- ``neighbours``: per-step lane order and grid; ``exits``: exit draws at lane ends;
- ``lane_path``: points and projections on the sampled lane paths.

Per-agent helpers that take the bundled Scene / Neighbours tuples (and the small scalar laws) are
``inline="always"``: as separate compiled calls per agent they made the step 35 % slower
(measured; most likely the per-call handling of the up to 18 arrays a bundle holds).
"""
