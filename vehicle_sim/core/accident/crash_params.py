"""Parameters of the crash model (paper 004 sec. 7.1, Figure 12) and of the crash world.

Crash classes and their damping R_o [N s/m] per impact part (004 Figure 12): the front column is
in units of 1e6 N s/m, the lateral one in 1e5, the rear one in 1e3; the stiffness of every spring
is K = 81.7 R_o [N/m] (004: "K = 81.7 R_o" in each column).

The light and heavy truck rows of Figure 12 are garbled in the extraction ("20" and "30" in some
columns). A choice: we read them as 20 (light truck) and 30 (heavy truck) in each column's unit,
for all three parts: the order of magnitude follows the van row (5.9 / 3.5 / 4.2) scaled by the
mass ratio of a 7.5 t / 18 t truck to a ~2.5 t van (3x / 7x), which is what the printed numbers
give (3.4x / 5x of the van front).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vehicle_sim.core.accident.params import part_margin_m_spec, release_s_spec
from vehicle_sim.core.config import spec

CRASH_CLASSES = ("small", "medium", "large", "van", "light_truck", "heavy_truck")
# (front, lateral, rear) damping R_o [N s/m], 004 Figure 12 (trucks: see the module docstring)
DAMPING_NSPM = {
    "small": (1.132e6, 1.230e5, 2.222e3),
    "medium": (3.580e6, 3.052e5, 3.756e3),
    "large": (4.236e6, 3.694e5, 4.868e3),
    "van": (5.946e6, 3.525e5, 4.178e3),
    "light_truck": (20.0e6, 20.0e5, 20.0e3),
    "heavy_truck": (30.0e6, 30.0e5, 30.0e3),
}
STIFFNESS_PER_DAMPING_PER_S = 81.7  # 004 Figure 12: K = 81.7 R_o
# TrafficAgent.KIND_CAR/TRUCK/BUS/VAN (0..3) -> crash class (a choice: the traffic's car is the
# medium car it is drawn from; a truck in town is a light truck; a bus is as heavy as a heavy truck)
KIND_CRASH_CLASS = ("medium", "light_truck", "heavy_truck", "van")


def crash_class_index(name: str) -> int:
    """Index of ``name`` in CRASH_CLASSES; unknown names raise ValueError (one line)."""
    if name not in CRASH_CLASSES:
        raise ValueError(f"unknown crash class {name!r} (choose one of {', '.join(CRASH_CLASSES)})")
    return CRASH_CLASSES.index(name)


def kind_of_crash_class(name: str) -> int:
    """The TrafficAgent.kind whose crash class (KIND_CRASH_CLASS) is ``name``: how a body of
    that class is published. The message has no kind for the small and large cars: a car's
    (medium) in the worlds that read the kind (the ego's crash physics)."""
    crash_class_index(name)  # an unknown name: ValueError
    return KIND_CRASH_CLASS.index(name) if name in KIND_CRASH_CLASS else 0


def crash_classes(kinds) -> np.ndarray:
    """Crash class indices of TrafficAgent.kind values (KIND_CRASH_CLASS); an unknown kind is
    a car's (index of KIND_CRASH_CLASS[0])."""
    kinds = np.asarray(kinds, np.int64)
    table = np.array([crash_class_index(c) for c in KIND_CRASH_CLASS], np.int64)
    known = (kinds >= 0) & (kinds < len(table))
    return np.where(known, table[np.where(known, kinds, 0)], table[0])


def part_damping_nspm(crash_class: int, part: int) -> float:
    """R_o [N s/m] of crash class index ``crash_class`` hit on ``part`` (0 front, 1 lateral,
    2 rear)."""
    return DAMPING_NSPM[CRASH_CLASSES[crash_class]][part]


@dataclass(frozen=True)
class CrashParams:
    """Numerics and friction of the crash world and of the ego's contacts."""

    substep_s: float = spec(1e-4, unit="s", gt=1e-6, le=1e-3)
    """contact sub-step: K/m of the stiffest pair (heavy truck front 2.5e9 N/m on a 1.1 t car) gives
    omega dt = 0.15 and R dt/m = 0.27 at 0.1 ms, inside symplectic Euler's stability region"""
    road_friction: float = spec(0.7, unit="-", gt=0.0, le=1.5)
    """post-crash sliding friction, locked tyres on dry asphalt (0.7: Brach & Brach, Vehicle
    Accident Analysis and Reconstruction Methods, skid tables 0.6-0.8)"""
    barrier_friction: float = spec(0.4, unit="-", gt=0.0, le=1.5)
    """car body sliding on a barrier or a static object (004: slip against barriers); 0.4 steel on
    painted steel, dry (a choice within the 0.3-0.5 handbook range)"""
    vehicle_height_m: float = spec(1.5, unit="m", gt=0.1, le=5.0)
    """box height of the vehicles in the contact geometry"""
    static_height_m: float = spec(3.0, unit="m", gt=0.1, le=100.0)
    """height of the static objects in the contact geometry"""
    stop_speed_mps: float = spec(0.05, unit="m/s", gt=0.0, le=1.0)
    """a crashed body slower than this (and turning slower than this / 1 m) is at rest"""
    release_s: float = release_s_spec()
    part_margin_m: float = part_margin_m_spec()
