"""Safety layer: clamping, NaN hold, limited ramps, soft start, watchdog and e-stop latch."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vehicle_sim.core.motion.params import SafetyParams
from vehicle_sim.core.motion.safety import Mode, MotionSafety, OutputLimiter, RateLimiter

P = SafetyParams()
DT = 0.01
V, A = np.array(P.velocity_limit), np.array(P.accel_limit)
CMD = np.array([0.06, -0.05, 0.04, 0.2, -0.2, 0.15])


def run(safety, steps, t0=0.0, feed_until=np.inf, paused_from=np.inf, estop_at=np.inf, cmd=CMD):
    xs, modes = [], []
    for k in range(steps):
        t = t0 + k * DT
        if t <= feed_until:
            safety.state_received(t)
        if t >= estop_at:
            safety.estop()
        out = safety.step(cmd, t, paused=t >= paused_from)
        xs.append(out.values)
        modes.append(out.mode)
    return np.array(xs), modes


def assert_within_limits(xs):
    v = np.diff(np.vstack([np.zeros(6), xs]), axis=0) / DT
    a = np.diff(np.vstack([np.zeros(6), v]), axis=0) / DT
    assert np.all(np.abs(v) <= V * (1 + 1e-9))
    assert np.all(np.abs(a) <= A * (1 + 1e-9))
    assert np.all(np.abs(xs) <= np.array(P.pose_limit) + 1e-12)


def test_soft_start_then_follows_command():
    s = MotionSafety(P, DT)
    xs, modes = run(s, 500)
    assert modes[0] is Mode.SOFT_START and modes[-1] is Mode.ACTIVE
    assert np.abs(xs[0]).max() < 1e-4  # starts from neutral
    assert xs[-1] == pytest.approx(CMD, abs=1e-9)
    assert_within_limits(xs)


@pytest.mark.parametrize("kind", ["stale", "paused"])
def test_watchdog_ramps_to_neutral_within_limits(kind):
    s = MotionSafety(P, DT)
    stop = 5.0
    xs, modes = run(s, 1000, feed_until=stop if kind == "stale" else np.inf,
                    paused_from=stop if kind == "paused" else np.inf)
    k_stop = int(stop / DT)
    assert xs[k_stop - 1] == pytest.approx(CMD, abs=1e-6)
    assert Mode.RETURNING in modes and modes[-1] is Mode.NEUTRAL
    assert xs[-1] == pytest.approx(np.zeros(6), abs=1e-12)
    assert_within_limits(xs)
    # no overshoot through neutral beyond one step of the discrete acceleration bound
    tail = xs[k_stop:] * np.sign(CMD)
    assert np.all(tail.min(axis=0) >= -A * DT * DT)
    # triangular/trapezoidal profile bound: t <= d/v + v/a (+ timeout + a few steps)
    t_bound = np.max(np.abs(CMD) / V + V / A) + P.watchdog_timeout_s + 0.1
    reached = np.argmax(np.all(np.abs(xs[k_stop:]) < 1e-9, axis=1)) * DT
    assert 0 < reached <= t_bound


def test_estop_latches_until_cleared_at_rest():
    s = MotionSafety(P, DT)
    xs, modes = run(s, 1000, estop_at=5.0)
    assert modes[-1] is Mode.ESTOP and xs[-1] == pytest.approx(np.zeros(6), abs=1e-12)
    assert_within_limits(xs)
    xs2, modes2 = run(s, 100, t0=10.0)  # fresh state and commands keep coming: still latched
    assert all(m is Mode.ESTOP for m in modes2) and np.abs(xs2).max() < 1e-12
    assert s.clear_estop() and s.mode is Mode.NEUTRAL
    _xs3, modes3 = run(s, 10, t0=11.0)
    assert modes3[0] is Mode.SOFT_START


def test_after_a_link_came_back_the_output_resumes_from_neutral_with_a_soft_start():
    """The controller parked at neutral while its link was down (its receive watchdog): the
    first output after is neutral again, not a step to where the cueing is."""
    s = MotionSafety(P, DT)
    xs, modes = run(s, 500)
    assert modes[-1] is Mode.ACTIVE and np.abs(xs[-1]).max() > 0.01
    s.resume_from_neutral()
    back, modes_back = run(s, 500, t0=5.0)
    assert modes_back[0] is Mode.SOFT_START and np.abs(back[0]).max() < 1e-4
    assert back[-1] == pytest.approx(CMD, abs=1e-9)
    assert_within_limits(back)
    s.estop()
    s.resume_from_neutral()
    assert s.mode is Mode.ESTOP, "a link back does not clear an e-stop"
    held, _ = run(s, 5, t0=10.0)
    assert np.abs(held).max() < 1e-12, "... and the output does not jump back out"


def test_estop_cannot_be_cleared_while_moving():
    s = MotionSafety(P, DT)
    run(s, 500)
    s.estop()
    s.step(CMD, 5.0)
    assert not s.clear_estop() and s.mode is Mode.ESTOP


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=3, max_size=3))
def test_output_limiter_is_finite_and_in_range(values):
    lim = OutputLimiter(np.array([-1.0, -2.0, 0.0]), np.array([1.0, 2.0, 0.5]), np.zeros(3))
    lim.apply(np.array([0.5, -1.5, 0.25]))
    out, bad = lim.apply(np.array(values))
    assert np.all(np.isfinite(out)) and np.all(out >= lim.lower) and np.all(out <= lim.upper)
    for i, v in enumerate(values):
        if not np.isfinite(v):
            assert out[i] == [0.5, -1.5, 0.25][i]  # held previous safe value
    assert bad == sum(not np.isfinite(v) for v in values)


def test_rate_limiter_step_response_reaches_target_without_overshoot():
    r = RateLimiter(np.array([0.5]), np.array([2.0]), DT, np.array([0.0]))
    xs = np.array([r.step(np.array([1.0]))[0] for _ in range(400)])
    assert xs[-1] == pytest.approx(1.0, abs=1e-12) and xs.max() <= 1.0 + 2.0 * DT * DT
    assert np.abs(np.diff(xs)).max() / DT <= 0.5 * (1 + 1e-9)
