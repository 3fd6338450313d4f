"""`reftable-lab history`: one metric of one scenario over the indexed runs.

Contract: series(entries, scenario, metric, variant) reads the results index
(lab.export.read_index: one entry per bench run, oldest first) and returns,
per variant label (all, or the one asked for), the points (run, project
commit, value) of the runs that measured it; a regression shows as a step
between two consecutive points. lines() is the printed table (the plot is
lab.plots.history_plot). The metric names, units and the series are lab.results'
(METRICS, UNITS, Series).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .results import METRICS, UNITS, Point, Series


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
