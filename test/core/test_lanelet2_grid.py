"""The drivable-area grid that goes with the Lanelet2 export (export.occupancy): lanes free,
everything else occupied, the area adds up to the lanes', bounded size, Nav2 map files."""
from __future__ import annotations

import math

import numpy as np
import pytest

from vehicle_sim.core.config import ConfigError, build
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.export.occupancy import (
    FREE,
    OCCUPIED,
    GridParams,
    cell_of,
    drivable_grid,
    pgm_and_yaml,
)
from vehicle_sim.paths import config_path


@pytest.fixture(scope="module")
def crossroad() -> Network:
    return Network(load_map(config_path("maps/crossroad.yaml")))


def test_lanes_are_free_and_the_rest_occupied(crossroad):
    g = drivable_grid(crossroad, GridParams(resolution_m=0.2))
    assert g.cells.dtype == np.int8

    def at(x, y):
        return g.cells[cell_of(g, x, y)]

    assert at(-40.0, -1.75) == FREE and at(-40.0, 3.3) == FREE and at(-40.0, -3.3) == FREE
    assert at(-40.0, 3.8) == OCCUPIED and at(-40.0, -3.8) == OCCUPIED  # past the kerb
    assert at(0.0, 0.0) == FREE and at(60.0, 1.0) == FREE and at(1.0, 60.0) == FREE
    assert at(5.0, 5.0) == OCCUPIED  # tree1 stands at the corner, off the turn paths
    assert at(30.0, 30.0) == OCCUPIED
    # free area: 8 street lanes of 63 m x 3.5 m, plus at most the 14 m junction box and the
    # round ends of the outer lane ends (8 half discs of 1.75 m), give or take the cell edges
    free = np.count_nonzero(g.cells == FREE) * 0.2 ** 2
    streets = 8 * 63.0 * 3.5
    assert streets * 0.99 < free < streets + 14.0 ** 2 + 8 * math.pi * 1.75 ** 2 / 2 + 10.0


def test_the_grid_covers_the_map_with_its_margin(crossroad):
    g = drivable_grid(crossroad, GridParams(resolution_m=0.5, margin_m=5.0))
    x0, y0, x1, y1 = crossroad.bounds
    rows, cols = g.cells.shape
    assert g.origin_xy_m[0] <= x0 - 5.0 and g.origin_xy_m[1] <= y0 - 5.0
    assert g.origin_xy_m[0] + cols * 0.5 >= x1 + 5.0
    assert g.origin_xy_m[1] + rows * 0.5 >= y1 + 5.0
    assert (g.cells[0] == OCCUPIED).all() and (g.cells[:, -1] == OCCUPIED).all()


def test_resolution_is_bounded_and_the_cell_count_too(crossroad):
    with pytest.raises(ConfigError, match="resolution_m"):
        build(GridParams, {"resolution_m": 0.0}, source="test")
    grid_map = Network(load_map(config_path("maps/urban_grid.yaml")))
    with pytest.raises(ValueError, match="coarser"):
        drivable_grid(grid_map, GridParams(resolution_m=0.02))


def test_nav2_map_files(crossroad):
    g = drivable_grid(crossroad, GridParams(resolution_m=1.0))
    image, meta = pgm_and_yaml(g, "x.pgm")
    rows, cols = g.cells.shape
    header = f"P5\n{cols} {rows}\n255\n".encode()
    assert image.startswith(header) and len(image) == len(header) + rows * cols
    pixels = np.frombuffer(image[len(header):], dtype=np.uint8).reshape(rows, cols)
    assert ((pixels == 254) == (g.cells[::-1] == FREE)).all()  # top row = north
    assert "mode: trinary" in meta and "resolution: 1.0" in meta
