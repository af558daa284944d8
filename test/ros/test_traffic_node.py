"""The traffic node as real processes over real DDS.

The test node plays the dynamics node: it publishes /clock (and vehicle/state) with sim times it
chooses, so expected stamps, light phases and hand-over times are known exactly. The lockstep
test starts the real dynamics node instead.
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from vehicle_sim.msg import (
    TrafficAgent,
    TrafficAgentArray,
    TrafficHandover,
    TrafficLight,
    TrafficLightArray,
    VehicleState,
)
from visualization_msgs.msg import Marker, MarkerArray

from vehicle_sim.core.traffic import agents as ag
from vehicle_sim.core.traffic.kernels import layout as lay
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.conversions import quaternion_from_rpy, stamp, to_ns
from vehicle_sim.nodes.traffic_msgs import agent_ids
from vehicle_sim.paths import config_path

MS = 1_000_000
DT = 50 * MS  # 20 Hz traffic step (the default rate_hz)
SIM = {"use_sim_time": True, "publish_markers": False}
RX = QoSProfile(depth=50, reliability=ReliabilityPolicy.BEST_EFFORT)


def city_params(tmp_path: Path, agents: int, **extra) -> str:
    """Whole-city TrafficParams file (no control zone), 2 x 2 sectors of 210 m on the grid."""
    data = {"initial_agents": agents, "zone": {"enabled": False, "sector_size_m": 210.0}}
    data.update(extra)
    path = tmp_path / "city.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


pytestmark = pytest.mark.usefixtures("warm_traffic")  # test/ros/conftest.py



def ego_state(t_ns: int, x: float, y: float, yaw: float, speed: float) -> VehicleState:
    """The ego's state as the dynamics node sends it (pose in odom, speed along x)."""
    msg = VehicleState(child_frame_id="base_link", model="test")
    msg.header.stamp, msg.header.frame_id = stamp(t_ns), "odom"
    msg.pose.position.x, msg.pose.position.y = x, y
    msg.pose.orientation = quaternion_from_rpy(0.0, 0.0, yaw)
    msg.twist.linear.x = speed
    return msg

class Rig:
    """Drives /clock and vehicle/state; collects agents, lights, hand-overs and ghosts."""

    def __init__(self, node):
        self.node = node
        self.agents: list[TrafficAgentArray] = []
        self.lights: list[TrafficLightArray] = []
        self.handover: list[TrafficHandover] = []
        self.ghosts: list[TrafficHandover] = []
        self.latest: dict[int, int] = {}  # shard -> newest agents stamp [ns]
        self.subs = [
            node.create_subscription(TrafficAgentArray, "traffic/agents", self._on_agents, RX),
            node.create_subscription(TrafficLightArray, "traffic/lights", self.lights.append,
                                     qos.LIGHTS),
            node.create_subscription(TrafficHandover, "traffic/handover", self.handover.append,
                                     qos.HANDOVER),
            node.create_subscription(TrafficHandover, "traffic/ghosts", self.ghosts.append,
                                     qos.HANDOVER)]
        self.clock = node.create_publisher(Clock, "/clock", qos.STREAM)
        self.state = node.create_publisher(VehicleState, "vehicle/state", qos.STATE)

    def close(self):
        for sub in self.subs:
            self.node.destroy_subscription(sub)
        self.node.destroy_publisher(self.clock)
        self.node.destroy_publisher(self.state)

    def _on_agents(self, msg: TrafficAgentArray) -> None:
        self.agents.append(msg)
        shard = owner_of(msg)
        self.latest[shard] = max(self.latest.get(shard, -1), to_ns(msg.header.stamp))

    def tick(self, t_ns: int) -> None:
        self.clock.publish(Clock(clock=stamp(t_ns)))

    def send_ego(self, t_ns: int, x: float, y: float, yaw: float, speed: float) -> None:
        self.state.publish(ego_state(t_ns, x, y, yaw, speed))

    def wait_matched(self, n: int = 1) -> None:
        """Wait until n traffic nodes subscribe /clock and publish agents and lights."""
        self.node.spin_until(lambda: self.clock.get_subscription_count() >= n
                             and self.subs[0].get_publisher_count() >= n
                             and self.subs[1].get_publisher_count() >= n, timeout_s=30.0,
                             what=f"{n} traffic node(s) matched")

    def step_to(self, t_ns: int, shards: int = 1) -> None:
        """Tick /clock to t_ns, then wait for every shard's agents stamped >= t_ns."""
        self.wait(lambda: sum(t >= t_ns for t in self.latest.values()) >= shards, t_ns)

    def wait(self, done, t_ns: int, timeout_s: float = 20.0) -> None:
        """Publish tick t_ns, re-sent every 0.2 s (best effort, like the dynamics node when
        stalled) until done()."""
        deadline = time.monotonic() + timeout_s
        while not done():
            assert time.monotonic() < deadline, f"timed out at t={t_ns / 1e9:.2f} s"
            self.tick(t_ns)
            resend = time.monotonic() + 0.2
            while not done() and time.monotonic() < resend:
                self.node.test_executor.spin_once(timeout_sec=0.01)


def owner_of(msg: TrafficAgentArray) -> int:
    """The publishing shard: the owner of the message's non-ghost agents."""
    owners = {a.owner for a in msg.agents if not a.ghost}
    assert len(owners) <= 1, f"one shard per message, got owners {owners}"
    return owners.pop() if owners else -1


@pytest.fixture
def rig(ros_node):
    r = Rig(ros_node)
    yield r
    r.close()


def test_agents_at_rate_in_sim_time_every_field_filled_nan_ego_skipped(rig, start_node,
                                                                       tmp_path):
    proc = start_node("traffic_node", params={**SIM, "params_file": city_params(tmp_path, 40)})
    rig.wait_matched()
    t0 = 3_000 * MS  # not 0, to catch stamps counted from the start instead of sim time
    rig.step_to(t0)  # the first tick anchors the schedule and steps t0 (a multiple of dt)
    rig.send_ego(t0, math.nan, 0.0, 0.0, 0.0)
    for t in range(t0 + 10 * MS, t0 + 1_000 * MS + 1, 10 * MS):  # 100 Hz ticks for 1 s
        if t % DT == 0:
            rig.wait(lambda t=t: rig.latest.get(0, -1) >= t, t)
        else:
            rig.tick(t)
    stamps = [to_ns(m.header.stamp) for m in rig.agents]
    assert all(s % DT == 0 for s in stamps), "steps at multiples of dt = 1 / rate_hz"
    assert (np.diff(stamps) > 0).all(), "stamps increase"
    assert stamps[-20:] == list(range(t0 + 50 * MS, t0 + 1_001 * MS, DT)), "one per dt"
    msg = rig.agents[-1]
    assert msg.header.frame_id == "map" and len(msg.agents) == 40
    ids = [a.id for a in msg.agents]
    assert len(set(ids)) == 40
    for a in msg.agents:
        assert a.kind == TrafficAgent.KIND_CAR and not a.ghost and a.owner == 0
        assert a.profile in (0, 1, 2) and a.lane_id and a.state in (0, 1)
        assert -5.0 < a.pose.position.x < 410.0 and -5.0 < a.pose.position.y < 410.0
        assert abs(a.pose.orientation.w ** 2 + a.pose.orientation.z ** 2 - 1.0) < 1e-9
        assert a.length == pytest.approx(4.298, abs=1e-3)  # the agents' car, medium_car.yaml
        assert 0.0 <= a.speed < 13.89 * 1.5 + 0.5  # city limit x max speed_factor
        assert (a.state == TrafficAgent.STATE_STOPPED) == (abs(a.speed) < 0.1)
    moved = {a.id: a.pose.position for a in rig.agents[0].agents}
    assert any(math.hypot(a.pose.position.x - moved[a.id].x, a.pose.position.y - moved[a.id].y)
               > 2.0 for a in msg.agents), "agents drive"
    output = proc.stop()
    assert "non-finite ego state" in output, output


def test_agents_spawn_in_the_control_zone_around_the_ego_with_markers(rig, start_node):
    markers: list[MarkerArray] = []
    sub = rig.node.create_subscription(MarkerArray, "traffic/markers", markers.append, qos.STATE)
    start_node("traffic_node", params={**SIM, "publish_markers": True})  # default: zone mode
    rig.wait_matched()
    ego = (200.0, 198.25, 0.0, 0.0)  # on the avenue row2, heading east
    rig.node.spin_until(lambda: rig.state.get_subscription_count() > 0, what="state match")
    for k in range(1, 11):
        rig.send_ego(k * DT, *ego)
        rig.step_to(k * DT)
    agents = rig.agents[-1].agents
    assert len(agents) > 10
    for a in agents:  # zone: 60 m behind .. 200 m ahead, |y| <= 120 m in the ego frame
        dx, dy = a.pose.position.x - ego[0], a.pose.position.y - ego[1]
        assert -60.0 - 1.0 <= dx <= 200.0 + 1.0 and abs(dy) <= 120.0 + 1.0
    rig.node.spin_until(lambda: markers and to_ns(markers[-1].markers[1].header.stamp)
                        >= 8 * DT, what="markers (5 Hz of sim time: at 0.05, 0.25, 0.45 s)")
    m = markers[-1].markers
    t_markers = to_ns(m[1].header.stamp)
    assert t_markers == 9 * DT
    agents = next(msg.agents for msg in rig.agents if to_ns(msg.header.stamp) == t_markers)
    assert m[0].action == Marker.DELETEALL and m[-1].type == Marker.SPHERE_LIST
    boxes = [b for b in m if b.type == Marker.CUBE and b.ns == "traffic_agents"]
    assert len(boxes) == len(agents) and all(b.header.frame_id == "map" for b in boxes)
    (own,) = [b for b in m if b.ns == "ego"]  # the ego's box, where its state put it
    assert (own.type, own.pose.position.x, own.pose.position.y) == (Marker.CUBE, *ego[:2])
    assert (own.scale.x, own.scale.y) == (4.298, 1.674)  # medium_car.yaml
    assert {(round(b.pose.position.x, 6), round(b.pose.position.y, 6)) for b in boxes} == \
        {(round(a.pose.position.x, 6), round(a.pose.position.y, 6)) for a in agents}
    assert len(m[-1].points) == 22 and len(m[-1].colors) == 22
    rig.node.destroy_subscription(sub)


def test_light_phases_follow_the_cycle_in_sim_time(rig, start_node, tmp_path):
    cycle, yellow, all_red = 20.0, 3.0, 2.0  # 2 roads per junction: slot 10 s, green 5 s
    params = city_params(tmp_path, 0, lights={"cycle_s": cycle, "yellow_s": yellow,
                                             "all_red_s": all_red})
    start_node("traffic_node", params={**SIM, "params_file": params})
    rig.wait_matched()
    for k in range(1, 900):  # 45 s of sim time
        rig.step_to(k * DT)
    rig.node.spin_until(lambda: to_ns(rig.lights[-1].header.stamp) >= 899 * DT - 1_000 * MS,
                        what="last lights")
    stamps = [to_ns(m.header.stamp) for m in rig.lights]
    assert max(np.diff(stamps)) <= 1_000 * MS, "re-published at least once per sim second"
    seq: dict[str, list[tuple[int, int]]] = {}
    for m in rig.lights:
        for lt in m.lights:
            seq.setdefault(lt.id, []).append((to_ns(m.header.stamp), lt.state))
    first = rig.lights[-1].lights
    assert sum(not lt.pedestrian for lt in first) == 22 and sum(lt.pedestrian for lt in first)
    assert all(":" in lt.id for lt in first)
    vehicle = [lt.id for lt in first if not lt.pedestrian]
    for name in vehicle[:6]:
        changes = [(t, s) for (t, s), (_, p) in zip(seq[name][1:], seq[name]) if s != p]
        greens = [t for t, s in changes if s == TrafficLight.STATE_GREEN]
        yellows = [t for t, s in changes if s == TrafficLight.STATE_YELLOW]
        assert len(greens) >= 2, (name, changes)
        assert np.diff(greens) * 1e-9 == pytest.approx([cycle] * (len(greens) - 1), abs=0.051)
        g_to_y = [y - g for g in greens for y in yellows if 0 < y - g < cycle * 1e9]
        assert g_to_y and g_to_y[0] * 1e-9 == pytest.approx(cycle / 2 - yellow - all_red,
                                                             abs=0.051)
        assert all(s != TrafficLight.STATE_DARK for _, s in seq[name])


def test_lockstep_dynamics_advances_only_with_the_traffic_node(ros_node, start_node):
    clock: list[int] = []
    agents: list[int] = []
    subs = [ros_node.create_subscription(Clock, "/clock", lambda m: clock.append(
                to_ns(m.clock)), qos.STREAM),
            ros_node.create_subscription(TrafficAgentArray, "traffic/agents", lambda m: agents
                                         .append(to_ns(m.header.stamp)), RX)]
    start_node("dynamics_node", params={"mode": "lockstep", "lockstep_peers": "['traffic']",
                                        "lockstep_frame_steps": 10})
    ros_node.spin_until(lambda: clock and max(clock) >= 10 * MS, what="first frame")
    for _ in range(10):
        ros_node.test_executor.spin_once(timeout_sec=0.05)
    assert max(clock) == 10 * MS, "dynamics waits for the traffic node's ack"
    traffic = start_node("traffic_node", params={**SIM, "lockstep": True})
    ros_node.spin_until(lambda: max(clock) >= 2_000 * MS, timeout_s=60.0,
                        what="2 s of lockstepped sim time")
    ros_node.spin_until(lambda: agents and max(agents) >= 1_500 * MS, what="traffic steps")
    assert all(t % DT == 0 for t in agents)
    traffic.stop()
    for _ in range(10):
        ros_node.test_executor.spin_once(timeout_sec=0.05)
    frozen = max(clock)
    for _ in range(20):
        ros_node.test_executor.spin_once(timeout_sec=0.05)
    assert max(clock) == frozen, "without acks the dynamics stops"
    assert frozen % (10 * MS) == 0
    for sub in subs:
        ros_node.destroy_subscription(sub)


def test_two_shards_hand_agents_over_and_conserve_them(rig, start_node, tmp_path):
    n = 160
    params = city_params(tmp_path, n)
    for i in (0, 1):
        start_node("traffic_node", name=f"traffic_{i}",
                   params={**SIM, "params_file": params, "shard_index": i, "shard_count": 2})
    rig.wait_matched(2)
    rig.node.spin_until(lambda: rig.subs[2].get_publisher_count() >= 2, what="hand-over pubs")
    steps = 200  # 10 s of sim time
    for k in range(1, steps + 1):
        rig.step_to(k * DT, shards=2)
    owned: dict[int, dict[int, set[int]]] = {0: {}, 1: {}}  # shard -> stamp -> owned ids
    ghosts: dict[int, dict[int, list[TrafficAgent]]] = {0: {}, 1: {}}
    where: dict[tuple[int, int], dict[int, tuple[float, float]]] = {}  # (shard, t) -> id -> xy
    for m in rig.agents:
        s, t = owner_of(m), to_ns(m.header.stamp)
        owned[s][t] = {a.id for a in m.agents if not a.ghost}
        where[(s, t)] = {a.id: (a.pose.position.x, a.pose.position.y) for a in m.agents
                         if not a.ghost}
        ghosts[s][t] = [a for a in m.agents if a.ghost]
    sent: dict[int, set[int]] = {}  # stamp -> ids in hand-over records sent at that step
    to_owner: dict[tuple[int, int], int] = {}  # (stamp, id) -> addressee
    state: dict[tuple[int, int], np.ndarray] = {}  # (stamp, id) -> x, y, speed in the record
    for h in rig.handover:
        assert h.to_owner == 1 - h.from_owner and h.record_size == ag.N_REC
        rec = np.asarray(h.records).reshape(-1, ag.N_REC)
        ids = agent_ids(np.rint(rec[:, lay.N_AF + lay.AI_UID]).astype(np.int64)).tolist()
        sent.setdefault(to_ns(h.header.stamp), set()).update(ids)
        to_owner.update({(to_ns(h.header.stamp), i): h.to_owner for i in ids})
        state.update({(to_ns(h.header.stamp), i): r[[lay.AF_X, lay.AF_Y, lay.AF_U]]
                      for i, r in zip(ids, rec)})
    both = sorted(set(owned[0]) & set(owned[1]))
    assert len(both) > steps * 0.9
    everyone = owned[0][both[0]] | owned[1][both[0]]
    assert len(everyone) == n, "the shards split the whole-city placement"
    # without lockstep a shard adopts what has arrived (shard_link): a hand-over is reliable,
    # but how many steps it takes to arrive depends on the machine, so an agent is checked to be
    # handed over before it goes missing and adopted after, not within a number of steps
    handed: dict[int, list[int]] = {}  # agent id -> stamps of the hand-overs that carried it
    for t_sent, ids in sent.items():
        for i in ids:
            handed.setdefault(i, []).append(t_sent)
    last_owned: dict[int, int] = {}  # agent id -> the newest step it was owned (so far)
    crossings = 0
    for t in both:
        assert not owned[0][t] & owned[1][t], f"an agent owned twice at {t}"
        for i in everyone - owned[0][t] - owned[1][t]:  # in flight: handed over since owned
            assert any(last_owned.get(i, -1) <= h <= t for h in handed.get(i, ())), \
                f"agent {i} lost at {t}"
        for i in owned[0][t] | owned[1][t]:
            last_owned[i] = t
        for a in (0, 1):
            if t - DT in owned[a]:  # the map is closed: agents leave a shard only handed over
                left = owned[a][t - DT] - owned[a][t]
                assert left <= sent.get(t, set()), f"left shard {a} unannounced at {t}"
                crossings += len(left)
    assert crossings >= 5, f"only {crossings} shard crossings in {steps} steps"
    for (t, i), to in to_owner.items():  # a handed agent appears, same id, in the other shard
        later = [(u, s) for u in both if u > t for s in (0, 1) if i in owned[s].get(u, ())]
        if not later:
            continue  # handed over at the end of the run (checked above)
        u, first = later[0]
        assert first == to, f"agent {i} sent at {t} to shard {to} appeared in {first}"
        if u == t + DT:  # adopted at the next step: one step of motion since the record
            x, y, v = state[(t, i)]  # (not two: no double step)
            moved = math.dist(where[(first, u)][i], (x, y))
            assert moved <= 1.3 * v * DT * 1e-9 + 0.05, (i, moved, v)
    # conserved at the end: owned, or handed over after it was last owned, and within the last
    # second (an agent in flight for longer was lost on arrival)
    for i in everyone - owned[0][both[-1]] - owned[1][both[-1]]:
        assert any(h >= max(last_owned[i], both[-1] - 20 * DT) for h in handed.get(i, ())), \
            f"agent {i} lost at the end"
    # ghosts: copies of the other shard's agents near the boundary, refreshed every 10 steps
    assert rig.ghosts and {g.to_owner for g in rig.ghosts} == {TrafficHandover.TO_ALL}
    seen = 0
    for s in (0, 1):
        for t, gl in ghosts[s].items():
            for g in gl:
                assert g.owner == 1 - s and g.ghost
                near = [owned[1 - s].get(t - k * DT, set()) for k in range(12)]
                assert any(g.id in ids for ids in near), "a ghost is an agent of the other shard"
                seen += 1
    assert seen > 0


def test_agent_encoder_bytes_equal_the_message_objects():
    """The node publishes numpy-built CDR; it must deserialise to exactly agents_msg."""
    from rclpy.serialization import deserialize_message, serialize_message

    from vehicle_sim.core.traffic.params import TrafficParams, ZoneParams
    from vehicle_sim.core.traffic.sim import TrafficSim
    from vehicle_sim.nodes import traffic_msgs as tm
    sim = TrafficSim.from_files(config_path("maps/urban_grid.yaml"))
    sim = TrafficSim(sim.network, TrafficParams(initial_agents=150, zone=ZoneParams(
        enabled=False)), seed=4)
    for _ in range(40):
        sim.step(0.05)
    a = sim.agents(include_ghosts=True)
    a["ghost"][::3] = True  # every field varies: ghost flags, owners, lanes of all name lengths
    owner = np.arange(len(a["uid"])) % 3
    a["fault_id"] = (np.arange(len(a["uid"])) % 5 == 0) * (np.arange(len(a["uid"])) + 70_000)
    names = [f"lane{'x' * (i % 13)}" for i in range(sim.network.n_lanes)]  # every alignment
    a["lane"] = np.arange(len(a["uid"])) % len(names)
    a["lane"][7::11] = -1  # off the network (crashed, scripted): lane_id ""
    a["lateral_speed"] = np.linspace(-3.0, 3.0, len(a["uid"]))  # sliding (crashed) agents
    a["kind"] = np.arange(len(a["uid"])) % 4  # scripted trucks, vans, buses
    encoder = tm.AgentEncoder(names)

    def round_trip(msg):  # float32 fields rounded as on the wire
        return deserialize_message(serialize_message(msg), TrafficAgentArray)

    for frame, source in (("map", "traffic"), ("m", ""), ("odom_x", "traffic_1"),
                          ("abcdefgh", "t")):  # every header and source alignment
        for t_ns in (0, 5, 123_456_789_012):
            raw = encoder.encode(a, owner, t_ns, frame, source)
            ref = tm.agents_msg(a, owner, names, t_ns, frame, source)
            assert deserialize_message(raw, TrafficAgentArray) == round_trip(ref)
    empty = {k: v[:0] for k, v in a.items()}
    assert deserialize_message(encoder.encode(empty, owner[:0], 7, "map"), TrafficAgentArray) \
        == round_trip(tm.agents_msg(empty, owner[:0], names, 7, "map"))
    msg = ref.agents[1]  # spot check against the core arrays
    assert msg.pose.position.x == a["x"][1] and msg.owner == 1 and msg.ghost is False
    assert (msg.fault_id, ref.agents[5].fault_id) == (0, 70_005)
    assert (msg.kind, ref.agents[3].kind) == (TrafficAgent.KIND_TRUCK, TrafficAgent.KIND_VAN)
    assert msg.lane_id == "lanex"
    assert msg.profile == (2 - a["profile"][1])  # core 0 aggressive -> PROFILE_AGGRESSIVE 2


def test_shard_rule_splits_sector_columns_west_to_east():
    from vehicle_sim.core.traffic.node_params import owned_sectors, shard_of_sector
    from vehicle_sim.core.traffic.sim import TrafficSim
    from vehicle_sim.core.traffic.zone import Sectors
    network = TrafficSim.from_files(config_path("maps/urban_grid.yaml")).network
    sectors = Sectors(network, 100.0)  # 5 x 5 sectors over the 404 m grid
    assert (sectors.nx, sectors.ny) == (5, 5)
    parts = [owned_sectors(sectors, i, 2) for i in (0, 1)]
    assert sorted(np.concatenate(parts).tolist()) == list(range(25)), "a partition"
    assert sorted(set((parts[0] % 5).tolist())) == [0, 1]  # floor(0 * 5/2) <= sx < floor(5/2)
    assert sorted(set((parts[1] % 5).tolist())) == [2, 3, 4]
    assert shard_of_sector(sectors, np.array([0, 7, 24]), 5).tolist() == [0, 2, 4]
    assert owned_sectors(sectors, 0, 1) is None
    with pytest.raises(ValueError, match="sector columns"):
        owned_sectors(sectors, 0, 6)


@pytest.mark.parametrize("broken, words", [
    ("map", "streets[0].lanes[0].width_m"),
    ("params", "lights.cycle_s"),
    ("shard", "shard_index"),
])
def test_malformed_files_refuse_to_start_naming_file_and_key(assert_refuses, tmp_path, broken,
                                                              words):
    params = dict(SIM)
    if broken == "map":
        data = yaml.safe_load(Path(config_path("maps/urban_grid.yaml")).read_text())
        data["streets"][0]["lanes"][0]["width_m"] = -3.5
        (tmp_path / "bad_map.yaml").write_text(yaml.safe_dump(data))
        params["map_file"] = str(tmp_path / "bad_map.yaml")
        words = f"bad_map.yaml: {words}"
    elif broken == "params":
        (tmp_path / "bad_params.yaml").write_text("lights:\n  cycle_s: -60.0\n")
        params["params_file"] = str(tmp_path / "bad_params.yaml")
        words = f"bad_params.yaml: {words}"
    else:
        params.update(shard_index=2, shard_count=2)
    assert_refuses("traffic_node", params, words)


def test_scripted_vehicles_join_the_agents_with_their_kind():
    """002 scene vehicles go out with the traffic agents (traffic_world.join_agents): their ids,
    their kind, no speed before the scene starts."""
    from vehicle_sim.core.accident.scene import VEHICLE_FILES, AccidentScene
    from vehicle_sim.core.accident.traffic_world import join_agents
    from vehicle_sim.core.traffic.sim import TrafficSim
    from vehicle_sim.core.vehicle.params import load_vehicle
    from vehicle_sim.nodes import traffic_msgs as tm
    vehicles = {k: load_vehicle(config_path(f)) for k, f in VEHICLE_FILES.items()}
    scene = AccidentScene(config_path("accidents/a4.yaml"), vehicles, start_s=1.0)
    sim = TrafficSim.from_files(config_path("maps/crossroad.yaml"))
    sim.spawn(0, 10.0, speed=5.0)
    a = join_agents(sim.agents(), scene.agents())
    assert len(a["uid"]) == 3 and list(a["kind"]) == [TrafficAgent.KIND_CAR] * 3
    assert list(a["uid"][1:]) == list(scene.uids) and a["speed"][0] == 5.0
    assert np.all(a["speed"][1:] == 0.0), "parked until start_s"
    msg = tm.agents_msg(a, np.zeros(3, dtype=int), sim.network.lane_names, 0, "map")
    assert [m.id for m in msg.agents[1:]] == [0xFF000000, 0xFF000001]
    assert msg.agents[1].lane_id == ""
