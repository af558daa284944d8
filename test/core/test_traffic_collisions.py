"""The agents' broad phase (core.traffic.collisions): grid offsets and the pairs it finds."""
from __future__ import annotations

import itertools

import numpy as np

from vehicle_sim.core.traffic.collisions import _box_overlap, cell_starts, overlapping_pairs


def test_cell_starts_is_searchsorted_of_every_cell():
    rng = np.random.default_rng(1)
    for _ in range(500):
        n_cells = int(rng.integers(1, 60))
        cells = np.sort(rng.integers(0, n_cells, int(rng.integers(0, 40))))
        expected = np.searchsorted(cells, np.arange(n_cells + 1))
        assert np.array_equal(cell_starts(cells, n_cells), expected)


def test_overlapping_pairs_finds_every_overlap_once():
    rng = np.random.default_rng(2)
    n = 300
    x, y = rng.uniform(0.0, 150.0, n), rng.uniform(0.0, 90.0, n)
    yaw = rng.uniform(-np.pi, np.pi, n)
    length, width = rng.uniform(3.0, 12.0, n), rng.uniform(1.5, 2.6, n)
    cell = float(np.hypot(length, width).max())
    found = {tuple(p) for p in overlapping_pairs(x, y, yaw, length, width, cell).tolist()}
    brute = {(i, j) for i, j in itertools.combinations(range(n), 2)
             if _box_overlap(x[i], y[i], yaw[i], length[i], width[i],
                             x[j], y[j], yaw[j], length[j], width[j])}
    assert found == brute and len(brute) > 10
