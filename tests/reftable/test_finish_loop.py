"""loops.finish_loop: an iterator freed after a point read lets its loops go without
GeneratorExit (the Cython build), and a loop anyone else still holds runs on (every build).

finish_loop may mark a generator finished only where closing it would run none of its code:
no loop in loops.py has a finally, a with, or a handler that GeneratorExit matches (checked
on the source here), and only the caller may hold it (a generator handed out by iter() and
still held elsewhere goes on yielding: checked here on real tables, through every build)."""
from __future__ import annotations

import ast
import gc
import io
import itertools

import pytest
from reftable_core.flags import Flags
from reftable_core.reftable import loops
from reftable_core.reftable.blocksource import BytesSource
from reftable_core.reftable.merged import MergedTable
from reftable_core.reftable.record import RefRecord
from reftable_core.reftable.table import TableReader
from reftable_core.reftable.writer import WriterOptions, write_table

from tests.helpers.source import source_file

COMBOS = [Flags(single_subiter_bypass=b, next_block_in_place=n)
          for b, n in itertools.product((False, True), repeat=2)]


def test_no_loop_runs_code_when_closed() -> None:
    tree = ast.parse(source_file(loops).read_text())
    for node in ast.walk(tree):
        assert not isinstance(node, (ast.With, ast.AsyncWith)), f"a with at line {node.lineno}"
        if isinstance(node, ast.Try):
            assert not node.finalbody, f"a finally at line {node.lineno}"
            for h in node.handlers:
                names = ([] if h.type is None else
                         [e.id for e in (h.type.elts if isinstance(h.type, ast.Tuple)
                                         else [h.type]) if isinstance(e, ast.Name)])
                assert h.type is not None, f"a bare except at line {h.lineno}"
                assert not {"BaseException", "GeneratorExit"} & set(names), (
                    f"a handler GeneratorExit matches at line {h.lineno}")


def _table(refs: list[RefRecord], ui: int) -> bytes:
    buf = io.BytesIO()
    write_table(buf, refs, [], WriterOptions(block_size=256, min_update_index=ui,
                                             max_update_index=ui))
    return buf.getvalue()


def _refs(n: int, ui: int, step: int) -> list[RefRecord]:
    return [RefRecord(b"refs/heads/b%05d" % i, ui, 1, i.to_bytes(20, "big"))
            for i in range(0, n, step)]


@pytest.mark.parametrize("flags", COMBOS, ids=str)
def test_a_loop_handed_out_runs_on_after_its_iterator_is_freed(flags: Flags) -> None:
    old, new = _refs(300, 1, 1), _refs(300, 2, 3)
    tables = [TableReader(BytesSource(_table(old, 1), "old.ref"), flags),
              TableReader(BytesSource(_table(new, 2), "new.ref"), flags)]
    want = sorted({r.refname: r for r in [*old, *new]}.items())
    # a table's loop: the RecordIterator is freed at once, its generator held here
    gen = iter(tables[0].refs().seek(b"refs/heads/b00100"))
    gc.collect()
    assert next(gen).refname == b"refs/heads/b00100"
    assert [r.refname for r in gen] == [r.refname for r in old[101:]]
    # the merge loop and the tables' loops under it: the MergedIter freed at once
    for _ in range(2):
        gen = iter(MergedTable(tables, flags).refs().seek(b"refs/heads/b00200"))
        gc.collect()
        got = [(r.refname, r.update_index) for r in gen]
        assert got == [(k, r.update_index) for k, r in want if k >= b"refs/heads/b00200"]
    # point reads, each iterator freed after one record: the tables read on as before
    mt = MergedTable(tables, flags)
    for name, rec in want[::7]:
        it = mt.refs().seek(name)
        assert next(it) == rec
        del it
    assert [r.refname for r in mt.refs()] == [k for k, _ in want]


def test_finish_loop_leaves_a_generator_another_reference_holds() -> None:
    data = _table(_refs(50, 1, 1), 1)
    gen = iter(TableReader(BytesSource(data, "t.ref")).refs())
    assert next(gen).refname == b"refs/heads/b00000"
    loops.finish_loop(gen)          # called from Python: the caller's frame holds it too
    assert len(list(gen)) == 49
    loops.finish_loop(iter(()))     # not a loop: nothing
