"""Generator of block-grid city maps in the format of ``mapfile`` (right-hand traffic).

``python -m vehicle_sim.core.traffic.gridgen --out config/maps/urban_grid.yaml`` writes the
default map: 4 x 4 blocks (5 x 5 junctions), two-way streets, a two-lane-per-direction avenue
(overtaking), signalised junctions with signalised crossings, all-way stops, give-way T
junctions, plain junctions (004 visibility rule), zebra crossings, buildings, trees, poles.
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import yaml

URBAN_SPEED_MPS = 13.89  # 50 km/h, the usual urban limit (EU default)
LANE_WIDTH_M = 3.5  # common urban lane width (e.g. AASHTO Green Book 10-12 ft)
TURN_SHARE = {"straight": 0.6, "left": 0.2, "right": 0.2}  # exit percentages (004: configured)


@dataclass(frozen=True)
class GridSpec:
    """Layout of a generated grid (lengths in m)."""

    blocks_x: int = 4
    blocks_y: int = 4
    spacing_m: float = 100.0
    junction_half_m: float = 9.0
    avenue_row: int = 2  # this east-west row gets 2 lanes per direction; -1: none
    light_stop_line_m: float = 3.0  # stop line before the crossing at the lane end
    decorate: bool = True


def _kind(spec: GridSpec, i: int, j: int) -> str:
    """Junction control: lights / all-way stop / plain / give-way T; corners plain."""
    edge_x, edge_y = i in (0, spec.blocks_x), j in (0, spec.blocks_y)
    if edge_x and edge_y:
        return "plain"
    if edge_x or edge_y:
        return "give_way"
    if (i + j) % 2 == 0:
        return "lights"
    return "stop" if j % 2 == 0 else "plain"


def _street(name, road, x0, y0, h, length, nlanes) -> tuple[dict, list, list]:
    fw = [f"{name}_f{k}" for k in range(nlanes)]
    bw = [f"{name}_b{k}" for k in range(nlanes)]
    lanes = [{"id": fw[k], "offset_m": -(k + 0.5) * LANE_WIDTH_M, "width_m": LANE_WIDTH_M,
              "direction": "forward"} for k in range(nlanes)]
    lanes += [{"id": bw[k], "offset_m": (k + 0.5) * LANE_WIDTH_M, "width_m": LANE_WIDTH_M,
               "direction": "backward"} for k in range(nlanes)]
    st = {"id": name, "road": road, "speed_limit_mps": URBAN_SPEED_MPS, "lanes": lanes,
          "reference": {"x_m": x0, "y_m": y0, "heading_rad": h,
                        "pieces": [{"length_m": length, "curvature_1pm": 0.0}]}}
    return st, fw, bw


def generate(spec: GridSpec = GridSpec()) -> dict:
    """The map as a plain mapping ready for ``mapfile.map_from_dict`` or YAML dumping."""
    g, hj = spec.spacing_m, spec.junction_half_m
    streets, arms = [], {}  # arms[(i, j)] = list of (heading_out, lanes_in, lanes_out)
    for j in range(spec.blocks_y + 1):
        n = 2 if j == spec.avenue_row else 1
        for i in range(spec.blocks_x):
            st, fw, bw = _street(f"h{j}_{i}", f"row{j}", i * g + hj, j * g, 0.0, g - 2 * hj, n)
            streets.append(st)
            arms.setdefault((i, j), []).append((0.0, bw, fw))
            arms.setdefault((i + 1, j), []).append((math.pi, fw, bw))
    for i in range(spec.blocks_x + 1):
        for j in range(spec.blocks_y):
            st, fw, bw = _street(f"v{i}_{j}", f"col{i}", i * g, j * g + hj, math.pi / 2,
                                 g - 2 * hj, 1)
            streets.append(st)
            arms.setdefault((i, j), []).append((math.pi / 2, bw, fw))
            arms.setdefault((i, j + 1), []).append((-math.pi / 2, fw, bw))
    nodes, signals = [], []
    for (i, j), arm in sorted(arms.items()):
        nodes.append({"id": f"j{i}_{j}", "x_m": i * g, "y_m": j * g, "radius_m": hj + 3.0,
                      "connections": _connections(arm)})
        signals += _signals(spec, i, j, arm)
    data = {"format_version": 1, "name": f"grid_{spec.blocks_x}x{spec.blocks_y}",
            "streets": streets, "nodes": nodes, "signals": signals}
    jz = spec.blocks_y // 2  # zebra crossings mid-block on the middle row of north-south streets
    data["signals"] += [{"id": f"zebra_v{i}", "kind": "crossing", "distance_from_end_m": 40.0,
                         "lanes": [f"v{i}_{jz}_f0", f"v{i}_{jz}_b0"]}
                         for i in range(spec.blocks_x + 1)]
    data["static_objects"] = _objects(spec) if spec.decorate else []
    return data


def _turn(h_in: float, h_out: float) -> str:
    d = math.atan2(math.sin(h_out - h_in), math.cos(h_out - h_in))
    return "straight" if abs(d) < 0.3 else ("left" if d > 0 else "right")


def _connections(arm: list) -> list[dict]:
    conns = []
    for h_arm_in, lanes_in, _ in arm:
        h_in = h_arm_in + math.pi  # vehicles arriving on this arm drive towards the centre
        options = []
        for h_out, _, lanes_out in arm:
            if abs(math.atan2(math.sin(h_out - h_arm_in), math.cos(h_out - h_arm_in))) < 0.3:
                continue  # no U-turns
            turn = _turn(h_in, h_out)
            n_in, n_out = len(lanes_in), len(lanes_out)
            for k in range(n_in):
                if (turn == "left" and k != 0) or (turn == "right" and k != n_in - 1):
                    continue
                k_out = min(k, n_out - 1) if turn == "straight" else (0 if turn == "left"
                                                                      else n_out - 1)
                options.append((lanes_in[k], lanes_out[k_out], TURN_SHARE[turn]))
        for lane in lanes_in:
            mine = [o for o in options if o[0] == lane]
            total = sum(o[2] for o in mine)
            conns += [{"from_lane": a, "to_lane": b, "probability": round(p / total, 12)}
                      for a, b, p in mine]
        _fix_rounding(conns)
    return conns


def _fix_rounding(conns: list[dict]) -> None:
    by_lane: dict[str, list[dict]] = {}
    for c in conns:
        by_lane.setdefault(c["from_lane"], []).append(c)
    for group in by_lane.values():
        group[-1]["probability"] = 1.0 - sum(c["probability"] for c in group[:-1])


def _signals(spec: GridSpec, i: int, j: int, arm: list) -> list[dict]:
    kind = _kind(spec, i, j)
    entries = [ln for _, lanes_in, _ in arm for ln in lanes_in]
    if kind == "lights":
        out = [{"id": f"tl{i}_{j}_{k}", "kind": "traffic_light", "lanes": list(lanes_in),
                "distance_from_end_m": spec.light_stop_line_m}
               for k, (_, lanes_in, _) in enumerate(arm)]
        return out + [{"id": f"xing{i}_{j}", "kind": "crossing", "lanes": entries,
                       "signalised": True, "distance_from_end_m": 0.0}]
    if kind == "stop":
        return [{"id": f"stop{i}_{j}", "kind": "stop", "lanes": entries}]
    if kind == "give_way":  # the stem of the T gives way
        stem = [ln for h, lanes_in, _ in arm for ln in lanes_in
                if (i in (0, spec.blocks_x)) == (abs(math.sin(h)) < 0.5)]
        return [{"id": f"gw{i}_{j}", "kind": "give_way", "lanes": stem}] if stem else []
    return []


def _objects(spec: GridSpec) -> list[dict]:
    g, inset = spec.spacing_m, 12.0  # building line 12 m from the street axis (sidewalk)
    objs = []
    for i in range(spec.blocks_x):
        for j in range(spec.blocks_y):
            x0, y0, x1, y1 = i * g + inset, j * g + inset, (i + 1) * g - inset, (j + 1) * g - inset
            objs.append({"id": f"bldg{i}_{j}", "kind": "building",
                         "footprint": [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]})
            objs.append({"id": f"tree{i}_{j}", "kind": "tree", "x_m": x0 + 20.0, "y_m": y0 - 5.0,
                         "radius_m": 0.4})
            objs.append({"id": f"pole{i}_{j}", "kind": "pole", "x_m": x0 - 2.0, "y_m": y0 - 2.0,
                         "radius_m": 0.15})
    objs.append({"id": "barrier0", "kind": "barrier", "footprint": [[-15, -15], [-15, 15]]})
    return objs


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--blocks", type=int, nargs=2, default=(4, 4))
    args = ap.parse_args(argv)
    data = generate(GridSpec(blocks_x=args.blocks[0], blocks_y=args.blocks[1]))
    with open(args.out, "w") as f:
        f.write("# Generated by vehicle_sim/core/traffic/gridgen.py; "
                "format: config/maps/README.md\n")
        yaml.safe_dump(data, f, sort_keys=False, default_flow_style=None, width=100)


if __name__ == "__main__":
    main()
