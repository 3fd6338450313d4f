"""Merged iteration over fake in-memory tables: newest wins, shadowing, deletions, seeks."""
from __future__ import annotations

import itertools
import os

import pytest
from tests.helpers.fake_tables import FakeTable, FLog, FRef
from tests.helpers.source import source_of
from hypothesis import given, settings
from hypothesis import strategies as st
from reftable_core.flags import Flags, baseline
from reftable_core.reftable.merged import MergedTable, merge_function
from reftable_core.reftable.record import log_key

COMBOS = [Flags(merged_cmp=m, same_subiter_skip=s, pq_cmp=p, single_subiter_bypass=b)
          for m, s, p, b in itertools.product((False, True), repeat=4)]


def _tables() -> list[FakeTable]:
    t0 = FakeTable([FRef(b"refs/heads/a", 1, 1, b"1"), FRef(b"refs/heads/b", 1, 1, b"1"),
                    FRef(b"refs/heads/c", 1, 1, b"1"), FRef(b"refs/tags/v1", 1, 1, b"1")],
                   [FLog(b"refs/heads/a", 1, 1, b"one"), FLog(b"refs/heads/b", 1, 1, b"one")])
    t1 = FakeTable([FRef(b"refs/heads/b", 2, 1, b"2"), FRef(b"refs/heads/c", 2, 0)],
                   [FLog(b"refs/heads/b", 2, 1, b"two")])
    t2 = FakeTable([FRef(b"refs/heads/d", 3, 1, b"3"), FRef(b"refs/heads/b", 3, 1, b"3")],
                   [FLog(b"refs/heads/a", 3, 0)])
    return [t0, t1, t2]


@pytest.mark.parametrize("flags", COMBOS, ids=str)
def test_newest_wins_and_deletions_suppressed(flags: Flags) -> None:
    mt = MergedTable(_tables(), flags)
    got = [(r.refname, r.value) for r in mt.refs()]
    assert got == [(b"refs/heads/a", b"1"), (b"refs/heads/b", b"3"),
                   (b"refs/heads/d", b"3"), (b"refs/tags/v1", b"1")]
    assert mt.min_update_index == 1 and mt.max_update_index == 3
    assert mt.read_ref(b"refs/heads/b").value == b"3"
    assert mt.read_ref(b"refs/heads/c") is None
    assert mt.read_ref(b"refs/heads/zz") is None
    assert [r.refname for r in mt.iter_refs(b"refs/heads/")] == [
        b"refs/heads/a", b"refs/heads/b", b"refs/heads/d"]
    assert [r.refname for r in mt.iter_refs(b"refs/tags/")] == [b"refs/tags/v1"]


@pytest.mark.parametrize("flags", COMBOS, ids=str)
def test_keep_deletions_for_compaction(flags: Flags) -> None:
    mt = MergedTable(_tables(), flags, suppress_deletions=False)
    got = [(r.refname, r.update_index, r.value_type) for r in mt.refs()]
    assert (b"refs/heads/c", 2, 0) in got
    assert len(got) == 5
    logs = [(r.refname, r.update_index, r.value_type) for r in mt.logs()]
    assert logs == [(b"refs/heads/a", 3, 0), (b"refs/heads/a", 1, 1),
                    (b"refs/heads/b", 2, 1), (b"refs/heads/b", 1, 1)]


@pytest.mark.parametrize("flags", [Flags(), baseline()], ids=str)
def test_logs_newest_first_and_seek(flags: Flags) -> None:
    mt = MergedTable(_tables(), flags)
    assert [r.update_index for r in mt.iter_logs(b"refs/heads/b")] == [2, 1]
    # the log deletion at index 3 is suppressed, the older entry stays visible
    assert [r.update_index for r in mt.iter_logs(b"refs/heads/a")] == [1]
    it = mt.logs()
    it.seek(log_key(b"refs/heads/b", 1))
    assert [(r.refname, r.update_index) for r in it] == [(b"refs/heads/b", 1)]


def test_next_without_seek_and_reseek() -> None:
    mt = MergedTable(_tables())
    it = mt.refs()
    assert next(it).refname == b"refs/heads/a"
    it.seek_ref(b"refs/heads/c")
    assert next(it).refname == b"refs/heads/d"
    it.seek_ref(b"refs/tags/zzz")
    assert next(it, None) is None
    it.close()


def test_empty_merged() -> None:
    mt = MergedTable([])
    assert list(mt.refs()) == [] and mt.read_ref(b"HEAD") is None


def test_hash_mismatch_rejected() -> None:
    t = FakeTable([FRef(b"a", 1)])
    u = FakeTable([FRef(b"b", 1)])
    u.hash_id = "sha256"
    with pytest.raises(Exception) as ei:
        MergedTable([t, u])
    assert "hash" in str(ei.value)


refname = st.sampled_from([b"refs/heads/%s" % c for c in (b"a", b"b", b"c", b"d", b"e/f", b"e")])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.tuples(refname, st.integers(0, 1)), max_size=6), min_size=1, max_size=5),
       st.sampled_from([b"", b"refs/heads/c", b"refs/heads/e", b"zz"]))
def test_merged_equals_dict_model(layers: list[list[tuple[bytes, int]]], seek: bytes) -> None:
    model: dict[bytes, tuple[int, int]] = {}
    tables = []
    for i, layer in enumerate(layers):
        recs = {}
        for name, vt in layer:
            recs[name] = FRef(name, i + 1, vt, b"%d" % i)
        tables.append(FakeTable(list(recs.values())))
        for name, r in recs.items():
            model[name] = (i, r.value_type)
    want = [(n, b"%d" % i) for n, (i, vt) in sorted(model.items()) if vt and n >= seek]
    results = set()
    for flags in COMBOS:
        it = MergedTable(tables, flags).refs()
        it.seek_ref(seek)
        got = [(r.refname, r.value) for r in it]
        assert got == want
        results.add(tuple(got))
    assert len(results) == 1


def test_merge_functions_are_generated_per_kind_and_flags_and_readable() -> None:
    def src_of(kind: str, suppress: bool = True, **kw: bool) -> str:
        fn = merge_function(Flags(**kw), kind, suppress)
        assert fn.__module__ == "reftable_core.reftable.loops"
        return source_of(fn)
    fns = {(kind, k): merge_function(Flags(merged_cmp=k[0], same_subiter_skip=k[1],
                                           single_subiter_bypass=k[2], pq_cmp=k[3]), kind)
           for kind in ("ref", "log") for k in itertools.product((False, True), repeat=4)}
    assert len({id(f) for f in fns.values()}) == 32
    assert merge_function(Flags()) is fns[("ref", (True, True, True, True))]
    on = src_of("ref")
    assert "if tidx == idx:" in on and "top[0].refname > erec.refname" in on
    assert "for erec in its[idx]:" in on and "bytearray" not in on
    assert "WORK.deletions_suppressed += 1" in on
    raw = src_of("ref", suppress=False)
    assert "yield from its[idx]" in raw and "value_type" not in raw
    off = src_of("ref", merged_cmp=False, same_subiter_skip=False,
                 single_subiter_bypass=False, pq_cmp=False)
    assert "tidx == idx" not in off and "entry_key[:] = erec.refname" in off
    assert "key[:] = top[0].refname" in off and "bytearray(top[0]" not in off
    assert "yield from" not in off and "bytearray(parent[0].refname)" in off
    assert ".key()" in src_of("log", pq_cmp=False) and ".key()" not in src_of("log")


class _CountingRef:
    """A ref record that counts reads of its refname (the key field)."""
    __slots__ = ("_name", "update_index", "value", "value_type")
    reads = 0

    def __init__(self, name: bytes, ui: int, vt: int, value: bytes | None = None) -> None:
        self._name, self.update_index, self.value_type, self.value = name, ui, vt, value

    @property
    def refname(self) -> bytes:
        _CountingRef.reads += 1
        return self._name

    def key(self) -> bytes:
        return self._name


@pytest.mark.skipif(os.environ.get("REFTABLE_LAB_CORE") == "cython",
                    reason="the Cython build reads a queued record's fields from its C struct "
                           "(a RefRecord only), where no property can count them; the "
                           "interpreted and mypyc runs test the same generated loops")
@pytest.mark.parametrize("bypass", [False, True])
def test_single_subiter_bypass_leaves_the_queue_when_one_table_is_left(bypass: bool) -> None:
    """Once the small table is exhausted, the bypass stops reading keys for the
    queue and the shadow check (same_subiter_skip off compares after every record)."""
    big = [_CountingRef(b"refs/heads/%03d" % i, 1, 1, b"1") for i in range(50)]
    small = [_CountingRef(b"refs/heads/000", 2, 0), _CountingRef(b"refs/heads/002", 2, 1, b"2")]
    flags = Flags(single_subiter_bypass=bypass, same_subiter_skip=False)
    it = MergedTable([FakeTable(big, []), FakeTable(small, [])], flags).refs()
    it.seek(b"")
    _CountingRef.reads = 0
    got = [(r._name, r.value) for r in it]
    assert got[:2] == [(b"refs/heads/001", b"1"), (b"refs/heads/002", b"2")]
    assert len(got) == 49
    if bypass:
        assert _CountingRef.reads < 20
    else:
        assert _CountingRef.reads >= 2 * 47


@pytest.mark.parametrize("flags", COMBOS, ids=str)
@pytest.mark.parametrize("tables", [2, 3])
def test_shadow_loop_empties_the_queue(flags: Flags, tables: int) -> None:
    """Every table's last record has the same key: the newest is returned, the shadow
    loop drops the older ones and their sub-iterators end, so the queue is left empty
    inside the shadow loop (with the bypass on, the loop's first pass is not tested and
    a later one is tested after each drop: f8c1a8e2e1's reuse of its emptiness test)."""
    stack = [FakeTable([FRef(b"refs/heads/a", i + 1, 1, b"%d" % i)] * (i > 0)
                       + [FRef(b"refs/heads/z", i + 1, 1, b"%d" % i)], [])
             for i in range(tables)]
    newest = b"%d" % (tables - 1)
    for suppress in (True, False):
        merged = MergedTable(stack, flags, suppress_deletions=suppress)
        got = [(r.refname, r.value) for r in merged.refs()]
        assert got == [(b"refs/heads/a", newest), (b"refs/heads/z", newest)]
