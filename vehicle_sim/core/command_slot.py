"""The newest driver command in shared memory, from the node to the physics process (issue 14).

Through the request pipe a command reached the loop only after the child's request thread woke,
took the interpreter lock from the loop and unpickled it. Here the node writes it into a small
shared file (memfd) and the loop reads it just before each step: no thread wakes, nothing is
queued, only the newest command counts (as SimLoop.set_command, which it feeds).

One writer (the node, under a lock) and one reader (the loop thread). A record is the sequence
number, the six values of Controls, a CRC-32 of both and the sequence number again; the reader
takes a record only if both numbers agree and the CRC matches, so a read torn by a write in
progress is never used (the next step reads again). The reader writes back the sequence number
it took: the node sees whether its commands are taken at all (a frozen physics process).
"""
from __future__ import annotations

import mmap
import os
import struct
import tempfile
import threading
import zlib

from vehicle_sim.core.vehicle.interface import Controls

_VALUES = struct.Struct("<6d")  # steer [rad], throttle, brake, clutch [0..1], gear, handbrake
_RECORD = struct.Struct("<Q6dIxxxxQ")  # seq, values, crc32(seq + values), pad, seq
_TAKEN = struct.Struct("<Q")  # the sequence number the reader took last
_TAKEN_AT = _RECORD.size
SLOT_BYTES = _RECORD.size + _TAKEN.size


def _crc(seq: int, values: bytes) -> int:
    return zlib.crc32(values, zlib.crc32(_TAKEN.pack(seq)))


def _pack(controls: Controls) -> bytes:
    c = controls
    return _VALUES.pack(c.steer_rad, c.throttle, c.brake, c.clutch, float(c.gear),
                        1.0 if c.handbrake else 0.0)


class CommandSlot:
    """A shared command slot: ``CommandSlot()`` creates it (the node's end; ``fd`` is passed to
    the child), ``CommandSlot(fd)`` maps an inherited one (the physics process's end)."""

    def __init__(self, fd: int | None = None):
        if fd is None:
            fd = _shared_file()
            os.ftruncate(fd, SLOT_BYTES)  # zeros: sequence 0 = no command yet
        self.fd = fd
        self._mem = mmap.mmap(fd, SLOT_BYTES)
        self._seq = 0  # the writer's last sequence number, the reader's last taken one
        self._lock = threading.Lock()

    # ---- the node's end ------------------------------------------------------------------
    def write(self, controls: Controls) -> int:
        """Publish ``controls`` as the newest command; returns its sequence number."""
        values = _pack(controls)
        with self._lock:
            self._seq += 1
            _RECORD.pack_into(self._mem, 0, self._seq, *_VALUES.unpack(values),
                              _crc(self._seq, values), self._seq)
            return self._seq

    def taken(self) -> int:
        """The sequence number of the newest command the reader took (0: none yet)."""
        return _TAKEN.unpack_from(self._mem, _TAKEN_AT)[0]

    # ---- the physics process's end -------------------------------------------------------
    def take(self) -> Controls | None:
        """The command written since the last take, or None (none new, or a write in progress:
        the torn record is not used; the next take reads it whole)."""
        seq, *values, crc, seq_again = _RECORD.unpack_from(self._mem, 0)
        if seq == self._seq or seq != seq_again:
            return None
        packed = _VALUES.pack(*values)
        if _crc(seq, packed) != crc:
            return None
        self._seq = seq
        _TAKEN.pack_into(self._mem, _TAKEN_AT, seq)
        steer, throttle, brake, clutch, gear, handbrake = values
        return Controls(steer_rad=steer, throttle=throttle, brake=brake, clutch=clutch,
                        gear=int(gear), handbrake=handbrake != 0.0)

    def close(self) -> None:
        """Unmap and close this end (the memory goes with the last end)."""
        self._mem.close()
        os.close(self.fd)


def _shared_file() -> int:
    """A file in memory only, no name: memfd on Linux, an unlinked temporary file elsewhere."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("vehicle_sim_command")  # close-on-exec; the child: pass_fds
    with tempfile.TemporaryFile() as f:
        return os.dup(f.fileno())
