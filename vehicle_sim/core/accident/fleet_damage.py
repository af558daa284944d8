"""Per-part crash damage of the bodies of a crash world (traffic agents, scripted vehicles,
also while prescribed), keyed by body id: the traffic's counterpart of the ego's one DamageState
(damage.py's parts, levels and impulse law).

``FleetDamage.add(contacts, states)`` takes one crash-world step's ContactReports and the
post-step states of the bodies involved; each side of a contact that is a body of the book
(not the prescribed ego, not a static object; a prescribed scene vehicle is one) adds the
contact's impact impulse [N s] to the part hit (damage.damage_part from the contact point and
the body's pose). The book is bounded
(``max_bodies``): a body beyond it is not tracked (``dropped`` counts them), never an error.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from vehicle_sim.core.accident import damage as dmg
from vehicle_sim.core.accident import detect
from vehicle_sim.core.accident.crash_bodies import ContactReport

MAX_DAMAGED_BODIES = 1000  # a choice: the run summary's bound on listed bodies (monitor node)


@dataclass(frozen=True)
class BodyPose:
    """What the book needs of a body after the step: pose (map, m, rad), box [m], mass [kg]."""

    x_m: float
    y_m: float
    yaw_rad: float
    length_m: float
    width_m: float
    mass_kg: float


class FleetDamage:
    """Damage states by body id (see the module docstring)."""

    def __init__(self, part_margin_m: float, max_bodies: int = MAX_DAMAGED_BODIES):
        if not 0.0 <= part_margin_m < 10.0:
            raise ValueError(f"fleet damage: part_margin_m must be in [0, 10) m, got "
                             f"{part_margin_m}")
        self.margin_m = float(part_margin_m)
        self.max_bodies = int(max_bodies)
        self.states: dict[int, dmg.DamageState] = {}
        self.dropped = 0

    def reset(self) -> None:
        """A new run: every body undamaged and forgotten."""
        self.states.clear()
        self.dropped = 0

    def add(self, contacts: Iterable[ContactReport], bodies: Mapping[int, BodyPose]) -> set[int]:
        """Accumulate the impact impulses of these contacts; the ids whose level changed.
        Sides whose id is not in ``bodies`` (the ego, a static object) are skipped."""
        changed: set[int] = set()
        for c in contacts:
            if c.impact_impulse_ns <= 0.0:
                continue
            sides = ((c.a_id,) if c.b_static >= 0 else (c.a_id, c.b_id))
            for body_id in sides:
                pose = bodies.get(int(body_id))
                if pose is None:
                    continue
                state = self._state(int(body_id), pose.mass_kg)
                if state is None:
                    continue
                body = detect.Body(str(body_id), pose.x_m, pose.y_m, pose.yaw_rad,
                                   pose.length_m, pose.width_m)
                part = dmg.damage_part(body, c.point_m, self.margin_m)
                if state.add(part, c.impact_impulse_ns):
                    changed.add(int(body_id))
        return changed

    def _state(self, body_id: int, mass_kg: float) -> dmg.DamageState | None:
        state = self.states.get(body_id)
        if state is None:
            if len(self.states) >= self.max_bodies:
                self.dropped += 1
                return None
            state = self.states[body_id] = dmg.DamageState(mass_kg)
        return state
