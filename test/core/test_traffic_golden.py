"""Golden run of the traffic core: 40 agents of urban_grid (seed 5) for 10 s beside an ego
driving east at 8 m/s, against stored values.

Like the vehicle models' golden tests (test_vehicle_golden): a change of the agents' physics,
driver law or junction rules shows up here at once, a pure restructuring keeps these to
round-off. The values were computed with the code of this test's commit (the agents' car from
vehicles/medium_car.yaml, the one pedal law of driver_law). If a change of behaviour is
intended, regenerate the values (the script is the test's body) and say so in the commit.
"""
import numpy as np
import pytest

from vehicle_sim.core.traffic.kernels import layout as lay
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.core.traffic.params import TrafficParams, ZoneParams
from vehicle_sim.core.traffic.sim import TrafficSim
from vehicle_sim.paths import config_path

RTOL, ATOL = 1e-10, 1e-9  # round-off only: identical code gives identical bits
COLUMNS = (lay.AF_X, lay.AF_Y, lay.AF_YAW, lay.AF_U, lay.AF_V, lay.AF_R)
# the six agents nearest the ego at the end (x, y [m], yaw [rad], u, v [m/s], r [rad/s]); the
# second runs on the single-track model (within lod_radius_m of the ego), the others kinematic
NEAREST = [
    [98.25, 11.634981504896002, -1.5707963267948968, 0.0, 0.0, 0.0],
    [98.25, 75.9002180422222, -1.5707963267948968, 6.989270753658808, 2.526839185760524e-16,
     1.964356433009815e-16],
    [1.7500000000000009, 24.680098357289353, 1.5707963267948966, 6.455070170197754, 0.0, 0.0],
    [98.25, 91.68477086965004, -1.5707963267948968, 7.752710656255401, 0.0, 0.0],
    [211.6998576609562, -1.75, 0.0, 4.930994589029849, 0.0, 0.0],
    [-1.7499999999999951, 89.61669071367658, -1.5707963267948968, 4.826930129249645, 0.0, 0.0],
]
# sums over every agent of x, y [m], u [m/s] and lane arc length s [m]
SUMS = [6777.259637368337, 9383.42965606281, 195.22930228440933, 1461.039341904811]
LIGHTS = [2, 2, 0, 0, 1, 1, 2, 2, 2, 2]  # the first ten vehicle lights' states at the end


def test_forty_agents_for_ten_seconds_beside_the_ego():
    path = config_path("maps/urban_grid.yaml")
    sim = TrafficSim(Network(load_map(path), str(path)),
                     TrafficParams(initial_agents=40, zone=ZoneParams(enabled=False)), seed=5)
    x = 10.0
    for _ in range(200):
        sim.step(0.05, (x, -1.75, 0.0, 8.0))
        x += 0.4
    af, ai = sim.store.af, sim.store.ai
    active = np.flatnonzero(ai[lay.AI_ACTIVE] != lay.FREE)
    assert len(active) == 40
    nearest = active[np.argsort(np.hypot(af[lay.AF_X, active] - x,
                                         af[lay.AF_Y, active] + 1.75))[:6]]
    assert ai[lay.AI_DYN, nearest].tolist() == [0, 1, 0, 0, 0, 0]
    np.testing.assert_allclose(af[list(COLUMNS)][:, nearest].T, NEAREST, rtol=RTOL, atol=ATOL)
    sums = [af[c, active].sum() for c in (lay.AF_X, lay.AF_Y, lay.AF_U, lay.AF_S)]
    assert sums == pytest.approx(SUMS, rel=RTOL, abs=ATOL)
    assert sim.light_state.tolist()[:10] == LIGHTS
