"""Explicit fixed-step integrators of paper 001: Euler, midpoint and classical RK4.

A model is a pure function ``f(x, u, p) -> dx/dt`` over float64 arrays (state x, held input u,
packed parameters p). Local truncation errors (001): Euler O(dt^2), midpoint O(dt^3), RK4 O(dt^5);
global errors O(dt), O(dt^2), O(dt^4). The integrators are numba-jitted and take the model as a
first-class jitted function, so a kernel and its integrator compile together.

They are NOT disk-cached: numba's cache key of a function that takes another jitted function as
argument holds that argument's dispatcher, and a later process then fails with "underlying
object has vanished". They compile once per process (about 1-4 s per model/integrator pair).
"""
from __future__ import annotations

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


def integrator(name: str):
    """The step function called ``name`` (one of INTEGRATORS); unknown names raise ValueError."""
    table = {"euler": euler_step, "midpoint": midpoint_step, "rk4": rk4_step}
    if name not in table:
        raise ValueError(f"unknown integrator {name!r} (choose one of {', '.join(INTEGRATORS)})")
    return table[name]


def empty_input() -> np.ndarray:
    """A zero-length input array for autonomous systems."""
    return np.zeros(0)
