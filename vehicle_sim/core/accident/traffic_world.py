"""The traffic of one node as one stepped world: the traffic core (paper 004), its crash world
(traffic_crashes) and the scripted accident scene (paper 002) with its vehicles as obstacles.

One law, one place: the traffic node (nodes.traffic_node) and the lockstep engine (core.engine)
both step their traffic here, so both order a step the same way:
1. the crash world first, from the states at the step's start (what it moves, the others skip);
2. the agents: the scene's vehicles as leaders (SceneObstacles) when a scene runs, else the
   traffic core alone;
3. the scene's own vehicles.
Inputs, outputs and faults stay with the caller: the ego (x, y, yaw, speed) in the map frame
[m, m, rad, m/s] comes in, the agent columns go out.
"""
from __future__ import annotations

import numpy as np

from vehicle_sim.core.accident.crash_params import kind_of_crash_class
from vehicle_sim.core.accident.scene import VEHICLE_FILES, AccidentScene, check_statics
from vehicle_sim.core.accident.scene_obstacles import SceneObstacles
from vehicle_sim.core.accident.traffic_crashes import TrafficCrashes
from vehicle_sim.core.config import load
from vehicle_sim.core.traffic.agents import agent_ids
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.traffic.node_params import TrafficNodeParams, owned_sectors
from vehicle_sim.core.traffic.params import TrafficParams
from vehicle_sim.core.traffic.sim import TrafficSim
from vehicle_sim.core.traffic.zone import Sectors
from vehicle_sim.core.vehicle.params import load_vehicle
from vehicle_sim.paths import config_path

Ego = tuple[float, float, float, float]  # x [m], y [m], yaw [rad], speed [m/s], map frame


def make_sim(p: TrafficNodeParams) -> tuple[TrafficSim, Sectors]:
    """Load map and params (ConfigError naming file and key) and build this shard's core."""
    params = load(TrafficParams, config_path(p.params_file)) if p.params_file else TrafficParams()
    map_path = config_path(p.map_file)
    network = Network(load_map(map_path), str(map_path))
    sectors = Sectors(network, params.zone.sector_size_m)
    owned = owned_sectors(sectors, p.shard_index, p.shard_count)
    ego = load_vehicle(config_path(p.ego_vehicle_file)).chassis
    return TrafficSim(network, params, p.seed, owned_sectors=owned, owner_id=p.shard_index,
                      ego_size_m=(ego.length_m, ego.width_m)), sectors


def make_crashes(p: TrafficNodeParams, sim: TrafficSim
                 ) -> tuple[AccidentScene | None, TrafficCrashes | None]:
    """The scripted accident scene (if the node has a template) and the crash world."""
    scene = None
    if p.accident_template:
        vehicles = {kind: load_vehicle(config_path(f)) for kind, f in VEHICLE_FILES.items()}
        scene = AccidentScene(config_path(p.accident_template), vehicles, p.accident_start_s,
                              (p.accident_origin_x_m, p.accident_origin_y_m),
                              p.accident_heading_rad)
    if not p.crashes:
        return scene, None
    if scene is not None:  # its collisions happen through the map's bodies only
        check_statics(scene, sim.network.spec.static_objects)
    return scene, TrafficCrashes(sim, scene)  # the ego's box: the core's (make_sim)


class TrafficWorld:
    """The traffic core, its crash world and its scene, stepped in the order of the module
    docstring. ``sim`` and ``sectors`` stay the caller's to read (agents, lights, shards)."""

    def __init__(self, p: TrafficNodeParams):
        self.p = p
        self.sim, self.sectors = make_sim(p)
        self.scene, self.crashes = make_crashes(p, self.sim)
        self.obstacles = SceneObstacles(self.sim)  # scripted vehicles: leaders for the agents

    def step(self, t_ns: int, dt_s: float, ego: Ego | None, ego_t_ns: int | None) -> bool:
        """The step to sim time t_ns with the ego of ``ego_t_ns``; whether the crash world's
        damage book changed in it."""
        damaged = False
        if self.crashes is not None:  # contacts first: what they move, the others skip
            self.crashes.step(t_ns, dt_s, ego, ego_t_ns)
            damaged = bool(self.crashes.damage_changed)
        if self.scene is not None:
            self.obstacles.step(self.scene.agents(), dt_s, ego)
            self.scene.step(t_ns, dt_s)
        else:
            self.sim.step(dt_s, ego)
        return damaged

    def with_scene(self, agents: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``agents`` (TrafficSim.agents columns) with their TrafficAgent.kind (the agents'
        vehicle file's crash class: kind_of_crash_class), then the scene's vehicles, if a scene
        runs."""
        kind = kind_of_crash_class(self.sim.vehicle.crash_class)
        agents = {**agents, "kind": np.full(len(agents["uid"]), kind, dtype=np.int64)}
        if self.scene is None:
            return agents
        return join_agents(agents, self.scene.agents())

    def damage_book(self) -> dict[str, dict[str, list]]:
        """The crash world's per-part damage of each damaged body, by the accident node's name
        of it (body_name), sorted by uid: {"impulse_ns": [...], "level": [...]} (VehicleDamage's
        parts; empty without a crash world)."""
        book = self.crashes.damage.states if self.crashes is not None else {}
        return {body_name(uid, self.scene): {"impulse_ns": [float(v) for v in book[uid].impulse_ns],
                                             "level": [int(v) for v in book[uid].levels()]}
                for uid in sorted(book)}

    def restart(self) -> None:
        """Sim time went back (a new run): the crashed agents go, a new crash world and scene
        (the old world's pybullet client closed now, not at a collection)."""
        self.sim.clear_crashed()
        self.close()
        self.scene, self.crashes = make_crashes(self.p, self.sim)

    def close(self) -> None:
        if self.crashes is not None:
            self.crashes.close()


def body_name(uid: int, scene: AccidentScene | None) -> str:
    """A traffic body's name as the accident node names it: ``scripted/<template vehicle id>``
    for a scene's vehicle, else ``agent/<TrafficAgent.id>``."""
    if scene is not None and uid in scene.uids:
        return f"scripted/{scene.names[int(np.flatnonzero(scene.uids == uid)[0])]}"
    return f"agent/{int(agent_ids(np.array([uid]))[0])}"


def join_agents(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Agents of ``a`` then ``b`` (keys of TrafficSim.agents(); a key one side lacks is zeros
    there: KIND_CAR, no fault)."""
    na, nb = len(a["uid"]), len(b["uid"])

    def column(d: dict, k: str, n: int, like: np.ndarray) -> np.ndarray:
        return d[k] if k in d else np.zeros(n, dtype=like.dtype)
    return {k: np.concatenate((column(a, k, na, (b | a)[k]), column(b, k, nb, (a | b)[k])))
            for k in a.keys() | b.keys()}
