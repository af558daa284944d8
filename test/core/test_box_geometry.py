"""Oriented-box geometry (core.box_geometry): the half extents and bounding circle of a box, and the
one middle of an overlap that the accident detector reports and the crash world pushes at."""
from __future__ import annotations

import math

import numpy as np
import pytest

from vehicle_sim.core import box_geometry
from vehicle_sim.core.accident import contact_geometry, detect
from vehicle_sim.core.box_geometry import bounding_radii, bounding_radius, half_extent

L, W = 4.298, 1.674  # medium_car box [m]


def test_half_extent_along_and_across_and_at_45_degrees():
    assert half_extent(L, W, 0.3, 0.3) == pytest.approx(0.5 * L, abs=1e-12)
    assert half_extent(L, W, 0.3, 0.3 + 0.5 * math.pi) == pytest.approx(0.5 * W, abs=1e-12)
    assert half_extent(L, W, 0.0, 0.25 * math.pi) == pytest.approx((L + W) / (2 * math.sqrt(2)))
    # a box is symmetric: turned by half a turn it spans the same
    assert half_extent(L, W, 1.0, 2.0) == pytest.approx(half_extent(L, W, 1.0 + math.pi, 2.0))


def test_bounding_radius_is_half_the_diagonal_for_scalars_and_arrays():
    assert bounding_radius(3.0, 4.0) == 2.5
    sizes = np.array([[3.0, 4.0], [L, W], [7.49, 2.4675]])
    radii = bounding_radii(sizes[:, 0], sizes[:, 1])
    assert radii.tolist() == [bounding_radius(float(x), float(y)) for x, y in sizes]


def _area_centroid(poly):
    """Reference: area centroid of a simple polygon (shoelace), for an overlap with area."""
    x, y = poly[:, 0], poly[:, 1]
    cross = x * np.roll(y, -1) - np.roll(x, -1) * y
    return np.array([((x + np.roll(x, -1)) * cross).sum(),
                     ((y + np.roll(y, -1)) * cross).sum()]) / (3.0 * cross.sum())


def test_overlap_of_an_axis_aligned_corner_is_the_middle_of_the_shared_rectangle():
    a = detect.Body("a", 0.0, 0.0, 0.0, 4.0, 2.0)
    b = detect.Body("b", 3.0, 1.5, 0.0, 4.0, 2.0)  # overlap x in [1, 2], y in [0.5, 1]
    assert detect.overlap_centre(a, b) == pytest.approx((1.5, 0.75), abs=1e-12)


def test_overlap_of_a_box_inside_another_is_its_centre_and_apart_is_none():
    a = detect.Body("a", 0.0, 0.0, 0.0, 4.0, 2.0)
    inner = detect.Body("i", 0.7, -0.2, 0.4, 1.0, 0.5)
    assert detect.overlap_centre(a, inner) == pytest.approx((0.7, -0.2), abs=1e-12)
    far = detect.Body("f", 9.0, 0.0, 0.4, 4.0, 2.0)
    assert detect.overlap_centre(a, far) is None


def test_overlap_centroid_of_turned_boxes_is_their_intersection_polygon_centroid():
    # the overlap of a box with a square turned 45 deg about one of its corners inside it: the
    # square's corner region is a known polygon (a's corner (2, 1) cut by the square's two sides)
    a = detect.Body("a", 0.0, 0.0, 0.0, 4.0, 2.0)
    b = detect.Body("b", 2.0 + math.sqrt(2.0) - 0.5, 0.0, 0.25 * math.pi, 2.0, 2.0)
    tip = 2.0 - 0.5  # the square's left corner on a's x axis
    # intersection: triangle (tip, 0), (2, 0.5), (2, -0.5): centroid ((tip + 4) / 3, 0)
    ref = _area_centroid(np.array([[tip, 0.0], [2.0, -0.5], [2.0, 0.5]]))
    assert detect.overlap_centre(a, b) == pytest.approx(ref, abs=1e-9)
    assert ref == pytest.approx(((tip + 4.0) / 3.0, 0.0))


# touches without area: boxes (x, y, yaw, length, width) exactly representable, touching box a
# (0, 0, 0, 4, 2) along an edge or at a corner, and the middle of what they share
TOUCHES = {
    "front to rear, offset": ((4.0, 0.5, 0.0, 4.0, 2.0), (2.0, 0.25)),
    "front to a wider rear": ((4.0, 0.75, 0.0, 4.0, 3.0), (2.0, 0.125)),
    "side by side": ((1.0, 2.0, 0.0, 4.0, 2.0), (0.5, 1.0)),
    "rear to a small box's side": ((-2.5, 0.0, 0.0, 1.0, 4.0), (-2.0, 0.0)),
    "corner to corner": ((4.0, 2.0, 0.0, 4.0, 2.0), (2.0, 1.0)),
    "corner to corner, below behind": ((-3.0, -1.5, 0.0, 2.0, 1.0), (-2.0, -1.0)),
}
A = detect.Body("a", 0.0, 0.0, 0.0, 4.0, 2.0)


@pytest.mark.parametrize("name", sorted(TOUCHES))
def test_a_touch_is_one_point_for_the_detector_and_the_crash_world(name):
    # the detector once took the mean of the clipped vertices and the crash world the centroid
    # of a 5 mm strip (or nothing at a corner): one point now, near the middle of the touch
    other, middle = TOUCHES[name]
    b = detect.Body("b", *other)
    reported = detect.contact(A, b, 0, 0.1).position_m  # the accident detector's point
    pushed = contact_geometry._touch_centre(A, detect.corners(b))  # where the crash world pushes
    assert pushed is not None
    assert reported == tuple(pushed.tolist())
    assert reported == pytest.approx(middle, abs=0.5 * box_geometry.TOUCH_GROW_M * math.sqrt(2))


def test_a_touch_off_by_rounding_is_still_the_middle_of_the_shared_edge():
    # two boxes face to face whose facing edges differ by 2e-16 m end to end (the first crash
    # world sub-step of an offset head-on): clipped as it is, the touch is a sliver triangle
    # along a third of the edge; the grown box (y in [-0.542, 1.142]) finds the whole shared
    # edge, y in [-0.542, 0.537]: its middle, 2.5 mm inside b
    a = np.array([[0.0, 1.137], [-4.298, 1.137], [-4.298, -0.537], [0.0, -0.537]])
    b = np.array([[-1.0250293708863346e-16, -1.137], [4.298, -1.137], [4.298, 0.537],
                  [1.0250293708863346e-16, 0.537]])
    assert box_geometry.overlap_centre(a, b) is None  # no area to speak of
    p = box_geometry.box_overlap_centre(-2.149, 0.3, 0.0, 4.298, 1.674, b)
    g = 0.5 * box_geometry.TOUCH_GROW_M
    assert p == pytest.approx((g, -g), abs=1e-12)


def test_the_crash_world_pushes_a_touching_pair_where_the_detector_reports_it():
    # pybullet reports these edge touches as penetrating by ~1e-16 m: the point is ours
    geometry = contact_geometry.ContactGeometry([])
    for name in ("front to rear, offset", "front to a wider rear", "rear to a small box's side"):
        b = detect.Body("b", *TOUCHES[name][0])
        g = geometry.vehicle_pair(A, b)
        assert g is not None and g.distance_m <= 0.0
        assert tuple(g.point_m.tolist()) == detect.contact(A, b, 0, 0.1).position_m
    geometry.close()
