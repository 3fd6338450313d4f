"""Exports of a finished run: Bencher Metric Format JSON and the results index.

Contract: metrics(result) gives each variant's figures under the Bencher
Metric Format's measure slugs (METRICS): latency (wall time per run, in
nanoseconds, Bencher's unit for its built-in latency; the 95 % t interval of
the mean as lower_value / upper_value), instructions, allocations (of one run
of the timed region) and peak-memory (bytes the workload added to the peak
resident set, lab.measure.memory's rss_above), syscalls (system calls of one run)
and syscalls-<call> (those of each call lab.measure.syscalls.CALLS names); a
measure not taken is absent.
bmf(results) is the BMF document, {benchmark: {measure: {"value", ...}}},
one benchmark per variant named as its pyperf benchmark
(<scenario>[<label>]); write_bmf() writes it to <run>/bmf.json.

append_index(root, run_dir, results) appends one JSON line to
<root>/index.jsonl (INDEX): the run's folder, time, project commit (and
whether the work tree had changes), git version, Python version, machine,
scale, scenarios, measures, revisions, and every variant's metrics (the
values only), so lab.history reads a metric over runs from the index alone.
The pyperf JSON files are the harness's (every measure writes them).
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gitbin import REPO_ROOT, GitNotAvailable, GitRunner, find_git, hermetic_env

from .results import SYSCALL_METRICS, ScenarioResult, VariantResult

INDEX = "index.jsonl"
BMF_FILE = "bmf.json"
_NS = 1e9


def variant_metrics(v: VariantResult) -> dict[str, dict[str, float]]:
    """The variant's BMF measures: {slug: {"value": v[, "lower_value", "upper_value"]}}."""
    out: dict[str, dict[str, float]] = {}
    summary = v.summary()
    if summary:
        out["latency"] = {"value": summary["mean"] * _NS,
                          "lower_value": summary["ci_low"] * _NS,
                          "upper_value": summary["ci_high"] * _NS}
    if v.instructions is not None:
        out["instructions"] = {"value": float(v.instructions)}
    if v.allocations is not None:
        out["allocations"] = {"value": float(v.allocations)}
    if v.memory.get("rss_above") is not None:
        out["peak-memory"] = {"value": float(v.memory["rss_above"])}   # type: ignore[arg-type]
    if v.syscalls is not None:
        out["syscalls"] = {"value": float(v.syscalls)}
        for metric in SYSCALL_METRICS:
            out[metric] = {"value": float(v.syscalls_by_call.get(metric.split("-", 1)[1], 0))}
    return out


def benchmark_name(result: ScenarioResult, v: VariantResult) -> str:
    return v.benchmark or f"{result.scenario}[{v.label}]"


def bmf(results: Sequence[ScenarioResult]) -> dict[str, dict[str, dict[str, float]]]:
    """The Bencher Metric Format document of the results (variants without a measure
    left out: BMF requires one)."""
    doc = {}
    for r in results:
        for v in r.variants:
            m = variant_metrics(v)
            if m:
                doc[benchmark_name(r, v)] = m
    return doc


def write_bmf(results: Sequence[ScenarioResult], run_dir: Path) -> Path:
    out = run_dir / BMF_FILE
    out.write_text(json.dumps(bmf(results), indent=1))
    return out


def project_commit(root: Path = REPO_ROOT) -> dict[str, Any]:
    """{"commit": HEAD of the checkout at root (None outside a repository), "dirty"}."""
    env = hermetic_env()

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([find_git(), "-C", str(root), *args], capture_output=True,
                              text=True, env=env)
    head = git("rev-parse", "HEAD")
    if head.returncode != 0:
        return {"commit": None, "dirty": None}
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": head.stdout.strip(), "dirty": bool(status.stdout.strip())}


def git_version() -> str | None:
    try:
        return GitRunner(find_git()).version()
    except (GitNotAvailable, OSError, subprocess.CalledProcessError):
        return None


def machine() -> dict[str, Any]:
    return {"node": platform.node(), "system": platform.system(),
            "release": platform.release(), "arch": platform.machine(),
            "cpus": os.cpu_count(), "processor": platform.processor()}


def index_entry(run_dir: Path, results: Sequence[ScenarioResult]) -> dict[str, Any]:
    return {
        "run": run_dir.name, "path": str(run_dir.resolve()),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "project": project_commit(), "git_version": git_version(),
        "python": sys.version.split()[0], "python_implementation":
            platform.python_implementation(), "machine": machine(),
        "scale": results[0].scale if results else None,
        "scenarios": [r.scenario for r in results],
        "measures": sorted({m for r in results for m in r.measures}),
        "revisions": {r.scenario: r.revisions for r in results if r.revisions},
        "metrics": {r.scenario: {v.label: {k: m["value"] for k, m in
                                           variant_metrics(v).items()}
                                 for v in r.variants} for r in results},
    }


def append_index(root: Path, run_dir: Path, results: Sequence[ScenarioResult]) -> Path:
    """Append the run's entry to <root>/index.jsonl; that file."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / INDEX
    with open(path, "a") as f:
        f.write(json.dumps(index_entry(run_dir, results)) + "\n")
    return path


def read_index(root: Path) -> list[dict[str, Any]]:
    """Every entry of <root>/index.jsonl, oldest first ([] when there is none)."""
    path = root / INDEX
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
