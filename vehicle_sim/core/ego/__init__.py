"""Autopilot of the ego vehicle (paper 004 sec. 6 driver model applied to the driven car).

Public API: :class:`vehicle_sim.core.ego.autopilot.Autopilot` (``update`` -> ``Command``),
:class:`vehicle_sim.core.ego.route.Route`, parameters in :mod:`vehicle_sim.core.ego.params`.
"""
