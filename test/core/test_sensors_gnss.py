"""GNSS model: geodesy, lever arm, latency, outage and urban zones, statistics, faults."""
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from vehicle_sim.core.config import ConfigError, build
from vehicle_sim.core.sensors import (STATUS_FIX, STATUS_NO_FIX, GnssModel, GnssParams, GnssZones,
                                      Polygon, TrueState)
from vehicle_sim.core.sensors.geodesy import LocalFrame
from vehicle_sim.core.sensors.params import AxisError, GeoOrigin, UrbanParams

CONSUMER = Path(__file__).resolve().parents[2] / "config" / "sensors" / "gnss_consumer.yaml"
ORIGIN = GeoOrigin(latitude_deg=48.8584, longitude_deg=2.2945, altitude_m=35.0)
# WGS-84 defining constants (NIMA TR8350.2): semi-major axis and flattening
WGS84_A_M, WGS84_F = 6378137.0, 1 / 298.257223563


def chi2_bounds(n: int, p: float = 1e-4) -> tuple[float, float]:
    """Two-sided bounds on sample std / sigma for n independent normal samples (prob. 1 - p)."""
    lo, hi = stats.chi2.ppf([p / 2, 1 - p / 2], n - 1)
    return math.sqrt(lo / (n - 1)), math.sqrt(hi / (n - 1))


def at(x=0.0, y=0.0, z=0.0, yaw=0.0, **kw) -> TrueState:
    s = TrueState(position_m=np.array([x, y, z]), rpy_rad=np.array([0.0, 0.0, yaw]))
    for k, v in kw.items():
        setattr(s, k, np.asarray(v, dtype=float))
    return s


def fixes(model: GnssModel, states, rate_hz: float = 10.0, t0_s: float = 0.0):
    out = []
    for i, s in enumerate(states):
        out += model.update(t0_s + i / rate_hz, s)
    return out


def test_enu_geodetic_round_trip_below_1_mm_over_10_km():
    frame = LocalFrame(ORIGIN)
    grid = np.linspace(-10_000.0, 10_000.0, 9)
    for e in grid:
        for n in grid:
            for u in (-50.0, 0.0, 300.0):
                lat, lon, alt = frame.to_geodetic(np.array([e, n, u]))
                assert np.linalg.norm(frame.to_enu(lat, lon, alt) - [e, n, u]) < 1e-3


def test_north_offset_matches_meridian_radius_of_curvature():
    # M = a (1 - e^2) / (1 - e^2 sin^2 phi)^1.5; 100 m north at height h changes latitude by
    # 100 / (M + h) rad (to ~1e-7 relative)
    e2 = WGS84_F * (2 - WGS84_F)
    phi = math.radians(ORIGIN.latitude_deg)
    m = WGS84_A_M * (1 - e2) / (1 - e2 * math.sin(phi) ** 2) ** 1.5
    lat, lon, alt = LocalFrame(ORIGIN).to_geodetic(np.array([0.0, 100.0, 0.0]))
    assert lat - ORIGIN.latitude_deg == pytest.approx(math.degrees(100.0 / (m + ORIGIN.altitude_m)),
                                                        abs=1e-10)
    assert lon == pytest.approx(ORIGIN.longitude_deg, abs=1e-12)
    assert alt == pytest.approx(ORIGIN.altitude_m, abs=1e-3)  # 100 m chord drops ~0.8 mm


def test_antenna_lever_arm_position_and_velocity():
    g = GnssModel(GnssParams(origin=ORIGIN, antenna_lever_arm_m=(1.0, 0.0, 1.5),
                             velocity_enabled=True), 0)
    s = at(10.0, 20.0, 0.0, yaw=math.pi / 2, velocity_mps=[5.0, 0, 0],
           angular_velocity_radps=[0, 0, 0.4])
    (fix,) = g.update(0.0, s)
    # yaw 90 deg: base_link x points north; antenna 1 m ahead = 1 m north
    assert fix.position_enu_m == pytest.approx([10.0, 21.0, 1.5], abs=1e-9)
    assert LocalFrame(ORIGIN).to_enu(fix.latitude_deg, fix.longitude_deg, fix.altitude_m) == \
        pytest.approx([10.0, 21.0, 1.5], abs=1e-6)
    # v + w x r = (5, 0.4, 0) in base_link -> ENU (-0.4, 5, 0)
    assert fix.velocity_enu_mps == pytest.approx([-0.4, 5.0, 0.0], abs=1e-12)


def test_rate_and_latency():
    g = GnssModel(GnssParams(rate_hz=10.0, latency_s=0.25), 0)
    out = []
    for k in range(101):  # physics at 100 Hz for 1 s, vehicle moving east at 1 m/s
        t = k / 100
        for f in g.update(t, at(x=t)):
            out.append((t, f))
    assert len(out) == 8  # stamps 0.0 .. 0.7 released by t = 1.0
    for t, f in out:
        assert f.release_s == pytest.approx(f.stamp_s + 0.25) and t == pytest.approx(f.release_s)
        assert f.position_enu_m[0] == pytest.approx(f.stamp_s, abs=1e-9)  # state at the stamp


SQUARE = Polygon(((0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0)))
ELL = Polygon(((0.0, 0.0), (10.0, 0.0), (10.0, 4.0), (4.0, 4.0), (4.0, 10.0), (0.0, 10.0)))


@pytest.mark.parametrize("x, y, inside", [
    (5.0, 9.999, True), (5.0, 10.001, False), (9.999, 2.0, True), (10.001, 2.0, False),
    (0.001, 0.001, True), (-0.001, 5.0, False)])
def test_outage_zone_gives_no_fix_exactly_inside(x, y, inside):
    g = GnssModel(GnssParams(), 0, zones=GnssZones(outages=(SQUARE,)))
    (fix,) = g.update(0.0, at(x, y))
    assert fix.status == (STATUS_NO_FIX if inside else STATUS_FIX)
    assert math.isnan(fix.latitude_deg) == inside and fix.covariance_known != inside


@pytest.mark.parametrize("x, y, inside", [(2.0, 8.0, True), (4.001, 4.001, False),
                                          (3.999, 4.001, True), (8.0, 3.999, True)])
def test_concave_outage_polygon(x, y, inside):
    assert GnssZones(outages=(ELL,)).in_outage(x, y) == inside


def test_outage_mode_no_output_releases_nothing():
    g = GnssModel(GnssParams(outage_mode="no_output"), 0, zones=GnssZones(outages=(SQUARE,)))
    assert g.update(0.0, at(5.0, 5.0)) == []
    assert len(g.update(0.1, at(15.0, 5.0))) == 1


def test_white_noise_std_and_covariance():
    n = 3000
    p = GnssParams(horizontal=AxisError(white_sigma_m=0.4), vertical=AxisError(white_sigma_m=0.9))
    out = fixes(GnssModel(p, 21), [at()] * n)
    err = np.array([f.position_enu_m for f in out])
    lo, hi = chi2_bounds(2 * n)
    assert lo < np.std(err[:, :2]) / 0.4 < hi
    lo, hi = chi2_bounds(n)
    assert lo < np.std(err[:, 2]) / 0.9 < hi
    assert out[0].position_cov_enu_m2 == pytest.approx(np.diag([0.16, 0.16, 0.81]))


def test_urban_degradation_near_buildings():
    house = Polygon(((20.0, 0.0), (30.0, 0.0), (30.0, 10.0), (20.0, 10.0)))
    p = GnssParams(horizontal=AxisError(white_sigma_m=0.5, gm_sigma_m=1.0, gm_tau_s=60.0),
                   urban=UrbanParams(distance_m=5.0, sigma_scale=3.0, jump_rate_hz=1e4,
                                     jump_sigma_m=8.0))
    g = GnssModel(p, 2, zones=GnssZones(buildings=(house,)))
    (far,) = g.update(0.0, at(14.9, 5.0))  # 5.1 m from the facade
    (near,) = g.update(0.1, at(15.1, 5.0))  # 4.9 m
    assert not far.urban and near.urban
    assert far.position_cov_enu_m2[0, 0] == pytest.approx(0.25 + 1.0)
    assert near.position_cov_enu_m2[0, 0] == pytest.approx(9 * (0.25 + 1.0) + 64.0)
    assert near.position_cov_enu_m2[2, 2] == pytest.approx(0.0)
    # a multipath jump at (almost) every epoch: horizontal error ~ N(0, sqrt(9 * 1.25 + 64))
    n = 2000
    err = np.array([f.position_enu_m[:2] - [15.1, 5.0]
                    for f in fixes(g, [at(15.1, 5.0)] * n, t0_s=0.2)])
    sigma = math.sqrt(9 * 1.25 + 64.0)
    lo, hi = chi2_bounds(2 * n, p=1e-3)
    # the GM part is correlated (tau 60 s over a 200 s record): allow 10 % extra either way
    assert 0.9 * lo < np.std(err) / sigma < 1.1 * hi


def test_same_seed_same_fixes_different_seed_differs():
    def run(seed):
        g = GnssModel.from_file(CONSUMER, seed)
        return [(f.latitude_deg, f.longitude_deg, f.altitude_m)
                for f in fixes(g, [at(x=float(i)) for i in range(30)])]

    assert run(5) == run(5)
    assert run(5) != run(6)


def _noisy() -> GnssParams:
    return GnssParams(horizontal=AxisError(white_sigma_m=0.3, gm_sigma_m=1.0, gm_tau_s=100.0),
                      vertical=AxisError(white_sigma_m=0.5))


def test_position_jump_adds_and_noise_scale_multiplies():
    ref, hit = GnssModel(_noisy(), 4), GnssModel(_noisy(), 4)
    hit.faults.set_position_jump([3.0, -2.0, 0.5])
    (a,), (b,) = ref.update(0.0, at(1.0, 2.0)), hit.update(0.0, at(1.0, 2.0))
    assert b.position_enu_m - a.position_enu_m == pytest.approx([3.0, -2.0, 0.5], abs=1e-9)
    ref, hit = GnssModel(_noisy(), 4), GnssModel(_noisy(), 4)
    hit.faults.set_noise_scale(4.0)
    (a,), (b,) = ref.update(0.0, at()), hit.update(0.0, at())
    assert b.position_enu_m == pytest.approx(4.0 * a.position_enu_m, rel=1e-12)
    assert b.position_cov_enu_m2 == pytest.approx(16.0 * a.position_cov_enu_m2, rel=1e-12)


def test_freeze_dropout_and_forced_no_fix():
    g = GnssModel(_noisy(), 8)
    (first,) = g.update(0.0, at())
    g.faults.freeze = True
    (frozen,) = g.update(0.1, at(x=50.0))
    assert frozen.stamp_s == pytest.approx(0.1) and frozen.latitude_deg == first.latitude_deg
    assert np.array_equal(frozen.position_enu_m, first.position_enu_m)
    g.faults.clear()
    g.faults.dropout = True
    assert g.update(0.2, at()) == []
    g.faults.clear()
    g.faults.no_fix = True
    (nf,) = g.update(0.3, at())
    assert nf.status == STATUS_NO_FIX and math.isnan(nf.longitude_deg)
    g.faults.clear()
    (ok,) = g.update(0.4, at(x=50.0))
    assert ok.status == STATUS_FIX and ok.position_enu_m[0] == pytest.approx(50.0, abs=10.0)
    with pytest.raises(ValueError, match="offset_enu_m"):
        g.faults.set_position_jump([1.0, 2.0])


def test_a_freeze_in_an_outage_repeats_the_no_fix_it_froze_on():
    """FREEZE repeats the last released output: in an outage (or NO_FIX) that is the no-fix,
    not an older valid fix that a filter would fuse as the car moves on."""
    zones = GnssZones(outages=(Polygon(((50.0, -10.0), (60.0, -10.0), (60.0, 10.0),
                                        (50.0, 10.0))),))
    g = GnssModel(_noisy(), 8, zones)
    (ok,) = g.update(0.0, at(x=40.0))
    (out,) = g.update(0.1, at(x=55.0))
    g.faults.freeze = True
    (frozen,) = g.update(0.2, at(x=70.0))  # past the outage: still the frozen no-fix
    assert ok.status == STATUS_FIX and out.status == frozen.status == STATUS_NO_FIX
    assert not frozen.covariance_known and math.isnan(frozen.latitude_deg)
    g.faults.clear()
    g.faults.no_fix = True
    g.update(0.3, at(x=80.0))
    g.faults.freeze = True
    (frozen,) = g.update(0.4, at(x=90.0))
    assert frozen.status == STATUS_NO_FIX and frozen.stamp_s == pytest.approx(0.4)


@pytest.mark.parametrize("vertices, words", [
    ([[0, 0], [1, 1]], "at least 3"), ([[0, 0], [1, 0], [2, 0]], "zero area"),
    ([[0, 0], [1, 0], [".nan", 1]], "number")])
def test_malformed_zone_polygons_are_refused(vertices, words):
    data = {"buildings": [{"vertices_m": [[0, 0], [1, 0], [0, 1]]}],
            "outages": [{"vertices_m": vertices}]}
    with pytest.raises(ConfigError, match=words):
        build(GnssZones, data, source="zones.yaml")
