"""The lockstep engine (core.engine.urban) with the urban scenario's parameters read from its one
declaration (vehicle_sim.engine_setup): a seeded run repeats exactly, a seed changes it, the ego
drives, the cores get what their nodes get, and what the engine cannot run is refused."""
from __future__ import annotations

import hashlib

import pytest

from vehicle_sim import graph
from vehicle_sim.core.config import ConfigError
from vehicle_sim.core.engine.urban import UrbanEngine
from vehicle_sim.engine_setup import engine_params, left_out, recorder_params
from vehicle_sim.paths import config_path

SECONDS = 3.0


class Record:
    """Every output of the engine, hashed in order, and counted by kind."""

    def __init__(self):
        self.hash = hashlib.sha256()
        self.count: dict[str, int] = {}
        self.stamps: dict[str, list[int]] = {}
        self.last_agents = 0

    def _add(self, kind: str, t_ns: int, *parts) -> None:
        self.count[kind] = self.count.get(kind, 0) + 1
        self.stamps.setdefault(kind, []).append(t_ns)
        self.hash.update(kind.encode() + t_ns.to_bytes(8, "little"))
        for part in parts:
            self.hash.update(part if isinstance(part, bytes) else repr(part).encode())

    def clock(self, t_ns):
        self._add("clock", t_ns)

    def vehicle(self, t_ns, snap, raw, state):
        self._add("vehicle", t_ns, snap.position_m.tobytes(), snap.velocity_mps.tobytes(), raw,
                  state)

    def imu(self, t_ns, s):
        self._add("imu", t_ns, s.linear_acceleration_mps2.tobytes(),
                  s.angular_velocity_radps.tobytes())

    def fix(self, fix):
        self._add("fix", round(fix.stamp_s * 1e9), fix.latitude_deg, fix.longitude_deg)

    def traffic(self, t_ns, agents, lights):
        self.last_agents = len(agents["uid"])
        self._add("traffic", t_ns, agents["x"].tobytes(), agents["y"].tobytes(),
                  lights[1].tobytes())

    def command(self, t_ns, cmd):
        self._add("command", t_ns, cmd.steer_rad, cmd.throttle, cmd.brake, cmd.gear)

    def damage(self, t_ns, impulse_ns, levels):
        self._add("damage", t_ns, impulse_ns, levels)

    def accident(self, event):
        c = event.contact
        self._add("accident", c.t_ns, c.actor, c.victim, c.actor_part, c.victim_part,
                  c.impact_speed_mps, c.position_m)

    def log(self, line):
        self._add("log", 0, line)


def run(seed: int, seconds: float = SECONDS) -> tuple[Record, UrbanEngine]:
    scenario = graph.load_scenario("urban")
    args = graph.resolve_args({"seed": str(seed), "mode": "lockstep"})
    record = Record()
    engine = UrbanEngine(engine_params(scenario, args), record)
    d = engine.p.dynamics
    for _ in range(round(seconds / (d.lockstep_frame_steps * d.dt_ns * 1e-9))):
        engine.frame()
    engine.close()
    return record, engine


def test_a_seeded_run_repeats_exactly_and_another_seed_changes_it():
    a, engine = run(3)
    b, _ = run(3)
    c, _ = run(4)
    assert a.count == b.count and a.hash.digest() == b.hash.digest()
    assert c.hash.digest() != a.hash.digest(), "the seed reaches the traffic and the sensors"
    assert engine.t_ns == round(SECONDS * 1e9)


def test_the_outputs_come_at_the_nodes_rates_on_the_sim_time_grid():
    rec, engine = run(3)
    d = engine.p.dynamics
    n_steps = round(SECONDS * d.physics_rate_hz)
    assert rec.count["clock"] == n_steps // d.clock_decimation
    assert rec.count["vehicle"] == n_steps // d.raw_state_decimation  # raw at 200 Hz, state on it
    assert rec.count["traffic"] == round(SECONDS * engine.p.traffic.rate_hz)
    assert rec.count["command"] == round(SECONDS * engine.p.ego_driver.control_rate_hz)
    assert all(t % engine.traffic_dt_ns == 0 for t in rec.stamps["traffic"])
    imu_period_ns = round(1e9 / engine.imu.params.rate_hz)
    assert all(t % imu_period_ns == 0 for t in rec.stamps["imu"]) and rec.count["imu"] > 0
    assert 0 < rec.count["fix"] <= SECONDS * engine.gnss.params.rate_hz + 1
    assert rec.last_agents > 0, "the city's traffic is spawned"


def test_the_autopilot_drives_the_ego_east_along_its_lane():
    _, engine = run(3, seconds=6.0)
    x0 = engine.p.dynamics.initial.x_m
    x, y = engine.summary.final_position_m
    assert x - x0 > 10.0, "moved forward along +x (the initial heading is east)"
    assert abs(y - engine.p.dynamics.initial.y_m) < 1.0, "still in its lane"
    assert engine.summary.state_samples == 600 and engine.summary.distance_m > 10.0


def test_an_ego_off_every_lane_gets_a_braking_command_each_period_and_one_log_line():
    """The autopilot cannot drive an ego far from every lane (its ValueError): as the ego driver
    node, the engine brakes and still sends the command at each control period; the error is
    logged once, not at 20 Hz."""
    import dataclasses

    from vehicle_sim.core.dynamics_params import InitialPose
    from vehicle_sim.core.ego.autopilot import BRAKING
    p = engine_params(graph.load_scenario("urban"),
                      graph.resolve_args({"seed": "3", "mode": "lockstep"}))
    p = dataclasses.replace(p, dynamics=dataclasses.replace(
        p.dynamics, initial=InitialPose(x_m=-900.0, y_m=-900.0, yaw_rad=0.0, speed_mps=5.0)))
    record, commands, lines = Record(), [], []
    record.command = lambda t_ns, cmd: commands.append(cmd)
    record.log = lines.append
    engine = UrbanEngine(p, record)
    for _ in range(50):  # 1 s
        engine.frame()
    engine.close()
    assert len(commands) == round(p.ego_driver.control_rate_hz)
    assert all(c == BRAKING for c in commands) and BRAKING.brake == 1.0 and BRAKING.throttle == 0
    assert len([line for line in lines if line.startswith("autopilot: ")]) == 1
    assert engine.model.snapshot().velocity_mps[0] < 1.0, "the brake stopped it"


def test_each_core_gets_its_nodes_parameters_from_the_declaration():
    scenario = graph.load_scenario("urban")
    args = graph.resolve_args({"seed": "7", "mode": "lockstep"})
    p = engine_params(scenario, args)
    assert p.dynamics.vehicle_file == "vehicles/medium_car.yaml"  # config/dynamics.yaml
    assert p.dynamics.lockstep_frame_steps == 20 and p.dynamics.initial.x_m == 10.0
    assert p.dynamics.wait_for_nodes == () and p.dynamics.lockstep_peers == ()  # graph wiring
    assert p.traffic.seed == 7 and p.traffic.map_file == "maps/urban_grid.yaml"
    assert p.traffic.params_file == ""  # config/traffic.yaml: city.yaml is for the shards
    assert p.imu.seed == p.gps.seed == p.ego_driver.seed == 7
    assert any(line.startswith("bridge") for line in left_out(scenario, args))


def _scenario_file(tmp_path, extra: str = "", drop: str = "") -> str:
    text = config_path("scenarios/urban.yaml").read_text()
    if drop:
        start = text.index(f"  - name: {drop}\n")
        end = text.index("  - name:", start + 1)
        text = text[:start] + text[end:]
    path = tmp_path / "scenario.yaml"
    path.write_text(text + extra)
    return str(path)


@pytest.mark.parametrize("extra, drop, words", [
    ("schedule:\n  - {at_s: 1.0, target: gps, fault: NO_FIX, id: 1}\n", "",
     "no fault schedule"),
    ("", "ego_driver", "needs ego_driver_node"),
    ("  - {name: traffic_b, executable: traffic_node, params_file: traffic.yaml}\n", "",
     "a second traffic_node"),
])
def test_what_the_engine_cannot_run_as_the_graph_would_is_refused(tmp_path, extra, drop, words):
    scenario = graph.load_scenario(_scenario_file(tmp_path, extra, drop))
    with pytest.raises(ConfigError, match=words):
        engine_params(scenario, graph.resolve_args({"mode": "lockstep"}))


def test_a_bad_parameter_in_a_cores_file_is_refused_naming_it(tmp_path):
    params = tmp_path / "bad_dynamics.yaml"
    params.write_text("/**:\n  ros__parameters:\n    lockstep_frame_stepz: 20\n")
    text = config_path("scenarios/urban.yaml").read_text().replace(
        "params_file: dynamics.yaml", f"params_file: {params}")
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="lockstep_frame_stepz"):
        engine_params(graph.load_scenario(str(path)), graph.resolve_args({"mode": "lockstep"}))


def test_the_engine_is_refused_in_real_time_and_records_with_the_recorders_parameters():
    with pytest.raises(ConfigError, match="mode lockstep"):
        graph.resolve_args({"engine": "true"})
    # record true: no recorder process beside the engine, the engine records what the
    # scenario's recorder node would, into the folder it would
    args = graph.resolve_args({"engine": "true", "mode": "lockstep", "record": "true",
                               "record_dir": "/tmp/there"})
    scenario = graph.load_scenario("urban")
    assert [p.nodes[0].executable for p in graph.processes(scenario, args)] == [
        "engine_node", "ground_truth_node"]
    given = graph.node_parameters(graph.ENGINE_NODE, args, scenario)
    assert given["record"] is True and given["record_dir"] == "/tmp/there"
    recorder = recorder_params(scenario, args)
    assert recorder.record_dir == "/tmp/there" and not recorder.lockstep
    assert recorder.wanted("/vehicle/state", "vehicle_sim/msg/VehicleState")
    assert not recorder.wanted("/vehicle/state_raw", "vehicle_sim/msg/VehicleState")
    assert "recorder (recorder_node): the engine records its own edges (record true)" in \
        left_out(scenario, args)
    assert recorder_params(scenario, graph.resolve_args({"mode": "lockstep"})) is None
    args = graph.resolve_args({"engine": "true", "mode": "fast"})
    scenario = graph.load_scenario("urban")
    engine, *readers = graph.processes(scenario, args)
    assert engine.nodes[0].executable == "engine_node"
    # the ground truth runs beside it, reading its edges, and it waits for them to start
    assert [r.nodes[0].executable for r in readers] == ["ground_truth_node"]
    assert graph.node_parameters(engine.nodes[0], args, scenario)["wait_for_nodes"] == [
        readers[0].name]


def test_the_ego_driven_into_a_tree_is_an_accident_with_damage_and_a_summary_line():
    """The ego starts 3 m before the urban map's tree0_0 (32, 7) at 10 m/s heading at it: the
    crash physics stops it, the accident node's law (core.accident.watch) reports ego (front)
    -> static/tree0_0 (no part) with the speed it hit at (the sample before the overlap: the
    crash physics has stopped it by the time the overlap is sampled), and the summary lists it
    (the autopilot may roll it against the tree again later: a new, slow episode)."""
    import dataclasses

    from vehicle_sim.core.accident.detect import PART_FRONT, PART_UNKNOWN
    from vehicle_sim.core.dynamics_params import InitialPose
    scenario = graph.load_scenario("urban")
    p = engine_params(scenario, graph.resolve_args({"seed": "3", "mode": "lockstep"}))
    assert p.accident is not None, "the urban scenario's accident node is a core"
    p = dataclasses.replace(p, dynamics=dataclasses.replace(
        p.dynamics, initial=InitialPose(x_m=29.0, y_m=7.0, yaw_rad=0.0, speed_mps=10.0)))
    events = []
    record = Record()
    record.accident = lambda e: events.append(e)
    engine = UrbanEngine(p, record)
    for _ in range(50):  # 1 s
        engine.frame()
    engine.close()
    ego = [e.contact for e in events if "ego" in (e.contact.actor, e.contact.victim)]
    c = ego[0]
    assert (c.actor, c.victim) == ("ego", "static/tree0_0")
    assert (c.actor_part, c.victim_part) == (PART_FRONT, PART_UNKNOWN)
    assert c.t_ns < 200_000_000 and 9.0 < c.impact_speed_mps < 10.0
    assert all(later.impact_speed_mps < 2.0 for later in ego[1:])
    assert record.count.get("damage", 0) > 0, "the crash physics reported the ego's damage"
    assert engine.summary.accidents == len(events) == len(engine.accident_details)
    assert engine.accident_details[0]["victim"] == "static/tree0_0"
    assert engine.model.snapshot().velocity_mps[0] < 5.0, "the tree stopped it"


def test_a_scripted_scene_is_reported_with_its_planned_bodies(tmp_path):
    """Paper 002's A4 (scenario accident_a4, with an ego driver and sensors added so the engine
    can run it): both planned collisions are reported by the scripted bodies' names
    (TrafficAgent ids, as the accident node names them), scripted, and their damage is in the
    summary's book."""
    text = config_path("scenarios/accident_a4.yaml").read_text().replace("nodes:\n", (
        "nodes:\n"
        "  - {name: ego_driver, executable: ego_driver_node, params_file: ego_driver.yaml}\n"
        "  - {name: imu, executable: imu_node, params_file: imu.yaml}\n"
        "  - {name: gps, executable: gps_node, params_file: gps.yaml}\n"))
    path = tmp_path / "a4_engine.yaml"
    path.write_text(text)
    p = engine_params(graph.load_scenario(str(path)), graph.resolve_args({"mode": "lockstep"}))
    events = []
    record = Record()
    record.accident = events.append
    engine = UrbanEngine(p, record)
    for _ in range(400):  # 8 s
        engine.frame()
    engine.close()
    pairs = [(e.contact.actor, e.contact.victim, e.scripted) for e in events]
    assert pairs == [("scripted/vehicleB", "scripted/vehicleA", True),
                     ("scripted/vehicleA", "static/tree1", True)]
    assert {"scripted/vehicleA", "scripted/vehicleB"} <= set(engine.damage_book(None))
    assert [d["source"] for d in engine.accident_details] == [1, 1]  # SOURCE_SCRIPTED


@pytest.mark.parametrize("text, words", [
    ("control_rate_hz: 30.0", "control_rate_hz"),
    ("state_topic: vehicle/state_raw", "gps state_topic"),
])
def test_rates_off_the_physics_grid_and_other_inputs_are_refused(tmp_path, text, words):
    """A control period of 33.3 ms is no whole number of 1 ms steps (it would never fire); a
    GNSS fed from the raw state is not what the engine gives it."""
    node = "ego_driver" if "control" in text else "gps"
    params = tmp_path / f"{node}.yaml"
    params.write_text(f"/**:\n  ros__parameters:\n    {text}\n")
    scenario = config_path("scenarios/urban.yaml").read_text().replace(
        f"params_file: {node}.yaml", f"params_file: {params}")
    path = tmp_path / "scenario.yaml"
    path.write_text(scenario)
    with pytest.raises(ConfigError, match=words):
        engine_params(graph.load_scenario(str(path)), graph.resolve_args({"mode": "lockstep"}))
