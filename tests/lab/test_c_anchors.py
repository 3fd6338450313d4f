"""Real C beside a seed row: the row's two git builds as peers, their ratio on the row."""
from __future__ import annotations

from pathlib import Path

from lab.builds import GitBuild
from lab.report import c_lines
from lab.results import (Revisions, ScenarioResult, VariantResult, anchor_rows, c_comparisons,
                         compute_ratios, row_published)

TITLE = "stat_cache alone, others off"


def _result(lab: tuple[float, float], c: tuple[float, float]) -> tuple[ScenarioResult, dict]:
    before = GitBuild("v2.45.0 + revert X", "a" * 40, Path("/nonexistent/a"))
    after = GitBuild("v2.45.0", "b" * 40, Path("/nonexistent/b"))
    rev = Revisions(git=(before, after), c_anchors=((TITLE, before, after),)).to_json()
    r = ScenarioResult("update-ref-create-100", "small", "ds", {"n": 100}, revisions=rev)
    r.variants = [
        VariantResult("all-off", "flags", "baseline", [], "", instructions=lab[0]),
        VariantResult("only-stat_cache", "flags", "baseline,stat_cache=on", [], "",
                      instructions=lab[1]),
        VariantResult(before.label, "peer", "git_update_ref_create", [], "", instructions=c[0]),
        VariantResult(after.label, "peer", "git_update_ref_create", [], "", instructions=c[1])]
    rows = [(TITLE, "all-off", "only-stat_cache"), *c_comparisons(Revisions(
        git=(before, after), c_anchors=((TITLE, before, after),)))]
    r.ratios = compute_ratios(r, rows, row_published({TITLE: "19.2 ms -> 15.2 ms (1.26x)"}, rev))
    anchor_rows(r.ratios, rev["c_anchors"])
    return r, rev


def test_a_row_gets_real_cs_ratio_its_direction_and_the_magnitude_error() -> None:
    r, _ = _result((1120.0, 1000.0), (1400.0, 1000.0))
    (row,) = [q for q in r.ratios if q["title"] == TITLE]
    assert row["ratio"] == 1.12 and row["c_ratio"] == 1.4
    assert row["same_direction_as_c"] is True
    assert abs(row["magnitude_error"] - 1.12 / 1.4) < 1e-12
    (c_row,) = [q for q in r.ratios if q["title"] == f"{TITLE} [real C]"]
    assert c_row["published"] == "19.2 ms -> 15.2 ms (1.26x)"   # the seed's figure beside C
    assert "c_ratio" not in c_row                               # C's row anchors nothing


def test_opposite_directions_and_no_change_are_told_apart() -> None:
    r, _ = _result((1120.0, 1000.0), (900.0, 1000.0))
    assert [q["same_direction_as_c"] for q in r.ratios if q["title"] == TITLE] == [False]
    r, _ = _result((1120.0, 1000.0), (1000.0, 1000.0))
    assert [q["same_direction_as_c"] for q in r.ratios if q["title"] == TITLE] == [None]


def test_the_report_reads_published_real_c_and_the_lab_on_one_line() -> None:
    r, _ = _result((1120.0, 1000.0), (1400.0, 1000.0))
    lines = c_lines(r)
    (line,) = [x for x in lines if x.startswith(f"| {TITLE} |")]
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[1] == "19.2 ms -> 15.2 ms (1.26x)"
    assert cells[2:4] == ["1.400x", "1.120x"] and cells[6] == "yes" and cells[7] == "0.800"
    assert cells[8] == "v2.45.0 + revert X -> v2.45.0"


def test_a_row_without_an_anchor_is_left_alone() -> None:
    r, _ = _result((1120.0, 1000.0), (1400.0, 1000.0))
    r.revisions = {}
    rows = compute_ratios(r, [(TITLE, "all-off", "only-stat_cache")])
    anchor_rows(rows, {})
    r.ratios = rows
    assert "c_ratio" not in rows[0] and c_lines(r) == []
