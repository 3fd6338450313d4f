"""Every figure the lab draws: a scenario's result, each seed figure beside the lab's
ratio, sweeps and series, a metric over runs, the notebooks' quick look.

Contract: each figure function takes plain data (mostly the parsed
`<scenario>.result.json` dict: README, "The result files") and returns a matplotlib
Figure, drawn on its own canvas (no pyplot, no global state, any backend); the
only writers are save_png() (a file) and png_bytes() (bytes for a notebook's image
widget). Callers: lab.report (its PNGs), lab.sweep, `reftable-lab history`, lab.nb.

- result_plot(result, source): a scenario's plot (lab.report's <scenario>.png): per
  timed variant its mean with the 95% t interval (peers orange), and per comparison
  the ratios (time with its interval, instructions exact) with the seed's published
  ratio as a marker; source (lab.report.source_of) names the scenario's origin.

- seed_beside_lab(result, measure=None): one row per comparison whose `published`
  is set (the seed's figure for that row). The published ratio is a black marker,
  the lab's ratios are bars: instructions (exact, no interval) and time (with the
  row's t interval). Rows without a published figure are omitted; when no row of
  the scenario has one, every row is drawn, greyed, so that each scenario still has
  its picture. A row whose two variants did the same studied work is hatched and
  labelled "no difference in work". Bars grow from 1x (no change) to the ratio. The axis is "x faster" on a log scale:
  2x means the row's second (fast) side did the work 2 times faster.
- series_plot(result_or_results): lines for sweeps. In one result: the
  delta base cache grids (seed 002's slot counts or cache limits on the x axis,
  one line per combination of the other flags) and the cumulative steps (a
  seed's patch sequence, cost after each step). Given several results of one
  workload at different sizes (seed 004's update-ref-create-1, -100, -10000):
  cost per ref against N, one line per variant. None when there is no series.
- sweep_plot(sweep, ylabel): a lab.sweep.Sweep's curves (its to_json() dict), log-log,
  each labelled with its fitted exponent, peers dashed.
- history_plot(all_series, scenario, metric): lab.history's series, one line per
  variant over the runs (x labelled run and commit), log y past a decade.
- quick_plot(scenario, times, picked, highlight): the notebooks' quick look, best and
  mean per variant (label -> {"best", "mean"} seconds), the `highlight` bar orange.
- published_ratio(text): the ratio a seed's figure states ("1.62x", "1.31 s ->
  0.48 s", "-22.0%"), slow/fast like the lab's ratios; None when it states none.
"""
from __future__ import annotations

import io
import re
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter
from reftable_core.flags import Flags, fixed_slots

from .results import UNITS, Series

_SECONDS = r"(?:(\d+)m)?(\d+(?:\.\d+)?)\s*(ms|s)\b"


def _seconds(m: re.Match[str]) -> float:
    minutes, value, unit = m.groups()
    s = float(value) * (1e-3 if unit == "ms" else 1.0)
    return s + 60.0 * float(minutes or 0)


def published_ratio(text: str | None) -> float | None:
    """The slow/fast ratio a published figure states: an explicit factor ("1.62x",
    the first one), else the first "A s -> B s" (A/B), else a time change in percent
    ("-22.0%": 1/(1 - 0.22)); None when the text states no ratio."""
    if not text:
        return None
    m = re.search(r"(\d+(?:\.\d+)?)x\b", text)
    if m:
        return float(m.group(1))
    times = list(re.finditer(_SECONDS, text))
    if len(times) >= 2 and "->" in text[times[0].end():times[1].start()]:
        before, after = _seconds(times[0]), _seconds(times[1])
        return before / after if after > 0 else None
    m = re.search(r"([-+]\d+(?:\.\d+)?)\s*%", text)
    if m:
        change = float(m.group(1)) / 100.0
        return 1.0 / (1.0 + change) if change > -1.0 else None
    return None


def _rows(result: dict[str, Any], measure: str | None) -> list[tuple[str, dict[str, dict]]]:
    """(title, {measure: ratio row}) per comparison, in the result's order; only
    instructions and time rows (or only `measure`)."""
    out: dict[str, dict[str, dict]] = {}
    for q in result.get("ratios", []):
        m = q.get("measure", "time")
        if m not in ("instructions", "time") or (measure is not None and m != measure):
            continue
        out.setdefault(q["title"], {})[m] = q
    return list(out.items())


def _x_faster(x: float, _pos: Any = None) -> str:
    return f"{x:.3g}x"


_COLORS = {"instructions": "tab:purple", "time": "tab:green"}
_LABELS = {"instructions": "lab: instructions (exact)", "time": "lab: time (95% t interval)"}


def seed_beside_lab(result: dict, measure: str | None = None) -> Figure:
    """The seed's published ratio (marker) beside the lab's (bars), per row that
    has a published figure (see the module doc), and real C's ratio here (a star on
    the bar of its measure) where bench --c-anchors measured it; measure:
    "instructions" or "time" for that one only, None for whichever the result has."""
    rows = _rows(result, measure)
    published = [(t, ms) for t, ms in rows
                 if any(q.get("published") for q in ms.values())]
    greyed = not published
    shown = rows if greyed else published
    height = 1.6 + 0.55 * max(1, len(shown))
    fig = Figure(figsize=(10, height))
    ax = fig.add_subplot()
    title = f"{result.get('scenario', '?')} ({result.get('scale', '?')}): seed " \
            f"{result.get('seed', '?')} beside the lab"
    if greyed:
        title += " (no seed figure on any row: lab only)"
    ax.set_title(title, fontsize="medium")
    if not shown:
        ax.text(0.5, 0.5, "no ratios in this result", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    measures = [m for m in ("instructions", "time") if any(m in ms for _, ms in shown)]
    width = 0.8 / max(1, len(measures))
    labels: list[str] = []
    values: list[float] = []
    labelled: set[str] = set()
    for y, (row_title, ms) in enumerate(shown):
        any_q = next(iter(ms.values()))
        pub_text = any_q.get("published")
        label = "\n".join(textwrap.wrap(row_title, 48))
        if pub_text:
            label += "\n" + "\n".join(textwrap.wrap(f"seed: {pub_text}", 48))
        labels.append(label)
        same = any_q.get("work_differs") is False
        for i, m in enumerate(measures):
            q = ms.get(m)
            if q is None:
                continue
            yy = y - 0.4 + width * (i + 0.5)
            err = None
            if m == "time" and q.get("ci_low") is not None:
                hi = min(q["ci_high"], 1e9)
                err = [[max(q["ratio"] - q["ci_low"], 0.0)], [max(hi - q["ratio"], 0.0)]]
            color = "lightgrey" if greyed else _COLORS[m]
            ax.barh([yy], [q["ratio"] - 1.0], height=width * 0.9, left=1.0, xerr=err,
                    color=color, edgecolor=_COLORS[m] if greyed else "none", capsize=3,
                    hatch="//" if same else None,
                    label=None if m in labelled else _LABELS[m])
            labelled.add(m)
            values.append(q["ratio"])
            if q.get("c_ratio") is not None:          # bench --c-anchors: real C here
                ax.plot([q["c_ratio"]], [yy], marker="*", color=_COLORS[m], markersize=13,
                        markeredgecolor="black", linestyle="none",
                        label=None if f"c-{m}" in labelled else f"real C here ({m})")
                labelled.add(f"c-{m}")
                values.append(q["c_ratio"])
            if same:
                ax.text(q["ratio"], yy, "  no difference in work", va="center",
                        fontsize="x-small")
        p = published_ratio(pub_text)
        if p is not None:
            ax.plot([p], [y], marker="D", color="black", markersize=8, linestyle="none",
                    label=None if "published" in labelled else "seed: published ratio")
            labelled.add("published")
            values.append(p)
    xs = [v for v in values if v > 0] + [1.0]
    lo, hi = min(xs), max(xs)
    ax.set_xscale("log")
    ax.set_xlim(lo / 1.6, hi * 1.6)
    ax.xaxis.set_major_formatter(FuncFormatter(_x_faster))
    ax.xaxis.set_minor_formatter(NullFormatter() if hi / lo > 20 else FuncFormatter(_x_faster))
    ax.tick_params(axis="x", which="minor", labelsize="x-small")
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_yticks(range(len(shown)), labels, fontsize="small")
    ax.set_ylim(len(shown) - 0.5, -0.5)
    ax.set_xlabel("x faster: how many times faster the row's second side is "
                  "(below 1x: slower)")
    handles, names = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, names, loc="best", fontsize="small")
    fig.tight_layout()
    return fig


# -- series ------------------------------------------------------------------------

def _cost(v: dict[str, Any]) -> tuple[float | None, str]:
    """A variant's cost and its unit: instructions when counted, else mean seconds."""
    if v.get("instructions") is not None:
        return float(v["instructions"]), "instructions per run"
    if v.get("summary"):
        return float(v["summary"]["mean"]), "seconds per run (mean)"
    return None, ""


def _flags(v: dict[str, Any]) -> Flags:
    return Flags().with_spec(v.get("spec", ""))


# the x axes a delta base cache grid can sweep: flag -> its value as a number
_SWEEP_X: dict[str, Callable[[Flags], int | None]] = {
    "delta_cache_index": fixed_slots,
    "delta_cache_limit": lambda f: f.delta_cache_limit}
_GRID = ("delta_cache_index", "delta_cache_lru", "delta_cache_limit")


def _grid_series(result: dict[str, Any]) -> tuple[str, dict[str, list[tuple[float, float]]],
                                                  str] | None:
    """(x flag, line label -> [(x, cost)], unit) of a delta base cache grid: the
    flags variants that set two or more of _GRID, x the axis with most values."""
    grid = [v for v in result.get("variants", []) if v.get("kind") == "flags"
            and sum(k in v.get("spec", "") for k in _GRID) >= 2]
    if len(grid) < 4:
        return None
    flags = [(v, _flags(v)) for v in grid]
    best = max(_SWEEP_X, key=lambda k: len({_SWEEP_X[k](f) for _, f in flags
                                            if _SWEEP_X[k](f) is not None}))
    lines: dict[str, list[tuple[float, float]]] = {}
    unit = ""
    for v, f in flags:
        x = _SWEEP_X[best](f)
        cost, unit_v = _cost(v)
        if x is None or cost is None:
            continue
        unit = unit_v
        rest = ",".join(f"{k}={getattr(f, k)}" for k in _GRID if k != best)
        lines.setdefault(rest, []).append((float(x), cost))
    return (best, lines, unit) if lines else None


def _cumulative(result: dict[str, Any]) -> tuple[list[tuple[str, float]], str]:
    """((step, cost) along the result's cumulative steps, all-off first; the unit)."""
    by_label = {v["label"]: v for v in result.get("variants", [])}
    out, unit = [], ""
    for name, label in result.get("cumulative") or []:
        cost, unit_v = _cost(by_label.get(label, {}))
        if cost is not None:
            out.append((name or "all-off", cost))
            unit = unit_v
    return out, unit


def series_plot(result: dict | Sequence[dict]) -> Figure | None:
    """Lines for the series a result carries (see the module doc), or None."""
    if not isinstance(result, dict):
        return _size_series(list(result))
    grid = _grid_series(result)
    steps, steps_unit = _cumulative(result)
    if grid is None and len(steps) < 2:
        return None
    panels = (grid is not None) + (len(steps) >= 2)
    fig = Figure(figsize=(10, 4 * panels))
    axes = fig.subplots(panels, 1, squeeze=False)[:, 0]
    name = f"{result.get('scenario', '?')} ({result.get('scale', '?')})"
    i = 0
    if grid is not None:
        x_flag, lines, unit = grid
        ax = axes[i]
        for label, pts in sorted(lines.items()):
            pts.sort()
            ax.plot([p for p, _ in pts], [c for _, c in pts], marker="o", label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("slots (delta_cache_index=fixed:N)" if x_flag == "delta_cache_index"
                      else "delta base cache limit (bytes)")
        ax.set_ylabel(unit)
        ax.set_title(f"{name}: seed {result.get('seed', '?')} sweep of {x_flag}",
                     fontsize="medium")
        ax.legend(fontsize="x-small")
        i += 1
    if len(steps) >= 2:
        ax = axes[i]
        ax.plot(range(len(steps)), [c for _, c in steps], marker="o", color="tab:blue")
        ax.set_xticks(range(len(steps)), ["\n".join(textwrap.wrap(s, 14)) for s, _ in steps],
                      fontsize="small")
        ax.set_ylabel(steps_unit)
        ax.set_ylim(bottom=0)
        ax.set_title(f"{name}: the seed's sequence, each step on top of the previous",
                     fontsize="medium")
    fig.tight_layout()
    return fig


def _size_series(results: list[dict]) -> Figure | None:
    """Cost per ref against N (params "refs"), one line per variant label, over
    results of the same workload at different sizes."""
    pts: dict[str, list[tuple[float, float]]] = {}
    unit = ""
    for r in results:
        n = r.get("params", {}).get("refs")
        if not n:
            continue
        for v in r.get("variants", []):
            cost, unit_v = _cost(v)
            if cost is not None:
                unit = unit_v
                pts.setdefault(v["label"], []).append((float(n), cost / n))
    lines = {k: sorted(p) for k, p in pts.items() if len({x for x, _ in p}) >= 2}
    if not lines:
        return None
    fig = Figure(figsize=(10, 4.5))
    ax = fig.add_subplot()
    for label, p in sorted(lines.items()):
        ax.plot([x for x, _ in p], [c for _, c in p], marker="o", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("N (refs created)")
    ax.set_ylabel(f"{unit.replace(' per run', '')} per ref" if unit else "cost per ref")
    names = ", ".join(sorted({r.get("scenario", "?") for r in results}))
    ax.set_title(f"N sweep: {names}", fontsize="medium")
    ax.legend(fontsize="x-small")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _p: f"{x:g}"))
    ax.set_xticks(sorted({x for p in lines.values() for x, _ in p}))
    fig.tight_layout()
    return fig


# -- a scenario's result ----------------------------------------------------------

def result_plot(result: dict, source: str) -> Figure:
    """A scenario's plot: its timed variants (mean, 95% t interval) and its comparisons'
    ratios beside the seed's published ones (see the module doc); source: the scenario's
    origin in words, in the title."""
    timed = [v for v in result.get("variants", []) if v.get("summary")]
    rows = [(title, ms.get("instructions"), ms.get("time"))
            for title, ms in _rows(result, None)]
    panels = ([timed] if timed else []) + ([rows] if rows else [])
    fig = Figure(figsize=(10, 3.2 + 0.32 * (len(timed) + len(rows))))
    axes = fig.subplots(max(1, len(panels)), 1, squeeze=False)
    title = f"{result.get('scenario', '?')} ({result.get('scale', '?')}) - {source}"
    i = 0
    if timed:
        ax = axes[i][0]
        sums = [v["summary"] for v in timed]
        ax.barh([v["label"] for v in timed], [s["mean"] for s in sums],
                xerr=[[s["mean"] - s["ci_low"] for s in sums],
                      [s["ci_high"] - s["mean"] for s in sums]],
                color=["tab:orange" if v["kind"] == "peer" else "tab:blue" for v in timed],
                capsize=3)
        ax.invert_yaxis()
        ax.set_xlabel("seconds per run (mean, 95% t CI)")
        ax.set_title(title)
        i += 1
    if rows:
        ax2 = axes[i][0]
        ys = list(range(len(rows)))
        ti = [(y, q) for y, (_, _, q) in zip(ys, rows) if q]
        ii = [(y, q) for y, (_, q, _) in zip(ys, rows) if q]
        if ti:
            ax2.barh([y + 0.2 for y, _ in ti], [q["ratio"] for _, q in ti], height=0.4,
                     xerr=[[q["ratio"] - q["ci_low"] for _, q in ti],
                           [min(q["ci_high"], 1e9) - q["ratio"] for _, q in ti]],
                     color="tab:green", capsize=3, label="time (table's estimator, 95% t CI)")
        if ii:
            ax2.barh([y - 0.2 for y, _ in ii], [q["ratio"] for _, q in ii], height=0.4,
                     color="tab:purple", label="instructions (exact)")
        seed = [(y, published_ratio((qi or qt or {}).get("published")))
                for y, (_, qi, qt) in zip(ys, rows)]
        seed = [(y, p) for y, p in seed if p is not None]
        if seed:
            ax2.scatter([p for _, p in seed], [y for y, _ in seed], marker="D", s=50,
                        color="tab:red", zorder=3, label="published (seed)")
        ax2.set_yticks(ys, [row_title for row_title, _, _ in rows])
        ax2.axvline(1.0, color="black", lw=0.8)
        ax2.set_xscale("log")
        ax2.invert_yaxis()
        ax2.legend(loc="best", fontsize="small")
        ax2.set_xlabel("slow / fast (> 1: the second variant is faster)")
        if not timed:
            ax2.set_title(title)
    fig.tight_layout()
    return fig


# -- sweeps, runs, the quick look ---------------------------------------------------

def sweep_plot(sweep: dict[str, Any], ylabel: str) -> Figure:
    """A sweep's curves (lab.sweep.Sweep.to_json()) against its key, log-log."""
    fig = Figure(figsize=(8, 5))
    ax = fig.subplots()
    for c in sweep["curves"]:
        k = c["exponent"]
        ax.plot(c["sizes"], c["costs"], marker="o", ls="--" if c["kind"] == "peer" else "-",
                label=f"{c['label']} (n^{k:.2f})" if k is not None else c["label"])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(sweep["key"])
    ax.set_ylabel(ylabel)
    ax.set_title(f"{sweep['scenario']}: {sweep['measure']} against {sweep['key']}")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def history_plot(all_series: Sequence[Series], scenario: str, metric: str) -> Figure:
    """One line per variant, runs along x (labelled run and commit)."""
    runs: list[str] = []
    for s in all_series:
        for p in s.points:
            if p.run not in runs:
                runs.append(p.run)
    ticks = {r: i for i, r in enumerate(runs)}
    commits = {p.run: p.commit for s in all_series for p in s.points}
    fig = Figure(figsize=(max(6, 0.6 * len(runs) + 4), 5))
    ax = fig.subplots()
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
    return fig


def quick_plot(scenario: str, times: dict[str, dict[str, float]], picked: str,
               highlight: str) -> Figure:
    """Best and mean per variant (seconds), the `highlight` variant's bar orange, the
    picked flags (a spec) in the title."""
    labels = list(times)
    fig = Figure(figsize=(8, 0.5 + 0.4 * len(labels)))
    ax = fig.subplots()
    ax.barh(labels, [times[k]["mean"] * 1e3 for k in labels], color="tab:gray",
            alpha=0.5, label="mean")
    ax.barh(labels, [times[k]["best"] * 1e3 for k in labels],
            color=["tab:orange" if k == highlight else "tab:blue" for k in labels],
            label="best")
    ax.invert_yaxis()
    ax.set_xlabel("ms per run (one worker process, after a warm-up round)")
    ax.set_title(f"{scenario}: quick look; picker = {picked}", fontsize="medium")
    ax.legend(loc="lower right", fontsize="small")
    fig.tight_layout()
    return fig


# -- output ------------------------------------------------------------------------

def save_png(fig: Figure | None, path: Path, dpi: int = 110) -> str | None:
    """fig as a PNG at path (its folder made); the file's name, None when no figure."""
    if fig is None:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    return path.name


def png_bytes(fig: Figure, dpi: int = 100) -> bytes:
    """fig as PNG bytes (a notebook's image widget)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()
