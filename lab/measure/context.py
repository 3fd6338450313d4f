"""What every measure is given (RunContext) and the one shape a measure has (Measure).

Contract: a measure is one module of lab.measure exposing MEASURE, an object with
the Measure protocol's attributes, and one line in lab.measure.registry. The
harness's one driver (lab.harness) hands each chosen measure, in phase order, a
RunContext (the scenario's name, dataset, parameters, output directory, effort,
schedule and the callables for progress and parallel work) and the variants; the
measure writes its pyperf JSON file per variant (RunContext.path) and gives each
variant's figures through record(label, {VariantResult field: value}). load() reads
those figures back from a result file's variant entry and the run directory, so
lab.results reads every measure the same way. This module imports nothing the
measuring worker (lab.worker) does not, and the measure modules name it only in
annotations: a worker loads no orchestration.
"""
from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from gitbin import hermetic_env

if TYPE_CHECKING:           # annotations only: the worker never loads lab.scenario
    from ..scenario import Variant

T = TypeVar("T")
Record = Callable[[str, Mapping[str, Any]], None]     # (variant label, its figures)


def _serial(fn: Callable[[T], None], items: Iterable[T], parallel: bool = True) -> None:
    for item in items:
        fn(item)


def _no_progress(text: str | None, done: int) -> None:
    return None


@dataclass(frozen=True)
class RunContext:
    """One scenario's run, as its measures see it."""
    scenario: str                                   # the scenario's name
    gitdir: Path                                    # its dataset's git directory
    params: dict[str, Any]                          # its parameters at the run's scale
    out_dir: Path                                   # where every measure's files go
    mode: str = "fast"                              # time: pyperf's effort (ROUND_VALUES)
    rounds: int | None = None                       # time: interleaved rounds (None: sequential)
    order: tuple[tuple[str, ...], ...] = ()         # time: the labels of each round
    within_process: bool = False                    # time: all rounds in one process
    trace_loops: bool = True                        # work: count the hot loops' bytecodes
    envs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # label -> extra env
    counts: dict[Any, Any] | None = None            # instructions: lab.measure.instructions.CountCache
    counter: Any = None                             # counts: lab.countcache.Counter (bound), or None
    progress: Callable[[str | None, int], None] = _no_progress   # (postfix, steps done)
    each: Callable[..., None] = _serial             # each(fn, items, parallel): `jobs` at once

    def bench_name(self, v: Variant) -> str:
        """The variant's pyperf benchmark name: <scenario>[<label>]."""
        return f"{self.scenario}[{v.label}]"

    def worker_cmd(self, v: Variant, *extra: str) -> list[str]:
        """The `python -m lab.worker` command of the variant, extra arguments after."""
        return [sys.executable, "-m", "lab.worker", "--workload", v.workload,
                "--gitdir", str(self.gitdir), "--params", json.dumps(self.params),
                "--lab-flags", v.flags.to_spec(), "--name", self.bench_name(v),
                "--quiet", *extra]

    def extra_env(self, v: Variant) -> Mapping[str, str] | None:
        """The variant's own variables (a revision's PYTHONPATH, a git build), or None."""
        return self.envs.get(v.label)

    def env(self, v: Variant) -> dict[str, str]:
        """The variant's worker environment: ours made hermetic as git's peers' is
        (gitbin.hermetic_env: no system or global git configuration, no GIT_*
        variable of ours, pinned identities and dates), then its own variables. The
        model reads git's configuration files as git does: a variant's figures must
        not depend on the user's ~/.gitconfig, nor differ from git's in what it read."""
        return hermetic_env(os.environ.get("HOME"), self.extra_env(v))

    def path(self, v: Variant, measure: str = "") -> Path:
        """<scenario>.<label>[.<measure>].json in the output directory."""
        return self.out_dir / ".".join(x for x in (self.scenario, v.label, measure, "json") if x)

    def metadata(self, v: Variant) -> dict[str, str]:
        """The pyperf metadata every measure's file carries for the variant."""
        return {"lab_workload": v.workload, "lab_flags": v.flags.to_spec()}


@runtime_checkable
class Measure(Protocol):
    """A measure: what `--measure NAME` runs and how its figures come back."""
    name: str           # --measure's word and the registry's key
    phase: int          # run order within a scenario (lower first)

    def steps(self, ctx: RunContext, variants: Sequence[Variant]) -> int:
        """Progress steps it will report for these variants."""
        ...

    def run(self, ctx: RunContext, variants: Sequence[Variant], record: Record) -> None:
        """Measure the variants, write their files, record their figures
        (BenchError when it cannot: a tool missing, a worker failed)."""
        ...

    def load(self, entry: Mapping[str, Any], run_dir: Path) -> dict[str, Any]:
        """The figures a result file's variant entry names, read from run_dir."""
        ...
