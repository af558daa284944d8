"""Lockstep with an external stack (core.motion.stack_sync): frames wait for its commands, a
silent stack releases them after a wall-clock wait, its return holds them again; the arbiter
measures the stack's freshness on the clock it is given."""
import pytest

from vehicle_sim.core.controls import DriveCommand
from vehicle_sim.core.motion.arbiter import ArbiterParams, CommandArbiter, StackInput
from vehicle_sim.core.motion.node_params import BridgeNodeParams
from vehicle_sim.core.motion.params import FfbParams, InputParams, MuxParams
from vehicle_sim.core.motion.stack_sync import StackSync
from vehicle_sim.core.motion.steering import SteeringBridge
from vehicle_sim.core.vehicle.interface import Controls

MS = 1_000_000
FRAME_NS = 10 * MS  # a lockstep frame of 10 physics steps at 1 kHz


def acked(sync: StackSync, t_ns: int, now_s: float = 0.0) -> bool:
    ok, _ = sync.ready(t_ns, now_s)
    if ok:
        sync.frame_done(t_ns, lambda _s: None)
    return ok


def test_the_first_frame_waits_for_the_first_command():
    sync = StackSync(100 * MS, wait_s=30.0)
    assert not acked(sync, FRAME_NS, 0.0) and not acked(sync, FRAME_NS, 29.9)
    assert sync.on_command() is None
    assert acked(sync, FRAME_NS, 30.0)


def test_sim_time_runs_at_most_the_lag_ahead_of_the_newest_command():
    sync = StackSync(100 * MS, wait_s=30.0)
    sync.on_command()  # before the first frame: it counts as of that frame, 0.01 s
    frames = [t for t in range(FRAME_NS, 300 * MS, FRAME_NS) if acked(sync, t)]
    assert frames == list(range(FRAME_NS, 111 * MS, FRAME_NS))  # up to 0.11 s, not one more
    assert not acked(sync, 120 * MS)
    sync.on_command()  # the stack answers at frame 0.11 s
    assert acked(sync, 120 * MS) and acked(sync, 210 * MS) and not acked(sync, 220 * MS)
    assert sync.now_s() == pytest.approx(0.21)


def test_a_silent_stack_releases_the_frames_and_its_return_holds_them_again():
    sync = StackSync(100 * MS, wait_s=2.0)
    sync.on_command()
    assert acked(sync, FRAME_NS, 0.0) and acked(sync, 110 * MS, 0.0)
    assert sync.ready(120 * MS, 10.0) == (False, None)  # the wait starts here
    ok, line = sync.ready(120 * MS, 12.0)
    assert ok and sync.released and "no stack command for 2 s" in line and "t=0.120" in line
    sync.frame_done(120 * MS, lambda _s: None)
    assert all(acked(sync, t, 12.0) for t in range(130 * MS, 5000 * MS, FRAME_NS))
    assert "again" in sync.on_command() and not sync.released  # at frame 4.99 s
    assert acked(sync, 5090 * MS, 12.0) and not acked(sync, 5100 * MS, 12.0)
    # each wait is timed from its own start: a release long ago is not carried over
    assert sync.ready(5100 * MS, 13.9) == (False, None)


def test_a_bridge_respawned_in_mid_run_does_not_hold_the_stack_that_kept_commanding():
    """It knows no frame yet: the stack's command before its first frame counts, however far
    the run is (120 s), as of that frame; from there the lag counts again."""
    sync = StackSync(100 * MS, wait_s=30.0)
    assert not acked(sync, 120_000 * MS, 0.0)  # no command yet: it waits as at a start
    sync.on_command()  # on the frame it knows: 0
    assert acked(sync, 120_000 * MS, 0.1) and sync.now_s() == pytest.approx(120.0)
    assert sync.command_frame_ns == 120_000 * MS  # the command's time: the first frame
    assert acked(sync, 120_010 * MS, 0.1) and acked(sync, 120_100 * MS, 0.1)
    assert not acked(sync, 120_110 * MS, 0.1)  # 0.11 s past the command: the next one is due
    sync.on_command()
    assert acked(sync, 120_110 * MS, 0.2) and acked(sync, 120_200 * MS, 0.2)
    assert not acked(sync, 120_210 * MS, 0.2)


def test_the_command_a_respawned_bridge_waited_for_still_drives_at_its_first_frame():
    """Stored on the clock before the first frame (0 s), it would be 120 s old once frame 120 s
    is acknowledged: the first acknowledgement restamps it before the clock moves (the
    platform loop reads that clock on another thread), later ones do not."""
    sync = StackSync(100 * MS, wait_s=30.0)
    params = ArbiterParams(stack_inputs=(StackInput("autonomy", 0.5),), driver_fallback=False,
                           forward_on_receipt=True, publish_every=1, steering_ratio=15.0,
                           max_gear=1)
    a = CommandArbiter(params, SteeringBridge(InputParams(), MuxParams(), FfbParams()))
    assert a.offer("autonomy", DriveCommand(Controls(throttle=0.2)), sync.now_s())
    sync.on_command()
    seen = []  # (the restamp time, the clock the loop would read at that moment)

    def restamp(now_s: float) -> None:
        seen.append((now_s, sync.now_s()))
        a.restamp_stack(now_s)
    ok, _ = sync.ready(120_000 * MS, 0.1)
    assert ok
    sync.frame_done(120_000 * MS, restamp)
    sync.frame_done(120_010 * MS, restamp)
    assert seen == [(pytest.approx(120.0), 0.0)]
    assert a.cycle(0.1, 0.0, 0, stack_now_s=sync.now_s())[1].source == "autonomy"
    # without the restamp the same command, on the same clock, is stale
    b = CommandArbiter(params, SteeringBridge(InputParams(), MuxParams(), FfbParams()))
    b.offer("autonomy", DriveCommand(Controls(throttle=0.2)), 0.0)
    assert b.cycle(0.1, 0.0, 0, stack_now_s=sync.now_s())[1].source == "none"


@pytest.mark.parametrize("lag_ns, wait_s", [(0, 1.0), (-5, 1.0), (MS, 0.0),
                                            (MS, float("nan"))])
def test_bad_settings_are_refused(lag_ns, wait_s):
    with pytest.raises(ValueError, match="StackSync"):
        StackSync(lag_ns, wait_s)


def test_the_bridge_refuses_a_lag_the_arbiter_would_time_out_and_a_rig_in_lockstep():
    with pytest.raises(ValueError, match="stack_lag_s 0.5 s must be below autonomy_timeout_s"):
        BridgeNodeParams(lockstep=True, stack_lag_s=0.5, autonomy_timeout_s=0.5)
    with pytest.raises(ValueError, match="no rig input"):
        BridgeNodeParams(lockstep=True, input_port=5555)
    BridgeNodeParams(lockstep=False, stack_lag_s=0.5, autonomy_timeout_s=0.5)  # not in lockstep


def test_the_arbiter_times_the_stack_on_the_clock_it_is_given():
    """In lockstep the wall clock runs on while the run waits for the stack: the stack's
    command stays fresh in sim time (given as stack_now_s), however long the wall wait."""
    params = ArbiterParams(stack_inputs=(StackInput("ackermann", 0.5),), driver_fallback=False,
                           forward_on_receipt=True, publish_every=1, steering_ratio=15.0,
                           max_gear=1)
    a = CommandArbiter(params, SteeringBridge(InputParams(), MuxParams(), FfbParams()))
    cmd = DriveCommand(Controls(throttle=0.2), stamp_ns=0)
    assert a.offer("ackermann", cmd, 1.0)  # sim time 1.0 s
    assert a.cycle(100.0, 0.0, 0, stack_now_s=1.4)[1].source == "ackermann"  # wall 100 s
    assert a.cycle(100.1, 0.0, 0, stack_now_s=1.6)[1].source == "none"
    # without stack_now_s the stack is timed on now_s, as in real time
    assert a.offer("ackermann", cmd, 200.0)
    assert a.cycle(200.4, 0.0, 0)[1].source == "ackermann"
    assert a.cycle(200.6, 0.0, 0)[1].source == "none"
