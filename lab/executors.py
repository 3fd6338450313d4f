"""Where counts are made: here (a local pool), or as Dask tasks on a cluster's workers.

Contract: parse_executor(text) reads bench's --executor: "local" or "local:N" (this
machine, N counts at once: the harness's thread pool, RunOptions.jobs),
"dask-local:N" (a distributed.LocalCluster of N one-thread worker processes,
started now, closed with the executor) or "dask://HOST:PORT" (the scheduler of a
running cluster). open_executor(spec) gives None for local (the measures count
here, as before) or a DaskExecutor. Only counts (lab.countcache.COUNTED:
instructions, allocations) go to a DaskExecutor; wall time, memory and system
calls stay on this machine, each scenario's time on one machine, never split.

Before a worker is given a task it reports its environment (environment():
the project commit, the hash of the contents of the sources a count runs
(countcache.sources_hash), which covers a dirty tree, Python, valgrind, the git
binary, REFTABLE_LAB_WORKER_TAG, a tag an operator may set, and the paths a
count depends on, countcache.machine_paths: the checkout's, the interpreter's,
the current directory, the TMPDIRs' scratch folder and each variable of the
environment a counted process starts from, so the cluster needs the same checkout
at the same path, started from the same directory); a worker whose report differs
from ours is refused, with one line naming the first difference, and gets no task
(none left: BenchError).
A task (CountTask) names the scenario's dataset by its preset, parameters and
manifest hash, under the caller's (absolute) datasets folder, and its git
directory: the worker builds it (data_gen; deterministic, a cache hit when
it is there) and refuses it if its content hash or its git directory's path (which
the counted process is given) differs, then counts the
variant's command exactly as a local count does (lab.measure.instructions /
allocations count_one, the same argv and count_env), so the counts, the pyperf
files and result.json are a local run's. Progress: one step per finished task
on the caller's progress callback (the same tqdm bar).

distributed is optional (pip install 'reftable-lab[dask]', make dask): without
it, local runs are unchanged and a dask executor fails with one line
(BenchError).
"""
from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reftable_core.flags import Flags

import data_gen
from gitbin import REPO_ROOT, hermetic_env

from .countcache import git_id, machine_paths, python_id, sources_hash, valgrind_version
from .measure import BenchError
from .measure import allocations as allocs_measure
from .measure import instructions as instr_measure
from .measure.context import RunContext
from .measure.work import WorkCount, work_variant
from .scenario import Variant

if TYPE_CHECKING:
    from .scenario import Scenario

TAG_ENV = "REFTABLE_LAB_WORKER_TAG"
NO_DASK = ("--executor {spec} needs distributed (pip install 'reftable-lab[dask]', or "
           "make dask)")


@dataclass(frozen=True)
class ExecutorSpec:
    kind: str                  # "local" | "dask-local" | "dask"
    workers: int | None = None  # local / dask-local: N
    address: str = ""          # dask: tcp://HOST:PORT

    def __str__(self) -> str:
        if self.kind == "dask":
            return self.address.replace("tcp://", "dask://", 1)
        return f"{self.kind}:{self.workers}" if self.workers else self.kind


def parse_executor(text: str) -> ExecutorSpec:
    """--executor's text (see the module doc); ValueError for anything else."""
    if text.startswith("dask://"):
        host = text[len("dask://"):]
        if ":" not in host:
            raise ValueError(f"--executor {text}: dask://HOST:PORT")
        return ExecutorSpec("dask", address=f"tcp://{host}")
    kind, _, n = text.partition(":")
    if kind not in ("local", "dask-local"):
        raise ValueError(f"--executor {text}: local[:N], dask-local:N or dask://HOST:PORT")
    if n and (not n.isdigit() or int(n) < 1):
        raise ValueError(f"--executor {text}: N must be a positive number")
    if kind == "dask-local" and not n:
        n = str(os.cpu_count() or 1)
    return ExecutorSpec(kind, int(n) if n else None)


def environment() -> dict[str, str]:
    """What a worker must share with the caller for its counts to be the caller's."""
    head = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"],
                          capture_output=True, text=True, check=False).stdout.strip()
    git = git_id()          # first: finding git sets REFTABLE_LAB_GIT, which workers inherit
    paths = machine_paths(hermetic_env(os.environ.get("HOME")))
    env = paths.pop("env")
    return {"commit": head or "none", "sources": sources_hash(), "python": python_id(),
            "valgrind": valgrind_version(), "git": git,
            "tag": os.environ.get(TAG_ENV, ""), **paths,
            **{f"env {k}": v for k, v in sorted(env.items())}}


def difference(ours: Mapping[str, str], theirs: Mapping[str, str]) -> str | None:
    """The first entry in which two environments differ (ours in order, then one only
    theirs has), in words, or None."""
    for k in [*ours, *(k for k in theirs if k not in ours)]:
        if ours.get(k) != theirs.get(k):
            return f"{k} {str(theirs.get(k))[:40]!r}, not {str(ours.get(k))[:40]!r}"
    return None


@dataclass(frozen=True)
class CountTask:
    """One count, as a worker makes it (picklable; see the module doc)."""
    measure: str
    scenario: str
    scale: str
    preset: str
    dataset_params: dict[str, Any]
    datasets_root: str
    manifest: str
    params: dict[str, Any]
    label: str
    workload: str
    flags: str
    peer: bool
    extra_env: dict[str, str] = field(default_factory=dict)
    gitdir: str = ""            # the caller's git directory of the dataset ("": unchecked)


@functools.lru_cache(maxsize=32)
def _prepared(env_items: tuple[tuple[str, str], ...], argv: tuple[str, ...]) -> None:
    """The instruction measure's byte-compile and warm run, once per worker process and
    variant environment."""
    instr_measure.compile_packages()
    instr_measure.run_command(list(argv), env=instr_measure.count_env(
        {**os.environ, **dict(env_items)}))


def run_task(task: CountTask) -> Any:
    """A worker's count of task (its dataset built and checked here first)."""
    ds = data_gen.build(task.preset, root=task.datasets_root, **task.dataset_params)
    got = str(ds.manifest.get("content_hash", ""))
    if task.manifest and got != task.manifest:
        raise BenchError(f"dataset {ds.path}: content hash {got}, not the caller's "
                         f"{task.manifest}")
    if task.gitdir and str(ds.gitdir) != task.gitdir:
        raise BenchError(f"dataset {ds.path}: git directory {ds.gitdir}, not the caller's "
                         f"{task.gitdir} (a count depends on its path)")
    v = Variant(task.label, Flags().with_spec(task.flags), task.workload, peer=task.peer)
    ctx = RunContext(task.scenario, Path(ds.gitdir), dict(task.params), Path(ds.path),
                     envs={task.label: dict(task.extra_env)},
                     trace_loops=task.measure == "work-traced")
    if task.measure == "allocations":
        allocs_measure.library()
        return allocs_measure.count_one(ctx, v)
    if task.measure in ("work", "work-traced"):               # the work pass's counters
        return WorkCount(work_variant(ctx, v))
    _prepared(tuple(sorted(ctx.env(v).items())), tuple(ctx.worker_cmd(v, "--count")))
    return instr_measure.count_one(ctx, v)


class DaskExecutor:
    """Counts as Dask tasks (see the module doc); close() ends a cluster it started."""

    def __init__(self, spec: ExecutorSpec, log: Any = sys.stderr) -> None:
        try:
            import distributed
        except ImportError:
            raise BenchError(NO_DASK.format(spec=spec)) from None
        self.spec, self.log = spec, log
        self.cluster = None
        if spec.kind == "dask-local":
            self.cluster = distributed.LocalCluster(n_workers=spec.workers, threads_per_worker=1,
                                                    processes=True, dashboard_address=None)
            self.client = distributed.Client(self.cluster)
        else:
            self.client = distributed.Client(spec.address, timeout=30)
        self._as_completed = distributed.as_completed
        self.workers = self.accepted()

    def accepted(self) -> list[str]:
        """The workers whose environment is ours; one line for each one refused."""
        ours = environment()
        reports = self.client.run(environment)
        ok = []
        for addr, theirs in sorted(reports.items()):
            diff = difference(ours, theirs)
            if diff is None:
                ok.append(addr)
            else:
                print(f"executor: worker {addr} refused: its {diff}", file=self.log)
        if not ok:
            raise BenchError(f"--executor {self.spec}: no worker shares this environment")
        return ok

    def counts(self, ctx: RunContext, measure: str, todo: Mapping[Any, Variant],
               scenario: Scenario, scale: str, dataset: Path, manifest: str
               ) -> dict[Any, Any]:
        """Every count of todo (key -> variant), one task each, on the accepted workers."""
        params = scenario.dataset_params(scale)
        tasks = {k: CountTask(measure, ctx.scenario, scale, scenario.preset,
                              {p: ctx.params.get(p, x) for p, x in params.items()},
                              str(Path(dataset).parent.resolve()), manifest, dict(ctx.params),
                              v.label, v.workload, v.flags.to_spec(), v.peer,
                              dict(ctx.extra_env(v) or {}), str(ctx.gitdir))
                 for k, v in todo.items()}
        keys = list(tasks)
        futures = self.client.map(run_task, [tasks[k] for k in keys], pure=False,
                                  workers=self.workers)
        by_future = {f.key: k for f, k in zip(futures, keys)}
        out: dict[Any, Any] = {}
        for f in self._as_completed(futures):
            k = by_future[f.key]
            out[k] = f.result()
            ctx.progress(f"{measure} {todo[k].label} (dask)", 1)
        return out

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


Executor = DaskExecutor


def open_executor(spec: ExecutorSpec) -> DaskExecutor | None:
    """None for a local executor (the measures count here), else a DaskExecutor."""
    return None if spec.kind == "local" else DaskExecutor(spec)
