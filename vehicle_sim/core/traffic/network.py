"""The road network compiled into flat arrays for the numba kernels (004 sec. 2 and 6).

Every lane (street lanes and generated junction connectors) is a sampled path; ``Net`` holds
struct-of-arrays tables indexed by lane / node / light with the column constants of
``kernels.layout`` (LF_, LI_, SF_, NF_, NI_).
Lengths in metres, speeds in m/s, curvature in 1/m, headings in rad (map frame, ENU).
"""
from __future__ import annotations

import itertools
import math
from collections import namedtuple
from typing import NamedTuple

import numpy as np

from vehicle_sim.core.config import ConfigError
from vehicle_sim.core.traffic import geometry as geo
from vehicle_sim.core.traffic.kernels.lane_path import eval_lane, fill_turns, project
from vehicle_sim.core.traffic.kernels.layout import (
    LF_KMAX,
    LF_LEN,
    LF_SKMAX,
    LF_SPEED,
    LF_WIDTH,
    LI_BUS,
    LI_CLOCAL,
    LI_CNODE,
    LI_ENODE,
    LI_FROM,
    LI_LEFT,
    LI_NP,
    LI_NSIG,
    LI_NSUCC,
    LI_P0,
    LI_RIGHT,
    LI_SIG0,
    LI_STREET,
    LI_SUCC0,
    N_LI,
    SF_KIND,
    SF_LIGHT,
    SF_S,
    SIG_KIND_CODE,
)
from vehicle_sim.core.traffic.mapfile import MapSpec

Net = namedtuple("Net", "pts lane_f lane_i succ succ_cum sig_f node_f node_i conf")

# how far past its node's radius a connector may reach [m]: a choice, a lane's width (3.5 m) -
# a junction box drawn a little small still works (agents yield from its edge); a node drawn
# away from its lanes is refused
BOX_SLACK_M = 3.5
CONFLICT_CLEARANCE_M = 2.6  # car width 1.8 m (conventions: sedan) + 0.8 m lateral margin
KIND_NAMES = {code: name for name, code in SIG_KIND_CODE.items()}


class Signal(NamedTuple):
    """A sign, light or crossing on a lane, for Python readers."""

    s_m: float  # arc length on the lane [m]
    kind: str  # map-file name: traffic_light, stop, give_way, crossing
    light: str  # the light's name ("signal:lane"), "" if none


class Network:
    """Compiled map: ``net`` (numba arrays) plus names and light metadata for Python code."""

    def __init__(self, spec: MapSpec, source: str = "<map>"):
        self.spec, self.source = spec, source
        self.lane_names: list[str] = []
        self.paths: list[np.ndarray] = []
        lf, li = [], []
        self._street_lanes(spec, lf, li)
        self.n_street_lanes = len(self.lane_names)
        succ = self._connectors(spec, lf, li)
        self.light_node, self.light_group, self.light_names, self.light_xy = [], [], [], []
        self.light_lane: list[int] = []
        self.ped_names: list[str] = []
        self.ped_lane: list[int] = []
        sigs = self._signals(spec, lf, li)
        self._adjacency(spec, li)
        conf, node_i = self._conflicts(spec, lf, li)
        self.net = self._pack(lf, li, succ, sigs, conf, node_i)
        self.node_names = [n.id for n in spec.nodes]
        self.light_node = np.array(self.light_node, dtype=np.int64)
        self.light_group = np.array(self.light_group, dtype=np.int64)
        self.light_xy = np.array(self.light_xy, dtype=np.float64).reshape(-1, 2)
        pts = self.net.pts
        self.bounds = (pts[:, 0].min(), pts[:, 1].min(), pts[:, 0].max(), pts[:, 1].max())
        self._lane_signals = [self._read_signals(lane) for lane in range(self.n_lanes)]

    @property
    def n_lanes(self) -> int:
        return len(self.lane_names)

    # ---- named readers of the packed tables (Python callers; the kernels read the columns)
    def lane_length(self, lane: int) -> float:
        """Length [m] of a lane's centre line."""
        return float(self.net.lane_f[lane, LF_LEN])

    def speed_limit(self, lane: int) -> float:
        """Speed limit [m/s] of a lane."""
        return float(self.net.lane_f[lane, LF_SPEED])

    def sharpest_curve(self, lane: int) -> tuple[float, float]:
        """(largest |curvature| [1/m], arc length s [m] where it is) of a lane."""
        return float(self.net.lane_f[lane, LF_KMAX]), float(self.net.lane_f[lane, LF_SKMAX])

    def signals(self, lane: int) -> tuple[Signal, ...]:
        """Signs, lights and crossings on a lane, by arc length."""
        return self._lane_signals[lane]

    def successors(self, lane: int) -> tuple[np.ndarray, np.ndarray]:
        """(next lanes, cumulative exit probabilities) at a lane's end; empty at a dead end."""
        k0, n = self.net.lane_i[lane, LI_SUCC0], self.net.lane_i[lane, LI_NSUCC]
        return self.net.succ[k0:k0 + n], self.net.succ_cum[k0:k0 + n]

    def point(self, lane: int, s: float) -> tuple[float, float, float, float]:
        """(x, y [m], heading [rad], curvature [1/m]) at arc length s [m] of a lane (linear
        beyond its ends)."""
        return eval_lane(self.net.pts, self.net.lane_i, lane, s)

    def locate(self, lane: int, s_guess: float, x: float, y: float) -> tuple[float, float]:
        """(arc length s [m], lateral offset [m], + left) of the point (x, y) on a lane, searched
        near s_guess."""
        return project(self.net.pts, self.net.lane_i, lane, s_guess, x, y)

    def light_stop_xy(self) -> np.ndarray:
        """Map positions [m] (k, 2) of the vehicle lights' stop lines (``distance_from_end_m``
        before their lane's end; ``light_xy``, the lane end, is 004's light position for the
        controller's master and offsets)."""
        xy = np.zeros((len(self.light_lane), 2))
        for k, lane in enumerate(self.light_lane):
            s = next(sg.s_m for sg in self.signals(lane) if sg.light == self.light_names[k])
            xy[k] = self.point(lane, s)[:2]
        return xy

    def pedestrian_light_xy(self) -> np.ndarray:
        """Map positions [m] (k, 2) of the pedestrian lights: the crossing on their lane."""
        xy = np.zeros((len(self.ped_lane), 2))
        for k, lane in enumerate(self.ped_lane):
            s = next(sg.s_m for sg in self.signals(lane) if sg.kind == "crossing")
            xy[k] = self.point(lane, s)[:2]
        return xy

    def _read_signals(self, lane: int) -> tuple[Signal, ...]:
        net, out = self.net, []
        k0 = net.lane_i[lane, LI_SIG0]
        for k in range(k0, k0 + net.lane_i[lane, LI_NSIG]):
            light = int(net.sig_f[k, SF_LIGHT])
            out.append(Signal(float(net.sig_f[k, SF_S]), KIND_NAMES[int(net.sig_f[k, SF_KIND])],
                              self.light_names[light] if light >= 0 else ""))
        return tuple(out)

    def lane_index(self, name: str) -> int:
        """Index of the lane called ``name`` (KeyError if unknown)."""
        return self._index[name]

    def _street_lanes(self, spec: MapSpec, lf: list, li: list) -> None:
        self._index: dict[str, int] = {}
        self.lane_road: list[str] = []
        for si, st in enumerate(spec.streets):
            r = st.reference
            ref = geo.sample_pieces(r.x_m, r.y_m, r.heading_rad,
                                    [(p.length_m, p.curvature_1pm) for p in r.pieces])
            for ln in st.lanes:
                path = geo.offset_path(ref, ln.offset_m, ln.direction == "backward")
                speed = ln.speed_limit_mps or st.speed_limit_mps
                self._add(ln.id, path, lf, li, speed, ln.width_m, -1, si, ln.bus_lane)
                self.lane_road.append(st.road or st.id)

    def _add(self, name, path, lf, li, speed, width, cnode, street, bus=False, turn=0.0):
        self._index[name] = len(self.lane_names)
        self.lane_names.append(name)
        self.paths.append(path)
        kabs = np.abs(path[:, 4])
        lf.append([path[-1, 3], speed, kabs.max(), path[int(np.argmax(kabs)), 3], turn, width])
        row = [0] * N_LI
        row[LI_CNODE], row[LI_ENODE], row[LI_LEFT], row[LI_RIGHT] = cnode, -1, -1, -1
        row[LI_FROM], row[LI_BUS], row[LI_STREET], row[LI_CLOCAL] = -1, int(bus), street, -1
        li.append(row)

    def _connectors(self, spec: MapSpec, lf: list, li: list) -> list[list[tuple[int, float]]]:
        succ: list[list[tuple[int, float]]] = [[] for _ in range(self.n_street_lanes)]
        self.node_connectors: list[list[int]] = []
        for ni, node in enumerate(spec.nodes):
            conns = []
            for cj, c in enumerate(node.connections):
                key = f"nodes[{ni}].connections[{cj}]"
                a, b = self._index[c.from_lane], self._index[c.to_lane]
                if li[a][LI_ENODE] not in (-1, ni):
                    raise ConfigError(self.source, key + ".from_lane",
                                      f"lane {c.from_lane!r} already ends at another node")
                li[a][LI_ENODE] = ni
                p0, p1 = self.paths[a][-1, :3], self.paths[b][0, :3]
                pieces = geo.fillet(tuple(p0), tuple(p1))
                if pieces is None:
                    raise ConfigError(self.source, key, f"no line-arc-line path from the end of "
                                      f"{c.from_lane!r} to the start of {c.to_lane!r}")
                path = geo.sample_pieces(p0[0], p0[1], p0[2], pieces)
                if math.hypot(*(path[-1, :2] - p1[:2])) > 0.1:
                    raise ConfigError(self.source, key, "connector does not reach to_lane start")
                self._check_in_box(node, key, path)
                turn = math.atan2(math.sin(p1[2] - p0[2]), math.cos(p1[2] - p0[2]))
                idx = len(self.lane_names)
                self._add(f"{node.id}:{c.from_lane}>{c.to_lane}", path, lf, li, lf[a][LF_SPEED],
                          lf[a][LF_WIDTH], ni, li[a][LI_STREET], turn=turn)
                self.lane_road.append(self.lane_road[a])
                li[idx][LI_FROM] = a
                succ.append([(b, 1.0)])
                succ[a].append((idx, c.probability))
                conns.append(idx)
            self.node_connectors.append(conns)
        return succ

    def _check_in_box(self, node, key: str, path: np.ndarray) -> None:
        """A connector lies in its node's box (radius_m round x_m, y_m): agents yield to the ego
        in the box alone (kernels.junction), so a node drawn away from its lanes would let
        them drive through an ego on the connector."""
        far = float(np.max(np.hypot(path[:, 0] - node.x_m, path[:, 1] - node.y_m)))
        if far > node.radius_m + BOX_SLACK_M:
            raise ConfigError(self.source, key, f"the connector reaches {far:.1f} m from node "
                              f"{node.id!r} at ({node.x_m:g}, {node.y_m:g}), outside its "
                              f"radius_m {node.radius_m:g} m (the box where agents yield)")

    def _signals(self, spec: MapSpec, lf: list, li: list) -> list[list[tuple[float, int, int]]]:
        per_lane: list[list[tuple[float, int, int]]] = [[] for _ in self.lane_names]
        groups: dict[int, list[str]] = {}
        for i, sg in enumerate(spec.signals):
            for j, name in enumerate(sg.lanes):
                lane = self._index[name]
                s = lf[lane][LF_LEN] - sg.distance_from_end_m
                if s < 0:
                    raise ConfigError(self.source, f"signals[{i}].distance_from_end_m",
                                      f"longer than lane {name!r} ({lf[lane][LF_LEN]:.1f} m)")
                light = -1
                if sg.kind == "traffic_light":
                    node = li[lane][LI_ENODE]
                    if node < 0:
                        raise ConfigError(self.source, f"signals[{i}].lanes[{j}]",
                                          f"lane {name!r} does not end at a node")
                    road = self.lane_road[lane]
                    names = groups.setdefault(node, [])
                    if road not in names:
                        names.append(road)
                    light = len(self.light_names)
                    self.light_names.append(f"{sg.id}:{name}")
                    self.light_node.append(node)
                    self.light_group.append(names.index(road))
                    self.light_xy.append(self.paths[lane][-1, :2])
                    self.light_lane.append(lane)
                elif sg.kind == "crossing" and sg.signalised:
                    self.ped_names.append(f"{sg.id}:{name}")
                    self.ped_lane.append(lane)
                per_lane[lane].append((s, SIG_KIND_CODE[sg.kind], light))
        self.node_groups = [len(groups.get(n, [])) for n in range(len(spec.nodes))]
        return per_lane

    def _adjacency(self, spec: MapSpec, li: list) -> None:
        for st in spec.streets:
            for direction, sign in (("forward", 1.0), ("backward", -1.0)):
                lanes = sorted((sign * ln.offset_m, self._index[ln.id]) for ln in st.lanes
                               if ln.direction == direction)
                for (_, a), (_, b) in itertools.pairwise(lanes):
                    li[a][LI_LEFT], li[b][LI_RIGHT] = b, a

    def _conflicts(self, spec: MapSpec, lf: list, li: list) -> tuple[list[float], list]:
        conf: list[float] = []
        node_i = []
        for conns in self.node_connectors:
            n = len(conns)
            mat = -np.ones((n, n))
            for a in range(n):
                li[conns[a]][LI_CLOCAL] = a
                for b in range(a + 1, n):
                    ca, cb = conns[a], conns[b]
                    if li[ca][LI_FROM] == li[cb][LI_FROM]:
                        continue
                    rng = geo.conflict_range(self.paths[ca], self.paths[cb], CONFLICT_CLEARANCE_M)
                    if rng is not None:
                        mat[a, b], mat[b, a] = rng[1], rng[3]
            node_i.append([len(conf), n])
            conf.extend(mat.ravel().tolist())
        return conf, node_i

    def _pack(self, lf, li, succ, sigs, conf, node_i) -> Net:
        offs, pts = 0, []
        succ_lane, succ_cum, sig_f = [], [], []
        for i, path in enumerate(self.paths):
            li[i][LI_P0], li[i][LI_NP] = offs, len(path)
            offs += len(path)
            pts.append(path)
            li[i][LI_SUCC0], li[i][LI_NSUCC] = len(succ_lane), len(succ[i])
            total = sum(p for _, p in succ[i]) or 1.0
            cum = 0.0
            for lane, p in succ[i]:
                cum += p / total
                succ_lane.append(lane)
                succ_cum.append(cum)
            li[i][LI_SIG0], li[i][LI_NSIG] = len(sig_f), len(sigs[i])
            sig_f.extend(sorted(sigs[i]))
        node_f = [[n.x_m, n.y_m, n.radius_m] for n in self.spec.nodes]
        points = np.hstack((np.concatenate(pts), np.zeros((offs, 1))))  # + the PT_TURN column
        lane_i = np.array(li, dtype=np.int64)
        fill_turns(points, lane_i)
        return Net(points, np.array(lf, dtype=np.float64), lane_i,
                   np.array(succ_lane + [0], dtype=np.int64),
                   np.array(succ_cum + [1.0]), np.array(sig_f + [(0, 0, -1)], dtype=np.float64),
                   np.array(node_f + [[0.0, 0.0, 0.0]]),
                   np.array(node_i + [[0, 0]], dtype=np.int64),
                   np.array(conf + [-1.0]))
