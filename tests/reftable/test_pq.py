"""The merged-iterator priority queue: heap invariant, order, tie-break, both less-thans."""
from __future__ import annotations

import random

import pytest
from tests.helpers.fake_tables import FLog, FRef
from hypothesis import given, settings
from hypothesis import strategies as st
from reftable_core.flags import Flags, baseline
from reftable_core.reftable.basics import MAX_U64
from reftable_core.reftable.pq import LOG, REF, MergedIterPQueue, make_less
from scripts.loop_templates import LESS, SHADOW

def _heap_ordered(pq: MergedIterPQueue) -> bool:
    """Every parent is not greater than its children."""
    heap = pq.heap
    return not any(pq.less(heap[i], heap[(i - 1) >> 1]) for i in range(1, len(heap)))


FLAGSETS = [Flags(), baseline(), Flags(pq_cmp=False), baseline().replace(pq_cmp=True)]


@pytest.mark.parametrize("flags", FLAGSETS)
def test_pq_orders_refs_and_newer_first(flags: Flags) -> None:
    pq = MergedIterPQueue(make_less(REF, flags))
    names = [b"refs/heads/%d" % i for i in range(50)]
    entries = [[FRef(n), idx] for n in names for idx in range(3)]
    random.Random(1).shuffle(entries)
    for e in entries:
        pq.add(e)
        assert _heap_ordered(pq)
    out = []
    while pq:
        out.append(pq.remove())
        assert _heap_ordered(pq)
    assert [(e[0].refname, e[1]) for e in out] == [
        (n, idx) for n in sorted(names) for idx in (2, 1, 0)]


@pytest.mark.parametrize("flags", FLAGSETS)
def test_pq_log_order(flags: Flags) -> None:
    pq = MergedIterPQueue(make_less(LOG, flags))
    recs = [[FLog(b"refs/heads/%d" % (i % 4), update_index=i), i % 2] for i in range(20)]
    for e in reversed(recs):
        pq.add(e)
    out = [pq.remove()[0] for _ in range(len(recs))]
    assert [r.key() for r in out] == sorted(r[0].key() for r in recs)


names = st.lists(st.sampled_from(b"ab/z\xff"), max_size=6).map(bytes)  # refnames have no NUL


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(names, st.integers(0, 5), st.integers(0, 3)), max_size=40))
def test_pq_field_and_key_less_agree(items: list[tuple[bytes, int, int]]) -> None:
    outs = []
    for flags in (Flags(), baseline()):
        for kind, mk in ((REF, lambda n, u: FRef(n, u)), (LOG, lambda n, u: FLog(n, u))):
            pq = MergedIterPQueue(make_less(kind, flags))
            for n, u, idx in items:
                pq.add([mk(n, u), idx])
            seq = []
            while pq:
                r, idx = pq.remove()
                seq.append((r.key(), idx))
            outs.append((kind, seq))
    assert outs[0] == outs[2] and outs[1] == outs[3]
    # the heap yields sorted keys, newest index first on ties
    for _kind, seq in outs:
        assert seq == sorted(seq, key=lambda t: (t[0], -t[1]))


def test_less_is_chosen_at_construction() -> None:
    assert make_less(REF, Flags()) is not make_less(REF, baseline())
    with pytest.raises(ValueError):
        make_less("obj", Flags())


@given(names, names, st.integers(0, 9), st.integers(0, 9), st.integers(0, 2), st.integers(0, 2))
@settings(max_examples=150, deadline=None)
def test_merge_loop_inline_comparisons_match_pq(a: bytes, b: bytes, ua: int, ub: int,
                                                ia: int, ib: int) -> None:
    """The comparisons the merge loops expand inline (scripts/gen_loops.py's templates;
    test_loops_fresh checks that loops.py is what they generate) equal pq.make_less and
    the key order."""
    for kind, mk in ((REF, lambda n, u: FRef(n, u)), (LOG, lambda n, u: FLog(n, u))):
        ea, eb = [mk(a, ua), ia], [mk(b, ub), ib]
        for pq_cmp in (False, True):
            inline = eval("lambda A, B: " + LESS[(kind, pq_cmp)])  # noqa: S307
            assert inline(ea, eb) == make_less(kind, Flags(pq_cmp=pq_cmp))(ea, eb)
        for merged_cmp in (False, True):
            shadow = SHADOW[(kind, merged_cmp)]
            ns = {"erec": eb[0], "top": ea, "MAX_U64": MAX_U64}
            for part in ("BUFFERS", "ENTRY_KEY", "TOP_KEY"):
                exec(shadow[part], ns)  # noqa: S102
            assert eval(shadow["SHADOWED"], ns) == (ea[0].key() > eb[0].key())  # noqa: S307
            if not merged_cmp:      # the key buffers hold exactly the formatted keys
                assert (bytes(ns["key"]), bytes(ns["entry_key"])) == (ea[0].key(), eb[0].key())
