"""lab.measure.memory: peak RSS above the worker's own, and the tracemalloc peak."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gitbin import GitRunner
from lab.harness import run_scenario
from lab.results import ScenarioResult
from lab.measure import memory
from lab.report import render
from lab.scenarios import SCENARIOS, DatasetRef, Scenario


def test_peak_rss_sees_a_known_allocation() -> None:
    """64 MiB touched in a fresh interpreter raise its peak by at least that much."""
    code = ("from lab.measure.memory import peak_rss; a = peak_rss(); "
            "b = bytearray(64 << 20); print(a, peak_rss())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    before, after = int(out[0]), int(out[1])
    assert before > 1 << 20 and after - before >= 63 << 20


def _repo(make_repo: Callable[..., Path], git: GitRunner) -> Path:
    """A reftable repository with one commit and the manifest facts update_ref_create reads."""
    repo = make_repo()
    git.run(["commit", "-q", "--allow-empty", "-m", "c"], cwd=repo)
    tip = git.out(["rev-parse", "HEAD"], cwd=repo).decode().strip()
    (repo / "manifest.json").write_text(json.dumps({"facts": {"tip": tip}}))
    return repo / ".git"


def _cmd(workload: str, gitdir: Path, params: dict) -> list[str]:
    return [sys.executable, "-m", "lab.worker", "--workload", workload, "--gitdir", str(gitdir),
            "--params", json.dumps(params), "--memory"]


def test_the_tracemalloc_peak_grows_with_the_workload(make_repo: Callable[..., Path],
                                                      git: GitRunner) -> None:
    """One transaction creating n refs holds every queued update: each more ref adds
    at least 100 traced bytes to the peak; the baseline is the interpreter and the lab
    (megabytes)."""
    gitdir = _repo(make_repo, git)
    small = memory.measure_memory(_cmd("update_ref_create", gitdir, {"refs": 250}))
    big = memory.measure_memory(_cmd("update_ref_create", gitdir, {"refs": 2000}))
    for m in (small, big):
        assert m.baseline_rss > 5 << 20 and m.peak_rss >= m.baseline_rss
        assert m.rss_above == m.peak_rss - m.baseline_rss
    assert small.tracemalloc_peak and big.tracemalloc_peak
    assert big.tracemalloc_peak - small.tracemalloc_peak > 100 * (2000 - 250)


def test_a_peer_is_measured_by_its_processes(make_repo: Callable[..., Path],
                                             git: GitRunner) -> None:
    gitdir = _repo(make_repo, git)
    m = memory.measure_memory(_cmd("git_show_ref", gitdir, {"probe": "refs/heads/main"}),
                              children=True)
    assert m.tracemalloc_peak is None
    assert 0 < m.baseline_rss < 64 << 20        # `git --version`, not the Python worker
    assert m.peak_rss >= m.baseline_rss and m.rss_above == m.peak_rss - m.baseline_rss


def test_memory_results_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Scenario, "dataset",
                        lambda self, scale, datasets_dir=None: DatasetRef(tmp_path, tmp_path))
    s = dataclasses.replace(SCENARIOS["show-ref-1table"], name="mem-selftest", workload="spin",
                            scale_params={"small": {"n": 20_000}}, peer_workloads=())
    r = run_scenario(s, "small", tmp_path / "out", only=["all-on"], progress=False,
                     measures="memory")
    m = r.variants[0].memory
    assert m["peak_rss"] and m["baseline_rss"] and m["tracemalloc_peak"] is not None
    saved = json.loads((tmp_path / "out" / "mem-selftest.result.json").read_text())
    assert saved["measures"] == ["memory"] and saved["variants"][0]["memory"] == m
    loaded = ScenarioResult.from_json(saved, tmp_path / "out")
    assert loaded.variants[0].memory == m
    assert "peak RSS above own" in render([loaded], tmp_path / "out").read_text()


def test_the_memory_scenario_iterates_a_million_refs_at_full_scale() -> None:
    s = SCENARIOS["iterate-refs-memory"]
    assert s.params("full")["refs"] == 1_000_000 and s.params("small")["refs"] == 20_000
    assert s.workload == "show_ref"
