"""The one result model of a run: variants, ratios, revisions; pyperf JSON in and out.

Contract: a ScenarioResult is what lab.harness.run_scenario returns and what
<scenario>.result.json holds (to_json / from_json): the scenario, its dataset and
parameters, one VariantResult per variant and peer (every measure's figures; the
values themselves stay in the pyperf JSON files beside the result file, one per
variant and measure, read back by each registered measure's load, lab.measure.registry)
and the ratio rows (compute_ratios). Revisions says what a run compares across
revisions (git builds, core revisions or builds). report, export, sweep, history, nb
and the bench command read this module, never the orchestrator (lab.harness), as
pyperf keeps its _bench.py apart from its runner.

Ratio rows: (title, slow label, fast label) -> one row per measure both sides have:
counts exact, time with t intervals (paired by round when both sides have the same
rounds, >= 2) and Holm-corrected significance across the scenario's time rows
(lab.stats). Each row is worded by row_words(): the flag(s) it moves (the difference
of its two sides' Flags) and their value on its fast side, the factor and its
direction, its base (the slow side) stated once beside it:
"merged_cmp on: 1.11x fewer instructions (base: all others off)". A row between two
sides that set the same flags (revisions, builds, peers) names its fast side by label.

Across runs (the results index, lab.export): METRICS are the exported measures' slugs
(Bencher Metric Format), UNITS their units; a Series is one variant's points (run,
project commit, value) of one metric, as lab.history reads them and lab.plots draws them.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyperf
from reftable_core.flags import Flags, baseline, format_value

from .builds import CoreBuild, CoreRev, GitBuild
from .measure.allocations import records
from .measure.instructions import MEASURE_KEY
from .measure.registry import PASSES
from .measure.syscalls import CALLS as SYSCALL_CALLS
from .scenario import studied_counters
from .stats import (
    ALPHA,
    factor_text,
    format_seconds,
    holm,
    in_words,
    min_ratio,
    paired_ratio_ci,
    ratio_ci,
    summarize,
)

# syscalls: every system call of one run; syscalls-<call>: those of one name
SYSCALL_METRICS = tuple(f"syscalls-{c}" for c in SYSCALL_CALLS)
METRICS = ("latency", "instructions", "allocations", "peak-memory", "syscalls",
           *SYSCALL_METRICS)
UNITS = {"latency": "ns", "instructions": "instructions", "allocations": "allocations",
         "peak-memory": "bytes", "syscalls": "system calls",
         **{m: "system calls" for m in SYSCALL_METRICS}}


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


@dataclass
class VariantResult:
    label: str
    kind: str                   # "flags" | "peer"
    spec: str                   # flags spec or command line
    values: list[float]         # wall seconds ([] when time was not measured)
    json_path: str              # the pyperf JSON file holding the values
    rounds: list[list[float]] = field(default_factory=list)   # interleaved: values per round
    benchmark: str = ""         # the benchmark's name in that file ("": its only one)
    instructions: float | None = None   # instructions of one run (None: not counted)
    instructions_json: str = ""          # the pyperf JSON file holding that count
    work: dict[str, int] = field(default_factory=dict)   # work counters of one run ({}: peer)
    allocations: float | None = None      # heap allocations of one run (None: not counted)
    bytes_allocated: float | None = None  # the bytes those allocations asked for
    allocations_json: str = ""            # the pyperf JSON file holding them
    memory: dict[str, int | None] = field(default_factory=dict)  # lab.measure.memory.Memory
    memory_json: str = ""                 # the pyperf JSON file holding it
    syscalls: float | None = None         # system calls of one run (None: not counted)
    syscalls_by_call: dict[str, int] = field(default_factory=dict)   # call name -> count
    syscalls_json: str = ""               # the pyperf JSON file holding them
    cached: dict[str, dict[str, str]] = field(default_factory=dict)  # measure -> the run its
    #                                       count came from (lab.countcache; {}: counted now)

    def summary(self) -> dict[str, float] | None:
        return summarize(self.values).as_dict() if self.values else None

    def update(self, figures: Mapping[str, Any]) -> None:
        """Set the figures a measure gives (field name -> value; lab.measure.Measure)."""
        for name, value in figures.items():
            if name not in _FIELDS:
                raise KeyError(f"a measure set {name!r}, not a field of VariantResult")
            if name == "cached":            # each measure adds its own
                self.cached = {**self.cached, **value}
                continue
            setattr(self, name, value)


_FIELDS = frozenset(f.name for f in dataclasses.fields(VariantResult))


@dataclass
class ScenarioResult:
    scenario: str
    scale: str
    dataset: str
    params: dict[str, Any]
    variants: list[VariantResult] = field(default_factory=list)
    ratios: list[dict[str, Any]] = field(default_factory=list)
    published: str = ""
    seed: str = ""
    started: float = 0.0
    elapsed: float = 0.0
    round_order: list[list[str]] = field(default_factory=list)  # interleaved: labels per round
    measures: list[str] = field(default_factory=lambda: ["time"])
    revisions: dict[str, Any] = field(default_factory=dict)   # Revisions.to_json()
    unreproduced: dict[str, str] = field(default_factory=dict)  # seed figure -> why no row
    cumulative: list[list[str]] = field(default_factory=list)   # [flag, label] per step

    def to_json(self) -> dict[str, Any]:
        """The result file's content (its format: README.md, "The result files"); each
        variant's values stay in its pyperf files (names relative to the result file)."""
        return {
            "scenario": self.scenario, "scale": self.scale, "dataset": self.dataset,
            "params": self.params, "published": self.published, "seed": self.seed,
            "started": self.started, "elapsed": self.elapsed, "round_order": self.round_order,
            "measures": self.measures, "revisions": self.revisions,
            "unreproduced": self.unreproduced, "cumulative": self.cumulative,
            "variants": [{"label": v.label, "kind": v.kind, "spec": v.spec,
                          "json": Path(v.json_path).name if v.values else "",
                          "benchmark": v.benchmark, "summary": v.summary(),
                          "instructions_json": Path(v.instructions_json).name
                          if v.instructions_json else "",
                          "instructions": v.instructions, "work": v.work,
                          "allocations_json": Path(v.allocations_json).name
                          if v.allocations_json else "",
                          "allocations": v.allocations, "bytes_allocated": v.bytes_allocated,
                          "allocations_per_record": per_record(v.allocations, self.params),
                          "memory_json": Path(v.memory_json).name if v.memory_json else "",
                          "memory": v.memory,
                          "syscalls_json": Path(v.syscalls_json).name
                          if v.syscalls_json else "",
                          "syscalls": v.syscalls, "syscalls_by_call": v.syscalls_by_call,
                          "cached": v.cached}
                         for v in self.variants],
            "ratios": self.ratios,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any], run_dir: Path | str = ".") -> ScenarioResult:
        """A result file's content, the values read from the pyperf files in run_dir by
        each registered measure (lab.measure.registry). (Result files written before
        the values moved there hold them inline.)"""
        r = cls(d["scenario"], d["scale"], d["dataset"], d["params"], published=d["published"],
                seed=d.get("seed", ""), started=d.get("started", 0.0), elapsed=d.get("elapsed", 0.0),
                round_order=d.get("round_order", []), measures=d.get("measures", ["time"]),
                revisions=d.get("revisions", {}),
                unreproduced=d.get("unreproduced", {}), cumulative=d.get("cumulative", []))
        for v in d["variants"]:
            res = VariantResult(v["label"], v["kind"], v["spec"], [], "",
                                benchmark=v.get("benchmark", ""), cached=v.get("cached", {}))
            for measure in PASSES.values():         # every measure and the work pass
                res.update(measure.load(v, Path(run_dir)))
            r.variants.append(res)
        r.ratios = d["ratios"]
        return r


def per_record(value: float | None, params: dict[str, Any]) -> float | None:
    """value per record of the scenario's parameters (lab.measure.allocations.records)."""
    n = records(params)
    return None if value is None or not n else value / n


@dataclass(frozen=True)
class Revisions:
    """What a run compares across revisions: git builds and reftable-core worktrees;
    c_anchors: a seed row's title -> the two builds of real C that are its before and
    after (bench --c-anchors: lab.c_recipes, built by lab.recipes), each among git."""
    git: tuple[GitBuild, ...] = ()
    core: tuple[CoreRev | CoreBuild, ...] = ()   # revisions, or builds of this checkout
    c_anchors: tuple[tuple[str, GitBuild, GitBuild], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"git": [{"label": b.label, "rev": b.rev, "commit": b.commit}
                        for b in self.git],
                "core": [{"suffix": f"@{c.short}", "rev": c.rev, "commit": c.commit,
                          "kind": "build" if isinstance(c, CoreBuild) else "revision"}
                         for c in self.core],
                "c_anchors": {title: {"before": a.label, "after": b.label,
                                      "before_tree": a.rev, "after_tree": b.rev}
                              for title, a, b in self.c_anchors}}


C_TITLE = "{title} [real C]"


def c_comparisons(revisions: Revisions) -> list[tuple[str, str, str]]:
    """The real-C rows of the anchored seed rows: (title, before build, after build)."""
    return [(C_TITLE.format(title=title), a.label, b.label)
            for title, a, b in revisions.c_anchors]


def anchor_rows(rows: list[dict[str, Any]], anchors: Mapping[str, Any]) -> None:
    """Put real C's ratio beside each of the model's rows it anchors (a row of a core
    build, "<title> [compiled]", is anchored by its title's C row): c_ratio (and its
    interval for time), same_direction_as_c (both above 1 or both below; None when
    either is exactly 1) and magnitude_error, the model's ratio over C's. anchors:
    Revisions.to_json()["c_anchors"]."""
    c_rows = {(row["title"], row["measure"]): row for row in rows}
    for row in rows:
        title = row["title"]
        base = title if title in anchors else title.rsplit(" [", 1)[0]
        c = c_rows.get((C_TITLE.format(title=base), row["measure"]))
        if base not in anchors or c is None or c is row:
            continue
        lab, real = row["ratio"], c["ratio"]
        row.update(c_ratio=real, c_ci_low=c["ci_low"], c_ci_high=c["ci_high"],
                   same_direction_as_c=None if lab == 1 or real == 1
                   else (lab > 1) == (real > 1),
                   magnitude_error=lab / real if real else None)


def build_title(title: str, build: str) -> str:
    """A scenario row's title measured under one core build: "<title> [compiled]"."""
    return f"{title} [{build}]"


def row_published(published: Mapping[str, str], revisions: Mapping[str, Any]
                  ) -> dict[str, str]:
    """The seed's figures by row title, the rows of each core build and of real C
    included (revisions: Revisions.to_json(), as a result file holds it)."""
    builds = [c["rev"] for c in revisions.get("core", []) if c.get("kind") == "build"]
    real_c = {C_TITLE.format(title=t): published[t] for t in revisions.get("c_anchors", {})
              if t in published}
    return {**published, **real_c,
            **{build_title(t, b): p for b in builds for t, p in published.items()}}


# -- row naming ------------------------------------------------------------------------

def flags_of(v: VariantResult) -> Flags | None:
    """A flags variant's Flags (its spec is relative to the defaults); None for a peer."""
    return None if v.kind == "peer" else Flags().with_spec(v.spec)


def moved_flags(base: Flags, other: Flags) -> list[str]:
    """The flags other sets differently from base, in the Flags field order."""
    return [f.name for f in dataclasses.fields(Flags)
            if getattr(base, f.name) != getattr(other, f.name)]


def _setting(flags: Flags, name: str) -> str:
    """"merged_cmp on" for an on|off flag, "packed_reader=mmap" for another."""
    v = getattr(flags, name)
    return f"{name} {format_value(v)}" if isinstance(v, bool) else f"{name}={format_value(v)}"


def _flags_words(flags: Flags, names: Sequence[str]) -> str:
    """The settings of names in flags, joined: "merged_cmp on, pq_cmp on"."""
    return ", ".join(_setting(flags, n) for n in names)


def base_words(base: Flags, moved: Sequence[str]) -> str:
    """The base of a row in words: its flags other than the moved ones, against all-on
    ("all others on", "all others on but mmap off") or all-off ("all others off", "all
    others off but pq_cmp on"), whichever says it in fewer exceptions."""
    others = [f.name for f in dataclasses.fields(Flags) if f.name not in moved]
    from_on = [n for n in others if getattr(base, n) != getattr(Flags(), n)]
    from_off = [n for n in others if getattr(base, n) != getattr(baseline(), n)]
    word, away = ("on", from_on) if len(from_on) <= len(from_off) else ("off", from_off)
    rest = f" but {_flags_words(base, away)}" if away else ""
    return f"all {'others ' if moved else ''}{word}{rest}"


_EVERY_FLAG = tuple(n for n in (f.name for f in dataclasses.fields(Flags))
                    if getattr(Flags(), n) != getattr(baseline(), n))


def side_names(slow: VariantResult, fast: VariantResult) -> tuple[str, str]:
    """(what the row moves, its base): the moved flags with their fast-side values and
    the slow side's other flags ("merged_cmp on", "all others off"); every flag of
    all-off -> all-on is "all flags on" on "all off"; without a flags difference (a peer,
    a revision, a build) the labels, ours as "reftable-lab (label)" beside a peer."""
    a, b = flags_of(slow), flags_of(fast)
    moved = moved_flags(a, b) if a is not None and b is not None else []
    if a is None or b is None or not moved:
        def name(v: VariantResult, other: VariantResult) -> str:
            if v.kind != "peer" and other.kind == "peer":
                return f"reftable-lab ({v.label})"
            return v.label
        return name(fast, slow), name(slow, fast)
    if tuple(moved) == _EVERY_FLAG and a == baseline():
        return "all flags on", "all off"
    return _flags_words(b, moved), base_words(a, moved)


def effect_words(ratio: float, measure: str = "time") -> str:
    """The fast side's effect for ratio = slow/fast: "1.11x fewer instructions",
    "2x faster", "1.05x slower", "no difference in time"."""
    if ratio == 1.0:
        return f"no difference in {measure}"
    better = ratio > 1.0
    factor = ratio if better else 1.0 / ratio
    if measure == "instructions":
        what = "fewer instructions" if better else "more instructions"
    elif measure == "allocations":
        what = "fewer heap allocations" if better else "more heap allocations"
    elif measure == "syscalls":
        what = "fewer system calls" if better else "more system calls"
    else:
        what = "faster" if better else "slower"
    return f"{factor_text(factor)} {what}"


def row_words(slow: VariantResult, fast: VariantResult, ratio: float,
              measure: str = "time") -> str:
    """A row in words: what it moves, its effect, its base once beside it:
    "merged_cmp on: 1.11x fewer instructions (base: all others off)"."""
    moved, base = side_names(slow, fast)
    return f"{moved}: {effect_words(ratio, measure)} (base: {base})"


# -- ratios ----------------------------------------------------------------------------

# The per-round estimate of paired ratios: "min" (see lab.stats.paired_ratio_ci).
PAIRED_PER_ROUND = "min"

# the count measures: one exact value per variant, compared as a plain quotient
_COUNTS = ("instructions", "allocations", "syscalls")


def compute_ratios(result: ScenarioResult, comparisons: Sequence[tuple[str, str, str]],
                   published: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """comparisons: (title, slow_label, fast_label); ratio = slow/fast, one row per
    comparison and measure both variants have.

    instructions, allocations, syscalls: count(slow)/count(fast), exact ("estimator": "count";
    no interval, no test: a count is not a sample). time, interleaved (both variants with the
    same number, >= 2, of rounds): the geometric mean of the per-round ratios of
    each round's minimum, t interval over rounds ("estimator": "paired"; the
    ratio of the minima over all values beside it, "min_ratio", no interval);
    sequential: mean(slow)/mean(fast), Welch t interval ("estimator": "mean").
    Time rows are "significant" when their Holm-adjusted p-value ("p_holm",
    across the scenario's time rows) is below lab.stats.ALPHA.
    Every row: "measure", "in_words" (row_words()), "published" (the seed's figure for
    the row, or None), "work_differs" (work_differs()).
    """
    by_label = {v.label: v for v in result.variants}
    published = published or {}
    rows: list[dict[str, Any]] = []
    for title, slow, fast in comparisons:
        if slow not in by_label or fast not in by_label:
            continue
        s, f = by_label[slow], by_label[fast]
        common = {"title": title, "slow": slow, "fast": fast,
                  "published": published.get(title), "work_differs": work_differs(s, f)}
        for measure in _COUNTS:
            sc, fc = getattr(s, measure), getattr(f, measure)
            if sc is not None and fc is not None and fc > 0:
                q = sc / fc
                rows.append({**common, "measure": measure, "ratio": q, "ci_low": q,
                             "ci_high": q, "p_value": None, "p_holm": None,
                             "significant": None, "estimator": "count", "exact": True,
                             "paired": False, "rounds": 0, "per_round": "",
                             "in_words": row_words(s, f, q, measure)})
        if s.values and f.values:
            paired = len(s.rounds) >= 2 and len(s.rounds) == len(f.rounds)
            row: dict[str, Any] = {**common, "measure": "time", "exact": False}
            if paired:
                r = paired_ratio_ci(s.rounds, f.rounds, per_round=PAIRED_PER_ROUND)
                row.update(r.as_dict(), estimator="paired", min_ratio=min_ratio(s.values,
                                                                                f.values))
            else:
                row.update(ratio_ci(s.values, f.values).as_dict(), estimator="mean")
            row.update(paired=paired, rounds=len(s.rounds) if paired else 0,
                       per_round=PAIRED_PER_ROUND if paired else "",
                       in_words=row_words(s, f, row["ratio"], "time"))
            rows.append(row)
    timed = [row for row in rows if row["measure"] == "time"]
    for row, p in zip(timed, holm([row["p_value"] for row in timed])):
        row["p_holm"] = p
        row["significant"] = p < ALPHA
    return rows


def work_differs(a: VariantResult, b: VariantResult) -> bool | None:
    """Did a and b do different studied work? The studied counters are those
    lab.scenario.studied_counters names for the flags a and b set differently;
    True when one of them differs (a counter one side lacks counts as 0 there).
    None when it cannot be told: a peer, a variant without work counters, or no
    studied counter measured on either side."""
    fa, fb = flags_of(a), flags_of(b)
    if fa is None or fb is None or not a.work or not b.work:
        return None
    names = [n for n in studied_counters(fa, fb) if n in a.work or n in b.work]
    if not names:
        return None
    return any(a.work.get(n, 0) != b.work.get(n, 0) for n in names)


@dataclass(frozen=True)
class MeasuredFile:
    """What `reftable-lab compare` reads of a pyperf file: its one benchmark's name and
    values, the measure they are of ("time", or the lab_measure of a count file), their
    unit and the workload they ran (lab_workload; None in a file the lab did not write)."""
    path: str
    name: str
    measure: str
    unit: str
    workload: str | None
    values: list[float]


class NotComparable(ValueError):
    """Two files that measure different things: no ratio of them means anything."""


def read_measured(path: Path) -> MeasuredFile:
    """The file's one benchmark (ValueError: not a pyperf file, or more than one)."""
    suite = pyperf.BenchmarkSuite.load(str(path))
    benches = suite.get_benchmarks()
    if len(benches) != 1:
        raise ValueError(f"{len(benches)} benchmarks in it, not one")
    bench = benches[0]
    md = bench.get_metadata()
    unit = bench.get_unit()
    measure = md.get(MEASURE_KEY) or ("time" if unit == "second" else unit)
    return MeasuredFile(str(path), bench.get_name(), measure, unit, md.get("lab_workload"),
                        list(bench.get_values()))


def compare_files(a: Path, b: Path) -> dict[str, Any]:
    """Ratio a/b of two pyperf files of the same measure, unit and workload: time as
    mean(a)/mean(b) with its Welch t interval, a count (one exact value a side) as the
    plain quotient. NotComparable, in one line, when they differ in any of the three."""
    fa, fb = read_measured(a), read_measured(b)
    for what in ("measure", "unit", "workload"):
        va, vb = getattr(fa, what), getattr(fb, what)
        if va != vb:
            raise NotComparable(f"{a} and {b} are not comparable: {what} {va} vs {vb}")
    out: dict[str, Any] = {"a": str(a), "b": str(b), "benchmark_a": fa.name,
                           "benchmark_b": fb.name, "measure": fa.measure, "unit": fa.unit,
                           "workload": fa.workload, "a_summary": summarize(fa.values).as_dict(),
                           "b_summary": summarize(fb.values).as_dict()}
    if fa.measure in _COUNTS or (len(fa.values) == 1 and len(fb.values) == 1):
        ratio = fa.values[0] / fb.values[0]
        out.update(ratio=ratio, estimator="count")
    else:
        out.update(ratio_ci(fa.values, fb.values).as_dict(), estimator="mean")
    out["in_words"] = in_words(str(a), str(b), out["ratio"], fa.measure)
    return out


def compare_table(res: Mapping[str, Any]) -> str:
    """compare's result as pyperf compare_to's table: a column a file, the second with
    its factor against the first."""
    def cell(summary: Mapping[str, Any]) -> str:
        if res["estimator"] == "count":
            return f"{summary['mean']:,.0f} {res['unit']}"
        return f"{format_seconds(summary['mean'])} +- {format_seconds(summary['stdev'])}"
    effect = effect_words(res["ratio"], res["measure"])
    if res["estimator"] == "mean":
        effect += (f" (95 % CI {res['ci_low']:.3g}x .. {res['ci_high']:.3g}x, "
                   f"{'significant' if res['significant'] else 'not significant'})")
    rows = [("Benchmark", res["a"], res["b"]),
            (res["benchmark_a"] if res["benchmark_a"] == res["benchmark_b"]
             else f"{res['benchmark_a']} / {res['benchmark_b']}",
             cell(res["a_summary"]), f"{cell(res['b_summary'])}: {effect}")]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    text = [line]
    for k, r in enumerate(rows):
        text.append("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |")
        text.append(line.replace("-", "=") if k == 0 else line)
    return "\n".join(text)
