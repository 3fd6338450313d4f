"""Notebook helpers: flag pickers, running the pyperf harness as a subprocess,
loading and plotting its results, quick in-process timings and profiles.

Contract: pyperf's Runner does not run inside a notebook kernel, so run_bench()
starts `python -m lab.cli bench` as a subprocess and loads the JSON it wrote.
Everything else runs in the kernel. Widgets are used when ipywidgets is
installed; otherwise a flags spec string does the same job.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from reftable_core.flags import FLAG_INFO, PACKED_LOOKUPS, PACKED_READERS, REFNAME_SAFETY, Flags

from .harness import ScenarioResult
from .report import markdown, plot
from .scenarios import SCENARIOS
from .stats import format_seconds, summarize
from .workloads import build

LAB_ROOT = Path(__file__).resolve().parent.parent


def flag_picker(initial: Flags | None = None) -> Any:
    """A widget box with one control per flag; read `.flags` from the returned object."""
    initial = initial or Flags()
    try:
        import ipywidgets as w
    except ImportError:
        return _SpecPicker(initial)
    controls: dict[str, Any] = {}
    choices = {"packed_reader": PACKED_READERS, "packed_lookup": PACKED_LOOKUPS,
               "refname_safety": REFNAME_SAFETY, "delta_cache_lru": ("blob_first", "single")}
    for name, info in FLAG_INFO.items():
        value = getattr(initial, name)
        if isinstance(value, bool):
            controls[name] = w.Checkbox(value=value, description=name, tooltip=info.on)
        elif name in choices:
            controls[name] = w.Dropdown(options=list(choices[name]), value=value,
                                        description=name)
        else:
            controls[name] = w.Text(value=str(value), description=name)

    class FlagBox(w.VBox):  # type: ignore[misc]
        @property
        def flags(self) -> Flags:
            spec = ",".join(f"{n}={_text(c.value)}" for n, c in controls.items())
            return Flags().with_spec(spec)

    return FlagBox(list(controls.values()))


def _text(v: Any) -> str:
    if v is True:
        return "on"
    if v is False:
        return "off"
    return str(v)


class _SpecPicker:
    def __init__(self, initial: Flags) -> None:
        self.spec = initial.to_spec(only_changed_from=Flags())

    @property
    def flags(self) -> Flags:
        return Flags().with_spec(self.spec)

    def _repr_html_(self) -> str:
        return (f"<code>picker.spec = {self.spec!r}</code> (install ipywidgets for "
                f"checkboxes)")


def run_bench(scenario: str, scale: str = "small", mode: str = "quick",
              only: Sequence[str] | None = None, out: Path | str | None = None,
              datasets: Path | str | None = None, peers: bool = True) -> ScenarioResult:
    """Run `reftable-lab bench` in a subprocess and load the scenario's result."""
    out = Path(out) if out is not None else LAB_ROOT / "results" / "notebooks"
    datasets = Path(datasets) if datasets is not None else LAB_ROOT / "datasets"
    cmd = [sys.executable, "-m", "lab.cli", "bench", scenario, "--scale", scale, "--mode", mode,
           "--out", str(out), "--datasets", str(datasets)]
    if only:
        cmd += ["--only", ",".join(only)]
    if not peers:
        cmd.append("--no-peers")
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=LAB_ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"bench failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    report = Path(proc.stdout.strip().splitlines()[-1].split("report: ", 1)[1])
    data = json.loads((report.parent / f"{scenario}.result.json").read_text())
    return ScenarioResult.from_json(data, report.parent)


def show(result: ScenarioResult) -> None:
    """Display a result: the Markdown tables and the plot, inline."""
    from IPython.display import Image, Markdown, display
    display(Markdown(markdown([result])))
    png = Path(result.variants[0].json_path).parent / f"{result.scenario}.nb.png"
    plot(result, png)
    display(Image(filename=str(png)))


def quick_time(scenario: str, variants: dict[str, Flags], scale: str = "small",
               repeat: int = 3, datasets: Path | str | None = None) -> dict[str, dict[str, float]]:
    """In-kernel timings (best and mean of `repeat` runs) for a few flag values: for
    exploring, not for reporting (use run_bench for numbers with confidence intervals)."""
    sc = SCENARIOS[scenario]
    ds = sc.dataset(scale, datasets if datasets is not None else LAB_ROOT / "datasets")
    params = sc.params(scale)
    out: dict[str, dict[str, float]] = {}
    for label, flags in variants.items():
        tf = build(sc.workload, flags, ds.gitdir, params)
        times = [tf(1) for _ in range(repeat)]
        s = summarize(times)
        out[label] = {"best": min(times), "mean": s.mean}
    return out


def print_times(times: dict[str, dict[str, float]]) -> None:
    base = min(v["best"] for v in times.values())
    for label, v in times.items():
        print(f"{label:32s} best {format_seconds(v['best']):>10s}  mean "
              f"{format_seconds(v['mean']):>10s}  x{v['best'] / base:.2f} of the fastest")


def timed(fn: Any, *args: Any, **kw: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    r = fn(*args, **kw)
    return r, time.perf_counter() - t0
