"""Numba kernels of one traffic step, on the packed arrays of ``layout``.

- ``step``: the step over all agents (orchestration);
- ``agent_driver``: one agent's references and steering (004 sec. 6), on the scalar laws of
  ``driver_law`` that the ego autopilot uses too;
- ``junction``: junction entry (004 sec. 6.3); ``lane_change``: overtaking lane changes;
- ``agent_vehicle``: the agents' vehicle model (single-track near the ego, kinematic elsewhere);
- ``neighbours``: per-step lane order and grid; ``exits``: exit draws at lane ends;
- ``lane_path``: points and projections on the sampled lane paths;
- ``route_scan``: along an explicit lane list (the ego autopilot's route): its polyline and the
  nearest agent in its corridor.

Per-agent helpers that take the bundled Scene / Neighbours tuples (and the small scalar laws) are
``inline="always"``: as separate compiled calls per agent they made the step 35 % slower
(measured; most likely the per-call handling of the up to 18 arrays a bundle holds).

The per-agent loops (step._move_agents, junction._classify_agents and _grant_entries) are
compiled without numba's reference counting (``_nrt=False``; their callers allocate the arrays
they fill). With it, numba emitted ~150 atomic incref / decref pairs per agent-step for the
arrays of the bundles (counted with NUMBA_DEBUG_NRT, 1,000 agents), over half of the step's
time at 5,000 agents; the arithmetic is the same, so the results are bit-identical.
"""
