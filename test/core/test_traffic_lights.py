"""Traffic-light regulation of paper 004 sec. 6.4: shared cycle, offsets, pedestrian inverse."""
import math

import numpy as np
import pytest

from vehicle_sim.core.traffic.lights import DARK, GREEN, RED, YELLOW, LightController
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.traffic.params import LightParams, ZoneParams
from vehicle_sim.core.traffic.zone import ControlZone

MAP = "config/maps/urban_grid.yaml"
P = LightParams(cycle_s=60.0, yellow_s=3.0, all_red_s=2.0, offset_speed_mps=10.0)


@pytest.fixture(scope="module")
def net():
    return Network(load_map(MAP), MAP)


def expected(tau: float) -> int:
    """State of a road's light tau seconds into its own slot of C / 2 = 30 s."""
    tau %= P.cycle_s
    slot = P.cycle_s / 2
    if tau < slot - P.yellow_s - P.all_red_s:
        return GREEN
    return YELLOW if tau < slot - P.all_red_s else RED


def test_master_junction_shares_the_cycle_between_its_two_roads(net):
    lc = LightController(net, P)
    m = lc.select_master(-50.0, 98.25, 0.0)  # ego on row 1 heading east, west of x = 100
    assert net.light_node[m] == net.node_names.index("j1_1")
    at = np.flatnonzero(net.light_node == net.light_node[m])
    for t in np.arange(0.0, 120.0, 0.5):
        st = lc.states(t)
        for k in at:
            same = net.light_group[k] == net.light_group[m]
            assert st[k] == expected(t if same else t - P.cycle_s / 2), (t, k)


def test_other_junctions_are_offset_by_distance_over_speed(net):
    lc = LightController(net, P)
    m = lc.select_master(-50.0, 98.25, 0.0)
    far = net.node_names.index("j3_1")  # 200 m east of the master on the same road
    k = next(i for i in np.flatnonzero(net.light_node == far)
             if math.cos(lc.heading[i] - lc.heading[m]) > 0.99)
    delay = np.hypot(*(net.light_xy[k] - net.light_xy[m])) / P.offset_speed_mps
    assert delay == pytest.approx(20.0, abs=0.1)
    for t in np.arange(0.0, 120.0, 0.5):
        assert lc.states(t)[k] == expected(t - delay), t


def test_pedestrian_lights_are_the_inverse_of_vehicle_lights(net):
    lc = LightController(net, P)
    for t in (1.0, 26.0, 29.0, 40.0):
        veh = lc.states(t)
        ped = lc.pedestrian_states(veh)
        own = veh[lc.ped_vehicle]
        assert np.all((ped == GREEN) == (own == RED))
        assert np.all(ped[own != RED] == RED)


def test_only_lights_inside_the_control_zone_are_simulated(net):
    zone = ControlZone(net, ZoneParams(ahead_m=150.0, behind_m=40.0, half_width_m=60.0))
    lc = LightController(net, P)
    ego = (20.0, 98.25, 0.0)
    active = zone.active_nodes(ego)
    st = lc.states(5.0, active)
    inside = active[net.light_node]
    assert inside.any() and (~inside).any()
    assert np.all(st[~inside] == DARK) and np.all(st[inside] != DARK)


def test_the_published_light_positions_are_the_stop_lines(net):
    """traffic/lights gives each vehicle light at its stop line (TrafficLight.msg), the grid's
    3 m before the lane's end (gridgen light_stop_line_m), on the lane."""
    stop = net.light_stop_xy()
    assert stop.shape == net.light_xy.shape and len(stop) > 0
    for k, lane in enumerate(net.light_lane):
        back = net.point(lane, net.lane_length(lane) - 3.0)
        assert stop[k] == pytest.approx(back[:2], abs=1e-9)
        assert np.hypot(*(net.light_xy[k] - stop[k])) == pytest.approx(3.0, abs=0.05)
