"""Public API of the traffic core: ``TrafficSim`` (construct, step, read, hand over).

Typical use by a node, every step::

    sim = TrafficSim.from_files("config/maps/urban_grid.yaml", params_path=None, seed=7)
    sim.step(0.05, ego=(x, y, yaw, speed))          # ego in the map frame (ENU, rad, m/s)
    a = sim.agents()                                 # dict of arrays (uid, x, y, yaw, speed, ...)
    names, states = sim.light_states()               # GREEN 0, YELLOW 1, RED 2, DARK -1

Scale-out (paper 003): ``TrafficSim(..., owned_sectors=...)`` simulates only agents in its
sectors; ``take_departures()`` returns records of agents that left them (fixed-size float64
rows, ``agents.N_REC`` values = 368 bytes), ``accept(records)`` adopts handed-over agents, and
``set_ghosts(export_ghosts())`` installs read-only neighbour copies, refreshed every heartbeat.

Instructor (004 sec. 7, instructor.py): ``instruct(uid, action, until_s)`` switches one agent's
driver (provoke_accident, run_red_light, full_brake, cut_in, stop_in_lane; "none" ends it);
``select_agent("nearest_ahead" | "nearest_behind" | "nearest_crossing")`` names the agent.
Crashed agents (crashed.py): ``mark_crashed(uids)``, ``crashed_states()``,
``set_crashed_states(uids, x, y, yaw, vx, vy, yaw_rate)`` for an outside crash integrator;
removed after ``crash_timeout_s`` or by ``clear_crashed()``.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from vehicle_sim.core.config import load
from vehicle_sim.core.traffic import agents as ag
from vehicle_sim.core.traffic import instructor as ins
from vehicle_sim.core.traffic import zone as zn
from vehicle_sim.core.traffic.crashed import CrashedAgents
from vehicle_sim.core.traffic.kernels import layout as lay
from vehicle_sim.core.traffic.kernels.exits import choose_exit, hash_uniform
from vehicle_sim.core.traffic.kernels.lane_path import eval_lane, lane_points
from vehicle_sim.core.traffic.kernels.step import step_kernel
from vehicle_sim.core.traffic.lights import LightController
from vehicle_sim.core.traffic.mapfile import MapSpec, load_map
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.traffic.params import TrafficParams
from vehicle_sim.core.vehicle.params import VehicleParams, load_vehicle
from vehicle_sim.paths import config_path

GRID_CELL_M = 20.0  # neighbour grid cell: >= the cone range / 2 so 3 x 3 cells cover it
MAX_SPAWN_PER_STEP = 8
TELEPORT_M = 50.0  # [m] an ego jump larger than this in one step refills the zone
FRONT_BAND_M = 40.0  # [m] depth of the zone's front band where a moving zone also spawns
UID_BLOCK = 1 << 40  # uids are owner_id * UID_BLOCK + counter: unique across owners

Ego = tuple[float, float, float, float]


class TrafficSim:
    """Urban traffic of paper 004 around an ego vehicle (or over the whole city)."""

    def __init__(self, network: Network, params: TrafficParams, seed: int,
                 owned_sectors: np.ndarray | None = None, owner_id: int = 0,
                 ego_size_m: tuple[float, float] | None = None):
        """``ego_size_m``: the ego's box (length, width) [m] the agents keep their gaps to and
        cut in ahead of (the run's ego vehicle file); None: the agents' own car's."""
        self.network, self.p, self.seed = network, params, int(seed)
        self.vehicle = load_vehicle(config_path(params.vehicle_file))  # the agents' car
        c = self.vehicle.chassis
        self.agent_size_m = (c.length_m, c.width_m)
        self.ego_size_m = self.agent_size_m if ego_size_m is None else ego_size_m
        self.rng = np.random.default_rng(seed)
        self.store = ag.AgentStore(params.capacity)
        self.lights = LightController(network, params.lights)
        self.zone = zn.ControlZone(network, params.zone)
        self.sectors = self.zone.sectors
        self.owned = None if owned_sectors is None else np.asarray(owned_sectors, dtype=np.int64)
        self.time_s, self._uid, self._steps = 0.0, owner_id * UID_BLOCK, 0
        self._filled, self._last_pose = False, None
        self.vp = pack_agent_vehicle(self.vehicle)
        self.cfg = self._pack_cfg()
        self.light_state = self.lights.states(0.0)
        self.ego_arr = np.zeros(lay.N_EGO)
        self.ego: Ego | None = None  # the ego of the last step (instructor targets)
        self.crashed = CrashedAgents(self.store, network.net)
        if params.initial_agents and not params.zone.enabled:
            self.spawn_random(params.initial_agents)

    @classmethod
    def from_files(cls, map_path: str | Path, params_path: str | Path | None = None,
                   seed: int = 0, **kw) -> TrafficSim:
        """Load and validate a map file and an optional TrafficParams YAML (ConfigError if bad)."""
        params = TrafficParams() if params_path is None else load(TrafficParams, params_path)
        return cls(Network(load_map(map_path), str(map_path)), params, seed, **kw)

    @classmethod
    def from_spec(cls, spec: MapSpec, params: TrafficParams, seed: int = 0, **kw) -> TrafficSim:
        """Build from an in-memory MapSpec (e.g. ``gridgen``)."""
        return cls(Network(spec), params, seed, **kw)

    def _pack_cfg(self) -> np.ndarray:
        p, (x0, y0, x1, y1) = self.p, self.network.bounds
        cfg = np.zeros(lay.N_CFG)
        cfg[[lay.CFG_LOD, lay.CFG_DYNMIN, lay.CFG_APPROACH, lay.CFG_EGO_YIELD, lay.CFG_MAXWAIT,
             lay.CFG_LC_TIME, lay.CFG_LC_THR, lay.CFG_BSAFE]] = (
            p.lod_radius_m, p.dynamic_min_speed_mps, p.approach_distance_m, p.ego_yield_time_s,
            p.max_wait_s, p.lane_change_time_s, p.lane_change_threshold_mps2, p.safe_decel_mps2)
        cfg[lay.CFG_SEED] = self.seed % (1 << 31)
        cfg[lay.CFG_GX0], cfg[lay.CFG_GY0], cfg[lay.CFG_CELL] = x0 - 50.0, y0 - 50.0, GRID_CELL_M
        cfg[lay.CFG_NCX] = math.ceil((x1 - x0 + 100.0) / GRID_CELL_M)
        cfg[lay.CFG_NCY] = math.ceil((y1 - y0 + 100.0) / GRID_CELL_M)
        return cfg

    # ----------------------------------------------------------------- stepping
    def step(self, dt: float, ego: Ego | None = None) -> None:
        """Advance by dt [s]; ego = (x [m], y [m], yaw [rad], speed [m/s]) or None."""
        if not (0.0 < dt <= 0.2) or not math.isfinite(dt):
            raise ValueError(f"dt must be in (0, 0.2] s, got {dt}")
        if ego is not None and not all(math.isfinite(v) for v in ego):
            raise ValueError(f"ego pose must be finite, got {ego}")
        self._set_ego(ego)
        zone_on = self.p.zone.enabled and ego is not None
        pose = None if ego is None else (ego[0], ego[1], ego[2])
        if zone_on:
            self.lights.select_master(*pose)
            self.light_state = self.lights.states(self.time_s, self.zone.active_nodes(pose))
            self._maintain_zone(pose, ego[3] > 1.0)
        else:
            if pose is not None:
                self.lights.select_master(*pose)
            self.light_state = self.lights.states(self.time_s)
        self.cfg[lay.CFG_DT], self.cfg[lay.CFG_T] = dt, self.time_s
        ins.cut_ins(self.store, self.network.net, ego, self.ego_size_m[0],
                    int(self.cfg[lay.CFG_SEED]))
        step_kernel(self.network.net, self.store.af, self.store.ai, self.vp,
                          self.light_state, self.ego_arr, self.cfg)
        self._remove(self.store.ai[lay.AI_REMOVE] == 1)
        if zone_on:  # delete agents that crossed the zone boundary outwards (not crashed ones)
            af = self.store.af
            self._remove(~self.zone.inside(pose, af[lay.AF_X], af[lay.AF_Y])
                         & ~self.crashed.mask())
        self._remove(self.crashed.timed_out(self.time_s + dt, self.p.crash_timeout_s))
        self.time_s += dt
        self._steps += 1
        ins.expire(self.store, self.time_s)  # an instruction holds for [now, until_s)

    def _set_ego(self, ego: Ego | None) -> None:
        e, self.ego = self.ego_arr, ego
        if ego is None:
            e[lay.EGO_ON] = 0.0
            return
        e[[lay.EGO_X, lay.EGO_Y, lay.EGO_YAW, lay.EGO_U]] = ego
        e[lay.EGO_ON] = 1.0
        e[lay.EGO_LEN], e[lay.EGO_WID] = self.ego_size_m

    def _remove(self, mask: np.ndarray) -> int:
        idx = np.flatnonzero(mask & (self.store.ai[lay.AI_ACTIVE] != lay.FREE))
        self.store.ai[:, idx] = 0
        self.store.ai[lay.AI_NEXT, idx] = -1
        return len(idx)

    # ----------------------------------------------------------------- creation
    def spawn(self, lane: int, s: float, speed: float | None = None,
              profile: int | None = None) -> int:
        """Create one agent on ``lane`` at arc length ``s`` [m]; returns its slot."""
        slot = self.store.free_slots(1)
        if len(slot) == 0:
            raise RuntimeError(f"agent capacity {self.p.capacity} exhausted")
        i = int(slot[0])
        af, ai = self.store.af, self.store.ai
        code, values, ignore = ag.draw_profiles(self.p, 1, self.rng, profile)
        af[:, i] = 0.0
        ai[:, i] = 0
        for k, (field, _) in enumerate(ag.PROFILE_FIELDS):
            af[field, i] = values[k, 0]
        ai[lay.AI_PROFILE, i], ai[lay.AI_IGNORE_SIGNS, i] = code[0], ignore[0]
        af[lay.AF_LENGTH, i], af[lay.AF_WIDTH, i] = self.agent_size_m
        net = self.network.net
        s = float(min(max(s, 0.0), net.lane_f[lane, lay.LF_LEN]))
        x, y, h, _ = _eval(net, lane, s)
        af[[lay.AF_X, lay.AF_Y, lay.AF_YAW, lay.AF_S], i] = (x, y, h, s)
        if speed is None:
            speed = zn.spawn_speed(self.network, lane, s, af[lay.AF_V_FACTOR, i],
                                   af[lay.AF_B_COMF, i])
        af[lay.AF_U, i], af[lay.AF_TICKET, i] = speed, -1.0
        ai[lay.AI_ACTIVE, i], ai[lay.AI_LANE, i] = lay.OWNED, lane
        ai[lay.AI_UID, i], ai[lay.AI_GO, i] = self._uid, -1
        self._uid += 1
        ai[lay.AI_NEXT, i] = choose_exit(net, lane, hash_uniform(int(self.cfg[lay.CFG_SEED]),
                                                                 ai[lay.AI_UID, i], 0))
        ai[lay.AI_HOPS, i] = 1
        return i

    def spawn_random(self, n: int, mask=None) -> int:
        """Place up to n agents on street lanes at random (whole-city or initial fill)."""
        placed = 0
        act = self.store.ai[lay.AI_ACTIVE] != lay.FREE
        lane_of, s_of = self.store.ai[lay.AI_LANE, act], self.store.af[lay.AF_S, act]
        for lane, s in zn.random_positions(self.network, n, self.rng, mask):
            if np.any((lane_of == lane) & (np.abs(s_of - s) < zn.SPAWN_CLEAR_M)):
                continue  # an existing agent is there
            if self.owned is not None and not np.isin(self._sector_of_lane_s(lane, s),
                                                      self.owned):
                continue
            self.spawn(lane, s)
            placed += 1
        return placed

    def _sector_of_lane_s(self, lane: int, s: float) -> int:
        x, y, _, _ = _eval(self.network.net, lane, s)
        return int(self.sectors.of(np.array([x]), np.array([y]))[0])

    def _maintain_zone(self, pose: tuple[float, float, float], moving: bool) -> None:
        af, ai = self.store.af, self.store.ai
        if self._last_pose is not None and math.hypot(pose[0] - self._last_pose[0],
                                                      pose[1] - self._last_pose[1]) > TELEPORT_M:
            self._filled = False  # ego was reset or teleported: refill the new zone
            self.clear_crashed()
        self._last_pose = pose
        owned = (ai[lay.AI_ACTIVE] == lay.OWNED) & (ai[lay.AI_CRASHED] == 0)
        out = owned & ~self.zone.inside(pose, af[lay.AF_X], af[lay.AF_Y])
        self._remove(out)
        lanes, s_entry, length = self.zone.scan(pose, moving)
        target = min(round(self.p.zone.density_per_km * length / 1000.0),
                     self.p.capacity - int(np.sum(ai[lay.AI_ACTIVE] == lay.GHOST)))
        have = int(np.sum(ai[lay.AI_ACTIVE] == lay.OWNED))
        if not self._filled:
            self._filled = True
            self.spawn_random(max(target - have, 0),
                              mask=lambda lanes, s: self._in_zone(pose, lanes, s))
            return
        if have >= target:
            return
        act = np.flatnonzero(ai[lay.AI_ACTIVE] != lay.FREE)
        xy = np.vstack((np.column_stack((af[lay.AF_X, act], af[lay.AF_Y, act])), [pose[:2]]))
        lane_of, s_of = ai[lay.AI_LANE, act], af[lay.AF_S, act]
        cands = [(int(lanes[k]), float(s_entry[k])) for k in self.rng.permutation(len(lanes))]
        if moving:  # the advancing front edge sweeps lanes in: spawn in its band too
            band = self.p.zone.ahead_m - FRONT_BAND_M
            cands += zn.random_positions(self.network, MAX_SPAWN_PER_STEP, self.rng,
                                         lambda lanes, s: self._in_zone(pose, lanes, s, band))
        for ln, s in cands[:2 * MAX_SPAWN_PER_STEP]:
            if have >= target:
                break
            if s > self.network.net.lane_f[ln, lay.LF_LEN] - zn.SPAWN_END_MARGIN_M:
                continue
            p = _eval(self.network.net, ln, s)[:2]
            if zn.free_at(lane_of, s_of, xy, ln, s, p):
                self.spawn(ln, s)
                have += 1
                lane_of, s_of = np.append(lane_of, ln), np.append(s_of, s)  # few spawns/step
                xy = np.vstack((xy, [p]))

    def _in_zone(self, pose, lanes: np.ndarray, s: np.ndarray,
                 min_ahead_m: float = -1e9) -> np.ndarray:
        """Mask of the lane points (lanes[i], s[i]) inside the zone, farther than
        SPAWN_CLEAR_M from the ego and at least min_ahead_m ahead of it [m]."""
        xy = lane_points(self.network.net.pts, self.network.net.lane_i, lanes, s)
        x, y = xy[:, 0], xy[:, 1]
        ahead = (x - pose[0]) * math.cos(pose[2]) + (y - pose[1]) * math.sin(pose[2])
        far = np.hypot(x - pose[0], y - pose[1]) > zn.SPAWN_CLEAR_M
        return (ahead >= min_ahead_m) & far & self.zone.inside(pose, x, y)

    # ----------------------------------------------------------------- reading
    def agents(self, include_ghosts: bool = False) -> dict[str, np.ndarray]:
        """Copies of the agents' state arrays: uid; CG pose x, y [m], yaw [rad] (map frame);
        speed u, lateral_speed v [m/s], yaw_rate [rad/s], steer [rad], accel [m/s^2]; lane
        index, s [m]; profile (0 aggressive, 1 moderate, 2 passive); dynamic (1: single-track);
        length, width [m]; ghost and crashed flags; instruction (layout.INS_*)."""
        ai, af = self.store.ai, self.store.af
        sel = (ai[lay.AI_ACTIVE] == lay.OWNED) | (include_ghosts & (ai[lay.AI_ACTIVE] == lay.GHOST))
        idx = np.flatnonzero(sel)
        return {"uid": ai[lay.AI_UID, idx].copy(), "x": af[lay.AF_X, idx].copy(),
                "y": af[lay.AF_Y, idx].copy(), "yaw": af[lay.AF_YAW, idx].copy(),
                "speed": af[lay.AF_U, idx].copy(), "lateral_speed": af[lay.AF_V, idx].copy(),
                "yaw_rate": af[lay.AF_R, idx].copy(), "steer": af[lay.AF_DELTA, idx].copy(),
                "accel": af[lay.AF_ACCEL, idx].copy(), "lane": ai[lay.AI_LANE, idx].copy(),
                "s": af[lay.AF_S, idx].copy(), "profile": ai[lay.AI_PROFILE, idx].copy(),
                "dynamic": ai[lay.AI_DYN, idx].copy(), "length": af[lay.AF_LENGTH, idx].copy(),
                "width": af[lay.AF_WIDTH, idx].copy(), "ghost": ai[lay.AI_ACTIVE, idx] == lay.GHOST,
                "crashed": ai[lay.AI_CRASHED, idx] == 1,
                "instruction": ai[lay.AI_INSTR, idx].copy()}

    def light_states(self) -> tuple[list[str], np.ndarray]:
        """Names ("signal:lane") and states of vehicle lights (GREEN 0 YELLOW 1 RED 2 DARK -1)."""
        return self.network.light_names, self.light_state[:len(self.network.light_names)].copy()

    def pedestrian_states(self) -> tuple[list[str], np.ndarray]:
        """Names and states of pedestrian lights at signalised crossings (inverse of vehicles)."""
        return self.network.ped_names, self.lights.pedestrian_states(self.light_state)

    @property
    def n_agents(self) -> int:
        return int(np.sum(self.store.ai[lay.AI_ACTIVE] == lay.OWNED))

    # ----------------------------------------------------------------- instructor (004 sec. 7)
    def select_agent(self, selector: str) -> int:
        """uid of the agent "nearest_ahead" / "nearest_behind" / "nearest_crossing" of the ego
        of the last step (instructor.select); InstructionError if none fits."""
        slot = ins.select(self.store, self.network.net, self.ego, selector)
        return int(self.store.ai[lay.AI_UID, slot])

    def instruct(self, uid: int, action: str, until_s: float | None = None) -> None:
        """Switch agent ``uid``'s driver to ``action`` (instructor.ACTIONS; "none" ends it)
        until sim time ``until_s`` [s] (None: until cleared). InstructionError if it cannot."""
        code = ins.action_code(action)
        if until_s is not None and not (math.isfinite(until_s) and until_s >= 0.0):
            raise ins.InstructionError(f"until_s must be finite and >= 0, got {until_s}")
        slot = ins.slot_of(self.store, uid)
        if self.store.ai[lay.AI_CRASHED, slot] == 1 and code != lay.INS_NONE:
            raise ins.InstructionError(f"agent {uid} has crashed: it takes no instruction")
        ins.instruct(self.store, self.network.net, self.ego, slot, code,
                     -1.0 if until_s is None else float(until_s))

    def mark_crashed(self, uids) -> None:
        """These agents crashed now: the kernel stops driving and moving them (crashed.py)."""
        self.crashed.mark(uids, self.time_s)

    def crashed_states(self) -> dict[str, np.ndarray]:
        """uid, x, y, yaw, vx, vy, yaw_rate (map frame, SI) of the crashed agents."""
        return self.crashed.states()

    def set_crashed_states(self, uids, x, y, yaw, vx, vy, yaw_rate) -> None:
        """Write crashed agents' planar states (map frame, SI; projected on the nearest lane)."""
        self.crashed.set_states(uids, x, y, yaw, vx, vy, yaw_rate)

    def clear_crashed(self) -> int:
        """Remove every crashed agent (a reset); returns how many."""
        return self._remove(self.crashed.mask())

    # ----------------------------------------------------------------- scale-out (003)
    def take_departures(self) -> np.ndarray:
        """Records (k, N_REC) of owned agents outside my sectors; they are removed here."""
        if self.owned is None:
            return np.zeros((0, ag.N_REC))
        ai, af = self.store.ai, self.store.af
        sec = self.sectors.of(af[lay.AF_X], af[lay.AF_Y])
        idx = np.flatnonzero((ai[lay.AI_ACTIVE] == lay.OWNED) & ~np.isin(sec, self.owned)
                             & (ai[lay.AI_CRASHED] == 0))  # a crashed one stays: its crash world
        rec = ag.pack(self.store, idx)
        self._remove(np.isin(np.arange(self.store.capacity), idx))
        return rec

    def accept(self, records: np.ndarray) -> np.ndarray:
        """Adopt handed-over agents (records from another owner's ``take_departures``)."""
        return ag.unpack(self.store, records, lay.OWNED)

    def export_ghosts(self, margin_m: float = 50.0) -> np.ndarray:
        """Records of owned agents within ``margin_m`` of my sectors' edges (for neighbours)."""
        af, ai = self.store.af, self.store.ai
        idx = np.flatnonzero(ai[lay.AI_ACTIVE] == lay.OWNED)
        if self.owned is None:
            return ag.pack(self.store, idx)
        x, y = af[lay.AF_X, idx], af[lay.AF_Y, idx]
        near = np.zeros(len(idx), dtype=bool)
        for dx, dy in ((margin_m, 0), (-margin_m, 0), (0, margin_m), (0, -margin_m)):
            near |= ~np.isin(self.sectors.of(x + dx, y + dy), self.owned)
        return ag.pack(self.store, idx[near])

    def set_ghosts(self, records: np.ndarray) -> None:
        """Replace all ghosts by these read-only copies (call every heartbeat)."""
        self._remove(self.store.ai[lay.AI_ACTIVE] == lay.GHOST)
        if len(records):
            ag.unpack(self.store, records, lay.GHOST)


def _eval(net, lane: int, s: float) -> tuple[float, float, float, float]:
    return eval_lane(net.pts, net.lane_i, lane, s)


def pack_agent_vehicle(v: VehicleParams) -> np.ndarray:
    """The agents' car as 004's single-track kernel reads it (``vp``, layout ``VP_*``; CG
    reference point): mass, yaw inertia, axle distances, axle cornering stiffnesses [N/rad]
    (coefficient * static axle load, as the ego's planar models), mu, constant power [W],
    steering limit [rad], drive force limit [N]."""
    c = v.chassis
    vp = np.zeros(lay.N_VP)  # by the layout's indices, so the order lives in layout.py only
    vp[[lay.VP_M, lay.VP_IZ, lay.VP_A, lay.VP_B]] = (c.mass_kg, c.yaw_inertia_kgm2,
                                                     c.cg_to_front_axle_m, c.cg_to_rear_axle_m)
    vp[[lay.VP_CF, lay.VP_CR]] = v.cornering_stiffness_npr()
    vp[[lay.VP_MU, lay.VP_P, lay.VP_SMAX, lay.VP_FMAX]] = (
        v.tyre.friction_coefficient, v.powertrain.max_power_w,
        v.steering.max_road_wheel_angle_rad, v.powertrain.max_drive_force_n)
    return vp
