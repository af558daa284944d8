"""SUMO side by side with the traffic core: cost per agent-step on the same grid city (issue 14).

Run: ``python bench/bench_sumo.py [N ...] [--steps K] [--reps R]`` in an environment with
``pip install eclipse-sumo libsumo`` (without them the bench says so and exits 0). For each agent
count N (default 5000) both simulators get the city of ``bench_traffic.py``: B x B blocks of
100 m, B = ceil(sqrt(N / 12.5)), N agents placed before timing, 20 Hz steps. SUMO runs through
libsumo in this process (no TraCI socket). Each repetition times K steps of SUMO, then K steps
of ``TrafficSim``, back to back, so both see the same machine load; the cost is the step time
over the agents running in that step (counted every step), min and median over repetitions.
The last line is ``agent-step cost ratio sumo/vehicle_sim: X`` (medians; issue 14 asks >= 2).

The same city: ``netgenerate --grid`` builds (B+1) x (B+1) junctions 100 m apart with one
3.5 m lane per direction at 13.89 m/s, written as plain XML; the bench then gives the avenue
row (``gridgen``'s ``avenue_row`` = B // 2) two lanes per direction and each junction the
control ``gridgen`` gives it, and ``netconvert`` builds the net (no U-turns, as ours):
  - traffic lights -> ``traffic_light``, static, 60 s cycle, 25 s green, 3 s yellow, 2 s
    all-red per group: our ``LightParams`` defaults (ours add green-wave offsets; SUMO's are 0);
  - all-way stop -> ``allway_stop``; give-way T at the border -> ``priority`` (the stem yields);
  - plain junctions (ours: 004's visibility / arrival-order rule) -> ``right_before_left``;
    the four corners -> ``priority``.
Where they differ: SUMO computes its junction shapes (lanes 81.5-89 m between junctions, ours
82 m: 9 m junction half-width) and moves vehicles on internal lanes through its junction model
(link foe matrices); ours runs 004's junction rules. Our map has crossing signals (no
pedestrians in this bench); SUMO's net has none.
The same load: three vehicle types with our driver profiles' IDM values (20 % aggressive,
50 % moderate, 30 % passive: a, b, T, s0, desired speed factor; length 4.298 m), SUMO's
``IDM`` car-following (``--model Krauss`` for SUMO's default) and LC2013 lane changing vs our
IDM + 004 lateral driver + MOBIL, kinematic / single-track vehicle. Our agents draw an exit at
each junction (60 % straight, 20 % left, 20 % right); SUMO's vehicles follow random walks with
the same shares, long enough that none arrives during the run. All vehicles depart at t = 0
(random free position, ``departSpeed="max"``); SUMO steps until every one is in the net, then
both warm up to the same simulated time (ours places its agents at once, so it runs SUMO's
insertion steps too). Ours also has the ``bench_traffic`` ego on the avenue (agents within
80 m of it use the single-track model), which only adds to our cost.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a source checkout

from vehicle_sim.core.traffic import gridgen
from vehicle_sim.core.traffic.mapfile import map_from_dict
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.traffic.params import TrafficParams, ZoneParams
from vehicle_sim.core.traffic.sim import TrafficSim
from vehicle_sim.core.vehicle.params import load_vehicle
from vehicle_sim.paths import config_path

DT = 0.05  # 20 Hz
AGENTS_PER_BLOCK = 12.5  # as bench_traffic
ROUTE_EDGES = 60  # >= 5 km: nobody arrives in a run of a few hundred 20 Hz steps
TURN_SHARE = {"s": gridgen.TURN_SHARE["straight"], "l": gridgen.TURN_SHARE["left"],
              "L": gridgen.TURN_SHARE["left"], "r": gridgen.TURN_SHARE["right"],
              "R": gridgen.TURN_SHARE["right"]}
SUMO_TYPE = {"Krauss": "Krauss", "IDM": "IDM"}
SUMO_JUNCTION = {"lights": "traffic_light", "stop": "allway_stop", "give_way": "priority",
                 "plain": "right_before_left"}
INSTALL_HINT = "SUMO not installed: pip install eclipse-sumo libsumo  (bench skipped)"


def blocks_for(n: int) -> int:
    return max(2, math.ceil(math.sqrt(n / AGENTS_PER_BLOCK)))


def build_ours(n: int, seed: int) -> tuple[TrafficSim, float]:
    """Our city and agents as bench_traffic builds them; (sim, ego y on the avenue [m])."""
    b = blocks_for(n)
    spec = gridgen.GridSpec(blocks_x=b, blocks_y=b, avenue_row=b // 2, decorate=False)
    net = Network(map_from_dict(gridgen.generate(spec)))
    params = TrafficParams(capacity=n + 64, initial_agents=n, zone=ZoneParams(enabled=False))
    return TrafficSim(net, params, seed=seed), (b // 2) * spec.spacing_m - 1.75


def _sumo_node_type(spec: gridgen.GridSpec, i: int, j: int) -> str:
    if i in (0, spec.blocks_x) and j in (0, spec.blocks_y):
        return "priority"  # a corner: one way in, one way out
    return SUMO_JUNCTION[gridgen._kind(spec, i, j)]  # the generator's own rule: both agree


def build_sumo_net(n: int, work: Path, bin_dir: Path) -> Path:
    """netgenerate --grid, then gridgen's lanes and junction control, then netconvert."""
    b = blocks_for(n)
    spec = gridgen.GridSpec(blocks_x=b, blocks_y=b, avenue_row=b // 2)
    lp = gridgen.LANE_WIDTH_M
    subprocess.run([str(bin_dir / "netgenerate"), "--grid", "--grid.number", str(b + 1),
                    "--grid.length", str(spec.spacing_m), "--alphanumerical-ids", "false",
                    "-L", "1", "-S", str(gridgen.URBAN_SPEED_MPS), "--default.lanewidth", str(lp),
                    "--plain-output-prefix", str(work / "plain"), "-o", str(work / "gen.net.xml"),
                    "--no-turnarounds"], check=True, capture_output=True)
    nodes = ET.parse(work / "plain.nod.xml")
    for node in nodes.getroot().iter("node"):
        i, j = (int(v) for v in node.get("id").split("/"))
        node.set("type", _sumo_node_type(spec, i, j))
    nodes.write(work / "city.nod.xml")
    edges = ET.parse(work / "plain.edg.xml")
    for edge in edges.getroot().iter("edge"):
        (_, j0), (_, j1) = (map(int, edge.get(k).split("/")) for k in ("from", "to"))
        if j0 == j1 == spec.avenue_row:
            edge.set("numLanes", "2")
    edges.write(work / "city.edg.xml")
    light = TrafficParams().lights
    net = work / "city.net.xml"
    subprocess.run([str(bin_dir / "netconvert"), "-n", str(work / "city.nod.xml"),
                    "-e", str(work / "city.edg.xml"), "--no-turnarounds",
                    "--tls.cycle.time", str(round(light.cycle_s)),
                    "--tls.yellow.time", str(round(light.yellow_s)),
                    "--tls.allred.time", str(round(light.all_red_s)),
                    "--no-warnings", "-o", str(net)], check=True, capture_output=True)
    return net


def write_load(n: int, net_file: Path, work: Path, model: str, seed: int) -> Path:
    """Vehicle types from our driver profiles and n random-walk routes (our exit shares)."""
    import sumolib

    p = TrafficParams()
    car = load_vehicle(config_path(p.vehicle_file)).chassis  # the agents' car
    profiles = [("aggressive", p.aggressive, p.share_aggressive),
                ("moderate", p.moderate, 1.0 - p.share_aggressive - p.share_passive),
                ("passive", p.passive, p.share_passive)]
    rng = np.random.default_rng(seed)
    net = sumolib.net.readNet(str(net_file))
    edges = [e for e in net.getEdges() if not e.getID().startswith(":")]
    lanes = np.array([e.getLaneNumber() for e in edges], dtype=float)
    lines = ["<routes>"]
    for name, d, _ in profiles:
        lines.append(f'  <vType id="{name}" carFollowModel="{SUMO_TYPE[model]}" '
                     f'accel="{d.accel_mean_mps2}" decel="{d.comfort_decel_mps2}" '
                     f'tau="{d.time_headway_s}" minGap="{d.min_gap_m}" '
                     f'length="{car.length_m}" width="{car.width_m}" '
                     f'speedFactor="{d.speed_factor}" speedDev="{p.spread / math.sqrt(3):.4f}"/>')
    kinds = rng.choice(len(profiles), size=n, p=[s for _, _, s in profiles])
    starts = rng.choice(len(edges), size=n, p=lanes / lanes.sum())
    for k in range(n):
        route = _random_walk(edges[starts[k]], rng)
        lines.append(f'  <vehicle id="v{k}" type="{profiles[kinds[k]][0]}" depart="0" '
                     f'departPos="random_free" departLane="free" departSpeed="max">'
                     f'<route edges="{" ".join(route)}"/></vehicle>')
    lines.append("</routes>")
    out = work / "city.rou.xml"
    out.write_text("\n".join(lines) + "\n")
    return out


def _random_walk(edge, rng: np.random.Generator) -> list[str]:
    route = [edge.getID()]
    for _ in range(ROUTE_EDGES - 1):
        options = [(nxt, TURN_SHARE.get(conns[0].getDirection(), 0.0))
                   for nxt, conns in edge.getOutgoing().items()]
        options = [(e, w) for e, w in options if w > 0.0]
        w = np.array([w for _, w in options])
        edge = options[rng.choice(len(options), p=w / w.sum())][0]
        route.append(edge.getID())
    return route


def time_steps(step, count, steps: int) -> tuple[float, float]:
    """(seconds stepping, agent-steps) over `steps` calls of step(k); count() after each."""
    total, agent_steps = 0.0, 0
    for k in range(steps):
        t0 = time.perf_counter()
        step(k)
        total += time.perf_counter() - t0
        agent_steps += count()
    return total, agent_steps


def run(n: int, args: argparse.Namespace, bin_dir: Path) -> tuple[float, float]:
    """Both simulators at n agents; prints per repetition; (median us sumo, median us ours)."""
    import libsumo

    with tempfile.TemporaryDirectory(prefix="bench_sumo_") as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        net = build_sumo_net(n, work, bin_dir)
        routes = write_load(n, net, work, args.model, args.seed)
        libsumo.start(["sumo", "-n", str(net), "-r", str(routes), "--step-length", str(DT),
                       "--seed", str(args.seed), "--no-step-log", "--no-warnings",
                       "--duration-log.disable", "--time-to-teleport", "-1"])
        inserting = 0
        while inserting < args.insert_steps and (
                inserting == 0 or libsumo.simulation.getMinExpectedNumber()
                > libsumo.vehicle.getIDCount()):
            libsumo.simulationStep()
            inserting += 1
        sumo_build = time.perf_counter() - t0
        t0 = time.perf_counter()
        ours, y = build_ours(n, args.seed)
        ours_build = time.perf_counter() - t0
        print(f"\nN={n}: {blocks_for(n)} x {blocks_for(n)} blocks; build: SUMO {sumo_build:.1f} s "
              f"(net, routes, insertion at {libsumo.simulation.getTime():.2f} s simulated), "
              f"ours {ours_build:.1f} s; pending in SUMO: "
              f"{libsumo.simulation.getMinExpectedNumber() - libsumo.vehicle.getIDCount()}")
        ego_t = [0.0]

        def step_ours(_k: int) -> None:
            ours.step(DT, (50.0 + 8.0 * ego_t[0], y, 0.0, 8.0))
            ego_t[0] += DT

        def step_sumo(_k: int) -> None:
            libsumo.simulationStep()

        n_sumo, n_ours = libsumo.vehicle.getIDCount, lambda: ours.n_agents

        def speeds() -> str:  # mean speeds [m/s]: both cities are in motion, not jammed
            v = [libsumo.vehicle.getSpeed(i) for i in libsumo.vehicle.getIDList()]
            return f"{np.mean(v):.1f}/{np.mean(ours.agents()['speed']):.1f}"

        time_steps(step_sumo, n_sumo, args.warmup)
        time_steps(step_ours, n_ours, inserting + args.warmup)  # same simulated time as SUMO
        print(f"{'rep':>3} {'load 1m':>7} {'SUMO agents':>11} {'ms/step':>8} {'us/agent':>9} "
              f"{'ours agents':>11} {'ms/step':>8} {'us/agent':>9} {'ratio':>6} {'v m/s S/o':>10}")
        us_s, us_o = [], []
        for rep in range(args.reps):
            load = os.getloadavg()[0]
            ts, as_ = time_steps(step_sumo, n_sumo, args.steps)
            to, ao = time_steps(step_ours, n_ours, args.steps)
            us_s.append(1e6 * ts / as_)
            us_o.append(1e6 * to / ao)
            print(f"{rep:>3} {load:>7.2f} {as_ / args.steps:>11.0f} {1e3 * ts / args.steps:>8.2f} "
                  f"{us_s[-1]:>9.3f} {ao / args.steps:>11.0f} {1e3 * to / args.steps:>8.2f} "
                  f"{us_o[-1]:>9.3f} {us_s[-1] / us_o[-1]:>6.2f} {speeds():>10}")
        libsumo.close()
    ms, mo = statistics.median(us_s), statistics.median(us_o)
    print(f"N={n}: us per agent-step SUMO ({args.model}) min {min(us_s):.3f} median {ms:.3f}; "
          f"vehicle_sim min {min(us_o):.3f} median {mo:.3f}; ratio of medians {ms / mo:.2f}, "
          f"of mins {min(us_s) / min(us_o):.2f}; load average {os.getloadavg()}")
    return ms, mo


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("counts", type=int, nargs="*", default=[5000], help="agent counts")
    ap.add_argument("--steps", type=int, default=200, help="timed steps per repetition")
    ap.add_argument("--reps", type=int, default=5, help="repetitions (min / median)")
    ap.add_argument("--warmup", type=int, default=200,
                    help="untimed steps after insertion (ours: as many more as SUMO inserted)")
    ap.add_argument("--insert-steps", type=int, default=1200,
                    help="at most this many SUMO steps to insert every vehicle")
    ap.add_argument("--model", choices=sorted(SUMO_TYPE), default="IDM",
                    help="SUMO car-following model (IDM: ours; Krauss: SUMO's default)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    bad = [c for c in args.counts if not 1 <= c <= 200_000]
    if bad or min(args.steps, args.reps, args.warmup + 1, args.insert_steps) < 1:
        print(f"bench_sumo: counts must be in [1, 200000] and steps, reps >= 1 (got {bad})")
        return 2
    try:
        import libsumo  # noqa: F401
        import sumo
        import sumolib  # noqa: F401
    except ImportError:
        print(INSTALL_HINT)
        return 0
    os.environ.setdefault("SUMO_HOME", sumo.SUMO_HOME)
    bin_dir = Path(sumo.SUMO_HOME) / "bin"
    print(f"load average {os.getloadavg()}; step {DT} s; {args.reps} x {args.steps} timed steps")
    ratio = 0.0
    for n in args.counts:
        ms, mo = run(n, args, bin_dir)
        ratio = ms / mo
    print(f"agent-step cost ratio sumo/vehicle_sim: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
