"""tombstone_suppression and iterator_reuse in the reftable ref store, by work counters.

A stack of N live refs shadowed by a table of N tombstones (git's layout after p1401's
mass delete): with tombstone_suppression=on a reader's seek into the tombstones
returns O(1) records past its bound; off, the merged iterator consumes every later
tombstone before the reader sees one. iterator_reuse=on builds one ref iterator per
stack reload, off one per read. Also: the p1401 workload's sweep at three tiny sizes
grows as n^2 all-off and as n all-on (work counters, not time).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from reftable_core import counters
from reftable_core.flags import Flags, baseline
from reftable_core.reftable.record import RefRecord
from reftable_core.reftable.stack import Stack, StackOptions
from reftable_core.refs.api import RefUpdate
from reftable_core.refs.reftable_backend import ReftableRefStore

from lab.sweep import fit_exponent
from lab.workloads import build

N = 300
OID = bytes(range(20))


@pytest.fixture(scope="module")
def tombstoned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git dir whose stack holds refs/tags/t000..t299, then a tombstone for each."""
    gitdir = tmp_path_factory.mktemp("tomb")
    stk = Stack(gitdir / "reftable", Flags(), StackOptions(auto_compact=False))
    names = [b"refs/tags/t%03d" % i for i in range(N)]
    for vt in (1, 0):
        ui = stk.next_update_index()

        def write(wr, vt=vt, ui=ui) -> None:
            for n in names:
                wr.add_ref(RefRecord(n, ui, vt, OID if vt else None))
        stk.add(write)
    stk.close()
    return gitdir


def _work(store: ReftableRefStore, run) -> dict[str, int]:
    store.stack.reload()
    counters.reset()
    run()
    return counters.snapshot()


@pytest.mark.parametrize("on", [True, False])
def test_a_seek_into_tombstones_stops_at_the_bound_only_when_they_are_returned(
        tombstoned: Path, on: bool) -> None:
    store = ReftableRefStore(str(tombstoned), Flags(tombstone_suppression=on))
    try:
        first = _work(store, lambda: store.read_record(b"refs/tags/t000"))
        df = _work(store, lambda: store.transaction()._verify_available(
            b"refs/tags/t000", {b"refs/tags/t000"}, [b"refs/tags/t000"]))
        listed = _work(store, lambda: list(store.iter_ref_records(b"refs/tags/t1")))
        assert store.read_record(b"refs/tags/t000") is None
    finally:
        store.close()
    if on:
        # the tombstone of t000 itself, nothing past it (each returned one is counted)
        assert (first["deletions_returned"], first["deletions_suppressed"]) == (1, 0)
        # "refs" and "refs/tags" (each reads t000's), the seek past "refs/tags/t000/"
        # (t001's)
        assert df["deletions_returned"] <= 3 and df["deletions_suppressed"] == 0
        # t100 .. t199, and t200's past the bound
        assert listed["deletions_returned"] == 101 and listed["deletions_suppressed"] == 0
    else:
        assert first["deletions_suppressed"] == N and first["deletions_returned"] == 0
        assert df["deletions_suppressed"] >= 2 * N - 1
        assert listed["deletions_suppressed"] == N - 100     # t100 .. t299, to the end


@pytest.mark.parametrize("reuse", [True, False])
def test_iterator_reuse_builds_one_iterator_per_reload(tombstoned: Path, reuse: bool) -> None:
    store = ReftableRefStore(str(tombstoned), Flags(iterator_reuse=reuse))
    try:
        names = [b"refs/tags/t%03d" % i for i in range(0, N, 3)]
        w = _work(store, lambda: [store.read_record(n) for n in names])
        assert w["ref_iterators_built"] == (1 if reuse else len(names))
        new = b"refs/heads/new-%d" % reuse
        tx = store.transaction()                 # a new table: the stack reloads
        tx.queue(RefUpdate(new, new_value=OID, old_value=bytes(20),
                           flags={"create"}))
        tx.commit()
        w = _work(store, lambda: [store.read_record(n) for n in (new, b"refs/tags/t001")])
        assert w["ref_iterators_built"] == (1 if reuse else 2)
        assert store.read_record(new).value == OID
    finally:
        store.close()


def test_p1401_sweep_grows_as_n_squared_off_and_as_n_on(tmp_path: Path) -> None:
    import data_gen
    ds = data_gen.build("empty-repo", root=tmp_path, refs=1, seed=0)
    sizes = (10, 20, 40)
    for fmt in ("tag-%d", "new-%d"):
        params = {"old_format": "refs/tags/" + fmt.replace("new", "old"),
                  "new_format": "refs/tags/" + fmt}
        costs: dict[str, list[float]] = {"off": [], "on": []}
        for n in sizes:
            for label, flags in (("off", baseline()), ("on", Flags())):
                run = build("p1401_recreate", flags, ds.gitdir, {**params, "refs": n})
                counters.reset()
                run(1)
                w = counters.snapshot()
                # tombstones scanned: consumed by the merged iterator or returned by it
                costs[label].append(w["deletions_suppressed"] + w["deletions_returned"])
        assert fit_exponent(sizes, costs["off"]) > 1.6, (fmt, costs)
        assert fit_exponent(sizes, costs["on"]) < 1.3, (fmt, costs)
