"""Reports: Markdown tables and matplotlib plots from scenario results.

Contract: render(results, out_dir) writes report.md and one PNG per scenario
(per variant its time (mean, 95 % t CI) and instructions; per comparison the
ratios the table shows, the same estimator and interval, and the seed's
published ratio as a marker on its row) and returns the
report path. When allocations or memory were measured, a second table per
scenario puts them beside time and instructions: allocations and bytes per
record (lab.measure.allocations.records), peak RSS above the worker's own
and the tracemalloc peak, and the allocation ratios. Ratios are said in words, the faster side first; a time ratio is
"significant" only after Holm's correction across the scenario's rows; an
instruction ratio is exact (a deterministic count, no interval). warnings()
lists the wall-time variants whose coefficient of variation exceeds 5 %. A row whose two
variants did identical studied work (work_differs false: lab.results.work_differs) reads
"no difference in work" in place of its ratio's words, never as a speed-up (NO_WORK_DIFFERENCE,
row_words()). Each comparison row shows the seed's figure for it (published) beside the
lab's instruction and time ratios, whether the lab goes the same way (same_direction()) and
whether the work differs; where the lab's effect is of another size than the seed's,
magnitude_note() says so with the row's work counters, and the seed figures no row
reproduces (Scenario.unreproduced) are listed. Beside each scenario's plot:
<scenario>.seed.png (lab.plots.seed_beside_lab) and <scenario>.series.png (its sweep or
sequence, lab.plots.series_plot), and the N sweep of seed 004 across its scenarios.
Input is ScenarioResult objects or the
<scenario>.result.json files the harness wrote (their values read from the
pyperf JSON files beside them, as the harness reads them).
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

from reftable_core.flags import FLAG_INFO, Flags, by_source

from .plots import published_ratio, result_plot, seed_beside_lab, series_plot
from .plots import save_png as _save
from .results import ScenarioResult, per_record
from .scenario import studied_counters
from .stats import CV_WARN, cv, format_count, format_seconds, summarize


def load_results(run_dir: Path) -> list[ScenarioResult]:
    return [ScenarioResult.from_json(json.loads(p.read_text()), p.parent)
            for p in sorted(Path(run_dir).glob("*.result.json"))]


def warnings(r: ScenarioResult) -> list[str]:
    """One line per wall-time variant whose coefficient of variation exceeds CV_WARN."""
    return [f"warning: {r.scenario} {v.label}: wall time varies by {cv(v.values):.1%} "
            f"(stdev/mean > {CV_WARN:.0%}); its time ratios are noisy (--measure instructions "
            f"is exact; --rounds R pairs by round)"
            for v in r.variants if v.values and cv(v.values) > CV_WARN]


NO_WORK_DIFFERENCE = "no difference in work"


def row_words(q: dict) -> str:
    """A ratio row's words: its in_words, or NO_WORK_DIFFERENCE when both of its
    variants did the same studied work (what remains of the ratio is noise or
    overhead outside the work the flags change)."""
    if q.get("work_differs") is False:
        return f"{NO_WORK_DIFFERENCE} (ratio {q['ratio']:.3f}x)"
    return q.get("in_words", "")


def _time_cell(q: dict | None) -> str:
    if q is None:
        return ""
    est = (f"paired, {q.get('rounds', 0)} rounds" if q.get("paired") else "mean")
    return f"{q['ratio']:.3f}x [{q['ci_low']:.3f} .. {q['ci_high']:.3f}] ({est})"


NO_CHANGE = 0.025   # a published ratio within 2.5 % of 1x states no direction (the seeds'
#                     own +- is larger: 1.01 +- 0.04, 1.01 +- 0.09)


def same_direction(published: str | None, lab: float | None) -> str:
    """"yes" when the lab's ratio is on the same side of 1x as the published one, "no"
    when not, "n/a (...)" when the seed states no ratio or no direction, "" without one."""
    p = published_ratio(published)
    if p is None:
        return "n/a (no ratio published)" if published else ""
    if lab is None:
        return ""
    if abs(p - 1.0) < NO_CHANGE:
        return "n/a (published: no change)"
    return "yes" if (p > 1.0) == (lab > 1.0) else "no"


# Why CPython weighs a flag's saved work differently from C, by the counters it saves
_PYTHON_COSTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("allocs",),
     ("in CPython an allocation is cheap relative to the interpreted loop around it, "
      "while in C it is much of the loop")),
    (("loop_bytecodes",),
     ("each bytecode of the hot loop costs tens of instructions in CPython, so the "
      "loop's own work dominates what the flag saves")),
    (("source_preads", "source_mmap_slices"),
     ("a pread saved is one syscall, small next to the interpreted decoding of the "
      "block it reads")),
    (("tables_list_reads", "tables_list_stats"),
     ("a tables.list read or stat saved is one syscall, small next to the interpreted "
      "record writing and lookup around it")),
    (("blocks_set_up", "blocks_inflated"),
     ("a block set up or inflated costs an interpreted header parse (or zlib in C) "
      "in both")),
    (("packed_getc_locked", "packed_getc_unlocked", "packed_line_copies"),
     ("a per-byte call is an interpreted loop iteration in the lab, so the per-byte "
      "readers' steps weigh differently than stdio's locking does in C")),
    (("delta_cache_lru_steps", "delta_cache_evictions", "delta_cache_misses"),
     ("a cache miss re-inflates and re-applies deltas in zlib's C in both, while the "
      "LRU walk is interpreted in the lab")),
)


def _change(a: int, b: int) -> str:
    """b relative to a, as a signed percent ("-38%"), or "0 -> n"."""
    if a == 0:
        return f"0 -> {b}"
    return f"{(b - a) / a:+.0%}"


def magnitude_note(r: ScenarioResult, qi: dict | None, qt: dict | None) -> str:
    """A sentence where the lab's effect is of another size than the published one
    (its log less than half or more than twice the published log; the row's direction
    aside), backed by the row's studied work counters: how the slow side's counters
    change on the fast side, beside the instructions; "" otherwise."""
    q = qi or qt
    if q is None:
        return ""
    p = published_ratio(q.get("published"))
    if p is None or abs(p - 1.0) < NO_CHANGE or q["ratio"] <= 0:
        return ""
    lab, pub = math.log(q["ratio"]), math.log(p)
    if 0.5 * abs(pub) <= abs(lab) <= 2.0 * abs(pub):
        return ""
    by = {v.label: v for v in r.variants}
    slow, fast = by.get(q["slow"]), by.get(q["fast"])
    if slow is None or fast is None or not slow.work or not fast.work:
        return ""
    names = [n for n in studied_counters(Flags().with_spec(slow.spec), Flags().with_spec(fast.spec))
             if slow.work.get(n, 0) != fast.work.get(n, 0)]
    if not names:
        return ""
    changes = ", ".join(f"{n} {_change(slow.work.get(n, 0), fast.work.get(n, 0))}"
                        for n in names[:4])
    measure = "instructions" if qi else "time"
    why = next((text for keys, text in _PYTHON_COSTS if any(k in names for k in keys)), "")
    size = "smaller" if abs(lab) < 0.5 * abs(pub) else "larger"
    return (f"{q['title']}: {changes} but {measure} {1.0 / q['ratio'] - 1.0:+.0%} "
            f"(lab {q['ratio']:.3g}x, published {p:.3g}x: {size} in the lab)"
            + (f": {why}" if why else "") + ".")


def comparison_rows(r: ScenarioResult) -> list[tuple[str, dict | None, dict | None]]:
    """(title, instructions row, time row) per comparison, in the scenario's order."""
    out: dict[str, list[dict | None]] = {}
    for q in r.ratios:
        if q.get("measure", "time") not in ("instructions", "time"):
            continue                      # allocation rows: cost_lines' table
        slot = out.setdefault(q["title"], [None, None])
        slot[0 if q.get("measure") == "instructions" else 1] = q
    return [(title, i, t) for title, (i, t) in out.items()]


def source_of(seed: str) -> str:
    """A scenario's source in words: "seed 000", or "upstream <commit> <date>" when its
    seed field names a later upstream commit (the date from the flag modelling it)."""
    for name, info in FLAG_INFO.items():
        if info.upstream and info.upstream.split()[0] == seed:
            return info.source
    return f"seed {seed}"


def flag_source_lines(results: Sequence[ScenarioResult]) -> list[str]:
    """The flags the results set away from the defaults, grouped by source."""
    used = {item.partition("=")[0] for r in results for v in r.variants
            if v.kind == "flags" for item in (v.spec or "").split(",") if item}
    lines = []
    for src, names in by_source().items():
        mine = [n for n in names if n in used]
        if mine:
            lines.append(f"- {src}: " + ", ".join(f"`{n}`" for n in mine))
    return ["## Flags by source", "", *lines, ""] if lines else []


def markdown(results: Sequence[ScenarioResult], plots: dict[str, str] | None = None) -> str:
    lines = ["# reftable-lab report", ""]
    for r in results:
        lines += [f"## {r.scenario} ({r.scale})", "",
                  f"Source: {source_of(r.seed)}. Published: {r.published}", "",
                  f"Dataset: `{r.dataset}`; parameters: `{json.dumps(r.params)}`", "",
                  _schedule(r), "",
                  ("| variant | kind | mean | 95% CI | stdev | min | n | instructions | "
                   "flags / peer |"),
                  "|---|---|---|---|---|---|---|---|---|"]
        for v in r.variants:
            count = format_count(v.instructions) if v.instructions is not None else ""
            if v.values:
                s = summarize(v.values)
                timing = (f"{format_seconds(s.mean)} | {format_seconds(s.ci_low)} .. "
                          f"{format_seconds(s.ci_high)} | {format_seconds(s.stdev)} | "
                          f"{format_seconds(min(v.values))} | {s.n}")
            else:
                timing = " |  |  |  | "
            lines.append(f"| {v.label} | {v.kind} | {timing} | {count} | "
                         f"`{v.spec or 'default'}` |")
        warn = warnings(r)
        if warn:
            lines += [""] + [f"- {w}" for w in warn]
        rows = comparison_rows(r)
        if rows:
            lines += ["", ("| comparison | in words | instructions (exact) | time [95% CI] | "
                           "significant (Holm) | published | same direction as published | "
                           "work differs |"), "|---|---|---|---|---|---|---|---|"]
            for title, qi, qt in rows:
                words = row_words(qi or qt or {})
                if qi and qt and qi.get("work_differs") is not False:
                    words = f"{qi['in_words']}; {qt['in_words']}"
                same = (qi or qt or {}).get("work_differs") is False
                sig = "" if qt is None or same else ("yes" if qt["significant"] else "no")
                pub = (qi or qt or {}).get("published") or ""
                lab = (qi or qt or {}).get("ratio")
                wd = (qi or qt or {}).get("work_differs")
                differs = "" if wd is None else ("yes" if wd else "no")
                lines.append(f"| {title} | {words} | "
                             f"{'' if qi is None else format(qi['ratio'], '.3f') + 'x'} | "
                             f"{_time_cell(qt)} | {sig} | {pub} | {same_direction(pub, lab)} | "
                             f"{differs} |")
            lines += ["", ("Ratios are slow/fast (> 1: the second variant is faster). "
                           "*instructions*: callgrind counts of one run of the timed region "
                           "(start-up, build and per-run set-up cancel; a peer process is "
                           "counted minus a no-op run of its program), deterministic, so the "
                           "ratio is exact. *time, paired*: geometric mean of the per-round "
                           "ratios of each round's minimum, t interval over rounds; *time, "
                           "mean*: mean(slow)/mean(fast), Welch t interval. A time row is "
                           "significant when its Holm-adjusted p-value across this "
                           "scenario's rows is below 0.05. *no difference in work*: the "
                           "two variants did identical studied work (the work counters of "
                           "the flags they set differently: blocks, reads, tables.list "
                           "reads, cache hits and evictions, hot-loop bytecodes, ...), so "
                           "the row shows no effect of those flags. *same direction as "
                           "published*: the lab's ratio (instructions, else time) on the "
                           "same side of 1x as the seed's figure; a published ratio within "
                           "2.5% of 1x states no direction.")]
            notes = [n for n in (magnitude_note(r, qi, qt) for _, qi, qt in rows) if n]
            if notes:
                lines += ["", ("Where Python's costs change the magnitude (the row's "
                               "studied work counters, slow side -> fast side):"), ""]
                lines += [f"- {n}" for n in notes]
        lines += c_lines(r)
        if r.unreproduced:
            lines += ["", "Seed figures no row reproduces:", ""]
            lines += [f"- {fig}: {why}" for fig, why in r.unreproduced.items()]
        lines += cost_lines(r)
        for key, alt in ((r.scenario, r.scenario), (f"{r.scenario}.seed", "seed beside lab"),
                         (f"{r.scenario}.series", "series")):
            if plots and key in plots:
                lines += ["", f"![{alt}]({plots[key]})"]
        lines.append("")
    if plots and SERIES_KEY in plots:
        lines += ["## Series across scenarios", "",
                  "Cost per ref against N, per variant (seed 004's refcount = 1, 100, 10000).",
                  "", f"![N sweep]({plots[SERIES_KEY]})", ""]
    lines += flag_source_lines(results)
    return "\n".join(lines)


def _c_cell(q: dict | None, key: str) -> str:
    if q is None or q.get(key) is None:
        return ""
    if q["measure"] == "time" and key == "c_ratio":
        return f"{q['c_ratio']:.3f}x [{q['c_ci_low']:.3f}, {q['c_ci_high']:.3f}]"
    if key == "same_direction_as_c":
        return "yes" if q[key] else "no"
    return f"{q[key]:.3f}x" if key != "magnitude_error" else f"{q[key]:.3f}"


def c_lines(r: ScenarioResult) -> list[str]:
    """The rows real C anchors (bench --c-anchors): published (the author's machine), real
    C here (its before and after built from git.git, lab.c_recipes) and the lab, per
    measure, with the direction and the model's magnitude error (lab / C)."""
    anchors = r.revisions.get("c_anchors", {})
    rows = [(t, qi, qt) for t, qi, qt in comparison_rows(r)
            if any(q is not None and q.get("c_ratio") is not None for q in (qi, qt))]
    if not rows:
        return []
    out = ["", "Real C here (git built before and after each row's patch):", "",
           "| row | published | C instructions | lab instructions | C time [95% CI] | "
           "lab time | same direction as C | magnitude error (lab / C) | trees |",
           "|---|---|---|---|---|---|---|---|---|"]
    for title, qi, qt in rows:
        q = qi or qt or {}
        base = title if title in anchors else title.rsplit(" [", 1)[0]
        a = anchors.get(base, {})
        trees = f"{a.get('before_tree', '')} -> {a.get('after_tree', '')}"
        lab_t = "" if qt is None else f"{qt['ratio']:.3f}x"
        lab_i = "" if qi is None else f"{qi['ratio']:.3f}x"
        out.append(f"| {title} | {q.get('published') or ''} | {_c_cell(qi, 'c_ratio')} | "
                   f"{lab_i} | {_c_cell(qt, 'c_ratio')} | {lab_t} | "
                   f"{_c_cell(qi or qt, 'same_direction_as_c')} | "
                   f"{_c_cell(qi or qt, 'magnitude_error')} | {trees} |")
    return out


def format_bytes(n: float) -> str:
    """A size: 12.3 MiB, 456 KiB, 789 B."""
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if abs(n) >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def cost_lines(r: ScenarioResult) -> list[str]:
    """The allocations-and-memory table of a scenario (none when neither was measured)."""
    if not any(v.allocations is not None or v.memory for v in r.variants):
        return []
    lines = ["", ("| variant | kind | time (mean) | instructions | allocations | allocs/record "
                  "| bytes allocated | bytes/record | peak RSS above own | peak RSS | "
                  "tracemalloc peak |"), "|---|---|---|---|---|---|---|---|---|---|---|"]
    for v in r.variants:
        a, b, m = v.allocations, v.bytes_allocated, v.memory
        apr, bpr = per_record(a, r.params), per_record(b, r.params)
        tm = m.get("tracemalloc_peak") if m else None
        cells = [format_seconds(summarize(v.values).mean) if v.values else "",
                 format_count(v.instructions) if v.instructions is not None else "",
                 format_count(a) if a is not None else "",
                 f"{apr:.3g}" if apr is not None else "",
                 format_bytes(b) if b is not None else "",
                 format_bytes(bpr) if bpr is not None else "",
                 format_bytes(m["rss_above"] or 0) if m else "",
                 format_bytes(m["peak_rss"] or 0) if m else "",
                 format_bytes(tm) if tm is not None else ""]
        lines.append(f"| {v.label} | {v.kind} | " + " | ".join(cells) + " |")
    rows = [q for q in r.ratios if q.get("measure") == "allocations"]
    if rows:
        lines += ["", "| comparison | allocations (exact) | in words |", "|---|---|---|"]
        lines += [f"| {q['title']} | {q['ratio']:.3f}x | {q['in_words']} |" for q in rows]
    lines += ["", ("*allocations*: heap blocks (malloc, calloc, realloc, memalign family; "
                   "valgrind's count) of one run of the timed region, Python under "
                   "PYTHONMALLOC=malloc, counted by the alloccount preload library (start-up "
                   "and set-up cancel; a peer's processes minus a no-op run). Per record: "
                   "divided by the scenario's refs (or commits, or n). *peak RSS above "
                   "own*: the worker's peak after one cold run minus its peak before it (the "
                   "interpreter, the lab, the dataset open); a peer's: its largest process's "
                   "peak minus a no-op run's. *tracemalloc peak*: Python's traced memory "
                   "inside the timed region, above its start (a separate run).")]
    return lines


def _schedule(r: ScenarioResult) -> str:
    if not any(v.values for v in r.variants):
        if list(r.measures) == ["instructions"]:
            return "Measure: instruction counts only (callgrind)."
        return f"Measures: {', '.join(r.measures)} (no wall time)."
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
    """<scenario>.png: lab.plots.result_plot of the result, titled with its source."""
    _save(result_plot(result.to_json(), source_of(result.seed)), path)
    return path


SERIES_KEY = "update-ref-create.series"   # the plot of the N sweep across scenarios


def render(results: Iterable[ScenarioResult], out_dir: Path | str) -> Path:
    """report.md in out_dir, with per scenario its plot (plot()), the seed beside the
    lab (<scenario>.seed.png, lab.plots.seed_beside_lab) and its series if it has one
    (<scenario>.series.png), and the N sweep of the update-ref-create-N scenarios."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results = list(results)
    plots = {}
    for r in results:
        png = plot(r, out / f"{r.scenario}.png")
        plots[r.scenario] = png.name
        d = r.to_json()
        for key, fig in ((f"{r.scenario}.seed", seed_beside_lab(d)),
                         (f"{r.scenario}.series", series_plot(d))):
            name = _save(fig, out / f"{key}.png")
            if name:
                plots[key] = name
    sweep = [r.to_json() for r in results if r.scenario.startswith("update-ref-create-")
             and r.seed == "004"]
    name = _save(series_plot(sweep), out / f"{SERIES_KEY}.png") if len(sweep) >= 2 else None
    if name:
        plots[SERIES_KEY] = name
    report = out / "report.md"
    report.write_text(markdown(results, plots))
    return report
