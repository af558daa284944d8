"""The frame sender (core.devices.frame_sender) over real UDP sockets on loopback: each frame
leaves once, at its own deadline, never repeated; a frame not made in time is counted and not
sent; refused sends are counted with the OS's words.

No timing is asserted: the tests lead by half a period, and check what the protocol guarantees
(frames in deadline order, each once, counts that add up), not how many a loaded host made."""
from __future__ import annotations

import socket
import time

import numpy as np
import pytest

from vehicle_sim.core.devices.frame_sender import FrameSender

PERIOD_S = 0.01
LEAD_S = 0.005


@pytest.fixture
def receiver():
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.bind(("127.0.0.1", 0))
    rx.settimeout(0.5)
    yield rx
    rx.close()


def drain(rx: socket.socket) -> list[int]:
    got = []
    while True:
        try:
            got.append(int.from_bytes(rx.recv(64), "little"))
        except TimeoutError:
            return got


def make_frames(sender: FrameSender, count: int, skip: set[int] = frozenset(),
                empty: set[int] = frozenset()) -> list[int]:
    """Makes ``count`` frames as the bridge does (payload: the deadline index k), leaving out
    the ``skip``-th and sending nothing for the ``empty``-th; returns the ks put with bytes."""
    put = []
    for i in range(count):
        k, due = sender.next_deadline()
        time.sleep(max(0.0, due - time.monotonic()))
        if i in skip:
            continue
        sender.put(k, None if i in empty else k.to_bytes(8, "little"))
        if i not in empty:
            put.append(k)
    time.sleep(2 * PERIOD_S)
    sender.stop()
    return put


def test_each_frame_leaves_once_in_deadline_order(receiver):
    sender = FrameSender(PERIOD_S, 8, receiver.getsockname(), lead_s=LEAD_S)
    sender.start()
    put = make_frames(sender, 60)
    got = drain(receiver)
    assert got, "no frame arrived"
    assert got == sorted(set(got)), "a frame repeated or out of order"
    assert set(got) <= set(put)
    assert sender.sent == len(got) and sender.errors == 0
    late = sender.take_lateness()
    assert len(late) == sender.deadlines >= len(got)  # one sample per deadline passed
    assert np.all(late >= 0.0) and len(sender.take_lateness()) == 0  # taken once


def test_a_frame_not_made_in_time_is_missed_not_repeated(receiver):
    sender = FrameSender(PERIOD_S, 8, receiver.getsockname(), lead_s=LEAD_S)
    sender.start()
    put = make_frames(sender, 30, skip={10, 11, 12}, empty={20})
    got = drain(receiver)
    assert got == sorted(set(got)) and set(got) <= set(put)
    # the three deadlines without a frame (and those after the last one) are misses, after
    # waiting half a period for each; the one with nothing to send (a link held down) is not
    assert sender.missed >= 3 and sender.late >= sender.missed
    assert sender.sent + sender.missed + 1 <= sender.deadlines


def test_a_frame_made_after_its_deadline_leaves_late_within_half_a_period(receiver):
    period_s = 0.5  # long: the test's own oversleep stays far inside the half-period grace
    sender = FrameSender(period_s, 8, receiver.getsockname(), lead_s=0.1)
    sender.start()
    k, due = sender.next_deadline()
    sender.put(k, k.to_bytes(8, "little"))  # in time
    k2, due2 = sender.next_deadline()
    time.sleep(max(0.0, due2 + 0.1 + 0.02 - time.monotonic()))  # 20 ms past its deadline
    sender.put(k2, k2.to_bytes(8, "little"))
    time.sleep(0.05)
    sender.stop()
    assert drain(receiver) == [k, k2]
    assert sender.late == 1 and sender.missed == 0
    assert sender.take_lateness().max() >= 0.02  # when it left, not when the loop woke


def test_refused_sends_are_counted_with_the_os_reason():
    # a datagram to loopback's broadcast address from a socket without SO_BROADCAST: EACCES
    sender = FrameSender(PERIOD_S, 8, ("127.255.255.255", 9), lead_s=LEAD_S)
    sender.start()
    make_frames(sender, 10)
    assert sender.errors >= 1 and sender.sent == 0
    assert sender.last_error == "Permission denied"


def test_without_an_address_the_deadlines_are_kept_and_nothing_is_sent():
    sender = FrameSender(PERIOD_S, 8, None, lead_s=LEAD_S)
    sender.start()
    make_frames(sender, 10)
    assert sender.sent == 0 and sender.errors == 0 and sender.deadlines >= 10


def test_next_deadline_never_gives_a_frame_twice_nor_one_already_passed():
    sender = FrameSender(PERIOD_S, 8, None, lead_s=LEAD_S)
    sender.start()
    k1, _ = sender.next_deadline()
    k2, _ = sender.next_deadline()
    time.sleep(5 * PERIOD_S)
    passed = sender.deadlines  # deadlines the sender passed while we slept, at least
    k3, _ = sender.next_deadline()
    sender.stop()
    assert k2 == k1 + 1 and k3 > k2
    assert k3 > passed  # not one the sender passed


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="period_s"):
        FrameSender(0.0, 8)
    sender = FrameSender(PERIOD_S, 4)
    with pytest.raises(ValueError, match="5 bytes, more than the 4"):
        sender.put(1, b"12345")
