"""Proof (issue 12): an external stack with no vehicle_sim code of its own drives the ego.

The urban graph without its ego_driver runs in lockstep (`urban_stack`), the bridge a lockstep
peer that holds each frame until the stack has commanded at most 0.1 s of sim time before it
(core.motion.stack_sync): what the stack sees and when its commands act is then set by sim time,
not by how fast a loaded machine runs it. (In real time a clean-clone CI run on a loaded host
drove 157 m of the 190: the stack's commands came late and the bridge braked between them.)
examples/minimal_stack.py runs as a separate process on the same ROS_DOMAIN_ID with only
standard interfaces (odometry, the Lanelet2 export, Autoware perception objects and light groups,
Ackermann commands). The
run's recording says what happened: the ego went around the block, stopped before the stop line
of a red light, left crossing traffic a time gap in its left turns (it yields there) and had no
accident."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from test.ros.stack_process import StackProcess

mcap_ros2 = pytest.importorskip("mcap_ros2.reader", reason="mcap-ros2-support not installed")
pytest.importorskip("lanelet2", reason="the test extra installs lanelet2")
pytest.importorskip("ackermann_msgs.msg", reason="the set-up builds ackermann_msgs")
pytest.importorskip("autoware_perception_msgs.msg", reason="the set-up builds Autoware's msgs")

BIN = Path(sys.executable).parent
DURATION_S = 120              # the light is red 28-60 s, then ~50 m behind traffic to the goal,
                               # and one more cycle of the light (60 s) for the stack's yields
                               # (a loaded run: through the left turn at 87 s, still at 5 m/s at 90)
SEED = 3
LIGHT = "tl1_1_2:v1_0_f0"      # northbound on v1_0_f0 (x = 101.75), before junction j1_1
QUEUE_M = 30.0                 # a stop behind cars queued at the line counts (gap rule)
# three sides of the block: east on h0_0_f0, north on v1_0_f0 (the light), west on h1_0_b0 to
# GOAL (the stack's default goal, a loop on to v0_0_b0, needs ~25 s of simulation more)
GOAL = (60.0, 101.75)
CHECKPOINTS = ((50.0, -1.75), (101.75, 50.0), (80.0, 101.75))
QUEUE_GAP_M = 15.0             # behind a queued car: the stack's 6 m standstill gap + two halves
                               # of a car (~4.5 m each) + margin
FRONT_M = 2.1                  # medium_car: CG to the front bumper (vehicles/medium_car.yaml)
STATE_RED = 2                  # vehicle_sim/TrafficLight.STATE_RED (msg/TrafficLight.msg)
LEFT_TURNS = ((100.0, 0.0), (100.0, 100.0))  # junctions j1_0 and j1_1 (centres, map frame)
JUNCTION_HALF_M = 9.0          # the grid's junction half size (gridgen junction_half_m)
SAME_PLACE_M = 2.5             # two centres this close are at the same place (their boxes may
                               # touch; the stack's CONFLICT_M)
CROSSING_RAD = math.radians(45.0)  # headings further apart: crossing, not following
MIN_TIME_GAP_S = 1.0           # a crossing agent this soon where the ego was (or the ego where it
                               # was): not yielded. The stack accepts gaps of 5 s and needs ~2.5 s
                               # to clear the lane, so its commands' lag (at most the bridge's
                               # stack_lag_s, 0.1 s) still leaves more (a collision: 0 s)


def stop_line_y() -> float:
    """The light's stop line on its lane (the map's signal; the Lanelet2 export's stop line)."""
    from vehicle_sim.core.traffic.mapfile import load_map
    from vehicle_sim.core.traffic.network import Network
    from vehicle_sim.paths import config_path
    path = config_path("maps/urban_grid.yaml")
    net = Network(load_map(path), str(path))
    lane = net.lane_names.index(LIGHT.split(":")[1])
    s_m = next(sg.s_m for sg in net.signals(lane) if sg.light == LIGHT)
    return net.point(lane, s_m)[1]


def lead_gap_m(agents, x: float, y: float) -> float:
    """Centre distance [m] from the westbound ego at (x, y) to the nearest agent ahead in its
    lane (TrafficAgentArray), inf if none."""
    ahead = [x - a.pose.position.x for a in agents.agents
             if abs(a.pose.position.y - y) < 1.5 and a.pose.position.x < x]
    return min(ahead, default=float("inf"))


def recorded(path: Path) -> dict[str, list]:
    out: dict[str, list] = {"/vehicle/state": [], "/traffic/lights": [], "/accidents": [],
                            "/traffic/agents": []}
    with path.open("rb") as f:
        for m in mcap_ros2.read_ros2_messages(f, topics=list(out)):
            out[m.channel.topic].append(m.ros_msg)
    return out


def to_s(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def yaw_of(q) -> float:
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def in_junction(rows: np.ndarray, cx: float, cy: float) -> np.ndarray:
    """Rows (t, x, y, yaw) inside the junction centred at (cx, cy)."""
    return rows[(np.abs(rows[:, 1] - cx) < JUNCTION_HALF_M)
                & (np.abs(rows[:, 2] - cy) < JUNCTION_HALF_M)]


def crossing_time_gap_s(topics, cx: float, cy: float) -> float:
    """Post-encroachment time [s] in the junction at (cx, cy): the least time between the ego
    and an agent at the same place (centres within SAME_PLACE_M), headings crossing (inf when
    none crossed the ego's path or the ego did not pass the junction)."""
    ego = in_junction(np.array([(to_s(m.header.stamp), m.pose.position.x, m.pose.position.y,
                                 yaw_of(m.pose.orientation))
                                for m in topics["/vehicle/state"]]), cx, cy)[::5]  # 20 Hz
    agents = np.array([(to_s(msg.header.stamp), a.pose.position.x, a.pose.position.y,
                        yaw_of(a.pose.orientation))
                       for msg in topics["/traffic/agents"] for a in msg.agents
                       if not a.ghost]).reshape(-1, 4)
    agents = in_junction(agents, cx, cy)
    if len(ego) == 0 or len(agents) == 0:
        return math.inf
    dist = np.hypot(agents[:, None, 1] - ego[:, 1], agents[:, None, 2] - ego[:, 2])
    turn = np.abs(np.angle(np.exp(1j * (agents[:, None, 3] - ego[:, 3]))))
    dt = np.abs(agents[:, None, 0] - ego[:, 0])
    shared = (dist < SAME_PLACE_M) & (turn > CROSSING_RAD)
    return float(dt[shared].min()) if shared.any() else math.inf


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("stack")
    osm = tmp / "urban.osm"
    subprocess.run([str(BIN / "vehicle_sim_export_map"), "maps/urban_grid.yaml", "--out",
                    str(osm)], check=True, capture_output=True, timeout=60)
    # the stack first, with its map loaded (stack_process)
    stack_proc = StackProcess(osm, f"{GOAL[0]},{GOAL[1]}")
    with stack_proc as stack:
        sim = subprocess.run([str(BIN / "vehicle_sim_run"), "--scenario", "urban_stack",
                              "--mode", "lockstep", "--duration", str(DURATION_S), "--seed",
                              str(SEED), "--record", "true", "--record_dir", str(tmp),
                              "--timeout", "900"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             timeout=960)
    sim_out = sim.stdout
    stack_out = stack_proc.output
    (tmp / "stack.log").write_text(stack_out)  # beside the recording, for a failed run
    assert sim.returncode == 0, sim_out[-3000:]
    assert stack.returncode == 0 and "Traceback" not in stack_out, stack_out[-3000:]
    (mcap,) = tmp.glob("*.mcap")
    return recorded(mcap), sim_out + stack_out


def test_the_stack_drives_the_ego_around_the_block(run):
    topics, log = run
    states = topics["/vehicle/state"]
    xy = np.array([(m.pose.position.x, m.pose.position.y) for m in states])
    distance_m = float(np.sum(np.hypot(*np.diff(xy, axis=0).T)))
    print(f"distance driven: {distance_m:.1f} m, end at {xy[-1].round(2)}")
    assert distance_m > 190.0, log[-3000:]
    passed = [int(np.argmax(np.hypot(xy[:, 0] - cx, xy[:, 1] - cy) < 3.0)) for cx, cy in
              CHECKPOINTS]
    near = [bool(np.min(np.hypot(xy[:, 0] - cx, xy[:, 1] - cy)) < 3.0) for cx, cy in
            CHECKPOINTS]
    assert all(near), (near, log[-3000:])
    assert passed == sorted(passed), passed
    # at rest at the end on the third side: at the goal (the stack aims its CG 2.3 m before it;
    # measured 2.3 m past it after braking from 7.3 m/s, the speed controller lagging the
    # stack's 2.5 m/s^2 profile), or short of it behind a car queued at the next junction's
    # light: the stack's commands act up to stack_lag_s late, not at the same frame in every
    # run, so it can reach that junction in another phase of its light (a clean-clone CI run
    # in real time: at rest 21.75 m short of the goal)
    x, y = xy[-1]
    assert abs(y - GOAL[1]) < 1.0 and GOAL[0] - 5.0 < x < CHECKPOINTS[2][0] + 3.0, xy[-1]
    assert abs(states[-1].twist.linear.x) < 0.2
    gap_m = lead_gap_m(topics["/traffic/agents"][-1], x, y)
    assert x - GOAL[0] < 5.0 or gap_m < QUEUE_GAP_M, (xy[-1], gap_m)


def test_the_stack_stopped_before_the_stop_line_while_the_light_was_red(run):
    topics, log = run
    stop_y = stop_line_y()
    red = np.array([to_s(msg.header.stamp) for msg in topics["/traffic/lights"]
                    for light in msg.lights
                    if light.id == LIGHT and light.state == STATE_RED])
    stopped = [(to_s(m.header.stamp), m.pose.position.y) for m in topics["/vehicle/state"]
               if abs(m.pose.position.x - 101.75) < 1.0 and 40.0 < m.pose.position.y < stop_y
               and abs(m.twist.linear.x) < 0.2]
    # stopped while the light was red (its newest state at most one 50 ms traffic step old)
    at_red = [(t, y) for t, y in stopped if red.size and np.min(np.abs(red - t)) <= 0.06]
    assert at_red, f"no stop at {LIGHT} while red; {log[-3000:]}"
    front = max(y for _, y in at_red) + FRONT_M
    print(f"stopped at red: front bumper {stop_y - front:.2f} m before the stop line")
    assert stop_y - QUEUE_M < front <= stop_y, (front, stop_y)


def test_the_ego_left_crossing_traffic_a_time_gap_in_its_left_turns(run):
    topics, log = run
    gaps_s = [crossing_time_gap_s(topics, cx, cy) for cx, cy in LEFT_TURNS]
    print(f"least time gap to crossing traffic in the left turns: {gaps_s} s")
    assert min(gaps_s) >= MIN_TIME_GAP_S, (gaps_s, log[-3000:])


def test_the_ego_had_no_accident(run):
    topics, _ = run
    ego = [m for m in topics["/accidents"] if "ego" in (m.actor, m.victim)]
    assert not ego, ego
