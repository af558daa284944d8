"""Every packed column layout of the traffic kernels, one prefix per table.

| prefix | table | filled by |
|---|---|---|
| ``AF_`` / ``AI_`` | agent rows ``af[AF_X, i]``, ``ai[AI_LANE, i]`` | agents.AgentStore |
| ``LF_`` / ``LI_`` | lane float / int columns ``net.lane_f[lane, LF_LEN]`` | network.Network |
| ``SF_`` | signal columns ``net.sig_f[k, SF_S]``; kinds ``SIG_*`` | network.Network |
| ``NF_`` / ``NI_`` | node float / int columns ``net.node_f[node, NF_X]`` | network.Network |
| ``CFG_`` | step configuration ``cfg[CFG_DT]`` | sim.TrafficSim |
| ``EGO_`` | ego row ``ego[EGO_X]`` | sim.TrafficSim |
| ``VP_`` | agent vehicle parameters ``vp[VP_M]`` | sim.TrafficSim |

Agents: pose (x, y, yaw) is the CG in the map frame (ENU, rad); (u, v, r) are body-frame
velocities [m/s, m/s, rad/s] of 004 eqs. 1-3; ``AF_S`` is the arc length [m] of the CG's
projection on lane ``AI_LANE``. Lanes: lengths [m], speeds [m/s], curvature [1/m].
"""
from __future__ import annotations

# agent float rows: state, driver memory, then per-agent driver parameters (instance data)
(AF_X, AF_Y, AF_YAW, AF_U, AF_V, AF_R, AF_S, AF_DELTA, AF_DELTA_P_PREV, AF_AR_PREV, AF_LAT_OFF,
 AF_WAIT_T, AF_TICKET, AF_ACCEL,
 AF_TS, AF_D0, AF_CD_STEER, AF_A_M, AF_B_COMF, AF_T_HW, AF_S0, AF_V_FACTOR, AF_A_LAT,
 AF_YELLOW_DEC, AF_RED_RUN, AF_STOP_SPEED, AF_GW_SPEED, AF_CROSS_FACTOR, AF_CD_ACC, AF_LENGTH,
 AF_WIDTH, AF_INSTR_UNTIL, AF_CRASH_T) = range(33)
N_AF = 33
# agent int rows
(AI_ACTIVE, AI_LANE, AI_NEXT, AI_UID, AI_PROFILE, AI_IGNORE_SIGNS, AI_COMMIT, AI_GO, AI_DYN,
 AI_HOPS, AI_REMOVE, AI_INSTR, AI_CRASHED) = range(13)
N_AI = 13
# values of AI_ACTIVE
FREE, OWNED, GHOST = 0, 1, 2
# values of AI_INSTR: the instructor's switch on the 004 driver (instructor.py); AF_INSTR_UNTIL
# is the sim time [s] it ends (-1 = until cleared). AI_CRASHED = 1: an outside integrator moves
# the agent (crashed.py), the kernel only keeps it as an obstacle; AF_CRASH_T = sim time marked.
INS_NONE, INS_PROVOKE, INS_RUN_RED, INS_FULL_BRAKE, INS_CUT_IN, INS_STOP = range(6)
# values of AI_DYN (vehicle model of the last step)
DYN_KINEMATIC, DYN_SINGLE_TRACK = 0, 1

# lane float columns
LF_LEN, LF_SPEED, LF_KMAX, LF_SKMAX, LF_TURN, LF_WIDTH = range(6)
N_LF = 6
# lane int columns
(LI_P0, LI_NP, LI_CNODE, LI_ENODE, LI_SUCC0, LI_NSUCC, LI_SIG0, LI_NSIG, LI_LEFT, LI_RIGHT,
 LI_CLOCAL, LI_FROM, LI_BUS, LI_STREET) = range(14)
N_LI = 14
# path point columns (net.pts rows): x, y [m], heading [rad], arc length s [m], curvature [1/m],
# heading change to the lane's next point wrapped to [-pi, pi] [rad] (lane_path.fill_turns; 0 at
# a lane's last point)
PT_X, PT_Y, PT_HEADING, PT_S, PT_KAPPA, PT_TURN = range(6)

# signal columns and kinds (values of SF_KIND)
SF_S, SF_KIND, SF_LIGHT = range(3)
SIG_LIGHT, SIG_STOP, SIG_GIVEWAY, SIG_CROSSING = range(4)
SIG_KIND_CODE = {"traffic_light": SIG_LIGHT, "stop": SIG_STOP, "give_way": SIG_GIVEWAY,
                 "crossing": SIG_CROSSING}

# node float / int columns
NF_X, NF_Y, NF_R = range(3)
NI_C0, NI_NC = range(2)

# step configuration
(CFG_DT, CFG_T, CFG_LOD, CFG_DYNMIN, CFG_APPROACH, CFG_EGO_YIELD, CFG_MAXWAIT, CFG_LC_TIME,
 CFG_LC_THR, CFG_BSAFE, CFG_SEED, CFG_GX0, CFG_GY0, CFG_CELL, CFG_NCX, CFG_NCY) = range(16)
N_CFG = 16
# ego row
EGO_X, EGO_Y, EGO_YAW, EGO_U, EGO_ON, EGO_LEN, EGO_WID = range(7)
N_EGO = 7
# agent vehicle parameters (one set shared by every agent)
VP_M, VP_IZ, VP_A, VP_B, VP_CF, VP_CR, VP_MU, VP_P, VP_SMAX, VP_FMAX = range(10)
N_VP = 10
