"""14-DOF vehicle dynamics kernel f(x, u, p) (papers 004 and 001), numba.

DOF (004): sprung body 6 (position, roll/pitch/yaw) + per wheel vertical travel (4) and spin
(4). Extra states: tyre deflections (relaxation, 8), engine speed, and three discrete entries
with zero derivative (gear, clutch-lock flag, time since the last shift) updated between steps
by ``discrete.discrete_update``. Layout (X_*, O_*): state_layout.py; helpers: corners.py.

Frames and reference point: body = sprung-mass CG (base_link, x forward, y left, z up); pose
and linear velocity in the world (odom, ENU) frame, angular rates in the body frame; Euler
angles roll, pitch, yaw (z-y-x). Horizontally the unsprung masses move with the body (the total
mass m accelerates in x, y; their inertial reaction acts at the wheel centres); vertically the
body has the sprung mass and each wheel its own mass. The suspension of a corner is vertical,
attached to the body at (x_i, y_i, 0) (body frame; x_i = a or -b, y_i = +-track/2); its force
(paper 001: nonlinear spring + bump/rebound damper + stops; plus an anti-roll bar per axle)
carries the body. Tyre normal load =
radial tyre spring-damper between the wheel centre and the terrain (so load transfer emerges).
Tyre horizontal forces act at the contact point under the corner; contact frame from the
terrain normal and the wheel heading (front wheels steered with Ackermann geometry).
Tyre (magic_formula.py): Magic Formula on transient slips kappa' = u_x / sigma_x and tan(alpha') =
u_y / sigma_y, the deflection states following du_x/dt = (omega R_e - v_x) - |v_x| u_x / sigma_x
and du_y/dt = -v_y - |v_x| u_y / sigma_y (first-order relaxation, Pacejka 2012 ch. 7; well
defined at standstill, where the deflection acts as a spring and holds the car), plus carcass
damping on du/dt. sigma scales with the slip stiffness (surface, tyre fault). When the
kinematic slip (speed floored at ``F_VFLOOR``) is beyond the force peak the contact slides: the
force then comes from the kinematic slip without damping, and ``discrete.limit_deflections``
keeps the deflection at the peak (no stored deflection pushes the car back after a skid).
Effective rolling radius R_e = R0 - deflection / 3 (common radial-tyre approximation).
Wheel spin: I dw/dt = drive - R_e Fx + limited-slip - resist, where brakes and rolling
resistance (c_rr Fz R_e) resist with a torque clipped at their capacity that would stop the
wheel within ``F_BRAKE_TAU`` (Coulomb friction with a held-wheel regularisation).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from vehicle_sim.core.vehicle.full14.corners import (
    compression, corner, relaxation_lengths, rot9, steer_angles, suspension_force,
    tyre_coefficients)
from vehicle_sim.core.vehicle.full14.drivetrain import (
    brake_torque_limits, clutch_capacity, clutch_inverse_inertia, engine_torque, total_ratio)
from vehicle_sim.core.vehicle.full14.magic_formula import aligning_moment, combined_forces
from vehicle_sim.core.vehicle.full14.packing import (
    F_BRAKE_TAU, F_CL_BAND, F_CL_CVISC, F_CL_TMAX, F_CL_VISCOUS, F_CRR, F_CT, F_CX, F_CY, F_DAMPX,
    F_DAMPY, F_DRAG, F_EX, F_EXT, F_EY, F_G, F_IE, F_IW, F_IXX, F_IYY, F_IZZ, F_KARB, F_KDRIVE,
    F_KT, F_LSD, F_M, F_MS, F_MU_UNS, F_R0, F_RRSCALE, F_RSCALE, F_SPEAK, F_STEER_MAX, F_TERRAIN,
    F_TRAIL, F_VFLOOR)
from vehicle_sim.core.vehicle.full14.state_layout import (
    N_OUT, N_STATE, O_AX, O_AY, O_AZ, O_CARRIER, O_DELTA, O_FS, O_FX, O_FY, O_FZ, O_MZ, O_RE, O_TAN,
    O_TCLUTCH, O_TENGINE, O_VX, X_ENGINE, X_GEAR, X_LOCK, X_OMEGA, X_P, X_PITCH, X_Q, X_R, X_ROLL,
    X_SHIFT_T, X_UX, X_UY, X_VX, X_VY, X_VZ, X_VZW, X_X, X_Y, X_YAW, X_Z, X_ZW)
from vehicle_sim.core.vehicle.full14.terrain import ground, surface_at
from vehicle_sim.core.vehicle.planar import U_STEER, U_THROTTLE


@njit(cache=True)
def full14_eval(x, u, p, out):
    """dx/dt of the 14-DOF model; fills ``out`` (O_* layout) with forces for snapshots."""
    dx = np.zeros(N_STATE)
    rt = rot9(x[X_ROLL], x[X_PITCH], x[X_YAW])
    p_, q_, r_ = x[X_P], x[X_Q], x[X_R]
    w0 = rt[0] * p_ + rt[1] * q_ + rt[2] * r_  # angular velocity in the world frame
    w1 = rt[3] * p_ + rt[4] * q_ + rt[5] * r_
    w2 = rt[6] * p_ + rt[7] * q_ + rt[8] * r_
    o = int(p[F_TERRAIN])
    delta = min(max(u[U_STEER], -p[F_STEER_MAX]), p[F_STEER_MAX])
    d_fl, d_fr = steer_angles(delta, p)
    g = p[F_G]
    # external wrench on the body (collisions; model.Full14Model.set_external_wrench), world
    fh_x, fh_y, fs_sum = p[F_EXT], p[F_EXT + 1], p[F_EXT + 2]
    t0, t1, t2 = p[F_EXT + 3], p[F_EXT + 4], p[F_EXT + 5]  # torque about the CG, world frame
    work = np.empty(24)
    tau, lever_x, lever_y, lever_z = work[0:4], work[4:8], work[8:12], work[12:16]
    rolling, brakes = work[16:20], work[20:24]
    for i in range(4):
        axle = i // 2
        d0, d1, _, cx_w, cy_w, v0, v1, v2 = corner(x, p, rt, w0, w1, w2, i)
        h, hx, hy = ground(p, o, cx_w, cy_w)
        nn = math.sqrt(hx * hx + hy * hy + 1.0)
        n0, n1, n2 = -hx / nn, -hy / nn, 1.0 / nn
        zw, vzw = x[X_ZW + i], x[X_VZW + i]
        r0 = p[F_R0 + axle] * p[F_RSCALE + i]
        pen = r0 - (zw - h)
        fz = 0.0
        if pen > 0.0:
            fz = max(p[F_KT] * pen + p[F_CT] * (hx * v0 + hy * v1 - vzw), 0.0)
        re = r0 - max(pen, 0.0) / 3.0
        comp = compression(x, p, rt, i)
        fs = suspension_force(comp, vzw - v2, axle, p)
        fs += p[F_KARB + axle] * (comp - compression(x, p, rt, i ^ 1))  # anti-roll bar
        # contact frame: wheel heading projected on the ground plane
        dl = d_fl if i == 0 else (d_fr if i == 1 else 0.0)
        cd, sd = math.cos(dl), math.sin(dl)
        hd0 = rt[0] * cd + rt[1] * sd
        hd1 = rt[3] * cd + rt[4] * sd
        hd2 = rt[6] * cd + rt[7] * sd
        dn = hd0 * n0 + hd1 * n1 + hd2 * n2
        ex0, ex1, ex2 = hd0 - dn * n0, hd1 - dn * n1, hd2 - dn * n2
        en = math.sqrt(ex0 * ex0 + ex1 * ex1 + ex2 * ex2)
        ex0, ex1, ex2 = ex0 / en, ex1 / en, ex2 / en
        ey0, ey1, ey2 = n1 * ex2 - n2 * ex1, n2 * ex0 - n0 * ex2, n0 * ex1 - n1 * ex0
        vcx = v0 * ex0 + v1 * ex1 + v2 * ex2
        vcy = v0 * ey0 + v1 * ey1 + v2 * ey2
        ux, uy = x[X_UX + i], x[X_UY + i]
        lam_mu, lam_k = surface_at(p, o, cx_w, cy_w)
        mux, muy, kx, ky, bnx, bny = tyre_coefficients(fz, lam_mu, lam_k, i, p)
        sig_x, sig_y = relaxation_lengths(lam_k, i, p)
        slip_vel = x[X_OMEGA + i] * re - vcx
        dux = slip_vel - abs(vcx) * ux / sig_x
        duy = -vcy - abs(vcx) * uy / sig_y
        # sliding (kinematic slip beyond the peak): no carcass memory, kinematic slip;
        # else the transient slip of the deflection states
        floor = max(abs(vcx), p[F_VFLOOR])
        kappa, tan_a = slip_vel / floor, -vcy / floor
        damp_x = damp_y = 0.0
        if math.hypot(bnx * kappa, bny * tan_a) <= p[F_SPEAK]:
            kappa, tan_a = ux / sig_x, uy / sig_y
            damp_x, damp_y = p[F_DAMPX] * dux, p[F_DAMPY] * duy
        fx0, fy0 = combined_forces(kappa, tan_a, fz, mux, muy, kx, ky, p[F_CX], p[F_CY],
                                   p[F_EX], p[F_EY])
        fx, fy = 0.0, 0.0
        if fz > 0.0:
            fx, fy = fx0 + damp_x, fy0 + damp_y
            ratio = math.hypot(fx / (mux * fz), fy / (muy * fz)) if mux * muy > 0.0 else 0.0
            if ratio > 1.0:
                fx, fy = fx / ratio, fy / ratio
        mz = aligning_moment(fy0, tan_a, ky, muy * fz, p[F_TRAIL])
        fw0 = fx * ex0 + fy * ey0 + fz * n0
        fw1 = fx * ex1 + fy * ey1 + fz * n1
        fw2 = fx * ex2 + fy * ey2 + fz * n2
        fh_x += fw0
        fh_y += fw1
        fs_sum += fs
        cz = h - x[X_Z]  # contact point below the CG
        t0 += d1 * fs - cz * fw1 + mz * n0
        t1 += -d0 * fs + cz * fw0 + mz * n1
        t2 += d0 * fw1 - d1 * fw0 + mz * n2
        lever_x[i], lever_y[i], lever_z[i] = d0, d1, zw - x[X_Z]
        m_u = p[F_MU_UNS + axle]
        dx[X_ZW + i] = vzw
        dx[X_VZW + i] = (fw2 - fs) / m_u - g
        dx[X_UX + i], dx[X_UY + i] = dux, duy
        tau[i] = -re * fx
        out[O_FZ + i], out[O_FX + i], out[O_FY + i], out[O_MZ + i] = fz, fx, fy, mz
        out[O_VX + i], out[O_RE + i], out[O_TAN + i], out[O_FS + i] = vcx, re, tan_a, fs
        out[O_DELTA + i] = dl
        rolling[i] = p[F_CRR] * p[F_RRSCALE + i] * fz * re  # rolling-resistance torque
    _wheel_spin(x, u, p, dx, tau, rolling, brakes, out)
    vx, vy, vz = x[X_VX], x[X_VY], x[X_VZ]
    drag = p[F_DRAG] * math.sqrt(vx * vx + vy * vy + vz * vz)
    ax = (fh_x - drag * vx) / p[F_M]
    ay = (fh_y - drag * vy) / p[F_M]
    az = (fs_sum - drag * vz) / p[F_MS] - g
    for i in range(4):  # inertial reaction of the unsprung masses carried horizontally
        m_u = p[F_MU_UNS + i // 2]
        d0, d1 = lever_x[i], lever_y[i]
        t0 += lever_z[i] * m_u * ay
        t1 -= lever_z[i] * m_u * ax
        t2 += -d0 * m_u * ay + d1 * m_u * ax
    tb0 = rt[0] * t0 + rt[3] * t1 + rt[6] * t2  # body frame: R^T torque
    tb1 = rt[1] * t0 + rt[4] * t1 + rt[7] * t2
    tb2 = rt[2] * t0 + rt[5] * t1 + rt[8] * t2
    ixx, iyy, izz = p[F_IXX], p[F_IYY], p[F_IZZ]
    dx[X_P] = (tb0 - (izz - iyy) * q_ * r_) / ixx
    dx[X_Q] = (tb1 - (ixx - izz) * r_ * p_) / iyy
    dx[X_R] = (tb2 - (iyy - ixx) * p_ * q_) / izz
    sr, cr = math.sin(x[X_ROLL]), math.cos(x[X_ROLL])
    tp, cp = math.tan(x[X_PITCH]), math.cos(x[X_PITCH])
    dx[X_ROLL] = p_ + (q_ * sr + r_ * cr) * tp
    dx[X_PITCH] = q_ * cr - r_ * sr
    dx[X_YAW] = (q_ * sr + r_ * cr) / cp
    dx[X_X], dx[X_Y], dx[X_Z] = vx, vy, vz
    dx[X_VX], dx[X_VY], dx[X_VZ] = ax, ay, az
    dx[X_SHIFT_T] = 1.0
    out[O_AX], out[O_AY], out[O_AZ] = ax, ay, az
    return dx


@njit(cache=True)
def _wheel_spin(x, u, p, dx, tau, rolling, brakes, out):
    """Wheel and engine accelerations from the tyre torques ``tau`` [N m] and the rolling
    resistance torques. Clutch: slipping (dry or viscous) or locked (constraint torque)."""
    iw, ie = p[F_IW], p[F_IE]
    lsd = p[F_LSD]
    for axle in range(2):
        t_lsd = lsd * (x[X_OMEGA + 2 * axle] - x[X_OMEGA + 2 * axle + 1])
        tau[2 * axle] -= t_lsd
        tau[2 * axle + 1] += t_lsd
    gear = int(x[X_GEAR])
    ratio = total_ratio(gear, p)
    we = x[X_ENGINE]
    carrier = 0.0
    for i in range(4):
        carrier += p[F_KDRIVE + i] * x[X_OMEGA + i]
    t_engine = engine_torque(we, u[U_THROTTLE], p)
    cap = clutch_capacity(we, u, p)
    locked = x[X_LOCK] > 0.5 and ratio != 0.0
    t_clutch = 0.0
    if ratio != 0.0 and not locked:
        slip = we - ratio * carrier
        if p[F_CL_VISCOUS] > 0.0:
            t_clutch = p[F_CL_CVISC] * slip * cap / p[F_CL_TMAX]
        else:
            t_clutch = cap * min(max(slip / p[F_CL_BAND], -1.0), 1.0)
        for i in range(4):
            tau[i] += p[F_KDRIVE + i] * ratio * t_clutch
    brake_torque_limits(u, p, brakes)
    for i in range(4):
        capacity = brakes[i] + rolling[i]
        hold = tau[i] + iw * x[X_OMEGA + i] / p[F_BRAKE_TAU]
        tau[i] -= min(max(hold, -capacity), capacity)
    if locked:
        ktau = 0.0
        for i in range(4):
            ktau += p[F_KDRIVE + i] * tau[i]
        t_clutch = (t_engine / ie - ratio * ktau / iw) / clutch_inverse_inertia(ratio, p)
        t_clutch = min(max(t_clutch, -cap), cap)
        for i in range(4):
            tau[i] += p[F_KDRIVE + i] * ratio * t_clutch
    for i in range(4):
        dx[X_OMEGA + i] = tau[i] / iw
    dx[X_ENGINE] = (t_engine - t_clutch) / ie
    out[O_TCLUTCH], out[O_TENGINE], out[O_CARRIER] = t_clutch, t_engine, carrier


@njit(cache=True)
def full14_f(x, u, p):
    """dx/dt of the 14-DOF model (state X_*, input planar.U_*, params packing.F_*)."""
    return full14_eval(x, u, p, np.empty(N_OUT))
