"""FaultCommand / FaultStatus for target "vehicle": the dynamics node's side of fault injection.

Commands for other targets are ignored (the sensor and bridge nodes own them). A vehicle command
that is not a vehicle fault is rejected at once; the others go to the physics loop, which applies
them between two steps (core.vehicle.faults) and reports every change, stamped with the
simulation time at which it took effect, through ``on_changes``.
"""
from __future__ import annotations

from rclpy.node import Node

from vehicle_sim.core.sim_loop import SimLoop
from vehicle_sim.core.vehicle.faults import FaultChange, FaultRequest
from vehicle_sim.msg import FaultCommand, FaultStatus
from vehicle_sim.nodes import qos
from vehicle_sim.nodes.fault_book import FAULT_NAMES, not_applicable, publish_changes

TARGET = "vehicle"
KIND_OF = {FaultCommand.TYRE_BLOWOUT: "tyre_blowout", FaultCommand.BRAKE_FAILURE: "brake_failure",
           FaultCommand.STEERING_STUCK: "steering_stuck", FaultCommand.ENGINE_CUT: "engine_cut",
           FaultCommand.CLEAR: "clear"}
CODE_OF = {kind: code for code, kind in KIND_OF.items()}
STATE_OF = {"active": FaultStatus.STATE_ACTIVE, "cleared": FaultStatus.STATE_CLEARED,
            "rejected": FaultStatus.STATE_REJECTED}
_VEHICLE_FAULTS = tuple(c for c in KIND_OF if c != FaultCommand.CLEAR)


class VehicleFaultLink:
    def __init__(self, node: Node, loop: SimLoop):
        self.node, self.loop = node, loop
        self.pub = node.create_publisher(FaultStatus, "faults/status", qos.EVENT)
        node.create_subscription(FaultCommand, "faults/command", self._on_command,
                                 qos.FAULT_COMMAND)

    def _on_command(self, cmd: FaultCommand) -> None:
        if cmd.target != TARGET:
            return
        kind = KIND_OF.get(cmd.fault)
        if kind is None:
            name = FAULT_NAMES.get(cmd.fault, f"fault {cmd.fault}")
            self.on_changes(self.loop.t_ns, [FaultChange(
                cmd.id, "", "rejected", f"{name}: {not_applicable(TARGET, _VEHICLE_FAULTS)}")],
                code=cmd.fault)
            return
        self.loop.request_fault(FaultRequest(cmd.id, kind, cmd.channel, cmd.value, cmd.duration))

    def on_changes(self, t_ns: int, changes: list[FaultChange], code: int = 0) -> None:
        """Publish and log fault changes (called from the physics thread, or the executor)."""
        publish_changes(self.node, self.pub, TARGET, t_ns,
                        [(c.id, CODE_OF.get(c.kind, code), STATE_OF[c.state], c.message)
                         for c in changes])
