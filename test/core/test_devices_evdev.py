"""The evdev wheel's read loop as the bridge's link-loss check sees it (issue 13).

The device is a stand-in with a real pipe descriptor (select works on it) that serves python-evdev
InputEvents: virtual input devices (/dev/uinput) are absent on most CI machines; the bridge test
drives a real uinput wheel where it exists.
"""
from __future__ import annotations

import itertools
import os
import threading
import time
from types import SimpleNamespace

import pytest

from vehicle_sim.core.devices.evdev_wheel import HEARTBEAT_S, EvdevWheel

evdev = pytest.importorskip("evdev", reason="python-evdev is not installed (extra 'rig')")
InputEvent, ecodes = evdev.InputEvent, evdev.ecodes

AXES = (ecodes.ABS_X, ecodes.ABS_Y, ecodes.ABS_Z, ecodes.ABS_RZ)


class PipeDevice:
    """Serves queued event batches through a pipe; ``state`` is what EVIOCGABS/EVIOCGKEY read."""

    def __init__(self) -> None:
        self.fd, self._w = os.pipe()
        self.state = {c: 0 for c in AXES}
        self.keys: list[int] = []
        self._batches: list[list[InputEvent]] = []
        self._lock = threading.Lock()

    def send(self, *events: tuple[int, int, int]) -> None:
        with self._lock:
            self._batches.append([InputEvent(0, 0, *e) for e in events])
        os.write(self._w, b"x")

    def read(self):
        os.read(self.fd, 1)
        with self._lock:
            return self._batches.pop(0)

    def absinfo(self, code: int):
        return SimpleNamespace(value=self.state[code])

    def active_keys(self) -> list[int]:
        return list(self.keys)

    def close(self) -> None:
        os.close(self.fd)
        os.close(self._w)


@pytest.fixture
def wheel():
    reports: list[tuple] = []
    dev = PipeDevice()
    w = EvdevWheel(dev, AXES, lambda now, *raw: reports.append((now, *raw)), has_ff=False)
    w.start()
    yield w, dev, reports
    w.stop()


def wait_for(cond, what: str) -> None:
    deadline = time.monotonic() + 5.0
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


SYN = (ecodes.EV_SYN, ecodes.SYN_REPORT, 0)


def test_held_still_the_values_keep_coming_so_the_link_stays_up(wheel):
    _, dev, reports = wheel
    dev.send((ecodes.EV_ABS, ecodes.ABS_Y, 40000), SYN)  # throttle pressed, then held
    wait_for(lambda: any(r[2] == 40000.0 for r in reports), "the throttle")
    first = next(i for i, r in enumerate(reports) if r[2] == 40000.0)
    wait_for(lambda: len(reports) >= first + 5, "reports without events")
    held = reports[first:first + 5]
    assert all(r[1:] == held[0][1:] for r in held), held  # the same values, re-reported
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(held)]
    assert all(g >= 0.5 * HEARTBEAT_S for g in gaps), gaps  # a heartbeat, not a busy loop


def test_after_syn_dropped_the_state_is_read_back_not_the_lost_events(wheel):
    w, dev, reports = wheel
    dev.send((ecodes.EV_ABS, ecodes.ABS_Y, 50000), (ecodes.EV_KEY, ecodes.BTN_0, 1), SYN)
    wait_for(lambda: any(r[2] == 50000.0 for r in reports), "the throttle")
    # the kernel's buffer overflowed while the driver released the pedal and the button: the
    # events after SYN_DROPPED up to SYN_REPORT are partial and must not count
    dev.state[ecodes.ABS_Y] = 0
    dev.send((ecodes.EV_SYN, ecodes.SYN_DROPPED, 0), (ecodes.EV_ABS, ecodes.ABS_Y, 60000),
             (ecodes.EV_KEY, ecodes.BTN_1, 1), SYN)
    wait_for(lambda: w.resyncs == 1, "the read-back")
    n = len(reports)
    wait_for(lambda: len(reports) > n, "a report after the read-back")
    assert reports[-1][2] == 0.0 and reports[-1][5] == frozenset(), reports[-1]
    assert all(r[2] != 60000.0 for r in reports)


def test_an_unplugged_device_stops_the_reports(wheel):
    w, dev, reports = wheel
    wait_for(lambda: reports, "the first heartbeat")
    dev.read = lambda: (_ for _ in ()).throw(OSError(19, "No such device"))
    os.write(dev._w, b"x")
    wait_for(lambda: w.lost, "the loss")
    n = len(reports)
    time.sleep(5 * HEARTBEAT_S)
    assert len(reports) == n  # no more input: the bridge's input goes stale and parks it
