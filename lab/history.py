"""`reftable-lab history`: one metric of one scenario over the indexed runs.

Contract: series(entries, scenario, metric, variant) reads the results index
(lab.export.read_index: one entry per bench run, oldest first) and returns,
per variant label (all, or the one asked for), the points (run, project
commit, value) of the runs that measured it; a regression shows as a step
between two consecutive points. plot() draws them (one line per variant,
log y when the values span more than a decade) into a PNG; lines() is the
printed table. The metric names are lab.export.METRICS.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .export import METRICS

UNITS = {"latency": "ns", "instructions": "instructions", "allocations": "allocations",
         "peak-memory": "bytes"}


@dataclass
class Point:
    run: str
    commit: str          # the project commit, short ("?" outside a repository)
    dirty: bool
    value: float


@dataclass
class Series:
    label: str
    points: list[Point] = field(default_factory=list)


def series(entries: Sequence[dict[str, Any]], scenario: str, metric: str,
           variant: str | None = None) -> list[Series]:
    """The metric of each variant of scenario over the entries, in entry order."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")
    out: dict[str, Series] = {}
    for e in entries:
        for label, metrics in e.get("metrics", {}).get(scenario, {}).items():
            if (variant is not None and label != variant) or metric not in metrics:
                continue
            project = e.get("project") or {}
            out.setdefault(label, Series(label)).points.append(
                Point(e["run"], (project.get("commit") or "?")[:10], bool(project.get("dirty")),
                      float(metrics[metric])))
    return list(out.values())


def default_metric(entries: Sequence[dict[str, Any]], scenario: str) -> str | None:
    """The first of METRICS that some run of scenario measured."""
    for metric in METRICS:
        if any(metric in m for e in entries
               for m in e.get("metrics", {}).get(scenario, {}).values()):
            return metric
    return None


def lines(all_series: Sequence[Series], metric: str) -> list[str]:
    out = []
    for s in all_series:
        out.append(f"{s.label}: {metric} ({UNITS[metric]}) over {len(s.points)} run(s)")
        prev = None
        for p in s.points:
            step = f"  {p.value / prev:.4f}x the run before" if prev else ""
            out.append(f"  {p.run:24s} {p.commit}{'+' if p.dirty else ' '} "
                       f"{p.value:16.6g}{step}")
            prev = p.value or None
    return out


def plot(all_series: Sequence[Series], scenario: str, metric: str, out: Path) -> Path:
    """One line per variant, runs along x (labelled run and commit); the PNG's path."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    runs: list[str] = []
    for s in all_series:
        for p in s.points:
            if p.run not in runs:
                runs.append(p.run)
    ticks = {r: i for i, r in enumerate(runs)}
    commits = {p.run: p.commit for s in all_series for p in s.points}
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(runs) + 4), 5))
    values = [p.value for s in all_series for p in s.points if p.value > 0]
    for s in all_series:
        ax.plot([ticks[p.run] for p in s.points], [p.value for p in s.points], marker="o",
                label=s.label)
    if values and max(values) > 10 * min(values):
        ax.set_yscale("log")
    ax.set_xticks(range(len(runs)))
    ax.set_xticklabels([f"{r}\n{commits[r]}" for r in runs], rotation=45, ha="right",
                       fontsize=7)
    ax.set_ylabel(f"{metric} ({UNITS[metric]})")
    ax.set_title(f"{scenario}: {metric} over runs")
    ax.legend(fontsize=7)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
