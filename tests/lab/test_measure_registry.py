"""lab.measure.registry: every measure has the one shape, and the driver runs them by phase."""
from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from reftable_core.flags import Flags

from lab.harness import measure_all
from lab.measure.context import Measure, RunContext
from lab.measure.registry import MEASURES, PASSES, REGISTRY, WORK, parse_measures
from lab.results import VariantResult
from lab.scenario import Variant


def test_every_registered_measure_satisfies_the_protocol() -> None:
    assert MEASURES == ("time", "instructions", "allocations", "memory", "syscalls")
    for name, m in PASSES.items():
        assert isinstance(m, Measure), name
        assert m.name == name
        for method in ("steps", "run", "load"):
            ours = inspect.signature(getattr(type(m), method))
            theirs = inspect.signature(getattr(Measure, method))
            assert list(ours.parameters) == list(theirs.parameters), (name, method)
    assert WORK.name not in REGISTRY          # the work pass has no --measure name
    phases = [m.phase for m in PASSES.values()]
    assert len(set(phases)) == len(phases) and WORK.phase == max(phases)


def test_parse_measures() -> None:
    assert parse_measures("instructions, time,instructions") == ("instructions", "time")
    for bad in ("", "speed", "time,cpu"):
        try:
            parse_measures(bad)
        except ValueError as e:
            assert "known: time, instructions, allocations, memory" in str(e)
        else:
            raise AssertionError(bad)


def test_a_measure_loads_nothing_from_an_entry_without_its_file() -> None:
    entry = {"label": "a", "kind": "flags", "spec": "", "json": "", "benchmark": "s[a]"}
    figures = {k: v for m in PASSES.values() for k, v in m.load(entry, Path(".")).items()}
    assert figures == {"values": [], "rounds": [], "json_path": "", "work": {}}


def test_run_context_names_files_and_commands(tmp_path: Path) -> None:
    ctx = RunContext("s", tmp_path / "g", {"n": 1}, tmp_path, envs={"b": {"X": "1"}})
    a = Variant("a", Flags().with_spec("mmap=off"), "spin")
    b = Variant("b", Flags(), "spin")
    assert ctx.path(a) == tmp_path / "s.a.json"
    assert ctx.path(a, "instructions") == tmp_path / "s.a.instructions.json"
    assert ctx.bench_name(a) == "s[a]"
    cmd = ctx.worker_cmd(a, "--count")
    assert cmd[:3] == [sys.executable, "-m", "lab.worker"] and cmd[-2:] == ["--quiet", "--count"]
    assert cmd[cmd.index("--lab-flags") + 1] == a.flags.to_spec()
    assert "X" not in ctx.env(a) and ctx.env(b)["X"] == "1"


def test_workers_read_no_git_configuration_of_ours(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker (the model reading config as git does) sees neither the system nor the
    user's git configuration, as git's peers do not, and none of our GIT_* variables."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "mine"))
    monkeypatch.setenv("GIT_DIR", str(tmp_path))
    monkeypatch.delenv("GIT_CONFIG_NOSYSTEM", raising=False)
    env = RunContext("s", tmp_path, {}, tmp_path).env(Variant("a", Flags(), "spin"))
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_CONFIG_GLOBAL"] == os.devnull
    assert "GIT_DIR" not in env and env["PATH"] == os.environ["PATH"]


class _Fake:
    """A measure in the protocol's shape, recording the order it runs in."""

    def __init__(self, name: str, phase: int, log: list[str]) -> None:
        self.name, self.phase, self.log = name, phase, log

    def steps(self, ctx: RunContext, variants: Any) -> int:
        return len(variants)

    def run(self, ctx: RunContext, variants: Any, record: Any) -> None:
        self.log.append(self.name)
        for v in variants:
            record(v.label, {"instructions": float(self.phase)})

    def load(self, entry: Any, run_dir: Path) -> dict[str, Any]:
        return {}


def test_the_driver_runs_measures_by_phase(tmp_path: Path) -> None:
    log: list[str] = []
    late, early = _Fake("late", 5, log), _Fake("early", 1, log)
    assert isinstance(late, Measure)
    v = Variant("a", Flags(), "spin")
    results = {"a": VariantResult("a", "flags", "", [], "")}
    measure_all(RunContext("s", tmp_path, {}, tmp_path), [late, early], [v], results)
    assert log == ["early", "late"] and results["a"].instructions == 5.0


def test_a_worker_loads_no_orchestration() -> None:
    code = ("import sys, lab.worker, lab.interleave; "
            "print(sorted(m for m in sys.modules if m.startswith('lab')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    for module in ("lab.harness", "lab.results", "lab.scenario", "lab.measure.context",
                   "lab.measure.registry"):
        assert f"'{module}'" not in out
