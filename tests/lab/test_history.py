"""reftable-lab history: a metric over the indexed runs, a regression as a step."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from lab.cli import main
from lab.export import append_index, read_index
from lab.harness import run_scenario
from lab.history import series
from lab.scenarios import SCENARIOS, DatasetRef, Scenario


def test_history_over_two_tiny_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Two runs of the spin workload, the second with 3x the loop (a "regression"):
    history prints both points and the 3x step, and plots them."""
    monkeypatch.setattr(Scenario, "dataset",
                        lambda self, scale, datasets_dir=None: DatasetRef(tmp_path, tmp_path))
    root = tmp_path / "results"
    for i, n in enumerate((3000, 9000), 1):
        s = dataclasses.replace(SCENARIOS["show-ref-1table"], name="history-selftest",
                                workload="spin", scale_params={"small": {"n": n}},
                                peer_workloads=())
        run_dir = root / f"run-{i}"
        r = run_scenario(s, "small", run_dir, only=["all-on", "all-off"], progress=False,
                         measures="allocations", work=False)
        append_index(root, run_dir, [r])
    (on, off) = series(read_index(root), "history-selftest", "allocations")
    assert on.label == "all-on" and [p.run for p in on.points] == ["run-1", "run-2"]
    assert 2.8 < on.points[1].value / on.points[0].value < 3.2
    png = tmp_path / "h.png"
    assert main(["history", "history-selftest", "--out", str(root), "--variant", "all-on",
                 "--png", str(png)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "all-on: allocations (allocations) over 2 run(s)"   # the default metric
    assert out[1].split()[0] == "run-1" and "the run before" not in out[1]
    step = float(out[2].split("x the run before")[0].split()[-1])
    assert 2.8 < step < 3.2
    assert out[-1] == f"plot: {png}" and png.stat().st_size > 0
    assert main(["history", "history-selftest", "--out", str(root), "--metric", "latency"]) == 1
    assert "no run" in capsys.readouterr().err
    assert main(["history", "no-such", "--out", str(root)]) == 1
