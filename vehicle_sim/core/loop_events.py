"""The physics process's events on their pipe (core.loop_process), as bytes.

A step event, up to 1,000 a second, is a fixed header (tag, step k, t [ns]) and, when a state is
due, the snapshot as 34 float64 (VehicleSnapshot.to_vector): ~10 us to write and ~5 us to read
against ~40 and ~20 us for a pickled snapshot, time the node's process spends holding the
interpreter lock between a step and its publish. Every other event (rare) is a pickled tuple.
Either way ``decode`` gives the tuple core.loop_process dispatches: ("step", k, t_ns, snapshot
or None), ("status", ...), ...
"""
from __future__ import annotations

import pickle
import struct

import numpy as np

from vehicle_sim.core.vehicle.interface import VehicleSnapshot

_STEP = struct.Struct("<cxxxxxxxqq")  # tag b"S", k, t_ns; float64 aligned after it
_STEP_TAG = b"S"
_PICKLED_TAG = b"P"


def step_event(k: int, t_ns: int, snapshot: VehicleSnapshot | None) -> bytes:
    """Step k at t_ns with its state (or None: /clock only)."""
    head = _STEP.pack(_STEP_TAG, k, t_ns)
    return head if snapshot is None else head + snapshot.to_vector().tobytes()


def event(msg: tuple) -> bytes:
    """Any other event (a tuple whose first item names it)."""
    return _PICKLED_TAG + pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)


def decode(buf: bytes) -> tuple:
    if buf[:1] == _STEP_TAG:
        if len(buf) < _STEP.size:
            raise ValueError(f"physics process step event of {len(buf)} bytes, under a header")
        _, k, t_ns = _STEP.unpack_from(buf)
        snapshot = None
        if len(buf) > _STEP.size:
            snapshot = VehicleSnapshot.from_vector(
                np.frombuffer(buf, dtype=np.float64, offset=_STEP.size))
        return "step", k, t_ns, snapshot
    if buf[:1] == _PICKLED_TAG:
        return pickle.loads(buf[1:])
    raise ValueError(f"unknown physics process event {buf[:8]!r}")
