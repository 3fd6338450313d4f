"""lab.results: the row wording names the flags a row moves and its base, once."""
from __future__ import annotations

from lab.results import (ScenarioResult, VariantResult, compute_ratios, effect_words, row_words,
                         side_names)


def _v(label: str, spec: str, kind: str = "flags") -> VariantResult:
    return VariantResult(label, kind, spec, [], "")


def test_a_row_names_the_flag_it_moves_and_its_base() -> None:
    base = _v("all-off", "baseline")
    alone = _v("only-merged_cmp", "baseline,merged_cmp=on")
    assert row_words(base, alone, 1.11, "instructions") == \
        "merged_cmp on: 1.11x fewer instructions (base: all others off)"
    off = _v("merged_cmp=off", "merged_cmp=off")
    assert row_words(off, _v("all-on", ""), 1.3, "time") == \
        "merged_cmp on: 1.3x faster (base: all others on)"
    assert row_words(off, _v("all-on", ""), 0.8, "allocations") == \
        "merged_cmp on: 1.25x more heap allocations (base: all others on)"
    assert row_words(off, _v("all-on", ""), 1.0, "time") == \
        "merged_cmp on: no difference in time (base: all others on)"


def test_the_issue_example_names_merged_cmp_not_a_label() -> None:
    """"single_subiter_bypass=off executes 1.11x fewer instructions than merged_cmp=off"
    was the row merged_cmp alone: its two sides differ in merged_cmp only."""
    slow = _v("merged_cmp=off", "merged_cmp=off,single_subiter_bypass=off")
    fast = _v("single_subiter_bypass=off", "single_subiter_bypass=off")
    words = row_words(slow, fast, 1.11, "instructions")
    assert words == ("merged_cmp on: 1.11x fewer instructions "
                     "(base: all others on but single_subiter_bypass off)")


def test_a_row_moving_several_flags_names_them_all() -> None:
    slow = _v("two-off", "merged_cmp=off,pq_cmp=off")
    assert side_names(slow, _v("all-on", "")) == ("merged_cmp on, pq_cmp on", "all others on")
    assert side_names(_v("all-off", "baseline"), _v("all-on", "")) == ("all flags on", "all off")
    multi = _v("packed_reader=fgetc", "packed_reader=fgetc")
    assert side_names(multi, _v("all-on", "")) == ("packed_reader=mmap", "all others on")
    assert side_names(_v("all-on", ""), multi) == ("packed_reader=fgetc", "all others on")


def test_rows_without_a_flag_difference_name_their_sides() -> None:
    git = _v("git", "git_show_ref", kind="peer")
    assert row_words(_v("all-on", ""), git, 6.8) == \
        "git: 6.8x faster (base: reftable-lab (all-on))"
    a, b = _v("all-on@abc", ""), _v("all-on@def", "")
    assert row_words(a, b, 0.5, "instructions") == \
        "all-on@def: 2x more instructions (base: all-on@abc)"


def test_compute_ratios_words_every_row() -> None:
    r = ScenarioResult("s", "small", "d", {}, variants=[
        VariantResult("all-off", "flags", "baseline", [], "", instructions=300.0),
        VariantResult("only-mmap", "flags", "baseline,mmap=on", [], "", instructions=200.0)])
    (q,) = compute_ratios(r, [("mmap alone, others off", "all-off", "only-mmap")])
    assert q["in_words"] == "mmap on: 1.5x fewer instructions (base: all others off)"


def test_a_factor_near_one_keeps_the_digits_that_tell_it_from_one() -> None:
    """0.9965 is not "1x more": a row within 1 % of 1 says by how much."""
    assert effect_words(0.9965, "instructions") == "1.0035x more instructions"
    assert effect_words(1.004, "time") == "1.0040x faster"
    assert effect_words(1.5, "allocations") == "1.5x fewer heap allocations"
