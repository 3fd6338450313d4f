"""Reports: Markdown tables and matplotlib plots from scenario results.

Contract: render(results, out_dir) writes report.md and one PNG per scenario
(time per variant with its 95 % CI, and the ratios with their bootstrap CIs)
and returns the report path. Input is ScenarioResult objects or the
<scenario>.result.json files the harness wrote (their values read from the
pyperf JSON files beside them, as the harness reads them).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Sequence

from .harness import ScenarioResult
from .stats import format_seconds, summarize


def load_results(run_dir: Path) -> list[ScenarioResult]:
    return [ScenarioResult.from_json(json.loads(p.read_text()), p.parent)
            for p in sorted(Path(run_dir).glob("*.result.json"))]


def markdown(results: Sequence[ScenarioResult], plots: dict[str, str] | None = None) -> str:
    lines = ["# reftable-lab report", ""]
    for r in results:
        lines += [f"## {r.scenario} ({r.scale})", "",
                  f"Seed {r.seed}. Published: {r.published}", "",
                  f"Dataset: `{r.dataset}`; parameters: `{json.dumps(r.params)}`", "",
                  _schedule(r), "",
                  "| variant | kind | mean | 95% CI | stdev | min | n | flags / peer |",
                  "|---|---|---|---|---|---|---|---|"]
        for v in r.variants:
            s = summarize(v.values)
            lines.append(f"| {v.label} | {v.kind} | {format_seconds(s.mean)} | "
                         f"{format_seconds(s.ci_low)} .. {format_seconds(s.ci_high)} | "
                         f"{format_seconds(s.stdev)} | {format_seconds(min(v.values))} | "
                         f"{s.n} | `{v.spec or 'default'}` |")
        if r.ratios:
            lines += ["", "| comparison | speed-up | 95% CI | significant | estimator | "
                          "paired by round [95% CI] |", "|---|---|---|---|---|---|"]
            for q in r.ratios:
                if q.get("paired"):
                    est = f"min, {q.get('rounds', 0)} interleaved rounds"
                    pr = (f"{q['paired_ratio']:.3f}x [{q['paired_ci_low']:.3f} .. "
                          f"{q['paired_ci_high']:.3f}]" if "paired_ratio" in q else "")
                else:
                    est, pr = "mean", ""
                lines.append(f"| {q['title']} | {q['ratio']:.3f}x | "
                             f"{q['ci_low']:.3f} .. {q['ci_high']:.3f} | "
                             f"{'yes' if q['significant'] else 'no'} | {est} | {pr} |")
            lines += ["", ("Estimators: *min* (interleaved runs): min(slow)/min(fast) over all "
                           "values, bootstrap CI (the fastest value is the least disturbed one "
                           "on a machine whose disturbances only add time); *paired by round*: "
                           "geometric mean of the per-round ratios of each round's minimum, "
                           "bootstrap CI over rounds (drift common to a round cancels); "
                           "*mean* (sequential runs): mean(slow)/mean(fast) over all values, "
                           "bootstrap CI over values.")]
        if plots and r.scenario in plots:
            lines += ["", f"![{r.scenario}]({plots[r.scenario]})"]
        lines.append("")
    return "\n".join(lines)


def _schedule(r: ScenarioResult) -> str:
    rounds = {len(v.rounds) for v in r.variants}
    if r.variants and rounds != {0}:
        n = ", ".join(str(k) for k in sorted(rounds))
        if all(v.json_path.endswith(".interleave.json") for v in r.variants):
            return (f"Timing: interleaved within one process, {n} rounds; one value per variant "
                    f"and round, in an order that changes each round.")
        return (f"Timing: interleaved, {n} rounds; every variant once per round, in an order "
                f"that changes each round (values are pooled over rounds below).")
    return "Timing: sequential (each variant's pyperf run complete in turn)."


def plot(result: ScenarioResult, path: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [v.label for v in result.variants]
    sums = [summarize(v.values) for v in result.variants]
    means = [s.mean for s in sums]
    errs = [[s.mean - s.ci_low for s in sums], [s.ci_high - s.mean for s in sums]]
    colors = ["tab:orange" if v.kind == "peer" else "tab:blue" for v in result.variants]
    nrows = 2 if result.ratios else 1
    fig, axes = plt.subplots(nrows, 1, figsize=(10, 3.2 + 0.32 * (len(labels) + len(result.ratios))),
                             squeeze=False)
    ax = axes[0][0]
    ax.barh(labels, means, xerr=errs, color=colors, capsize=3)
    ax.invert_yaxis()
    ax.set_xlabel("seconds per run (mean, 95% CI)")
    ax.set_title(f"{result.scenario} ({result.scale}) - seed {result.seed}")
    if result.ratios:
        ax2 = axes[1][0]
        titles = [q["title"] for q in result.ratios]
        vals = [q["ratio"] for q in result.ratios]
        rerr = [[q["ratio"] - q["ci_low"] for q in result.ratios],
                [q["ci_high"] - q["ratio"] for q in result.ratios]]
        ax2.barh(titles, vals, xerr=rerr, color="tab:green", capsize=3)
        ax2.axvline(1.0, color="black", lw=0.8)
        ax2.invert_yaxis()
        ax2.set_xlabel("speed-up (slow / fast), bootstrap 95% CI")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def render(results: Iterable[ScenarioResult], out_dir: Path | str) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results = list(results)
    plots = {}
    for r in results:
        png = plot(r, out / f"{r.scenario}.png")
        plots[r.scenario] = png.name
    report = out / "report.md"
    report.write_text(markdown(results, plots))
    return report
