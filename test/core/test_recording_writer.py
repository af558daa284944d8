"""An MCAP recording on a device that stops taking bytes (here a file size limit, RLIMIT_FSIZE:
the same OSError path as a full disk, without one): one line saying why and when, no exception
out of the writer, nothing more written, and the file keeps what it had."""
from __future__ import annotations

import subprocess
import sys
import textwrap

WRITER = textwrap.dedent("""
    import resource, signal, sys
    from vehicle_sim.recording_writer import McapRecording
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit: EFBIG, not a signal
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))
    rec = McapRecording(sys.argv[1], "maps/urban_grid.yaml", "test")
    rec.add_channel("/x", "std_msgs/msg/String", "string data", "")
    for k in range(20_000):
        rec.add_message("/x", k * 10_000_000, bytes(100))
        line = rec.new_failure()
        if line:
            print("FAILED", k, line)
    rec.add_channel("/y", "std_msgs/msg/String", "string data", "")
    rec.finish()
    print("count", rec.message_count, "again", repr(rec.new_failure()))
""")


def test_a_recording_that_cannot_write_says_so_once_and_stops(tmp_path):
    result = subprocess.run([sys.executable, "-c", WRITER, str(tmp_path)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    failed = [line for line in result.stdout.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 1, result.stdout
    assert "File too large; recording stopped at t=" in failed[0], failed[0]
    written = int(result.stdout.split("count ")[1].split()[0])
    assert 0 < written < 20_000 and f"after {written} messages" in failed[0], result.stdout
    assert result.stdout.rstrip().endswith("again ''")
    (path,) = tmp_path.glob("*.mcap")
    assert 0 < path.stat().st_size <= 200_000
