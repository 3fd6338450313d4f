"""lab.plots: published figures parse to ratios; seed_beside_lab and series_plot draw."""
from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")

from lab.plots import published_ratio, seed_beside_lab, series_plot  # noqa: E402


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


def test_seed_beside_lab_greys_all_rows_without_published() -> None:
    result = {"scenario": "s", "scale": "small", "seed": "000",
              "ratios": [_row("a", "time", 1.5, None), _row("b", "time", 0.9, None)]}
    fig = seed_beside_lab(result)
    assert len(fig.axes[0].get_yticklabels()) == 2
    assert "lab only" in fig.axes[0].get_title()


def test_series_plot_none_without_a_series() -> None:
    assert series_plot({"scenario": "s", "variants": [], "ratios": []}) is None
