"""Magic Formula tyre and terrain (heightmap, friction map) against their formulas."""
import math

import numpy as np
import pytest
import yaml

from vehicle_sim.core.config import ConfigError, load
from vehicle_sim.core.vehicle.full14.magic_formula import (
    SURFACES, aligning_moment, combined_forces, load_friction, mf_pure, surface_scales)
from vehicle_sim.core.vehicle.full14.terrain import (
    MAX_SLOPE, MAX_ZONE_VERTICES, FrictionZone, HeightmapParams, Terrain, TerrainParams)


def magic(x, b, c, d, e):
    """conventions.md: F = D sin(C atan(B x - E (B x - atan(B x))))."""
    return d * math.sin(c * math.atan(b * x - e * (b * x - math.atan(b * x))))


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_pure_slip_matches_the_formula_and_peaks_at_d(surface):
    b, c, d, e = SURFACES[surface]
    slips = np.linspace(-1.0, 1.0, 401)
    values = [mf_pure(s, b, c, d, e) for s in slips]
    assert values == pytest.approx([magic(s, b, c, d, e) for s in slips], abs=1e-12)
    assert max(values) == pytest.approx(d, rel=1e-3) and min(values) == pytest.approx(-d, rel=1e-3)


def test_combined_slip_reduces_to_pure_slip_and_stays_in_the_friction_ellipse():
    fz, mux, muy, kx, ky = 3000.0, 1.17, 1.05, 22.3 * 3000.0, 20.9 * 3000.0
    cx, cy, ex, ey = 1.64, 1.35, 0.46, -0.007
    for k in (-0.8, -0.05, 0.02, 0.3):
        fx, fy = combined_forces(k, 0.0, fz, mux, muy, kx, ky, cx, cy, ex, ey)
        assert fy == 0.0
        assert fx == pytest.approx(mf_pure(k, kx / (cx * mux * fz), cx, mux * fz, ex), rel=1e-12)
    fx, fy = combined_forces(1e-6, 2e-6, fz, mux, muy, kx, ky, cx, cy, ex, ey)
    assert (fx, fy) == pytest.approx((kx * 1e-6, ky * 2e-6), rel=1e-3)  # linear at small slip
    for k in np.linspace(-1, 1, 21):
        for t in np.linspace(-0.5, 0.5, 21):
            fx, fy = combined_forces(k, t, fz, mux, muy, kx, ky, cx, cy, ex, ey)
            assert (fx / (mux * fz)) ** 2 + (fy / (muy * fz)) ** 2 <= 1.0 + 1e-12
            assert fx * k >= 0.0 and fy * t >= 0.0  # + slip gives + force


def test_load_sensitivity_and_surface_scales():
    assert load_friction(1.0, 6000.0, 3000.0, -0.1) == pytest.approx(0.9)
    assert load_friction(1.0, 1500.0, 3000.0, -0.1) == pytest.approx(1.05)
    assert surface_scales("dry") == (1.0, 1.0)
    assert surface_scales("ice") == pytest.approx((0.1, 4 * 2 * 0.1 / (10 * 1.9 * 1)))
    with pytest.raises(ValueError, match="gravel"):
        surface_scales("gravel")


def test_aligning_moment_is_trail_times_force_and_vanishes_when_sliding():
    c_alpha, fy_max, t0 = 60000.0, 3000.0, 0.03
    assert aligning_moment(100.0, 1e-9, c_alpha, fy_max, t0) == pytest.approx(-t0 * 100.0)
    assert aligning_moment(-2900.0, -0.2, c_alpha, fy_max, t0) == 0.0  # beyond 3 Fy_max / C
    assert aligning_moment(1500.0, 0.02, c_alpha, fy_max, t0) < 0.0


# --- terrain --------------------------------------------------------------------------------
def _grid(fn, n=8, spacing=2.0, origin=(-5.0, -3.0)):
    return tuple(tuple(float(fn(origin[0] + i * spacing, origin[1] + j * spacing))
                       for i in range(n)) for j in range(n))


@pytest.mark.parametrize("interpolation", ["bilinear", "bspline"])
def test_a_plane_is_reproduced_with_its_analytic_normal(interpolation):
    def plane(x, y):
        return 0.1 * x - 0.05 * y + 2.0

    terrain = Terrain(TerrainParams(heightmap=HeightmapParams(
        origin_m=(-5.0, -3.0), spacing_m=2.0, heights_m=_grid(plane),
        interpolation=interpolation)))
    n = np.array([-0.1, 0.05, 1.0]) / math.sqrt(1 + 0.01 + 0.0025)
    for x, y in ((0.3, 0.7), (2.9, 4.1), (-1.0, 1.0)):
        assert terrain.height_m(x, y) == pytest.approx(plane(x, y), abs=1e-12)
        assert terrain.normal(x, y) == pytest.approx(n, abs=1e-12)


@pytest.mark.parametrize("interpolation", ["bilinear", "bspline"])
def test_gradient_is_the_derivative_of_the_height(interpolation):
    def bumps(x, y):
        return 0.3 * math.sin(0.7 * x) * math.cos(0.4 * y)

    terrain = Terrain(TerrainParams(heightmap=HeightmapParams(
        origin_m=(-5.0, -3.0), spacing_m=2.0, heights_m=_grid(bumps),
        interpolation=interpolation)))
    h = 1e-6
    for x, y in ((0.3, 0.7), (2.5, 4.1)):
        fd = np.array([terrain.height_m(x + h, y) - terrain.height_m(x - h, y),
                       terrain.height_m(x, y + h) - terrain.height_m(x, y - h)]) / (2 * h)
        nrm = terrain.normal(x, y)
        assert -nrm[:2] / nrm[2] == pytest.approx(fd, abs=1e-6)


def test_bilinear_passes_through_the_grid_and_edges_extend_flat():
    heights = ((0.0, 1.0), (2.0, 5.0))
    terrain = Terrain(TerrainParams(heightmap=HeightmapParams(
        origin_m=(0.0, 0.0), spacing_m=1.0, heights_m=heights, interpolation="bilinear")))
    assert [terrain.height_m(x, y) for x, y in ((0, 0), (1, 0), (0, 1), (1, 1))] == [0, 1, 2, 5]
    assert terrain.height_m(0.5, 0.5) == pytest.approx(2.0)
    assert terrain.height_m(7.0, 9.0) == 5.0 and terrain.normal(7.0, 9.0)[2] == 1.0


def test_friction_zones_last_match_wins():
    square = ((0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0))
    inner = ((4.0, 4.0), (6.0, 4.0), (5.0, 6.0))
    terrain = Terrain(TerrainParams(default_surface="wet", zones=(
        FrictionZone(surface="ice", polygon_m=square),
        FrictionZone(surface="snow", polygon_m=inner, friction_scale=0.5))))
    assert terrain.friction_scales(-1.0, 5.0) == pytest.approx(surface_scales("wet"))
    assert terrain.friction_scales(1.0, 1.0) == pytest.approx(surface_scales("ice"))
    mu, k = terrain.friction_scales(5.0, 4.5)
    assert (mu, k) == pytest.approx((0.5 * surface_scales("snow")[0], surface_scales("snow")[1]))


def test_terrain_file_loads_and_bad_surfaces_are_refused(tmp_path):
    data = {"default_surface": "dry",
            "heightmap": {"origin_m": [0, 0], "spacing_m": 1.0, "heights_m": [[0, 0], [1, 1]],
                          "interpolation": "bilinear"},
            "zones": [{"surface": "ice", "polygon_m": [[0, 0], [5, 0], [5, 5]]}]}
    path = tmp_path / "terrain.yaml"
    path.write_text(yaml.safe_dump(data))
    assert Terrain(load(TerrainParams, path)).height_m(0.5, 1.0) == pytest.approx(1.0)
    data["zones"][0]["surface"] = "lava"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"zones\[0\].surface: 'lava' is not one of"):
        load(TerrainParams, path)
    data["zones"][0] = {"surface": "ice", "polygon_m": [[0, 0], [5, 0]]}
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match="at least 3 vertices"):
        load(TerrainParams, path)


@pytest.mark.parametrize("heights, cells", [
    ([[0, 1000, 0], [0, 0, 0]], r"heights_m\[0\]\[0\] and heights_m\[0\]\[1\] differ by 1000 m"),
    ([[0, 0], [0, 0], [-1000, -1000]],
     r"heights_m\[1\]\[0\] and heights_m\[2\]\[0\] differ by 1000 m"),  # along y
])
def test_a_heightmap_steeper_than_any_wall_is_refused_naming_the_cells(tmp_path, heights, cells):
    """1000 m steps over a 1 mm grid loaded, and the full model's state went NaN."""
    path = tmp_path / "terrain.yaml"
    path.write_text(yaml.safe_dump({"heightmap": {"origin_m": [0, 0], "spacing_m": 0.001,
                                                  "heights_m": heights}}))
    with pytest.raises(ConfigError, match=cells + r" over spacing_m 0.001 m: steeper than 10") \
            as err:
        load(TerrainParams, path)
    assert str(err.value).startswith(f"{path}: heightmap: heights_m[")


def test_the_steepest_heightmap_allowed_is_max_slope():
    """A kerb of 0.15 m rising within 1.5 cm is the steepest a grid may be, either axis."""
    kerb = ((0.0, 0.15), (0.0, 0.15))
    assert Terrain(TerrainParams(heightmap=HeightmapParams(
        origin_m=(0.0, 0.0), spacing_m=0.15 / MAX_SLOPE, heights_m=kerb)))
    with pytest.raises(ValueError, match="steeper than"):
        HeightmapParams(origin_m=(0.0, 0.0), spacing_m=0.149 / MAX_SLOPE,
                        heights_m=tuple(zip(*kerb)))


def test_zones_of_more_vertices_than_a_lookup_affords_are_refused(tmp_path):
    """A 200k-vertex zone loaded and made each wheel's friction lookup take ~750 us."""
    def circle(n):
        return [[math.cos(2 * math.pi * k / n), math.sin(2 * math.pi * k / n)] for k in range(n)]

    path = tmp_path / "terrain.yaml"
    zones = [{"surface": "ice", "polygon_m": circle(MAX_ZONE_VERTICES - 3)},
             {"surface": "wet", "polygon_m": circle(3)}]
    path.write_text(yaml.safe_dump({"zones": zones}))
    assert len(load(TerrainParams, path).zones) == 2
    zones[1]["polygon_m"] = circle(4)
    path.write_text(yaml.safe_dump({"zones": zones}))
    with pytest.raises(ConfigError, match=f"zones have {MAX_ZONE_VERTICES + 1} vertices in all, "
                                          f"more than {MAX_ZONE_VERTICES}") as err:
        load(TerrainParams, path)
    assert str(err.value).startswith(f"{path}: zones have")
