"""The shared command slot (core.command_slot): the reader takes each newest command once, whole,
never a record torn by a write in progress, and the writer sees what was taken."""
from __future__ import annotations

import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import vehicle_sim
from vehicle_sim.core.command_slot import _RECORD, CommandSlot
from vehicle_sim.core.vehicle.interface import Controls


def test_the_newest_command_is_taken_once_with_every_field():
    node = CommandSlot()
    loop = CommandSlot(os.dup(node.fd))  # the physics process's end, mapping the same memory
    try:
        assert loop.take() is None and node.taken() == 0  # nothing written yet
        node.write(Controls(steer_rad=0.1, throttle=0.2, gear=1))
        last = Controls(steer_rad=-0.25, throttle=0.0, brake=0.7, clutch=1.0, gear=-1,
                        handbrake=True)
        seq = node.write(last)
        assert loop.take() == last  # only the newest counts
        assert node.taken() == seq
        assert loop.take() is None  # taken once
    finally:
        loop.close()
        node.close()


def test_a_torn_record_is_not_taken():
    node = CommandSlot()
    loop = CommandSlot(os.dup(node.fd))
    try:
        node.write(Controls(throttle=0.3, gear=1))
        mem = node._mem
        good = bytes(mem[:_RECORD.size])
        mem[16:24] = struct.pack("<d", 0.9)  # a value rewritten, the CRC not yet: disagree
        assert loop.take() is None
        mem[:_RECORD.size] = good
        mem[_RECORD.size - 8:_RECORD.size] = (99).to_bytes(8, "little")  # the second seq ahead
        assert loop.take() is None
        assert node.taken() == 0
        mem[:_RECORD.size] = good  # the write completes: the next take has it
        assert loop.take() == Controls(throttle=0.3, gear=1)
    finally:
        loop.close()
        node.close()


def test_a_reader_in_another_process_takes_only_whole_commands():
    """A real writer in another process writes as fast as it can; every command taken here
    is one it wrote (all fields from one counter), in order."""
    node = CommandSlot()
    writer = textwrap.dedent("""
        import sys
        from vehicle_sim.core.command_slot import CommandSlot
        from vehicle_sim.core.vehicle.interface import Controls
        slot = CommandSlot(int(sys.argv[1]))
        for i in range(1, 200001):
            slot.write(Controls(steer_rad=i * 1e-6, throttle=i * 1e-7, brake=i * 2e-7,
                                clutch=i * 3e-7, gear=i % 7 - 1, handbrake=i % 2 == 1))
    """)
    env = {**os.environ, "PYTHONPATH": str(Path(vehicle_sim.__file__).parents[1])}
    proc = subprocess.Popen([sys.executable, "-c", writer, str(node.fd)], pass_fds=(node.fd,),
                            env=env)
    taken = []
    try:
        while proc.poll() is None or not taken or taken[-1] < 200000:
            c = node.take()  # the same slot object reads as well (one end is enough here)
            if c is not None:
                i = round(c.steer_rad * 1e6)
                assert c == Controls(steer_rad=i * 1e-6, throttle=i * 1e-7, brake=i * 2e-7,
                                     clutch=i * 3e-7, gear=i % 7 - 1, handbrake=i % 2 == 1)
                taken.append(i)
            elif proc.poll() is not None and proc.returncode != 0:
                break
    finally:
        proc.wait(60)
        node.close()
    assert proc.returncode == 0
    assert taken == sorted(set(taken)) and taken[-1] == 200000
    assert len(taken) > 10  # the reader ran alongside the writer
