"""Every seed figure sits on a row the scenario has, at both scales; the report puts
published beside lab, says whether the lab goes the same way, and where the size differs
says so with the work counters."""
from __future__ import annotations

import pytest

from lab.plots import published_ratio
from lab.report import magnitude_note, markdown, same_direction
from lab.results import ScenarioResult, VariantResult, compute_ratios
from lab.scenarios import SCENARIOS

SCALES = ("small", "full")


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_row_published_names_a_comparison(name: str, scale: str) -> None:
    s = SCENARIOS[name]
    rows = {title: (slow, fast) for title, slow, fast in s.comparisons(scale)}
    labels = {v.label for v in s.variants(scale)}
    missing = [t for t in s.row_published if t not in rows]
    assert not missing, f"{name} ({scale}): row_published names no comparison: {missing}"
    for title in s.row_published:
        assert set(rows[title]) <= labels, (name, scale, title)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_same_work_names_rows_of_the_full_scale(name: str) -> None:
    """same_work_rows(scale) keeps the rows run at a scale (extras_at); at the full
    scale, where every extra variant runs, every title it names is a row."""
    s = SCENARIOS[name]
    titles = {title for title, _, _ in s.comparisons("full")}
    assert set(s.same_work_rows("full")) == {t.format_map(s.params("full"))
                                            for t in s.same_work}
    assert set(s.same_work_rows("full")) <= titles


def test_the_seeds_figures_are_on_their_rows() -> None:
    """Seed 000 step by step, seed 004 per N (its own figure, not the 10k one), 003, 002, 001."""
    one = SCENARIOS["show-ref-1table"].row_published
    assert one["merged_cmp alone, others off"].startswith("180.7 ms -> 162.1 ms (1.11x")
    assert one["+same_subiter_skip on top of only-merged_cmp"].startswith("162.6 ms")
    assert "1.03x, 5/7" in one["+block_key_swap on top of all-off+merged_cmp+same_subiter_skip"]
    three = SCENARIOS["show-ref-3tables"].row_published
    assert "1.30x, 4/7" in three["+pq_cmp on top of all-off+merged_cmp+same_subiter_skip"]
    texts = {n: SCENARIOS[f"update-ref-create-{n}"].row_published for n in (1, 100, 10000)}
    for n, rows in texts.items():
        assert all(f"refcount = {n})" in t for t in rows.values()), rows
        assert set(rows) == {"stat_cache alone, others off", "+mmap on top of only-stat_cache",
                             "the whole sequence (stat_cache then mmap)"}
    assert published_ratio(texts[100]["+mmap on top of only-stat_cache"]) == 1.45
    assert published_ratio(SCENARIOS["update-ref-create-100k"].row_published[
        "block_type_early_exit alone, others on"]) == 1.62
    slots = SCENARIOS["odb-log-S-slots"].row_published
    assert published_ratio(slots["slots 4096 -> 16384, blob_first LRU (at limit_lo)"]) == 0.33
    readers = SCENARIOS["packed-verify-missing"].row_published
    assert any("getc_unlocked -> getdelim" in t for t in readers)
    for name in ("show-ref-1table", "odb-log-raw"):
        assert SCENARIOS[name].unreproduced


def test_same_direction() -> None:
    assert same_direction("1.62x", 1.2) == "yes"
    assert same_direction("1.62x", 0.9) == "no"
    assert same_direction("6.484 s -> 19.845 s (0.33x: slower)", 0.8) == "yes"
    assert same_direction("5.6 ms -> 5.7 ms (0.98x: no change)", 1.3).startswith("n/a")
    assert same_direction("'basically nothing' (no figure)", 1.3).startswith("n/a")
    assert same_direction(None, 1.3) == ""


def _result() -> ScenarioResult:
    work_off = {"loop_bytecodes": 1000, "allocs": 500}
    work_on = {"loop_bytecodes": 970, "allocs": 310}
    r = ScenarioResult("s", "small", "d", {}, seed="000", variants=[
        VariantResult("all-off", "flags", "ref_name_alloc=off", [], "", instructions=1030.0,
                      work=work_off),
        VariantResult("all-on", "flags", "", [], "", instructions=1000.0, work=work_on)],
        unreproduced={"7/7": "no figure"})
    r.ratios = compute_ratios(r, [("ref_name_alloc alone, others on", "all-off", "all-on")],
                              {"ref_name_alloc alone, others on": "1.30x (made up)"})
    return r


def test_report_shows_published_beside_lab_and_the_python_costs() -> None:
    r = _result()
    note = magnitude_note(r, r.ratios[0], None)
    assert note.startswith("ref_name_alloc alone, others on: loop_bytecodes -3%, allocs -38% "
                           "but instructions -3%")
    assert "smaller in the lab" in note and "allocation is cheap" in note
    text = markdown([r])
    row = next(ln for ln in text.splitlines() if ln.startswith("| ref_name_alloc alone"))
    assert "| 1.030x |" in row and "| 1.30x (made up) | yes | yes |" in row
    assert f"- {note}" in text
    assert "- 7/7: no figure" in text
    same = _result()
    same.ratios[0]["published"] = "1.04x (made up)"
    assert magnitude_note(same, same.ratios[0], None) == ""      # the same size: no note
