"""The fault book every target uses: ids, durations in integer sim nanoseconds, CLEAR, rejection."""
import math

from vehicle_sim.core.faults import FaultBook, FaultRequest, Wording, not_applicable


def only_link_loss(req, others):
    return None if req.kind == "link_loss" else not_applicable("wheel", ("link_loss",))


def states(changes):
    return [(c.id, c.kind, c.state) for c in changes]


def test_a_duration_ends_at_the_exact_nanosecond_and_zero_lasts_until_cleared():
    book = FaultBook("wheel", only_link_loss)
    (on,) = book.command(FaultRequest(1, "link_loss", duration_s=0.004), 1_000)
    assert on.state == "active" and on.message == "LINK_LOSS active until t=0.004 s"
    book.command(FaultRequest(2, "link_loss"), 1_000)
    assert book.expire(4_000_999) == []
    assert states(book.expire(4_001_000)) == [(1, "link_loss", "cleared")]
    assert states(book.expire(10**15)) == [] and list(book.active) == [2]


def test_a_reused_id_replaces_and_clear_zero_clears_all():
    book = FaultBook("wheel", only_link_loss)
    book.command(FaultRequest(1, "link_loss", duration_s=1.0), 0)
    book.command(FaultRequest(2, "link_loss"), 0)
    (again,) = book.command(FaultRequest(1, "link_loss"), 5)
    assert again.state == "active" and book.active[1].until_ns is None
    assert book.expire(2_000_000_000) == [], "the replacement lasts until cleared"
    assert states(book.command(FaultRequest(0, "clear"), 9)) == [
        (2, "link_loss", "cleared"), (1, "link_loss", "cleared")]
    (none,) = book.command(FaultRequest(0, "clear"), 9)
    assert (none.id, none.state, none.message) == (0, "cleared", "no active fault")


def test_rejections_say_why_and_change_nothing():
    book = FaultBook("wheel", only_link_loss)
    book.command(FaultRequest(1, "link_loss"), 0)
    answers = [book.command(r, 0)[0] for r in (
        FaultRequest(1, "freeze"), FaultRequest(1, "link_loss", duration_s=math.inf),
        FaultRequest(7, "clear"), FaultRequest(3, "fault 42"),
        FaultRequest(4, "link_loss", duration_s=1e300))]  # finite, but no integer ns count
    assert [a.state for a in answers] == ["rejected"] * 5
    assert answers[0].message == "FREEZE: not applicable to wheel (accepted: LINK_LOSS, CLEAR)"
    assert answers[1].message == ("LINK_LOSS: duration must be finite, >= 0 and <= 1e+06 s "
                                  "(0 = until cleared), got inf")
    assert answers[4].message.endswith("got 1e+300")
    assert answers[2].message == "CLEAR: no active wheel fault with id 7"
    assert answers[3].message.startswith("fault 42: not applicable")
    assert list(book.active) == [1] and book.active[1].until_ns is None


def test_the_check_sees_the_other_active_faults_not_the_one_replaced():
    seen = []
    book = FaultBook("x", lambda req, others: seen.append([f.request.id for f in others]))
    for fault_id in (1, 2, 1):
        book.command(FaultRequest(fault_id, "freeze"), 0)
    assert seen == [[], [1], [2]]


def test_wording_of_the_vehicle_names_kinds_in_lower_case_and_the_tyre():
    book = FaultBook("vehicle", lambda req, others: None,
                     Wording(upper_case=False, channel_names={"fl": "front_left"},
                             none_active="none here"))
    (on,) = book.command(FaultRequest(4, "tyre_blowout", channel="fl"), 0)
    assert on.message == "tyre_blowout front_left active until cleared"
    book.command(FaultRequest(4, "clear"), 0)
    assert book.command(FaultRequest(0, "clear"), 0)[0].message == "none here"


def test_a_hostile_length_of_text_is_refused_by_its_length_and_never_echoed():
    """A 100,000-character agent selector (or kind) was echoed into the answer and the log."""
    seen = []

    def check(req, others):
        seen.append(req)
        return None
    book = FaultBook("traffic", check)
    for req, what in ((FaultRequest(1, "full_brake", "x" * 100_000), "channel of 100000"),
                      (FaultRequest(2, "y" * 300, "nearest_ahead"), "kind of 300")):
        (change,) = book.command(req, 0)
        assert change.state == "rejected" and change.message.startswith(what), change.message
        assert len(change.message) < 80 and len(change.kind) <= 255
    assert seen == [] and book.active == {}
    (ok,) = book.command(FaultRequest(3, "full_brake", "t" * 255), 0)
    assert ok.state == "active" and len(seen) == 1
