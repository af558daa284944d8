"""vehicle_sim_report's --out folder: one that cannot be written to is one line and exit 2,
the way the runner (which reports write_report's ValueError in one line) gets it too."""
from __future__ import annotations

import errno

import pytest
from matplotlib.figure import Figure

from test.core.test_report_hostile import _states
from vehicle_sim.report import cli


@pytest.fixture
def recording(tmp_path):
    path = tmp_path / "run.mcap"
    _states(path, [float(k) for k in range(20)])
    return path


@pytest.mark.parametrize("where, reason", [
    ("file", "File exists"),  # --out is a file
    ("file/report", "Not a directory"),  # under a file
])
def test_an_out_folder_that_cannot_be_made_is_one_line(tmp_path, recording, capsys, where,
                                                       reason):
    (tmp_path / "file").write_text("")
    out = tmp_path / where
    assert cli.main([str(recording), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"vehicle_sim_report: {out}: report not written ({reason})\n"


def test_a_full_disk_while_plotting_is_one_line(tmp_path, recording, capsys, monkeypatch):
    def full(*_, **__):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(Figure, "savefig", full)
    out = tmp_path / "out"
    assert cli.main([str(recording), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"vehicle_sim_report: {out}: report not written (No space left on device)\n"


def test_a_full_disk_at_the_summary_is_a_value_error(tmp_path, recording, monkeypatch):
    """write_report's own callers (the runner) catch ValueError only."""
    def full(*_, **__):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(cli.Path, "write_text", full)
    with pytest.raises(ValueError, match="report not written \\(No space left on device\\)"):
        cli.write_report(recording, tmp_path / "out")
