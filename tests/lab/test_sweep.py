"""lab.sweep: scaling curves and their fitted exponents."""
from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from lab.cli import main
from lab.harness import RunOptions
from lab.scenarios import SCENARIOS, DatasetRef, Scenario
from lab.sweep import QUADRATIC, fit_exponent, parse_sweep, run_sweep, write


def test_parse_sweep_takes_any_number_notation() -> None:
    assert parse_sweep("refs=1e3,1e4,100000") == ("refs", [1000, 10_000, 100_000])
    for bad in ("refs", "=1,2", "refs=1e3", "refs=a,b", "refs=0,10"):
        with pytest.raises(ValueError):
            parse_sweep(bad)


def test_fit_exponent_recovers_a_power_law() -> None:
    sizes = [1e3, 1e4, 1e5]
    assert fit_exponent(sizes, [3 * n for n in sizes]) == pytest.approx(1.0)
    assert fit_exponent(sizes, [0.5 * n * n for n in sizes]) == pytest.approx(2.0)
    assert fit_exponent(sizes, [n * 1.1 ** (i % 2) for i, n in enumerate(sizes)]) \
        == pytest.approx(1.0, abs=0.05)


def _spin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scenario:
    monkeypatch.setattr(Scenario, "dataset",
                        lambda self, scale, datasets_dir=None: DatasetRef(tmp_path, tmp_path))
    return dataclasses.replace(SCENARIOS["show-ref-1table"], name="sweep-selftest",
                               workload="spin", scale_params={"small": {"n": 1000}},
                               peer_workloads=())


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_a_linear_and_a_quadratic_workload(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """spin's n additions, measured by allocations (exact) at three small sizes: its
    cost grows as n^1; the deliberately quadratic workload (spin over size^2/100
    additions) as n^2 and is flagged."""
    s = _spin(tmp_path, monkeypatch)
    sizes = [2000, 4000, 8000]
    options = RunOptions(measures=("allocations",), only=["all-on"], progress=False)
    linear = run_sweep(s, "n", sizes, "small", tmp_path / "lin", options)

    def squared(params: dict[str, Any], size: int) -> dict[str, Any]:
        return {**params, "n": size * size // 100}
    quadratic = run_sweep(s, "n", sizes, "small", tmp_path / "quad", options,
                          params_for=squared)
    (lin,), (quad,) = linear.curves, quadratic.curves
    assert lin.sizes == sizes == quad.sizes
    assert lin.exponent == pytest.approx(1.0, abs=0.1)
    assert quad.exponent == pytest.approx(2.0, abs=0.1)
    assert "quadratic" not in linear.sentences()[0]
    assert quadratic.sentences()[0].startswith("all-on grows as n^2.0")
    assert quadratic.sentences()[0].endswith("(quadratic or worse)") and QUADRATIC < 2
    png = write(quadratic, tmp_path / "quad")
    assert png.exists() and png.stat().st_size > 0
    saved = json.loads((tmp_path / "quad" / "sweep-selftest.sweep.json").read_text())
    assert saved["curves"][0]["quadratic"] is True
    assert (tmp_path / "lin" / "n=4000" / "sweep-selftest.result.json").exists()


def test_bench_refuses_a_bad_sweep(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "show-ref-1table", "--sweep", "refs", "--measure", "time"]) == 2
    assert "--sweep" in capsys.readouterr().err
