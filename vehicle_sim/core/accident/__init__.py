"""Accident detection of paper 004 sec. 7.1 with the collision parts of paper 002.

Public API: :class:`vehicle_sim.core.accident.detect.AccidentDetector` (and its ``Body``,
``Contact`` records); parameters in :mod:`vehicle_sim.core.accident.params`.
"""
