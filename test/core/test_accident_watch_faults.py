"""The accident watch names the instructor fault of an accident's agents (core.accident.watch):
a fault of the run before is not named in a new run (sim time went back), and a full memory
forgets its oldest agent, not the one being updated."""
from __future__ import annotations

import numpy as np

from vehicle_sim.core.accident import watch as w
from vehicle_sim.core.accident.params import AccidentParams


def agents(ids, xs, faults) -> dict[str, np.ndarray]:
    n = len(ids)
    cols = {k: np.zeros(n) for k in w.COLUMNS}
    cols.update(id=np.array(ids, dtype=np.int64), x=np.array(xs, dtype=float),
                length=np.full(n, 4.5), width=np.full(n, 1.8),
                fault_id=np.array(faults, dtype=np.int64))
    return cols


def test_a_new_run_does_not_name_the_fault_of_the_run_before():
    watch = w.AccidentWatch(AccidentParams(), (4.5, 1.8))
    watch.remember_faults(10_000_000_000, agents([7], [0.0], [5]))  # run 1: fault 5 on 7
    apart = agents([7, 8], [0.0, 50.0], [0, 0])
    assert watch.agents(10_000_000_000, [(10_000_000_000, apart)]) == []
    touching = agents([7, 8], [0.0, 4.0], [0, 0])  # run 2 (time went back): they collide
    watch.remember_faults(1_000_000_000, touching)
    events = watch.agents(1_000_000_000, [(1_000_000_000, touching)])
    assert events and all(e.fault_id == 0 for e in events), events
    watch.remember_faults(1_050_000_000, agents([8], [4.0], [9]))  # run 2's own fault stays
    assert watch.fault_of == {"agent/8": 9}


def test_a_full_memory_updates_an_agent_without_forgetting_another(monkeypatch):
    monkeypatch.setattr(w, "MAX_FAULTED_AGENTS", 2)
    watch = w.AccidentWatch(AccidentParams(), (4.5, 1.8))
    watch.remember_faults(0, agents([1, 2], [0.0, 0.0], [11, 12]))
    watch.remember_faults(0, agents([2], [0.0], [13]))  # agent 2 again: nothing to forget
    assert watch.fault_of == {"agent/1": 11, "agent/2": 13}
    watch.remember_faults(0, agents([3], [0.0], [14]))  # a third: the oldest goes
    assert watch.fault_of == {"agent/2": 13, "agent/3": 14}
