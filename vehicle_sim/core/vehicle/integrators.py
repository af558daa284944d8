"""Explicit fixed-step integrators of paper 001: Euler, midpoint and classical RK4.

A model is a pure function ``f(x, u, p) -> dx/dt`` over float64 arrays (state x, held input u,
packed parameters p). Local truncation errors (001): Euler O(dt^2), midpoint O(dt^3), RK4 O(dt^5);
global errors O(dt), O(dt^2), O(dt^4). The integrators are numba-jitted and take the model as a
first-class jitted function, so a kernel and its integrator compile together.

One step of a model is ``advance``: the integrator's step of ``f``, then the model's
``after_step(x, x_new, u, p, dt)`` (its discrete rules between steps, editing x_new in place:
stop at rest, gear and clutch changes). ``run_steps`` is the one batch loop of every model,
``model_step`` the one step a model object takes.

These are NOT disk-cached: numba's cache key of a function that takes another jitted function as
argument holds that argument's dispatcher, and a later process then fails with "underlying
object has vanished". They compile once per process (about 1-4 s per model/integrator pair).
"""
from __future__ import annotations

import functools
import math

import numpy as np
from numba import njit

INTEGRATORS = ("euler", "midpoint", "rk4")


@njit
def euler_step(f, x, u, p, dt):
    """x(t + dt) by one forward-Euler step (1 evaluation of f)."""
    return x + dt * f(x, u, p)


@njit
def midpoint_step(f, x, u, p, dt):
    """x(t + dt) by the explicit midpoint rule (2 evaluations of f)."""
    k1 = f(x, u, p)
    return x + dt * f(x + 0.5 * dt * k1, u, p)


@njit
def rk4_step(f, x, u, p, dt):
    """x(t + dt) by the classical fourth-order Runge-Kutta rule (4 evaluations of f)."""
    k1 = f(x, u, p)
    k2 = f(x + 0.5 * dt * k1, u, p)
    k3 = f(x + 0.5 * dt * k2, u, p)
    k4 = f(x + dt * k3, u, p)
    return x + (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


@njit(cache=False)  # takes jitted functions as arguments: numba cannot cache those
def advance(step_fn, f, after_step, x, u, p, dt):
    """x(t + dt): one ``step_fn`` step of ``f``, then ``after_step(x, x_new, u, p, dt)``."""
    x_new = step_fn(f, x, u, p, dt)
    after_step(x, x_new, u, p, dt)
    return x_new


@njit(cache=False)  # takes jitted functions as arguments: numba cannot cache those
def run_steps(step_fn, f, after_step, x0, controls, p, dt, n):
    """n ``advance`` steps from x0; row i of ``controls`` (clamped to the last row) is held over
    step i. Returns the (n + 1, len(x0)) trajectory including x0."""
    out = np.empty((n + 1, x0.shape[0]))
    out[0] = x0
    x = x0.copy()
    last = controls.shape[0] - 1
    for i in range(n):
        x = advance(step_fn, f, after_step, x, controls[min(i, last)], p, dt)
        out[i + 1] = x
    return out


@functools.cache
def model_step(step_fn, f, after_step):
    """``advance`` bound to one integrator and model, jitted once per process and triple: a
    model's ``step()`` then passes arrays and dt only (function arguments are typed on every
    call from Python, about 0.5 us each)."""

    @njit(cache=False)
    def step(x, u, p, dt):
        return advance(step_fn, f, after_step, x, u, p, dt)

    return step


def integrator(name: str):
    """The step function called ``name`` (one of INTEGRATORS); unknown names raise ValueError."""
    table = {"euler": euler_step, "midpoint": midpoint_step, "rk4": rk4_step}
    if name not in table:
        raise ValueError(f"unknown integrator {name!r} (choose one of {', '.join(INTEGRATORS)})")
    return table[name]


@njit(cache=True)
def all_finite(x):
    """True if no element of the state x is NaN or infinite (np.isfinite(x).all() without
    its two array calls, ~1.5 us a step)."""
    for v in x:
        if not math.isfinite(v):
            return False
    return True


def empty_input() -> np.ndarray:
    """A zero-length input array for autonomous systems."""
    return np.zeros(0)
