"""The instructor of paper 004 sec. 7 on the traffic agents: which agent, which misbehaviour.

004: "the instructor picks a vehicle and switches off its references to nearby vehicles" so it
collides. Here each action is a switch on one agent's 004 driver (``layout.INS_*``, applied in
the kernels): ``provoke_accident`` (no leader, ego or junction-conflict references),
``run_red_light`` (lights and stop / give-way signs ignored), ``full_brake`` (brake pedal at 1:
-mu g), ``cut_in`` (a lane change into the ego's lane close in front of the ego, see
``cut_in_lane``), ``stop_in_lane`` (stops at its comfortable deceleration and stays).

Targets: an agent uid, or ``nearest_ahead`` / ``nearest_behind`` of the ego (agents driving the
ego's way within ``SELECT_HALF_WIDTH_M`` of its axis: its lane and the lanes beside it), or
``nearest_crossing`` (an agent approaching or inside the junction the ego approaches, on a lane
crossing the ego's heading). Bad requests raise :class:`InstructionError` with one clear line.
"""
from __future__ import annotations

import math

import numpy as np

from vehicle_sim.core.traffic.kernels import layout as lay
from vehicle_sim.core.traffic.kernels.driver_law import LEADER_RANGE_M
from vehicle_sim.core.traffic.kernels.exits import choose_exit, hash_uniform
from vehicle_sim.core.traffic.kernels.lane_path import project

ACTIONS = {"none": lay.INS_NONE, "provoke_accident": lay.INS_PROVOKE,
           "run_red_light": lay.INS_RUN_RED, "full_brake": lay.INS_FULL_BRAKE,
           "cut_in": lay.INS_CUT_IN, "stop_in_lane": lay.INS_STOP}
ACTION_NAMES = {code: name for name, code in ACTIONS.items()}
SELECTORS = ("nearest_ahead", "nearest_behind", "nearest_crossing")

# A choice: 1.5 lane widths (3.5 m lanes) takes the ego's lane and the lanes beside it.
SELECT_HALF_WIDTH_M = 5.25
# The driver model's leader range: an agent farther ahead is beyond the ego's leader search (its
# default horizon), so its misbehaviour would not reach the ego.
SELECT_RANGE_M = LEADER_RANGE_M
SAME_WAY_COS = 0.5  # driving the ego's way: relative heading within 60 deg
CROSSING_COS = 0.7  # crossing the ego's heading: relative heading beyond ~45 deg
JUNCTION_RANGE_M = 120.0  # the junction the ego approaches: its centre at most this far ahead
JUNCTION_LATERAL_M = 4.0  # ... and within its radius plus this of the ego's axis
# Cut-in window (a choice): the agent cuts in once its rear bumper is ahead of the ego's front
# by less than CUT_IN_MIN_GAP_M + CUT_IN_TIME_GAP_S * ego speed. 1 s is the IDM city time
# headway (Treiber & Kesting 2013, table 11.2) and 5 m is below its 2 m + 1 s * u desired gap
# at city speeds: the ego must brake harder than comfortably to restore its gap.
CUT_IN_MIN_GAP_M = 5.0
CUT_IN_TIME_GAP_S = 1.0


class InstructionError(ValueError):
    """An instruction that cannot be applied (unknown action, no such agent, no ego ...)."""


def action_code(action: str) -> int:
    if action not in ACTIONS:
        raise InstructionError(f"unknown instructor action {action!r} (known: "
                               f"{', '.join(ACTIONS)})")
    return ACTIONS[action]


def slot_of(store, uid: int) -> int:
    """Slot of the owned agent with this uid; InstructionError if there is none."""
    ai = store.ai
    hit = np.flatnonzero((ai[lay.AI_UID] == uid) & (ai[lay.AI_ACTIVE] == lay.OWNED))
    if len(hit) == 0:
        raise InstructionError(f"no agent with id {uid} in this traffic")
    return int(hit[0])


def _ego_frame(store, ego) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(slots, along [m], lateral [m], cos of relative heading) of the owned, not crashed
    agents in the ego's frame."""
    af, ai = store.af, store.ai
    idx = np.flatnonzero((ai[lay.AI_ACTIVE] == lay.OWNED) & (ai[lay.AI_CRASHED] == 0))
    c, s = math.cos(ego[2]), math.sin(ego[2])
    dx, dy = af[lay.AF_X, idx] - ego[0], af[lay.AF_Y, idx] - ego[1]
    return idx, c * dx + s * dy, -s * dx + c * dy, np.cos(af[lay.AF_YAW, idx] - ego[2])


def select(store, net, ego, selector: str) -> int:
    """Slot of the agent a selector names (module doc); InstructionError if none fits."""
    if selector not in SELECTORS:
        raise InstructionError(f"unknown agent selector {selector!r} (an agent id or one of "
                               f"{', '.join(SELECTORS)})")
    if ego is None:
        raise InstructionError(f"{selector} needs the ego's pose (none received yet)")
    idx, along, lat, cos_rel = _ego_frame(store, ego)
    if selector == "nearest_crossing":
        return _crossing(store, net, ego, idx, cos_rel)
    sign = 1.0 if selector == "nearest_ahead" else -1.0
    ok = ((sign * along > 0.0) & (sign * along < SELECT_RANGE_M)
          & (np.abs(lat) < SELECT_HALF_WIDTH_M) & (cos_rel > SAME_WAY_COS))
    if not ok.any():
        where = "ahead of" if sign > 0 else "behind"
        raise InstructionError(f"no agent {where} the ego within {SELECT_RANGE_M:g} m in its "
                               "lane or the lanes beside it")
    return int(idx[ok][np.argmin(sign * along[ok])])


def _crossing(store, net, ego, idx, cos_rel) -> int:
    nf = net.node_f[:-1]
    c, s = math.cos(ego[2]), math.sin(ego[2])
    dx, dy = nf[:, 0] - ego[0], nf[:, 1] - ego[1]
    along, lat = c * dx + s * dy, -s * dx + c * dy
    near = ((along > -nf[:, 2]) & (along < JUNCTION_RANGE_M)
            & (np.abs(lat) < nf[:, 2] + JUNCTION_LATERAL_M))
    if not near.any():
        raise InstructionError(f"nearest_crossing: the ego approaches no junction within "
                               f"{JUNCTION_RANGE_M:g} m")
    node = int(np.flatnonzero(near)[np.argmin(along[near])])
    lanes = store.ai[lay.AI_LANE, idx]
    at_node = (net.lane_i[lanes, lay.LI_ENODE] == node) | (net.lane_i[lanes, lay.LI_CNODE] == node)
    ok = at_node & (np.abs(cos_rel) < CROSSING_COS)
    if not ok.any():
        raise InstructionError(f"nearest_crossing: no agent approaches the ego's junction "
                               f"(node {node}) on a crossing lane")
    af = store.af
    d = np.hypot(af[lay.AF_X, idx[ok]] - nf[node, 0], af[lay.AF_Y, idx[ok]] - nf[node, 1])
    return int(idx[ok][np.argmin(d)])


def instruct(store, net, ego, slot: int, code: int, until_s: float) -> None:
    """Set agent ``slot``'s instruction (``until_s`` sim time [s], -1 = until cleared).
    CUT_IN needs the agent in a lane beside the ego's, driving its way."""
    if code == lay.INS_CUT_IN:
        if ego is None:
            raise InstructionError("cut_in needs the ego's pose (none received yet)")
        if _ego_lane_beside(net, store, ego, slot) < 0:
            uid = int(store.ai[lay.AI_UID, slot])
            raise InstructionError(f"cut_in: agent {uid} is not in a lane beside the ego's "
                                   "(same direction)")
    store.ai[lay.AI_INSTR, slot] = code
    store.af[lay.AF_INSTR_UNTIL, slot] = until_s if code != lay.INS_NONE else -1.0


def expire(store, t_s: float) -> None:
    """Clear the instructions whose end time has come."""
    af, ai = store.af, store.ai
    done = (ai[lay.AI_INSTR] != lay.INS_NONE) & (af[lay.AF_INSTR_UNTIL] >= 0.0) & \
        (af[lay.AF_INSTR_UNTIL] <= t_s + 1e-9)
    ai[lay.AI_INSTR, done] = lay.INS_NONE
    af[lay.AF_INSTR_UNTIL, done] = -1.0


def _ego_lane_beside(net, store, ego, i: int) -> int:
    """The lane beside agent i's lane (same direction) that the ego is on, or -1."""
    ln = int(store.ai[lay.AI_LANE, i])
    if net.lane_i[ln, lay.LI_CNODE] >= 0:
        return -1
    for side in (lay.LI_LEFT, lay.LI_RIGHT):
        tgt = int(net.lane_i[ln, side])
        if tgt < 0:
            continue
        s_guess = store.af[lay.AF_S, i] * net.lane_f[tgt, lay.LF_LEN] / net.lane_f[ln, lay.LF_LEN]
        _, lat = project(net.pts, net.lane_i, tgt, s_guess, ego[0], ego[1])
        if abs(lat) < 0.5 * net.lane_f[tgt, lay.LF_WIDTH]:
            return tgt
    return -1


def cut_ins(store, net, ego, ego_length_m: float, seed: int) -> None:
    """Every CUT_IN agent beside the ego's lane whose rear is within the cut-in window ahead of
    the ego's front (module constants) changes into the ego's lane now; the lateral move is
    the vehicle model's (as an overtaking change, lane_change.try_change)."""
    if ego is None:
        return
    af, ai = store.af, store.ai
    for i in np.flatnonzero((ai[lay.AI_INSTR] == lay.INS_CUT_IN) & (ai[lay.AI_CRASHED] == 0)
                            & (ai[lay.AI_ACTIVE] == lay.OWNED)):
        tgt = _ego_lane_beside(net, store, ego, int(i))
        if tgt < 0:
            continue
        along = (af[lay.AF_X, i] - ego[0]) * math.cos(ego[2]) + \
            (af[lay.AF_Y, i] - ego[1]) * math.sin(ego[2])
        gap = along - 0.5 * (af[lay.AF_LENGTH, i] + ego_length_m)
        if not 0.0 < gap < CUT_IN_MIN_GAP_M + CUT_IN_TIME_GAP_S * max(ego[3], 0.0):
            continue
        ln = int(ai[lay.AI_LANE, i])
        s_guess = af[lay.AF_S, i] * net.lane_f[tgt, lay.LF_LEN] / net.lane_f[ln, lay.LF_LEN]
        s_new, lat = project(net.pts, net.lane_i, tgt, s_guess, af[lay.AF_X, i], af[lay.AF_Y, i])
        ai[lay.AI_LANE, i], af[lay.AF_S, i], af[lay.AF_LAT_OFF, i] = tgt, s_new, lat
        ai[lay.AI_NEXT, i] = choose_exit(net, tgt, hash_uniform(seed, ai[lay.AI_UID, i],
                                                                ai[lay.AI_HOPS, i]))
        ai[lay.AI_HOPS, i] += 1
