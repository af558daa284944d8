"""Every node of a run models one ego vehicle and one map, in one body frame
(vehicle_sim.scenario_check): the shipped scenarios agree, a scenario whose nodes disagree is
refused naming the node, its parameter and both values."""
from __future__ import annotations

import pytest

from vehicle_sim import graph
from vehicle_sim.core.config import ConfigError, flat_fields
from vehicle_sim.paths import config_path
from vehicle_sim.scenario_check import check_one_world, node_params


@pytest.mark.parametrize("mode, engine", [("realtime", "false"), ("fast", "false"),
                                          ("lockstep", "false"), ("lockstep", "true")])
@pytest.mark.parametrize("record", ["false", "true"])
@pytest.mark.parametrize("name", graph.scenario_names())
def test_every_shipped_scenario_runs_one_ego_vehicle_and_one_map(name, record, mode, engine):
    """In every mode, as the graph's nodes (a lockstep dynamics node has its peers) or the
    engine's cores. (The crossroad accident scenarios' recorder wrote urban_grid as the run's
    map, so their report drew the wrong streets.)"""
    args = graph.resolve_args({"scenario": name, "record": record, "mode": mode,
                               "engine": engine})
    check_one_world(graph.load_scenario(name), args)


def scenario(tmp_path, params: dict[str, str]) -> tuple[graph.Scenario, dict[str, str]]:
    """urban's nodes, a node's parameter file replaced by one that sets only ``params`` (node
    name -> 'key: value' line)."""
    path = tmp_path / "mixed.yaml"
    text = config_path("scenarios/urban.yaml").read_text()
    for node, line in params.items():
        own = tmp_path / f"{node}.yaml"
        own.write_text(f"/**:\n  ros__parameters:\n    {line}\n")
        assert f"params_file: {node}.yaml" in text
        text = text.replace(f"params_file: {node}.yaml", f"params_file: {own}")
    path.write_text(text)
    return graph.load_scenario(str(path)), graph.resolve_args({"scenario": str(path)})


@pytest.mark.parametrize("node, line, key, what", [
    ("imu", "vehicle_file: vehicles/truck.yaml", "imu.vehicle_file", "ego vehicle file"),
    ("traffic", "ego_vehicle_file: vehicles/van.yaml", "traffic.ego_vehicle_file",
     "ego vehicle file"),
    ("ego_driver", "map_file: maps/crossroad.yaml", "ego_driver.map_file", "map"),
    ("bridge", "base_frame: ego/base_link", "bridge.base_frame", "body frame"),
    ("gps", "base_frame: ego/base_link", "gps.base_frame", "body frame"),
])
def test_a_node_with_another_ego_or_map_is_refused_naming_it(tmp_path, node, line, key, what):
    sc, args = scenario(tmp_path, {node: line})
    with pytest.raises(ConfigError) as err:
        check_one_world(sc, args)
    text = str(err.value)
    assert err.value.key == key and f"every node of a run uses one {what}" in text, text
    assert line.split(": ")[1] in text and "dynamics." in text, text


@pytest.mark.parametrize("line", ["odom_in_map: {x_m: 50.0}",
                                  "odom_in_map: {yaw_rad: 0.5}\n    map_file: ''"])
def test_an_odom_that_is_not_map_is_refused_where_other_nodes_take_odom_as_map(tmp_path, line):
    """The traffic, GNSS, accident and ego driver nodes (and the ego's crash contacts with the
    map's objects) read the ego's odom pose as map coordinates: an offset would put the ego
    in two places; the dynamics node alone without a map may have one (a stack's frames)."""
    sc, args = scenario(tmp_path, {"dynamics": line})
    with pytest.raises(ConfigError, match="odom_in_map other than the identity needs map_file"):
        check_one_world(sc, args)
    alone = node_params(sc.nodes[0], args, sc) if "map_file" in line else None
    assert alone is None or alone.odom_in_map.yaw_rad == 0.5


def test_a_body_frame_renamed_in_every_node_that_names_it_is_one_frame(tmp_path):
    """The dynamics node, the sensors and the bridge all in 'ego/base_link': accepted."""
    line = "base_frame: ego/base_link"
    sc, args = scenario(tmp_path, {n: line for n in ("dynamics", "imu", "gps", "bridge")})
    check_one_world(sc, args)
    frames = {n.name: node_params(n, args, sc).base_frame
              for n in sc.nodes if hasattr(node_params(n, args, sc), "base_frame")}
    assert frames == dict.fromkeys(("dynamics", "imu", "gps", "bridge"), "ego/base_link")


def test_one_file_named_two_ways_is_one_file(tmp_path):
    """An absolute path to the same file as the others' relative one is accepted."""
    absolute = config_path("vehicles/medium_car.yaml")
    sc, args = scenario(tmp_path, {"bridge": f"vehicle_file: {absolute}"})
    assert node_params(sc.nodes[4], args, sc).vehicle_file == str(absolute)
    check_one_world(sc, args)


def test_the_vehicle_file_argument_sets_the_ego_of_every_node_and_of_the_engine():
    from vehicle_sim.engine_setup import engine_params
    args = graph.resolve_args({"scenario": "urban", "vehicle_file": "vehicles/truck.yaml",
                               "record": "true"})
    sc = graph.load_scenario("urban")
    check_one_world(sc, args)
    set_by_it = {n.name: getattr(node_params(n, args, sc), graph.EGO_VEHICLE_PARAMS[n.executable])
                 for n in graph.active_nodes(sc, args) if n.executable in graph.EGO_VEHICLE_PARAMS}
    assert set(set_by_it) == {"dynamics", "traffic", "imu", "gps", "bridge", "ego_driver",
                              "accident", "recorder"}
    assert set(set_by_it.values()) == {"vehicles/truck.yaml"}
    engine = engine_params(sc, {**args, "engine": "true", "mode": "fast"})
    assert {engine.dynamics.vehicle_file, engine.traffic.ego_vehicle_file, engine.imu.vehicle_file,
            engine.gps.vehicle_file, engine.ego_driver.vehicle_file,
            engine.accident.vehicle_file} == {"vehicles/truck.yaml"}


def test_every_node_parameter_set_naming_the_egos_vehicle_is_in_the_table():
    """A node whose parameters hold the ego's vehicle file is set by the argument and checked:
    a new one cannot be left out of graph.EGO_VEHICLE_PARAMS unnoticed."""
    from vehicle_sim.docs import NODE_PARAMS
    holders = {f"{name}_node" if name != "sim_monitor" else name: field
               for name, cls in NODE_PARAMS.items()
               for field, *_ in flat_fields(cls) if field in ("vehicle_file", "ego_vehicle_file")}
    assert holders.pop("engine_node") == "vehicle_file"  # the argument itself, for its cores
    assert holders == graph.EGO_VEHICLE_PARAMS


def test_an_ego_vehicle_file_that_does_not_read_is_refused_once_naming_it():
    args = graph.resolve_args({"scenario": "urban", "vehicle_file": "vehicles/trukc.yaml"})
    with pytest.raises(ConfigError, match="trukc.yaml"):
        check_one_world(graph.load_scenario("urban"), args)


def test_a_program_that_is_not_a_vehicle_sim_node_is_not_held_to_the_nodes_files(tmp_path):
    """(--foreign_executables) a program named like a node keeps its own parameters."""
    own = tmp_path / "mine.yaml"
    own.write_text("/**:\n  ros__parameters:\n    vehicle_file: vehicles/truck.yaml\n")
    path = tmp_path / "with_mine.yaml"
    path.write_text(config_path("scenarios/urban.yaml").read_text() +
                    f"  - name: mine\n    executable: bridge\n    params_file: {own}\n")
    sc = graph.load_scenario(str(path), foreign_executables=True)
    args = graph.resolve_args({"scenario": str(path)})
    assert node_params(sc.nodes[-1], args, sc) is None
    check_one_world(sc, args)


def test_a_typo_in_a_nodes_parameter_file_is_refused_before_the_start(tmp_path):
    """Each node's parameters are read as the node reads them: the node would refuse to start
    on an unknown name; the check refuses the run first, in one line naming it."""
    sc, args = scenario(tmp_path, {"gps": "rate_hzz: 5.0"})
    with pytest.raises(ConfigError, match="unknown parameter") as err:
        check_one_world(sc, args)
    assert err.value.key == "rate_hzz" and "gps" in str(err.value), str(err.value)


@pytest.mark.parametrize("mode", ["lockstep", "fast"])
def test_an_engine_run_is_checked_with_its_cores_parameters(mode):
    """With engine true the scenario's cores run in the engine, read in mode fast
    (engine_setup.core_args): a lockstep dynamics node would need peers it never has there."""
    args = graph.resolve_args({"scenario": "urban", "engine": "true", "mode": mode,
                               "record": "true"})
    check_one_world(graph.load_scenario("urban"), args)


@pytest.mark.parametrize("name, value, words", [
    ("duration", "[", "malformed YAML"),  # was a traceback from the runner
    ("seed", str(2**63), "must be <= 9223372036854775807"),  # nodes refused it one by one
])
def test_a_bad_launch_argument_is_refused_in_one_line_before_the_start(name, value, words):
    args = graph.resolve_args({"scenario": "urban", name: value})
    with pytest.raises(ConfigError, match=words) as err:
        check_one_world(graph.load_scenario("urban"), args)
    assert err.value.key == name and "\n" not in str(err.value), str(err.value)


def test_a_launch_argument_written_1e2_is_a_number():
    args = graph.resolve_args({"scenario": "urban", "duration": "1e2"})
    monitor = next(n for n in graph.load_scenario("urban").nodes if "duration" in n.args)
    assert graph.node_parameters(monitor, args)["duration"] == 100.0
    check_one_world(graph.load_scenario("urban"), args)


@pytest.mark.parametrize("text", ["/**: 5\n", "/**: [1, 2]\n", "gps:\n  ros__parameters: 3\n"])
def test_a_parameter_file_of_the_wrong_shape_is_refused_in_one_line(tmp_path, text):
    """(was an AttributeError traceback from every runner start, since every node is read)"""
    own = tmp_path / "gps_bad.yaml"
    own.write_text(text)
    path = tmp_path / "bad.yaml"
    path.write_text(config_path("scenarios/urban.yaml").read_text()
                    .replace("params_file: gps.yaml", f"params_file: {own}"))
    with pytest.raises(ConfigError, match="gps_bad.yaml.*not a mapping"):
        check_one_world(graph.load_scenario(str(path)), graph.resolve_args({"scenario": str(path)}))


def test_the_agents_car_that_does_not_read_is_refused_naming_the_traffic_node(tmp_path):
    """TrafficParams.vehicle_file: the traffic node refused it alone at its start, naming
    neither the node nor the key."""
    model = tmp_path / "traffic_model.yaml"
    model.write_text("vehicle_file: vehicles/trukc.yaml\n")
    sc, args = scenario(tmp_path, {"traffic": f"params_file: {model}"})
    with pytest.raises(ConfigError, match=r"traffic .*vehicle_file: the agents' car: .*trukc"):
        check_one_world(sc, args)
    model.write_text("vehicle_file: vehicles/truck.yaml\n")
    check_one_world(sc, args)


def a4_with_accident_file(tmp_path, old: str, new: str) -> tuple[graph.Scenario, dict]:
    """accident_a4 whose accident node's parameter file has ``old`` replaced by ``new``."""
    own = tmp_path / "accident.yaml"
    own.write_text(config_path("scenes/a4_accident.yaml").read_text().replace(old, new))
    path = tmp_path / "mixed.yaml"
    text = config_path("scenarios/accident_a4.yaml").read_text()
    assert "params_file: scenes/a4_accident.yaml" in text
    path.write_text(text.replace("params_file: scenes/a4_accident.yaml", f"params_file: {own}"))
    return graph.load_scenario(str(path)), graph.resolve_args({"scenario": str(path)})


def test_an_accident_node_naming_another_template_than_the_traffic_is_refused(tmp_path):
    """The traffic drives a4's vehicles; an accident node reading rear_end_chain would name
    their collisions from the other scene (scripted/car3 -> scripted/car2)."""
    with pytest.raises(ConfigError) as err:
        check_one_world(*a4_with_accident_file(tmp_path, "accidents/a4.yaml",
                                               "accidents/rear_end_chain.yaml"))
    assert err.value.key == "accident.accident_template", err.value
    assert "every node of a run uses one accident template" in str(err.value)
    assert "accidents/a4.yaml" in str(err.value)


def test_an_accident_template_in_a_sharded_traffic_is_refused():
    """Every shard would drive its own copy of the scene (phantom collisions of a vehicle with
    itself)."""
    from vehicle_sim.core.traffic.node_params import TrafficNodeParams
    with pytest.raises(ValueError, match="accident_template with shard_count 2"):
        TrafficNodeParams(accident_template="accidents/a4.yaml", shard_count=2,
                          shard_index=0)
    TrafficNodeParams(accident_template="accidents/a4.yaml")


@pytest.mark.parametrize("sender", [True, False])
def test_a_schedule_needs_the_node_that_sends_it(tmp_path, sender):
    """accident_a4 with a schedule: its accident node (args: [scenario]) sends it; with that
    argument taken away no node would, and the faults would silently never come."""
    text = config_path("scenarios/accident_a4.yaml").read_text()
    text = text.replace("params_file: scenes/a4_accident.yaml",
                        f"params_file: {config_path('scenes/a4_accident.yaml')}")
    if not sender:
        assert text.count("args: [scenario]") == 1
        text = text.replace("args: [scenario]", "args: []")
    path = tmp_path / "scheduled.yaml"
    path.write_text(text + "schedule:\n  - {at_s: 0.5, target: vehicle, fault: ENGINE_CUT, "
                           "id: 1}\n")
    sc, args = graph.load_scenario(str(path)), graph.resolve_args({"scenario": str(path)})
    if sender:
        check_one_world(sc, args)
        return
    with pytest.raises(ConfigError) as err:
        check_one_world(sc, args)
    assert err.value.key == "schedule" and "no node sends them" in str(err.value), err.value


def test_an_accident_node_naming_no_template_beside_a_traffic_that_drives_one_is_refused(
        tmp_path):
    with pytest.raises(ConfigError) as err:
        check_one_world(*a4_with_accident_file(tmp_path, "accident_template: accidents/a4.yaml",
                                               "accident_template: ''"))
    assert err.value.key == "accident.accident_template", err.value
    assert "'' where traffic.accident_template is accidents/a4.yaml" in str(err.value)


@pytest.mark.parametrize("node, line, words", [
    ("imu", "rate_hz: 400.0", "400 Hz is faster than its input vehicle/state_raw at 200 Hz"),
    ("imu", "state_topic: vehicle/state", "faster than its input vehicle/state at 100 Hz"),
    ("gps", "state_topic: vehicle/state\n    rate_hz: 150.0", "150")])
def test_a_sensor_faster_than_the_states_it_reads_is_refused(tmp_path, node, line, words):
    """The model samples at the first state at or after each due time: faster than its input
    it would publish at the input's rate while it logs its own (config/dynamics.yaml: raw state
    at 200 Hz, state at 100 Hz)."""
    sc, args = scenario(tmp_path, {node: line})
    with pytest.raises(ConfigError) as err:
        check_one_world(sc, args)
    assert err.value.key == "rate_hz" and words in str(err.value), err.value


def test_a_sensor_at_the_rate_of_its_input_runs(tmp_path):
    sc, args = scenario(tmp_path, {"imu": "rate_hz: 200.0",
                                   "gps": "state_topic: vehicle/state\n    rate_hz: 100.0"})
    check_one_world(sc, args)
