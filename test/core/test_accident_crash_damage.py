"""Per-part damage (000's three-part front bumper, 002's rear and sides) from contact impulses."""
from __future__ import annotations

import math

import numpy as np
import pytest

from vehicle_sim.core.accident import damage as dmg
from vehicle_sim.core.accident.detect import Body

CAR = Body("ego", 0.0, 0.0, 0.5 * math.pi, 4.3, 1.8)  # heading north: front at y = +2.15


@pytest.mark.parametrize("point,part", [
    ((-0.6, 2.15), dmg.PART_FRONT_LEFT),  # heading north, left is west (-x)
    ((0.0, 2.15), dmg.PART_FRONT_CENTRE),
    ((0.6, 2.15), dmg.PART_FRONT_RIGHT),
    ((0.0, -2.15), dmg.PART_REAR),
    ((-0.9, 0.5), dmg.PART_LEFT_SIDE),
    ((0.9, -0.5), dmg.PART_RIGHT_SIDE),
    ((0.9, -2.15), dmg.PART_REAR),  # a rear corner
])
def test_contact_point_maps_to_the_part(point, part):
    assert dmg.damage_part(CAR, point, 0.1) == part


def test_levels_follow_the_velocity_change_and_reset_clears():
    d = dmg.DamageState(1000.0)
    assert not d.add(dmg.PART_REAR, 100.0)  # 0.1 m/s: a touch
    assert d.add(dmg.PART_REAR, 500.0)  # 0.6 m/s: light
    assert d.levels()[dmg.PART_REAR] == 1
    d.add(dmg.PART_FRONT_CENTRE, 15_000.0)  # 15 m/s: destroyed
    assert d.levels().tolist() == [0, 4, 0, 1, 0, 0]
    d.reset()
    assert not np.any(d.levels()) and not np.any(d.impulse_ns)


@pytest.mark.parametrize("part,impulse", [(6, 1.0), (0, -1.0), (0, math.nan), (0, math.inf)])
def test_bad_damage_input_is_refused(part, impulse):
    with pytest.raises(ValueError, match="damage"):
        dmg.DamageState(1000.0).add(part, impulse)


def test_an_unknown_crash_class_in_a_vehicle_file_is_one_clear_error(tmp_path):
    from pathlib import Path

    from vehicle_sim.core.vehicle.params import load_vehicle
    src = Path(__file__).resolve().parents[2] / "config" / "vehicles" / "medium_car.yaml"
    bad = tmp_path / "tank.yaml"
    bad.write_text(src.read_text().replace("crash_class: medium", "crash_class: tank"))
    with pytest.raises(ValueError) as err:
        load_vehicle(bad)
    assert "crash_class" in str(err.value) and "tank" in str(err.value)
    assert "\n" not in str(err.value).strip()
