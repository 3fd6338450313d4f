"""Notebook helpers: a flag picker that acts, benchmark runs, compact tables and plots.

Contract: FlagLab is a notebook's control panel: one widget per flag (the picker),
a benchmark chooser and a Run button. Its quick_look() and bench() cells display
a Panel each (a box of HTML and Image widgets); Run re-runs the quick look and
the chosen benchmark with the picked flags and replaces those panels' contents
in place. No output is captured into an ipywidgets Output: under nbclient (nbmake)
the Output mimic sends each captured output to the kernel on the shell socket
that nbclient is waiting on for the cell's reply, and that reply can then be
missed for good (the cell hangs). Every run reads the notebook's own dataset and
results folders (given once, at the top of the notebook); Settings holds the
rest of what a notebook sets once (scale, pyperf effort, measure, rounds).
The picker's controls come from reftable_core.flags (FLAG_INFO and the fields'
parsers): a checkbox per on|off flag, a dropdown where the flag's values are a
closed list, else a text box parsed by the flag's own parser; picker.flags is a
Flags value, and it stays one down to the harness (a scenario's extra variant
holds the Flags itself), which formats it to text only for a worker's argv.
bench() adds the picked flags to the scenario as the variant "picker" (compared
with all-on) and runs the harness, which measures every variant in worker
processes (pyperf's Runner does not run inside a notebook kernel) and writes
pyperf JSON under the results folder: by default R interleaved rounds in one
worker process (`bench --rounds R --within-process`: seconds, not minutes, at the
small scale), or with rounds=None complete pyperf runs in `mode`. quick_time()
is the same harness path at its quickest (`bench --measure time --mode quick
--rounds R --within-process`, no peers, no work pass) over the quick-look variants
only: one discarded warm-up, then R rounds interleaving the variants, into pyperf
JSON under the results folder; quick_times() reads the best and mean of each back
from those files. Tables are HTML (a variant's flags in its tooltip), no headings:
the notebook owns its heading levels.
"""
from __future__ import annotations

import dataclasses
import html
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ipywidgets as w
from reftable_core.errors import ReftableError
from reftable_core.flags import FLAG_INFO, Flags, baseline, format_value

import data_gen

from .harness import run_scenario
from .measure.registry import parse_measures
from .plots import png_bytes, quick_plot, result_plot, save_png, seed_beside_lab
from .report import comparison_rows, load_results, source_of
from .results import ScenarioResult
from .scenario import Scenario
from .scenarios import SCENARIOS
from .stats import format_count, format_seconds, summarize

PICKER = "picker"                  # the label of the picked flags' variant
_STYLE = {"description_width": "initial"}      # full labels, never "packed_re..."
_PARSE: dict[str, Callable[[str], Any]] = {     # each flag's own text parser (its field's)
    f.name: f.metadata["parse"] for f in dataclasses.fields(Flags)}


@dataclass(frozen=True)
class Settings:
    """What a notebook sets once: the scale, pyperf's effort (`bench --mode`), the
    measure (`bench --measure`), the benchmarks' rounds (R interleaved rounds in one
    worker process; None: full pyperf runs in mode) and the quick look's rounds."""
    scale: str = "small"
    mode: str = "quick"
    measure: str = "time"
    rounds: int | None = 5
    quick_rounds: int = 3


def choices(name: str) -> list[str] | None:
    """The values a flag takes when they are a closed list (FLAG_INFO's "a|b|c", each
    accepted as it is by the flag's parser); None for on|off, sizes, "fixed:N", ..."""
    options = FLAG_INFO[name].values.split("|")
    try:
        parsed = [_PARSE[name](o) for o in options]
    except ReftableError:
        return None
    return options if len(options) > 1 and parsed == options else None


class FlagPicker(w.GridBox):  # type: ignore[misc]
    """One control per flag (its full name as the label, what "on" does as the tooltip);
    `.flags` is the Flags value they spell."""

    def __init__(self, initial: Flags | None = None) -> None:
        initial = initial or Flags()
        self.controls: dict[str, w.ValueWidget] = {}
        for name, info in FLAG_INFO.items():
            value = getattr(initial, name)
            options = choices(name)
            if isinstance(value, bool):
                c = w.Checkbox(value=value, description=name, indent=False, style=_STYLE,
                               tooltip=info.on)
            elif options is not None:
                c = w.Dropdown(options=options, value=value, description=name,
                               style=_STYLE, tooltip=info.on, layout=w.Layout(width="300px"))
            else:
                c = w.Text(value=format_value(value), description=name, style=_STYLE,
                           tooltip=info.on, layout=w.Layout(width="300px"))
            self.controls[name] = c
        super().__init__(list(self.controls.values()), layout=w.Layout(
            grid_template_columns="repeat(3, max-content)", grid_gap="2px 24px"))

    @property
    def flags(self) -> Flags:
        """The controls' values as Flags: a checkbox's bool and a dropdown's value as they
        are, a text box's text through its flag's parser."""
        return Flags(**{name: _PARSE[name](c.value) if isinstance(c, w.Text) else c.value
                        for name, c in self.controls.items()})


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
    timed beside "all on", "all off" and the picker; datasets, results: the notebook's
    folders; settings: scale, mode, measure and rounds (Settings).
    """

    def __init__(self, benchmarks: dict[str, Sequence[str] | None], quick: str,
                 variants: dict[str, str], datasets: Path | str, results: Path | str,
                 settings: Settings = Settings(), initial: Flags | None = None) -> None:
        self.benchmarks, self.quick = dict(benchmarks), quick
        self.variants = {label: Flags().with_spec(spec) for label, spec in variants.items()}
        self.datasets, self.results = Path(datasets), Path(results)
        self.settings = settings
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
        """Quick timings (quick_time) of the quick-look variants and the picker: a plot
        and a table."""
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
        variants = {"all on": Flags(), "all off": baseline(), PICKER: picked, **self.variants}
        result = quick_time(self.quick, variants, self.results, self.datasets, self.settings)
        self.times = quick_times(result)
        spec = picked.to_spec(only_changed_from=Flags()) or "all on"
        return [image_widget(png_bytes(quick_plot(self.quick, self.times, spec, PICKER))),
                html_widget(times_table(self.times, variants))]

    def _bench_items(self, scenario: str) -> list[w.Widget]:
        result = run_bench(scenario, self.benchmarks[scenario], self.picker.flags,
                           self.results, self.datasets, self.settings)
        self.last[scenario] = result
        return show_items(result)


# -- benchmarks through the harness ---------------------------------------------------
def dataset(scenario: str, scale: str, datasets: Path | str) -> data_gen.Dataset:
    """The dataset the scenario measures at that scale, under `datasets` (built once)."""
    sc = SCENARIOS[scenario]
    return data_gen.build(sc.preset, root=Path(datasets), **sc.dataset_params(scale))


def with_variants(sc: Scenario, variants: dict[str, Flags], alone: bool = False) -> Scenario:
    """The scenario with more extra variants (label -> the Flags themselves, run at every
    scale); alone: in place of its own extra variants."""
    if alone:
        return dataclasses.replace(sc, extra_variants=tuple(variants.items()), extras_at={})
    return dataclasses.replace(sc, extra_variants=(*sc.extra_variants, *variants.items()),
                               extras_at={scale: (*keep, *variants)
                                          for scale, keep in sc.extras_at.items()})


def run_bench(scenario: str, only: Sequence[str] | None = None, flags: Flags | None = None,
              out: Path | str = "results", datasets: Path | str = "datasets",
              settings: Settings = Settings(), peers: bool = True) -> ScenarioResult:
    """Measure the scenario's variants (`only`: those labels) and, with `flags`, the variant
    "picker" (those flags; its row: picker vs all-on), on the dataset under `datasets`;
    results under `out`/<run>/. settings.measure: as `bench --measure`; time by default
    (the CLI's default, instructions at the small scale, takes minutes).
    settings.rounds=R: R interleaved rounds, all in one worker process (as `bench --rounds
    R --within-process`); None: a complete pyperf run per variant in settings.mode."""
    sc = SCENARIOS[scenario]
    labels = list(only) if only is not None else None
    if flags is not None:
        sc = with_variants(sc, {PICKER: flags})
        labels = None if labels is None else [*labels, PICKER]
    run_dir = Path(out) / time.strftime(f"%Y%m%d-%H%M%S-{scenario}-{settings.scale}")
    return run_scenario(sc, settings.scale, run_dir, settings.mode, peers=peers, only=labels,
                        datasets_dir=Path(datasets), progress=False,
                        measures=parse_measures(settings.measure), rounds=settings.rounds,
                        within_process=settings.rounds is not None)


def _tip(label: str, tooltip: str) -> str:
    """The label, its tooltip (a variant's flags) shown on hover."""
    return (f'<span title="{html.escape(tooltip)}" style="text-decoration: underline dotted">'
            f'{html.escape(label)}</span>')


def show_items(result: ScenarioResult) -> list[w.Widget]:
    """The compact tables, the lab's plot (lab.plots.result_plot, as the report draws it,
    also saved beside the result as <scenario>.nb.png) and the seed's published ratios
    beside the lab's (lab.plots.seed_beside_lab) of one result."""
    d = result.to_json()
    png = Path(result.variants[0].json_path).parent / f"{result.scenario}.nb.png"
    save_png(result_plot(d, source_of(result.seed)), png)
    return [html_widget(result_table(result)), image_widget(png.read_bytes()),
            image_widget(png_bytes(seed_beside_lab(d)))]


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


# -- the quick look: the harness at its quickest ------------------------------------
def quick_time(scenario: str, variants: dict[str, Flags], out: Path | str = "results",
               datasets: Path | str = "datasets", settings: Settings = Settings()
               ) -> ScenarioResult:
    """The variants (label -> Flags) alone, by the harness at its quickest: wall time,
    settings.quick_rounds interleaved rounds in one worker process after one discarded
    warm-up, no peers, no work pass, at settings.scale; pyperf JSON and the result file
    under `out`/<run>-quick/, read back from there (run_bench gives the intervals)."""
    sc = with_variants(SCENARIOS[scenario], variants, alone=True)
    run_dir = Path(out) / time.strftime(f"%Y%m%d-%H%M%S-{scenario}-{settings.scale}-quick")
    run_scenario(sc, settings.scale, run_dir, "quick", peers=False, only=list(variants),
                 datasets_dir=Path(datasets), progress=False, measures=("time",),
                 rounds=settings.quick_rounds, within_process=True, work=False)
    (result,) = load_results(run_dir)
    return result


def quick_times(result: ScenarioResult) -> dict[str, dict[str, float]]:
    """Best and mean seconds per variant of a quick look, in the result's order."""
    return {v.label: {"best": min(v.values), "mean": summarize(v.values).mean}
            for v in result.variants}


def times_table(times: dict[str, dict[str, float]], variants: dict[str, Flags]) -> str:
    base = min(v["best"] for v in times.values())
    rows = [[_tip(k, variants[k].to_spec(only_changed_from=Flags()) or "all on"),
             format_seconds(v["best"]), format_seconds(v["mean"]), f"{v['best'] / base:.2f}x"]
            for k, v in times.items()]
    return _table(["variant", "best", "mean", "of the fastest"], rows)


def timed(fn: Any, *args: Any, **kw: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    r = fn(*args, **kw)
    return r, time.perf_counter() - t0
