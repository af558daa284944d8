"""FaultCommand / FaultStatus for target "vehicle": the dynamics node's side of fault injection.

Commands for other targets are ignored (the sensor and bridge nodes own them). A vehicle command
that is not a vehicle fault is rejected at once; the others go to the physics loop, which keeps
the fault book and applies them between two steps (core.vehicle.faults) and reports every
change, stamped with the simulation time at which it took effect, through ``report``.
"""
from __future__ import annotations

from rclpy.node import Node

from vehicle_sim.core.faults import (
    CLEAR,
    REJECTED,
    FaultChange,
    FaultRequest,
    Wording,
    not_applicable,
)
from vehicle_sim.core.sim_loop import SimLoop
from vehicle_sim.core.vehicle.faults import KINDS
from vehicle_sim.nodes.fault_link import StatusLink

TARGET = "vehicle"


class VehicleFaultLink(StatusLink):
    """Target ``vehicle``: the book is the physics loop's (core.vehicle.faults); this link
    rejects what is no vehicle fault, forwards the rest and reports (``report``, the loop's
    ``faults_changed`` hook)."""

    def __init__(self, node: Node, loop: SimLoop):
        super().__init__(node, TARGET, lambda: loop.t_ns)
        self.loop = loop

    def command(self, req: FaultRequest) -> list[FaultChange]:
        return self.take(req, 0)

    def take(self, req: FaultRequest, at_ns: int) -> list[FaultChange]:
        """Forward to the physics loop, which holds it until ``at_ns`` (the exact step)."""
        if req.kind not in KINDS and req.kind != CLEAR:
            return [FaultChange(req.id, req.kind, REJECTED,
                                f"{Wording().name(req.kind)}: {not_applicable(TARGET, KINDS)}")]
        self.loop.request_fault(req, at_ns)
        return []
