"""Notebook helpers: a flag picker that acts, benchmark runs, compact tables and plots.

Contract: FlagLab is a notebook's control panel: one widget per flag (the picker),
a benchmark chooser and a Run button. Its quick_look() and bench() cells display
a Panel each (a box of HTML and Image widgets); Run re-runs the quick look and
the chosen benchmark with the picked flags and replaces those panels' contents
in place. No output is captured into an ipywidgets Output: under nbclient (nbmake)
the Output mimic sends each captured output to the kernel on the shell socket
that nbclient is waiting on for the cell's reply, and that reply can then be
missed for good (the cell hangs). Every run reads the notebook's own dataset and
results folders (given once, at the top of the notebook).
bench() adds the picked flags to the scenario as the variant "picker" (compared
with all-on) and runs the harness, which measures every variant in worker
processes (pyperf's Runner does not run inside a notebook kernel) and writes
pyperf JSON under the results folder: by default R interleaved rounds in one
worker process (`bench --rounds R --within-process`: seconds, not minutes, at the
small scale), or with rounds=None complete pyperf runs in `mode`. quick_time()
times in the kernel, for exploring: one discarded warm-up round, then rounds that
interleave the variants (each round in a rotated order), best of the rounds. Tables are HTML (a variant's
flags in its tooltip), no headings: the notebook owns its heading levels.
"""
from __future__ import annotations

import dataclasses
import html
import io
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import ipywidgets as w
from IPython.display import display
from matplotlib.figure import Figure
from reftable_core.flags import (
    FLAG_INFO,
    PACKED_LOOKUPS,
    PACKED_READERS,
    REFNAME_SAFETY,
    Flags,
    baseline,
)

import data_gen

from .harness import run_scenario
from .results import ScenarioResult
from .measure.registry import parse_measures
from .plots import seed_beside_lab
from .report import comparison_rows, plot
from .scenarios import SCENARIOS
from .stats import format_count, format_seconds, summarize
from .workloads import build

PICKER = "picker"                  # the label of the picked flags' variant
_CHOICES = {"packed_reader": PACKED_READERS, "packed_lookup": PACKED_LOOKUPS,
            "refname_safety": REFNAME_SAFETY, "delta_cache_lru": ("blob_first", "single")}
_STYLE = {"description_width": "initial"}      # full labels, never "packed_re..."


def _text(v: Any) -> str:
    return {True: "on", False: "off"}.get(v, str(v)) if isinstance(v, bool) else str(v)


class FlagPicker(w.GridBox):  # type: ignore[misc]
    """One control per flag (its full name as the label, what "on" does as the tooltip);
    `.flags` is the Flags value they spell."""

    def __init__(self, initial: Flags | None = None) -> None:
        initial = initial or Flags()
        self.controls: dict[str, w.ValueWidget] = {}
        for name, info in FLAG_INFO.items():
            value = getattr(initial, name)
            if isinstance(value, bool):
                c = w.Checkbox(value=value, description=name, indent=False, style=_STYLE,
                               tooltip=info.on)
            elif name in _CHOICES:
                c = w.Dropdown(options=list(_CHOICES[name]), value=value, description=name,
                               style=_STYLE, tooltip=info.on, layout=w.Layout(width="300px"))
            else:
                c = w.Text(value=str(value), description=name, style=_STYLE, tooltip=info.on,
                           layout=w.Layout(width="300px"))
            self.controls[name] = c
        super().__init__(list(self.controls.values()), layout=w.Layout(
            grid_template_columns="repeat(3, max-content)", grid_gap="2px 24px"))

    @property
    def flags(self) -> Flags:
        return Flags().with_spec(",".join(f"{n}={_text(c.value)}"
                                          for n, c in self.controls.items()))


def flag_picker(initial: Flags | None = None) -> FlagPicker:
    return FlagPicker(initial)


class Panel(w.VBox):  # type: ignore[misc]
    """A cell's output that Run replaces in place: its children are the shown widgets."""

    def show(self, items: Sequence[w.Widget]) -> None:
        self.children = tuple(items)


def html_widget(value: str) -> w.HTML:
    return w.HTML(value=value)


def image_widget(png: bytes) -> w.Image:
    """A plot as an image widget (renders as an <img>; Run swaps its bytes)."""
    return w.Image(value=png, format="png", layout=w.Layout(max_width="100%"))


class FlagLab:
    """The picker, a benchmark chooser and a Run button for one notebook.

    benchmarks: scenario -> the variant labels to run beside the picker (None: all);
    quick: the scenario the quick look times; variants: quick-look label -> flags spec,
    timed beside "all on", "all off" and the picker; quick_rounds: the quick look's
    rounds; rounds: the benchmarks' (see run_bench).
    """

    def __init__(self, benchmarks: dict[str, Sequence[str] | None], quick: str,
                 variants: dict[str, str], datasets: Path | str, results: Path | str,
                 scale: str = "small", mode: str = "quick", measure: str = "time",
                 quick_rounds: int = 3, rounds: int | None = 5,
                 initial: Flags | None = None) -> None:
        self.benchmarks, self.quick, self.variants = dict(benchmarks), quick, dict(variants)
        self.datasets, self.results = Path(datasets), Path(results)
        self.scale, self.mode, self.measure = scale, mode, measure
        self.quick_rounds, self.rounds = quick_rounds, rounds
        self.picker = FlagPicker(initial)
        self.choice = w.Dropdown(options=list(self.benchmarks), description="benchmark",
                                 style=_STYLE, layout=w.Layout(width="max-content"))
        self.button = w.Button(description="Run", button_style="primary", icon="play",
                               tooltip="re-run the quick look and the chosen benchmark "
                                       "with the picked flags")
        self.status = w.HTML(value="")
        self.log = w.HTML(value="")      # what a failed Run raised
        self.extra = w.VBox([])          # a chosen benchmark whose cell has not run shows here
        self.panels: dict[str, Panel] = {}
        self.times: dict[str, dict[str, float]] = {}
        self.last: dict[str, ScenarioResult] = {}
        self.button.on_click(self._on_run)
        self.widget = w.VBox([self.picker, w.HBox([self.choice, self.button, self.status]),
                              self.log, self.extra])

    def _repr_mimebundle_(self, **kw: Any) -> Any:
        return self.widget._repr_mimebundle_(**kw)

    # -- the cells -----------------------------------------------------------------
    def quick_look(self) -> Panel:
        """In-kernel timings of the quick-look variants and the picker: a plot and a table."""
        return self._cell("quick", self._quick_items)

    def bench(self, scenario: str) -> Panel:
        """The scenario's chosen variants and the picker, by the harness: table and plot."""
        return self._cell(scenario, lambda: self._bench_items(scenario))

    def run(self, scenario: str | None = None) -> None:
        """What Run does: the quick look and the chosen (or given) benchmark, again."""
        scenario = scenario or self.choice.value
        self._fill("quick", self._quick_items)
        if scenario not in self.panels:
            self.extra.children = (*self.extra.children, self._panel(scenario))
        self._fill(scenario, lambda: self._bench_items(scenario))

    # -- plumbing ------------------------------------------------------------------
    def _panel(self, key: str) -> Panel:
        if key not in self.panels:
            self.panels[key] = Panel([])
        return self.panels[key]

    def _cell(self, key: str, items: Callable[[], list[w.Widget]]) -> Panel:
        self._fill(key, items)       # in a cell an error propagates (nbmake sees it)
        return self.panels[key]

    def _fill(self, key: str, items: Callable[[], list[w.Widget]]) -> None:
        shown = items()              # computed first: a failure leaves the old figures
        self._panel(key).show(shown)

    def _on_run(self, _button: Any) -> None:
        self.button.disabled = True
        self.status.value = f"running {html.escape(self.choice.value)} ..."
        self.log.value = ""
        t0 = time.perf_counter()
        try:
            self.run()
            self.status.value = f"done in {time.perf_counter() - t0:.1f} s"
        except Exception:  # noqa: BLE001 - shown where the person looks, not in a log
            self.status.value = "failed"
            self.log.value = f"<pre>{html.escape(traceback.format_exc())}</pre>"
        finally:
            self.button.disabled = False

    def _quick_items(self) -> list[w.Widget]:
        picked = self.picker.flags
        variants = {"all on": Flags(), "all off": baseline(), PICKER: picked,
                    **{k: Flags().with_spec(v) for k, v in self.variants.items()}}
        self.times = quick_time(self.quick, variants, self.scale, self.quick_rounds,
                                self.datasets)
        spec = picked.to_spec(only_changed_from=Flags()) or "all on"
        return [image_widget(quick_plot(self.quick, self.times, spec)),
                html_widget(times_table(self.times, variants))]

    def _bench_items(self, scenario: str) -> list[w.Widget]:
        result = run_bench(scenario, self.scale, self.mode, self.benchmarks[scenario],
                           self.results, self.datasets, flags=self.picker.flags,
                           measure=self.measure, rounds=self.rounds)
        self.last[scenario] = result
        return show_items(result)


# -- benchmarks through the harness ---------------------------------------------------
def dataset(scenario: str, scale: str, datasets: Path | str) -> data_gen.Dataset:
    """The dataset the scenario measures at that scale, under `datasets` (built once)."""
    sc = SCENARIOS[scenario]
    return data_gen.build(sc.preset, root=Path(datasets), **sc.dataset_params(scale))


def run_bench(scenario: str, scale: str = "small", mode: str = "quick",
              only: Sequence[str] | None = None, out: Path | str = "results",
              datasets: Path | str = "datasets", peers: bool = True,
              flags: Flags | None = None, measure: str = "time",
              rounds: int | None = None) -> ScenarioResult:
    """Measure the scenario's variants (`only`: those labels) and, with `flags`, the variant
    "picker" (those flags; its row: picker vs all-on), on the dataset under `datasets`;
    results under `out`/<run>/. measure: as `bench --measure`; time by default (the CLI's
    default, instructions at the small scale, takes minutes). rounds=R: R interleaved
    rounds, all in one worker process (as `bench --rounds R --within-process`); None:
    a complete pyperf run per variant in `mode`."""
    sc = SCENARIOS[scenario]
    labels = list(only) if only is not None else None
    if flags is not None:
        sc = dataclasses.replace(sc, extra_variants=(
            *sc.extra_variants, (PICKER, flags.to_spec(only_changed_from=Flags()))))
        labels = None if labels is None else [*labels, PICKER]
    measures = parse_measures(measure)
    run_dir = Path(out) / time.strftime(f"%Y%m%d-%H%M%S-{scenario}-{scale}")
    return run_scenario(sc, scale, run_dir, mode, peers=peers, only=labels,
                        datasets_dir=Path(datasets), progress=False, measures=measures,
                        rounds=rounds, within_process=rounds is not None)


def _tip(label: str, tooltip: str) -> str:
    """The label, its tooltip (a variant's flags) shown on hover."""
    return (f'<span title="{html.escape(tooltip)}" style="text-decoration: underline dotted">'
            f'{html.escape(label)}</span>')


def show_items(result: ScenarioResult) -> list[w.Widget]:
    """The compact tables, the lab's plot and the seed's published ratios beside the lab's
    (lab.plots.seed_beside_lab, of the result as its result.json has it) of one result."""
    png = Path(result.variants[0].json_path).parent / f"{result.scenario}.nb.png"
    plot(result, png)
    return [html_widget(result_table(result)), image_widget(png.read_bytes()),
            image_widget(png_bytes(seed_beside_lab(result.to_json())))]


def show(result: ScenarioResult) -> None:
    for item in show_items(result):
        display(item)


_TABLE = ('<table style="font-size: 90%; border-collapse: collapse">'
          '<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>')


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """HTML table; cells are already escaped HTML; numbers do not wrap."""
    def tr(cells: Sequence[str], tag: str) -> str:
        return "".join(f'<{tag} style="white-space: nowrap; padding: 1px 8px; '
                       f'text-align: left">{c}</{tag}>' for c in cells)
    return _TABLE.format(head=tr(head, "th"),
                         rows="".join(f"<tr>{tr(r, 'td')}</tr>" for r in rows))


def result_table(r: ScenarioResult) -> str:
    """Two compact tables: the variants (flags in each label's tooltip) and the ratios
    (the seed's figure beside each lab row), with a footnote of what the numbers are."""
    e = html.escape
    variants = []
    for v in r.variants:
        label = _tip(v.label, v.spec or "default (all on)")
        timing = ["", ""]
        if v.values:
            s = summarize(v.values)
            timing = [format_seconds(s.mean),
                      f"{format_seconds(s.ci_low)} .. {format_seconds(s.ci_high)}"]
        count = format_count(v.instructions) if v.instructions is not None else ""
        variants.append([label, e(v.kind), *timing, count])
    ratios = []
    for title, qi, qt in comparison_rows(r):
        time_cell = "" if qt is None else (
            f"{qt['ratio']:.3f}x [{qt['ci_low']:.3f} .. {qt['ci_high']:.3f}]"
            f"{' *' if qt['significant'] else ''}")
        words = (qi or qt or {}).get("in_words", "")
        pub = (qi or qt or {}).get("published") or ""
        ratios.append([e(title), e(words), "" if qi is None else f"{qi['ratio']:.3f}x",
                       e(time_cell), e(pub)])
    return (f"<p>seed {e(r.seed)}, {e(r.scale)} scale; dataset <code>{e(r.dataset)}</code>"
            f"</p>"
            + _table(["variant", "kind", "mean", "95% CI", "instructions"], variants)
            + "<br>" + _table(["comparison", "in words", "instructions", "time [95% CI]",
                               "published"], ratios)
            + "<p style='font-size: 85%'>Hover a variant for its flags. Ratios are slow/fast "
              "(&gt; 1: the second side is faster); instructions are exact callgrind counts; "
              "* = significant after Holm's correction. Seed's figures: "
              f"{e(r.published)}</p>")


# -- the quick look, in the kernel --------------------------------------------------
def quick_time(scenario: str, variants: dict[str, Flags], scale: str = "small",
               rounds: int = 3, datasets: Path | str = "datasets"
               ) -> dict[str, dict[str, float]]:
    """In-kernel timings (best and mean over `rounds`) for a few flag values, for exploring
    (run_bench gives numbers with intervals). A first round warms every variant up and is
    discarded; each later round times every variant once, in an order rotated by one per
    round, so no variant always pays for running first."""
    sc = SCENARIOS[scenario]
    ds = sc.dataset(scale, datasets)
    params = sc.params(scale)
    fns = {label: build(sc.workload, flags, ds.gitdir, params)
           for label, flags in variants.items()}
    labels = list(fns)
    for label in labels:                 # warm-up: caches, byte-code, first allocations
        fns[label](1)
    times: dict[str, list[float]] = {label: [] for label in labels}
    for r in range(rounds):
        k = r % len(labels)
        for label in labels[k:] + labels[:k]:
            times[label].append(fns[label](1))
    return {label: {"best": min(t), "mean": summarize(t).mean} for label, t in times.items()}


def times_table(times: dict[str, dict[str, float]], variants: dict[str, Flags]) -> str:
    base = min(v["best"] for v in times.values())
    rows = [[_tip(k, variants[k].to_spec(only_changed_from=Flags()) or "all on"),
             format_seconds(v["best"]), format_seconds(v["mean"]), f"{v['best'] / base:.2f}x"]
            for k, v in times.items()]
    return _table(["variant", "best", "mean", "of the fastest"], rows)


def print_times(times: dict[str, dict[str, float]]) -> None:
    base = min(v["best"] for v in times.values())
    for label, v in times.items():
        print(f"{label:32s} best {format_seconds(v['best']):>10s}  mean "
              f"{format_seconds(v['mean']):>10s}  x{v['best'] / base:.2f} of the fastest")


def quick_plot(scenario: str, times: dict[str, dict[str, float]], picked: str) -> bytes:
    """PNG bytes: best and mean per variant, the picked flags in the title."""
    labels = list(times)
    fig = Figure(figsize=(8, 0.5 + 0.4 * len(labels)))
    ax = fig.subplots()
    ax.barh(labels, [times[k]["mean"] * 1e3 for k in labels], color="tab:gray",
            alpha=0.5, label="mean")
    ax.barh(labels, [times[k]["best"] * 1e3 for k in labels],
            color=["tab:orange" if k == PICKER else "tab:blue" for k in labels], label="best")
    ax.invert_yaxis()
    ax.set_xlabel("ms per run (in the kernel, after a warm-up round)")
    ax.set_title(f"{scenario}: quick look; picker = {picked}", fontsize="medium")
    ax.legend(loc="lower right", fontsize="small")
    fig.tight_layout()
    return png_bytes(fig)


def png_bytes(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()


def timed(fn: Any, *args: Any, **kw: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    r = fn(*args, **kw)
    return r, time.perf_counter() - t0
