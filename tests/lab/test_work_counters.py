"""Work counters: every shipped comparison compares variants that do different work.

The work pass (lab.worker.work: reftable_core.counters plus the hot loops'
bytecodes) runs each flags variant of every scenario at the small scale; a
comparison row whose two variants did identical studied work fails the test
unless the scenario marks it (Scenario.same_work) as existing to show exactly
that, and a marked row must indeed show it. The full scale is checked by
reasoning on its parameters: the delta base cache limits against the walks'
working set (measured here at the small scale), the rest does not depend on the
scale (the same tables, flags and code paths, more refs).
"""
from __future__ import annotations

import pytest
from reftable_core import counters
from reftable_core.flags import FLAG_INFO, Flags, parse_size

from lab.results import VariantResult, work_differs
from lab.scenarios import SCENARIOS, WORK_OF_FLAG, Scenario, studied_counters
from lab.worker import loop_bytecodes, work
from lab.workloads import build


def _work_of(s: Scenario, scale: str = "small") -> dict[str, VariantResult]:
    ds = s.dataset(scale)
    params = s.params(scale)
    out = {}
    trace = s.traces_loops(scale)
    for v in s.variants(scale):
        if v.peer:
            continue
        w = work(build(v.workload, v.flags, ds.gitdir, params), trace)
        out[v.label] = VariantResult(v.label, "flags", v.flags.to_spec(only_changed_from=Flags()),
                                     [], "", work=w)
    return out


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_row_compares_different_work(name: str) -> None:
    s = SCENARIOS[name]
    results = _work_of(s)
    marked = s.same_work_rows("small")
    titles = {title for title, _, _ in s.comparisons("small")}
    assert set(marked) <= titles, f"same_work names rows {name} does not have"
    same, wrongly_marked = [], []
    for title, slow, fast in s.comparisons("small"):
        if slow not in results or fast not in results:
            continue                                    # a peer: its work is not counted
        d = work_differs(results[slow], results[fast])
        assert d is not None, f"{name}: {title}: no studied counter measured"
        if title in marked:
            if d:
                wrongly_marked.append(title)
        elif not d:
            names = studied_counters(Flags().with_spec(results[slow].spec),
                                     Flags().with_spec(results[fast].spec))
            shown = ", ".join(f"{n}={results[slow].work.get(n, 0)}" for n in names
                              if n in results[slow].work)
            same.append(f"{title} ({shown})")
    assert not same, f"{name}: rows whose two variants did identical studied work: {same}"
    assert not wrongly_marked, f"{name}: rows marked same_work that differ: {wrongly_marked}"


def _limits(s: Scenario, scale: str) -> dict[str, int]:
    """Variant label -> its delta base cache limit at scale."""
    return {v.label: v.flags.delta_cache_limit for v in s.variants(scale) if not v.peer}


@pytest.mark.parametrize("scale", ["small", "full"])
def test_odb_limits_evict_at_every_scale(scale: str) -> None:
    """Reasoning for the full scale (its dataset is not built here): every cache limit a
    comparison varies lies below the walks' working set, where the cache evicts, except
    the marked plateau rows, above it. (A fixed:N index against the hashmap differs by
    its collisions at any limit: those rows are not about the limit.)"""
    default = Flags().delta_cache_limit
    for name, s in SCENARIOS.items():
        if s.preset != "history-depth50":
            continue
        low, high = (parse_size(x) for x in s.params(scale)["working_set"])
        marked = s.same_work_rows(scale)
        limits = _limits(s, scale)
        index = {v.label: v.flags.delta_cache_index for v in s.variants(scale)}
        for title, slow, fast in s.comparisons(scale):
            if slow not in limits or fast not in limits or limits[slow] == limits[fast] \
                    or index[slow] != index[fast]:
                continue
            lim = min(limits[slow], limits[fast])
            if title in marked:
                assert lim >= high and max(limits[slow], limits[fast]) >= default, (name, title)
            else:
                assert lim < low, f"{name} ({scale}): {title}: limit {lim} may not evict"


def test_small_working_set_is_what_the_scenarios_say() -> None:
    """The small-scale working_set the odb scenarios reason with is measured: with the
    default limit nothing is evicted and the bases peak between its two ends."""
    peaks = []
    for name in ("odb-log-raw", "odb-log-S"):
        s = SCENARIOS[name]
        w = work(build(s.workload, Flags(), s.dataset("small").gitdir, s.params("small")),
                 trace_loops=False)
        assert w["delta_cache_evictions"] == 0
        peaks.append(w["delta_cache_peak_bytes"])
    low, high = (parse_size(x) for x in SCENARIOS["odb-log-raw"].params("small")["working_set"])
    assert low <= min(peaks) and max(peaks) <= high


def test_every_flag_names_its_work() -> None:
    assert set(WORK_OF_FLAG) == set(FLAG_INFO)
    known = set(counters.snapshot()) | {"loop_bytecodes", "allocs"}
    for flag, names in WORK_OF_FLAG.items():
        assert names and set(names) <= known, flag


def test_counters_reset_and_snapshot() -> None:
    counters.reset()
    counters.WORK.blocks_read += 3
    snap = counters.snapshot()
    assert snap["blocks_read"] == 3 and snap["delta_cache_hits"] == 0
    assert set(counters.COUNTER_NAMES) <= set(snap)
    counters.reset()
    assert not any(counters.snapshot().values())


def test_work_differs_rules() -> None:
    def v(label: str, spec: str, **w: int) -> VariantResult:
        return VariantResult(label, "flags", spec, [], "", work=dict(w))
    on, off = v("all-on", ""), v("mmap=off", "mmap=off")
    on.work, off.work = {"source_mmap_slices": 4}, {"source_preads": 4}
    assert work_differs(off, on) is True
    off.work = {"source_mmap_slices": 4, "blocks_read": 9}     # blocks_read: not mmap's work
    assert work_differs(off, on) is False
    peer = VariantResult("git", "peer", "git_show_ref", [], "")
    assert work_differs(on, peer) is None
    assert work_differs(v("a", "stat_cache=off", blocks_read=1), on) is None


def test_only_the_reftable_scenarios_trace_the_loops() -> None:
    assert SCENARIOS["show-ref-1table"].traces_loops()
    assert SCENARIOS["update-ref-create-1"].traces_loops()            # mmap
    assert not SCENARIOS["odb-log-S-slots"].traces_loops()
    assert not SCENARIOS["packed-load"].traces_loops()


def test_loop_bytecodes_counts_only_the_hot_loops() -> None:
    def f() -> int:
        return sum(range(10))
    assert loop_bytecodes(f) == 0
    assert loop_bytecodes(f, filename=f.__code__.co_filename) > 0


def test_compiled_loops_count_no_loop_bytecodes(monkeypatch) -> None:
    """Compiled loops run no bytecode: a count of 0 on both sides would read as "no
    difference in work" on every row the loop flags study (it did, under Cython)."""
    import lab.worker as worker
    interpreted = worker.loops_run_bytecode()
    monkeypatch.setattr(worker.loops, "__file__",
                        "/build/reftable_core/reftable/loops.cpython-311-x86_64-linux-gnu.so")
    assert not worker.loops_run_bytecode()
    assert "loop_bytecodes" not in worker.work(lambda loops: 0.0)
    monkeypatch.undo()
    if interpreted:
        assert "loop_bytecodes" in worker.work(lambda loops: 0.0)


def test_report_says_no_difference_in_work() -> None:
    from lab.report import markdown
    from lab.results import ScenarioResult, compute_ratios
    r = ScenarioResult("s", "small", "d", {}, variants=[
        VariantResult("all-on", "flags", "", [1.0, 1.1, 0.9], "", work={"source_preads": 0}),
        VariantResult("mmap=off", "flags", "mmap=off", [2.0, 2.1, 1.9], "",
                      work={"source_preads": 0})])
    r.ratios = compute_ratios(r, [("mmap alone, others on", "mmap=off", "all-on")])
    assert r.ratios[0]["work_differs"] is False
    text = markdown([r])
    row = next(ln for ln in text.splitlines() if ln.startswith("| mmap alone"))
    assert "no difference in work" in row and "faster" not in row and "| yes |" not in row
