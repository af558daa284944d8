"""The traffic node's fault target (its node name, ``traffic``): the instructor of paper 004
sec. 7 and the link faults of its own inputs, on one FaultBook.

Instructor actions come as FaultCommand PROVOKE_ACCIDENT, RUN_RED_LIGHT, FULL_BRAKE, CUT_IN,
STOP_IN_LANE (channel = the agent: "<id>" (TrafficAgent.id), "nearest_ahead", "nearest_behind",
"nearest_crossing"; duration as usual, CLEAR as usual) or through the service
``traffic/instruct`` (srv/Instruct), which builds the same request and takes the same path:
the agent is chosen when the request comes (core.traffic.instructor), the action is set on it
in the core, the fault book keeps it (ids, duration, CLEAR) and faults/status answers, naming
the chosen agent ("PROVOKE_ACCIDENT active until cleared (agent 17)"), or refuses with one
line (unknown agent id, no agent ahead, unknown action ...). When a fault ends or is cleared
its agent drives normally again. LINK_DROP / LINK_DELAY go to link_faults.LinkFaults.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from rclpy.node import Node

from vehicle_sim.core.accident.scene import SCRIPTED_ID_BASE, SCRIPTED_OWNER
from vehicle_sim.core.faults import (
    ACTIVE,
    CLEAR,
    MAX_TEXT_CHARS,
    REJECTED,
    ActiveFault,
    FaultChange,
    FaultRequest,
    duration_problem,
    not_applicable,
    text_problem,
)
from vehicle_sim.core.traffic.instructor import ACTIONS, InstructionError
from vehicle_sim.core.traffic.sim import TrafficSim
from vehicle_sim.nodes import link_faults as lf
from vehicle_sim.nodes import traffic_msgs as tm
from vehicle_sim.nodes.fault_link import CODE_OF, FaultLink
from vehicle_sim.srv import Instruct

INSTRUCTOR_KINDS = tuple(a for a in ACTIONS if a != "none")
SERVICE_ID_BASE = 1 << 31  # ids the service picks (request id 0): 2^31, 2^31 + 1, ...


class TrafficFaults(FaultLink):
    """FaultLink of the traffic node: instructor actions and its input links."""

    def __init__(self, node: Node, sim: TrafficSim, links: lf.LinkFaults,
                 now_ns: Callable[[], int]):
        self.sim, self.links = sim, links
        self.agent_of: dict[int, int] = {}  # fault id -> core uid of its agent
        self._instructed: set[int] = set()
        self._next_id = SERVICE_ID_BASE
        super().__init__(node, node.get_name(), self._check, now_ns=now_ns,
                         on_change=self._apply)
        node.create_service(Instruct, "traffic/instruct", self._on_instruct)

    def _check(self, req: FaultRequest, others: list[ActiveFault]) -> str | None:
        if req.kind in lf.KINDS:
            return self.links.check(req, others)
        if req.kind in INSTRUCTOR_KINDS:
            return None  # the agent was chosen and checked in command()
        return not_applicable(self.target, INSTRUCTOR_KINDS + lf.KINDS)

    def command(self, req: FaultRequest) -> list[FaultChange]:
        if req.kind not in INSTRUCTOR_KINDS:
            return super().command(req)
        name = req.kind.upper()
        try:
            problem = duration_problem(req.duration_s)
            if problem is not None:
                raise InstructionError(problem)
            uid = self._agent(req.channel)
            self.sim.instruct(uid, req.kind)
        except InstructionError as exc:
            return [FaultChange(req.id, req.kind, REJECTED, f"{name}: {exc}")]
        before = self.agent_of.get(req.id)
        self.agent_of[req.id] = uid  # (the book's on_change sets the actions from it)
        changes = super().command(req)
        if not any(c.state == ACTIVE for c in changes):  # the book refused it (e.g. id 0)
            self._restore(req.id, before, uid)
            return changes
        agent_id = int(tm.agent_ids([uid])[0])
        return [FaultChange(c.id, c.kind, c.state, f"{c.message} (agent {agent_id})")
                if c.state == ACTIVE else c for c in changes]

    def _restore(self, fault_id: int, before: int | None, chosen: int) -> None:
        """A refused request: its id keeps the agent it had (or none), the agent it chose
        drives as the book says, as before the request."""
        if before is None:
            self.agent_of.pop(fault_id, None)
        else:
            self.agent_of[fault_id] = before
        self._apply(self.active)
        if chosen not in self._instructed:
            self._set(chosen, "none")

    def _agent(self, selector: str) -> int:
        """Core uid of the agent a selector names (InstructionError if none)."""
        if selector.isascii() and selector.isdigit():  # ('²'.isdigit() too, not int('²'))
            agent_id = int(selector)
            if agent_id >> 24 == SCRIPTED_OWNER:
                raise InstructionError(
                    f"ids from {SCRIPTED_ID_BASE} are the scripted accident scene's vehicles "
                    f"({agent_id} is one): they keep to their plan; the instructor acts on the "
                    "traffic's agents")
            uid = tm.uid_of_id(self.sim.agents()["uid"], agent_id)
            if uid is None:
                raise InstructionError(f"no agent with id {selector} in this traffic")
            return uid
        return self.sim.select_agent(selector)

    def _apply(self, active: list[ActiveFault]) -> None:
        """Set the active actions on their agents; agents whose fault ended drive normally."""
        self.links.update(active)
        want = {self.agent_of[f.request.id]: f.kind for f in active
                if f.kind in INSTRUCTOR_KINDS and f.request.id in self.agent_of}
        for uid in self._instructed - want.keys():
            self._set(uid, "none")
        for uid, kind in want.items():
            self._set(uid, kind)
        self._instructed = set(want)
        live = {f.request.id for f in active if f.kind in INSTRUCTOR_KINDS}
        self.agent_of = {i: u for i, u in self.agent_of.items() if i in live}

    def fault_ids(self, uids: np.ndarray) -> np.ndarray:
        """The instructor fault id acting on each agent (core uids), 0 for none."""
        out = np.zeros(len(uids), dtype=np.uint32)
        if self.agent_of:
            of_uid = {u: i for i, u in self.agent_of.items()}
            out[:] = [of_uid.get(int(u), 0) for u in uids]
        return out

    def _set(self, uid: int, action: str) -> None:
        try:
            self.sim.instruct(uid, action)
        except InstructionError:
            pass  # the agent left the traffic, crashed, or (cut_in) is in the ego's lane now

    def _on_instruct(self, request: Instruct.Request,
                     response: Instruct.Response) -> Instruct.Response:
        fault_id = request.id
        if fault_id == 0:
            fault_id, self._next_id = self._next_id, self._next_id + 1
        kind = request.action.strip().lower()
        req = FaultRequest(fault_id, kind, request.agent.strip(), 0.0, request.duration)
        problem = text_problem(req)  # as faults/command's (StatusLink._on_command)
        changes = ([FaultChange(fault_id, kind[:MAX_TEXT_CHARS], REJECTED, problem)] if problem
                   else self.command(req))
        self.report(self.now_ns(), changes, code=CODE_OF.get(kind, CODE_OF[CLEAR]))
        response.id = fault_id
        response.accepted = bool(changes) and all(c.state != REJECTED for c in changes)
        uid = self.agent_of.get(fault_id)
        response.agent_id = int(tm.agent_ids([uid])[0]) if response.accepted and uid is not None \
            else 0
        response.message = "; ".join(c.message for c in changes)
        return response
