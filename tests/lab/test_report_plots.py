"""lab.plots: published figures parse to ratios; seed_beside_lab and series_plot draw."""
from __future__ import annotations

import io
import json
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

from lab.harness import run_scenario
from lab.measure import instructions as counting
from lab.plots import published_ratio, seed_beside_lab, series_plot
from lab.report import load_results, render
from lab.results import ScenarioResult
from lab.scenarios import SCENARIOS


def test_published_ratio_reads_the_seed_wording() -> None:
    assert published_ratio("1.62x (block_type_early_exit)") == 1.62
    assert published_ratio("1.31 s -> 0.48 s (2.73x, 10k refs)") == 2.73
    assert abs(published_ratio("19.4 s -> 5.7 s") - 19.4 / 5.7) < 1e-12
    assert abs(published_ratio("4m56 s -> 3m32 s") - 296 / 212) < 1e-12
    assert abs(published_ratio("-22.0% (log --raw)") - 1 / 0.78) < 1e-12
    assert published_ratio("(no seed figure)") is None
    assert published_ratio(None) is None


def _row(title: str, measure: str, ratio: float, published: str | None) -> dict:
    return {"title": title, "slow": "all-off", "fast": "all-on", "measure": measure,
            "ratio": ratio, "ci_low": ratio * 0.9, "ci_high": ratio * 1.1,
            "published": published, "work_differs": True}


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def test_seed_beside_lab_draws_published_rows_only() -> None:
    result = {"scenario": "s", "scale": "small", "seed": "003",
              "ratios": [_row("a", "instructions", 1.5, "1.62x"), _row("a", "time", 1.4, "1.62x"),
                         _row("b", "time", 1.1, None)]}
    fig = seed_beside_lab(result)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert len(labels) == 1 and labels[0].startswith("a\nseed: 1.62x")
    assert _png(fig)[:4] == b"\x89PNG"
    only = seed_beside_lab(result, measure="instructions")
    assert len(only.axes[0].patches) == 1


def test_seed_beside_lab_marks_real_c_where_it_was_measured() -> None:
    anchored = {**_row("a", "instructions", 1.12, "2.7x"), "c_ratio": 1.4}
    result = {"scenario": "s", "scale": "small", "seed": "004",
              "ratios": [anchored, _row("b", "instructions", 1.1, "1.2x")]}
    ax = seed_beside_lab(result).axes[0]
    stars = [ln for ln in ax.get_lines() if ln.get_marker() == "*"]
    assert [list(ln.get_xdata()) for ln in stars] == [[1.4]]
    assert "real C here (instructions)" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_seed_beside_lab_greys_all_rows_without_published() -> None:
    result = {"scenario": "s", "scale": "small", "seed": "000",
              "ratios": [_row("a", "time", 1.5, None), _row("b", "time", 0.9, None)]}
    fig = seed_beside_lab(result)
    assert len(fig.axes[0].get_yticklabels()) == 2
    assert "lab only" in fig.axes[0].get_title()


def test_series_plot_none_without_a_series() -> None:
    assert series_plot({"scenario": "s", "variants": [], "ratios": []}) is None


_STEPS = ["all-off", "only-stat_cache", "all-off+stat_cache+mmap"]


def _tiny_run(tmp_path: Path, out: str, extra: tuple[str, ...] = ()) -> ScenarioResult:
    return run_scenario(SCENARIOS["update-ref-create-1"], "small", tmp_path / out,
                        only=[*_STEPS, *extra],
                        progress=False, measures="instructions", jobs=2,
                        datasets_dir=tmp_path / "ds")


@pytest.mark.skipif(not counting.available(), reason="needs valgrind")
def test_two_runs_of_a_real_scenario_give_identical_instruction_ratios(tmp_path: Path) -> None:
    """update-ref-create-1 (seed 004, one ref), its sequence, all-on and git, counted
    twice: the same counts to the instruction (detrand, private TMPDIR), so the same
    ratios."""
    runs = [_tiny_run(tmp_path, f"out{i}", extra=("all-on", "git")) for i in (1, 2)]
    counts = [{v.label: v.instructions for v in r.variants} for r in runs]
    assert counts[0] == counts[1] and len(counts[0]) == 5
    ratios = [[(q["title"], q["ratio"]) for q in r.ratios] for r in runs]
    assert ratios[0] == ratios[1] and len(ratios[0]) == 5
    assert "git over reftable-lab (all-on)" in dict(ratios[0])


@pytest.mark.skipif(not counting.available(), reason="needs valgrind")
def test_a_tiny_real_run_renders_seed_beside_lab(tmp_path: Path) -> None:
    """update-ref-create-1's sequence: the report has a non-empty seed-beside-lab PNG
    and a series PNG, and the seed's figure beside the lab's on each published row."""
    s = SCENARIOS["update-ref-create-1"]
    _tiny_run(tmp_path, "out1")
    saved = json.loads((tmp_path / "out1" / f"{s.name}.result.json").read_text())
    assert saved["cumulative"] == [["", "all-off"], ["stat_cache", "only-stat_cache"],
                                   ["mmap", "all-off+stat_cache+mmap"]]
    assert len(saved["ratios"]) == 3
    assert all(q["published"] == s.row_published[q["title"]] for q in saved["ratios"])
    fig = seed_beside_lab(saved)
    assert len(fig.axes[0].get_yticklabels()) == 3
    assert series_plot(saved) is not None              # the sequence, step by step
    report = render(load_results(tmp_path / "out1"), tmp_path / "out1")
    png = tmp_path / "out1" / f"{s.name}.seed.png"
    assert png.read_bytes()[:4] == b"\x89PNG" and png.stat().st_size > 5000
    assert (tmp_path / "out1" / f"{s.name}.series.png").stat().st_size > 5000
    text = report.read_text()
    assert f"![seed beside lab]({png.name})" in text
    for q in saved["ratios"]:
        row = next(ln for ln in text.splitlines() if ln.startswith(f"| {q['title']} |"))
        assert f"| {q['ratio']:.3f}x |" in row and f"| {q['published']} |" in row


def test_series_plot_draws_the_slot_grid_and_the_n_sweep() -> None:
    def v(label: str, spec: str, n: float) -> dict:
        return {"label": label, "kind": "flags", "spec": spec, "instructions": n}
    grid = {"scenario": "odb-log-S-slots", "seed": "002", "ratios": [], "variants": [
        v(f"fixed:{n},{lru},32k", f"delta_cache_index=fixed:{n},delta_cache_lru={lru},"
          f"delta_cache_limit=32k", n * (2 if lru == "blob_first" else 1))
        for n in (256, 1024, 4096) for lru in ("blob_first", "single")]}
    fig = series_plot(grid)
    assert fig is not None and len(fig.axes[0].get_lines()) == 2
    assert "delta_cache_index" in fig.axes[0].get_title()
    sweep = [{"scenario": f"update-ref-create-{n}", "params": {"refs": n},
              "variants": [v("all-on", "", 10.0 * n), v("all-off", "", 30.0 * n)]}
             for n in (1, 100)]
    fig = series_plot(sweep)
    assert fig is not None and len(fig.axes[0].get_lines()) == 2
    assert _png(fig)[:4] == b"\x89PNG"
