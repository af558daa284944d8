"""Whole-system scenarios: 10 minutes without collision or deadlock, control-zone density,
hand-over between sector owners (paper 003), determinism and input checks."""
import dataclasses

import numpy as np
import pytest

from vehicle_sim.core.traffic import agents as ag
from vehicle_sim.core.traffic.collisions import collisions
from vehicle_sim.core.traffic.kernels import layout as lay
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.traffic.params import TrafficParams, ZoneParams
from vehicle_sim.core.traffic.sim import TrafficSim, _eval
from vehicle_sim.core.vehicle import params as P

MAP = "config/maps/urban_grid.yaml"
DT = 0.05


@pytest.fixture(scope="module")
def network():
    return Network(load_map(MAP), MAP)


def city(network, n=200, seed=1, **zone):
    params = TrafficParams(initial_agents=n, zone=ZoneParams(enabled=False, **zone))
    return TrafficSim(network, params, seed=seed)


def test_ten_minutes_whole_city_without_collision_or_deadlock(network):
    sim = city(network, 200)
    assert sim.n_agents == 200
    hops0 = sim.store.ai[lay.AI_HOPS].copy()
    worst_wait, overlaps = 0.0, 0
    for k in range(int(600 / DT)):
        sim.step(DT)
        if k % 5 == 0:
            overlaps += len(collisions(sim.agents()))
            worst_wait = max(worst_wait, sim.store.af[lay.AF_WAIT_T].max())
    moved = sim.store.ai[lay.AI_HOPS] - hops0
    assert overlaps == 0
    assert worst_wait < 150.0  # longest standstill: a few light cycles / give-way queues
    assert np.mean(moved[sim.store.ai[lay.AI_ACTIVE] == lay.OWNED] >= 10) > 0.95


def test_agents_on_the_single_track_model_keep_to_their_junction_turns(network):
    """Every agent on the single-track model (the level-of-detail radius covers the city), two
    simulated minutes: no overlaps, and in junction connectors no agent more than 1.2 m from its
    lane centre. With 004's look-ahead alone (8 m at 4 m/s) turning agents cut 10 m-radius turns
    by 2 m and clipped agents turning the other way round the same corner."""
    params = TrafficParams(initial_agents=200, zone=ZoneParams(enabled=False), lod_radius_m=1e5)
    sim = TrafficSim(network, params, seed=1)
    far_ego = (5000.0, 5000.0, 0.0, 0.0)  # only sets the level-of-detail centre
    overlaps, worst, dynamic = 0, 0.0, set()
    for k in range(int(120 / DT)):
        sim.step(DT, far_ego)
        if k % 4:
            continue
        a = sim.agents()
        overlaps += len(collisions(a))
        turning = np.flatnonzero((a["dynamic"] > 0) & (a["lane"] >= network.n_street_lanes))
        dynamic.update(a["uid"][a["dynamic"] > 0].tolist())
        for j in turning:
            cx, cy, _, _ = _eval(network.net, int(a["lane"][j]), float(a["s"][j]))
            worst = max(worst, float(np.hypot(a["x"][j] - cx, a["y"][j] - cy)))
    assert len(dynamic) > 150, "most agents ran the single-track model"
    assert overlaps == 0
    assert worst < 1.2, f"a turning agent was {worst:.2f} m off its lane"


def test_zone_density_is_kept_while_static_and_moving(network):
    sim = TrafficSim(network, TrafficParams(), seed=3)
    zp, ratios, seen = sim.p.zone, [], set()
    for k in range(int(60 / DT)):
        x = 200.0 if k < 600 else 100.0 + 8.0 * (k - 600) * DT  # then drive along row 2
        ego = (x, 98.25 if k < 600 else 198.25, 0.0, 0.0 if k < 600 else 8.0)
        sim.step(DT, ego)
        a = sim.agents()
        assert sim.zone.inside(ego[:3], a["x"], a["y"]).all()
        assert len(collisions(a)) == 0  # spawning never overlaps existing agents
        _, _, length = sim.zone.scan(ego[:3])
        ratios.append(sim.n_agents / (zp.density_per_km * length / 1000.0))
        seen.update(a["uid"].tolist())
        if k == 599:
            static = np.array(ratios[100:])
            assert static.mean() == pytest.approx(1.0, abs=0.05)
            assert static.min() > 0.9
            uids_static = set(seen)
    moving = np.array(ratios[600:])
    assert moving.mean() > 0.8 and moving.max() < 1.1
    assert len(seen - uids_static) > 10  # agents were created ...
    assert len(uids_static - set(sim.agents()["uid"].tolist())) > 10  # ... and deleted


def test_hand_over_round_trip_preserves_agent_state(network):
    params = TrafficParams(zone=ZoneParams(enabled=False, sector_size_m=200.0))
    probe = TrafficSim(network, params, seed=0)
    west = [s for s in range(probe.sectors.nx * probe.sectors.ny) if s % probe.sectors.nx == 0]
    east = [s for s in range(probe.sectors.nx * probe.sectors.ny) if s % probe.sectors.nx != 0]
    a = TrafficSim(network, params, seed=5, owned_sectors=west, owner_id=1)
    b = TrafficSim(network, params, seed=5, owned_sectors=east, owner_id=2)
    lane = network.lane_index("h2_0_f0")  # eastbound on the avenue towards x = 200
    i = a.spawn(lane, 60.0, speed=10.0)
    uid = a.store.ai[lay.AI_UID, i]
    records = np.zeros((0, ag.N_REC))
    for _ in range(int(40 / DT)):
        a.step(DT)
        records = a.take_departures()
        if len(records):
            break
    assert len(records) == 1 and records[0, lay.N_AF + lay.AI_UID] == uid
    assert records.nbytes == ag.N_REC * 8 and 200 <= records.nbytes <= 1000
    assert a.n_agents == 0
    slot = b.accept(records)
    back = ag.pack(b.store, slot)
    assert np.array_equal(back, records)  # every float and int field identical
    b.step(DT)
    assert b.store.af[lay.AF_X, slot[0]] > records[0, lay.AF_X]  # and it drives on in b


def test_ghosts_are_read_only_obstacles(network):
    params = TrafficParams(zone=ZoneParams(enabled=False, sector_size_m=200.0))
    a = TrafficSim(network, params, seed=5, owned_sectors=[0], owner_id=1)
    b = TrafficSim(network, params, seed=5, owned_sectors=[1], owner_id=2)
    a.spawn(network.lane_index("h0_1_f0"), 70.0, speed=10.0)  # x = 179 m, 21 m from sector 1
    b.set_ghosts(a.export_ghosts(margin_m=50.0))
    ghosts = b.agents(include_ghosts=True)
    assert ghosts["ghost"].sum() == 1 and b.n_agents == 0
    x0 = ghosts["x"][0]
    for _ in range(10):
        b.step(DT)
    assert b.agents(include_ghosts=True)["x"][0] == x0
    b.set_ghosts(np.zeros((0, ag.N_REC)))
    assert len(b.agents(include_ghosts=True)["x"]) == 0


def test_same_seed_same_traffic(network):
    s1, s2 = city(network, 50, seed=9), city(network, 50, seed=9)
    for _ in range(100):
        s1.step(DT)
        s2.step(DT)
    a1, a2 = s1.agents(), s2.agents()
    assert np.array_equal(a1["x"], a2["x"]) and np.array_equal(a1["profile"], a2["profile"])


@pytest.mark.parametrize("dt, ego", [(float("nan"), None), (0.0, None),
                                     (0.05, (0, float("nan"), 0, 0))])
def test_bad_step_inputs_are_refused(network, dt, ego):
    with pytest.raises(ValueError):
        city(network, 0).step(dt, ego)


def test_records_with_wrong_width_are_refused(network):
    with pytest.raises(ValueError, match="columns"):
        city(network, 0).accept(np.zeros((1, 5)))


@pytest.mark.parametrize("name", ["medium_car", "small_car", "truck"])
def test_the_agents_car_is_its_vehicle_file(network, name):
    """Mass, yaw inertia, axles, axle cornering stiffnesses, mu, power, steering limit, drive
    force limit and box of every agent come from TrafficParams.vehicle_file, read as the ego's
    models read it."""
    from vehicle_sim.core.config import ConfigError
    from vehicle_sim.paths import config_path
    v = P.load_vehicle(config_path(f"vehicles/{name}.yaml"))
    params = TrafficParams(initial_agents=5, vehicle_file=f"vehicles/{name}.yaml",
                           zone=ZoneParams(enabled=False))
    sim = TrafficSim(network, params, seed=1)
    ego = P.pack(v)  # the planar models' packing of the same file
    agent_columns = [lay.VP_M, lay.VP_IZ, lay.VP_A, lay.VP_B, lay.VP_CF, lay.VP_CR, lay.VP_MU,
                     lay.VP_P, lay.VP_SMAX, lay.VP_FMAX]
    ego_columns = [P.P_MASS, P.P_IZ, P.P_A, P.P_B, P.P_CAF, P.P_CAR, P.P_MU, P.P_PMAX,
                   P.P_STEER_MAX, P.P_FMAX]
    assert sim.vp[agent_columns].tolist() == ego[ego_columns].tolist()
    active = sim.store.ai[lay.AI_ACTIVE] != lay.FREE
    assert set(sim.store.af[lay.AF_LENGTH, active]) == {v.chassis.length_m}
    assert set(sim.store.af[lay.AF_WIDTH, active]) == {v.chassis.width_m}
    with pytest.raises(ConfigError, match="nowhere.yaml"):
        TrafficSim(network, TrafficParams(vehicle_file="vehicles/nowhere.yaml"), seed=1)


def test_sector_size_smaller_than_zone_diagonal_is_refused():
    with pytest.raises(ValueError, match="at most 4"):
        dataclasses.replace(ZoneParams(), sector_size_m=100.0)


def one_try_at_a_time(network, n, rng, mask):
    """zone.random_positions as it was written first: a try after the other, with the masks
    of one point each (the reference the batched draw must equal, stream included)."""
    from vehicle_sim.core.traffic import zone as zn
    lanes, length, cdf = zn._spawn_lanes(network)
    taken, out = {}, []
    for _ in range(20 * n):
        if len(out) >= n:
            break
        k = int(cdf.searchsorted(rng.random(), side="right"))
        ln = int(lanes[k])
        s = float(rng.uniform(zn.SPAWN_CLEAR_M / 2, length[k] - zn.SPAWN_CLEAR_M / 2))
        if mask is not None and not mask(np.array([ln]), np.array([s]))[0]:
            continue
        if all(abs(s - o) >= zn.SPAWN_CLEAR_M for o in taken.get(ln, [])):
            taken.setdefault(ln, []).append(s)
            out.append((ln, s))
    return out


@pytest.mark.parametrize("n, masked", [(8, True), (8, False), (400, True), (1, False), (0, True)])
def test_random_positions_drawn_at_once_equal_one_try_at_a_time(network, n, masked):
    """The same positions to the bit, and the generator left at the same place: the run after
    it draws the same numbers (the 20 n tries are drawn at once, the unused ones given back)."""
    from vehicle_sim.core.traffic import zone as zn
    mask = (lambda lanes, s: (s > 60.0) & (lanes % 3 != 0)) if masked else None
    batched, single = np.random.default_rng(7), np.random.default_rng(7)
    got = zn.random_positions(network, n, batched, mask)
    want = one_try_at_a_time(network, n, single, mask)
    assert got == want
    assert batched.random() == single.random()
    if n == 8:
        assert len(got) == 8  # the break after the n-th position was taken
    if n == 400 and masked:
        assert 0 < len(got) < 400  # ... and the case where every try was used


def test_an_agent_drives_with_at_most_its_vehicle_files_drive_force(tmp_path):
    """The single-track agent's drive force is min(F_max, P / u) of its vehicle file (one law,
    core.vehicle.drive_law): a car whose F_max allows 0.2 m/s^2 speeds up no faster, whatever
    its driver asks for (the kernel left F_max out before)."""
    from test.core.test_traffic_instructor import road, sim_on
    from vehicle_sim.core.traffic import agents as ag
    from vehicle_sim.core.vehicle.drive_law import full_drive_force_n
    from vehicle_sim.paths import config_path
    weak = tmp_path / "weak_car.yaml"
    weak.write_text(config_path("vehicles/medium_car.yaml").read_text().replace(
        "max_drive_force_n: 14097.7", "max_drive_force_n: 245.2"))  # 0.2 m/s^2 for 1226 kg

    def speed_gain(vehicle_file: str) -> float:
        sim = sim_on(road(), vehicle_file=vehicle_file, lod_radius_m=1e4)
        slot = sim.spawn(0, 100.0, speed=5.0, profile=ag.AGGRESSIVE)
        for _ in range(40):  # 2 s, the ego far behind: every agent on the single-track model
            sim.step(0.05, (0.0, 0.0, 0.0, 0.0))
        assert sim.store.ai[lay.AI_DYN, slot] != lay.DYN_KINEMATIC
        return float(sim.store.af[lay.AF_U, slot]) - 5.0
    assert speed_gain(str(weak)) <= 2.0 * 245.2 / 1225.887 + 1e-6 < 0.5 < speed_gain(
        "vehicles/medium_car.yaml")
    assert full_drive_force_n(14097.7, 67034.6, 0.0) == 14097.7  # F_max at rest
    assert full_drive_force_n(14097.7, 67034.6, 10.0) == pytest.approx(6703.46)  # P / u
