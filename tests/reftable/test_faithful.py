"""Each flag's off/on pair does what git's code did before/after the patch, no more.

Structural checks on the variants (seed lines quoted in scripts/gen_loops.py and
block.py): the two sources of a pair differ in exactly the lines the patch is
about; mmap=on uses the one map in place, mmap=off reads a fresh bytes per block;
merged_cmp=off formats keys into two reused buffers; block_key_swap=off copies the
key into one reused last_key buffer, on swaps; pq_cmp=off builds two fresh buffers
per comparison. Results are identical across all values (also tests/test_flags.py).
"""
from __future__ import annotations

import difflib
import itertools
import os
import mmap
from pathlib import Path

import pytest

from reftable_core.flags import Flags
from reftable_core.reftable import loops
from reftable_core.reftable.block import block_loader, iter_block, record_loop
from reftable_core.reftable.blocksource import open_file_source
from reftable_core.reftable.merged import MergedTable, merge_function
from reftable_core.reftable.pq import REF, MergedIterPQueue, make_less
from reftable_core.reftable.record import BLOCK_TYPE_REF, RefRecord
from reftable_core.reftable.table import TableReader
from reftable_core.reftable.writer import WriterOptions, write_table

from scripts.loop_templates import LESS
from tests.helpers.source import as_python, source_of


def _refs(n: int, ui: int = 1, step: int = 1) -> list[RefRecord]:
    return [RefRecord(b"refs/heads/b-%05d" % i, ui, 1, (i * 7 + ui).to_bytes(20, "big"))
            for i in range(0, n, step)]


def _table(path: Path, refs: list[RefRecord], ui: int = 1) -> Path:
    write_table(path, refs, options=WriterOptions(min_update_index=ui, max_update_index=ui))
    return path


def _changed_lines(a: object, b: object) -> tuple[list[str], list[str]]:
    """(lines only in a, lines only in b) of two functions' sources, name and docstring
    lines left out."""
    def body(f: object) -> list[str]:
        src = source_of(f).splitlines()
        start = next(i for i, line in enumerate(src) if line.rstrip().endswith('"""')
                     and i > 0 and '"""' in "".join(src[:i]))
        return [line.strip() for line in src[start + 1:]]
    d = list(difflib.ndiff(body(a), body(b)))
    return ([x[2:] for x in d if x.startswith("- ")], [x[2:] for x in d if x.startswith("+ ")])


def test_each_record_loop_pair_differs_in_the_patched_lines_only() -> None:
    f = loops.RECORD_LOOPS
    for alloc, views in itertools.product((True, False), repeat=2):     # block_key_swap
        off, on = _changed_lines(f[(BLOCK_TYPE_REF, False, alloc, views, False)],
                                 f[(BLOCK_TYPE_REF, True, alloc, views, False)])
        assert (off, on) == (["last[:] = key"], ["last = key"])
    for swap, views in itertools.product((True, False), repeat=2):      # ref_name_alloc
        off, on = _changed_lines(f[(BLOCK_TYPE_REF, swap, False, views, False)],
                                 f[(BLOCK_TYPE_REF, swap, True, views, False)])
        # on allocates the name with bytes(key); off releases it (NULL) and calls
        # realloc, which tests the pointer and then makes the same bytes(key)
        assert [x.split("#")[0].strip() for x in off] == [
            "name: bytes | None = None", "name = realloc_refname(name, key)"]
        assert on == ["name = bytes(key)"]
    # mmap acts on the block's source, not in the loop: one loop for both values
    # (a field sliced out of the map or out of a block's bytes is a fresh bytes)
    for key in f:
        assert f[key] is f[(*key[:3], not key[3], *key[4:])]


def test_each_merge_loop_pair_differs_in_the_patched_lines_only() -> None:
    def fn(**kw: bool):
        return merge_function(Flags(**{"merged_cmp": True, "same_subiter_skip": True,
                                       "single_subiter_bypass": False, "pq_cmp": True,
                                       **kw}), REF)
    off, on = _changed_lines(fn(merged_cmp=False), fn())
    assert off == ["key = bytearray()", "entry_key = bytearray()",
                   "entry_key[:] = erec.refname", "key[:] = top[0].refname",
                   "if key > entry_key:"]
    assert on == ["if top[0].refname > erec.refname:"]
    off, on = _changed_lines(fn(same_subiter_skip=False), fn())
    assert off == [] and on == ["if tidx == idx:", "break"]
    off, on = _changed_lines(fn(pq_cmp=False), fn())
    assert len(off) == len(on) == 6       # the less-thans of two adds and two removes
    assert all(x.count("bytearray(") == 2 for x in off) and not any("bytearray" in x for x in on)
    # f8c1a8e2e1: the queue tested before the advance (empty: the one sub-iterator's
    # records straight on) by the count the removal left (n, as git's `empty` reads
    # pq.len), and that test standing for the shadow loop's first one
    off, on = _changed_lines(fn(), fn(single_subiter_bypass=True))
    bypass = ["if not n:", "if erec.value_type:", "yield erec", "else:",
              "WORK.deletions_suppressed += 1", "for erec in its[idx]:", "if erec.value_type:",
              "yield erec", "else:", "WORK.deletions_suppressed += 1", "return"]
    assert off == ["while heap:"]
    assert on == [*bypass, "while True:", "elif not heap:", "break"]


def test_mmap_on_uses_one_map_in_place_and_off_a_fresh_bytes_per_read(tmp_path: Path) -> None:
    path = _table(tmp_path / "t.ref", _refs(3000))
    for views in (True, False):
        flags = Flags(mmap=views)
        src = open_file_source(path, flags)
        reader = TableReader(src, flags)
        first = reader.load_block(0)
        again = reader.load_block(0)
        second = reader.load_block(first.off + first.full_size) if first else None
        assert first is not None and again is not None and second is not None
        if views:
            assert type(first.data) is mmap.mmap       # the map itself, no copy per block
            assert first.data is again.data is second.data
            assert (first.base, second.base) == (0, second.off)
        else:
            assert type(first.data) is bytes and type(again.data) is bytes
            assert first.data is not again.data         # a fresh buffer per read
            assert second.base == 0
        n = first.full_size
        assert first.data[first.base:first.base + n] == again.data[again.base:again.base + n]
        for rec in reader.refs():
            assert type(rec.refname) is bytes and type(rec.value) is bytes
        reader.close()


def test_records_outlive_the_close_of_the_map(tmp_path: Path) -> None:
    """Records hold no part of the map (each field is its own bytes): closing the
    table while its records live, and reading them afterwards, is safe."""
    path = _table(tmp_path / "t.ref", _refs(500))
    reader = TableReader.open(path, Flags(mmap=True))
    recs = list(reader.refs())
    reader.close()
    assert all(type(r.value) is bytes for r in recs)
    assert recs == list(TableReader.open(path, Flags(mmap=False)).refs())


def test_closing_the_map_under_a_suspended_loop_never_reads_unmapped_memory(
        tmp_path: Path) -> None:
    """A record loop suspended between two records still holds the block's map (in the
    Cython build a pointer into it, taken again when the loop resumes): close() unmaps it
    in every build, and the loop then ends in a clear error (the map is closed), never
    reading unmapped memory. (Until the twelfth round the Cython build's loops held a
    typed view of the map, which kept it mapped: they read on.)"""
    path = _table(tmp_path / "t.ref", _refs(500))
    reader = TableReader.open(path, Flags(mmap=True))
    it = reader.refs()
    first = next(it)
    reader.close()
    assert first.refname == b"refs/heads/b-00000"
    with pytest.raises(ValueError, match="closed"):
        list(it)


def test_the_cython_shim_leaves_the_loops_unchanged() -> None:
    """The @cython.locals lines of loops.py are C declarations in the Cython build only
    (scripts/build-cython-core.sh compiles `import cython`); elsewhere the shim's
    decorator returns the very function it decorates."""
    from reftable_core import cython_shim

    def f() -> int:
        return 1
    assert cython_shim.cython.locals(x="Py_ssize_t")(f) is f
    if os.environ.get("REFTABLE_LAB_CORE") == "cython":
        assert "cython" not in vars(loops)          # Cython's own: no runtime name
    else:
        assert loops.cython is cython_shim.cython


def test_mmap_and_ref_loops_give_identical_records_on_views_and_bytes(tmp_path: Path) -> None:
    path = _table(tmp_path / "t.ref", _refs(2000))
    results = set()
    for swap, alloc, views in itertools.product((True, False), repeat=3):
        flags = Flags(block_key_swap=swap, ref_name_alloc=alloc, mmap=views)
        with TableReader.open(path, flags) as r:
            got = tuple((x.refname, x.update_index, x.value) for x in r.refs())
            assert r.seek_ref(b"refs/heads/b-01234") == RefRecord(
                b"refs/heads/b-01234", 1, 1, (1234 * 7 + 1).to_bytes(20, "big"))
        results.add(got)
    assert len(results) == 1


def test_block_key_swap_off_copies_into_one_reused_last_key_on_swaps(tmp_path: Path) -> None:
    path = _table(tmp_path / "t.ref", _refs(200))
    for swap in (False, True):
        # the swap's lines exist while keys are not decoded in place (git before daf4f43d0d)
        flags = Flags(block_key_swap=swap, decode_key_in_place=False)
        with TableReader.open(path, flags) as r:
            block = r.load_block(0)
            assert block is not None
            loop = as_python(record_loop(BLOCK_TYPE_REF, flags))     # it has a gi_frame
            gen = loop(block, block.header_off + 4, b"", 20, r.min_update_index, None)
            ids = set()
            for rec in itertools.islice(gen, 20):
                last = gen.gi_frame.f_locals["last"]
                assert type(last) is bytearray and bytes(last) == rec.refname
                assert rec.refname is not last      # the name is its own allocation
                ids.add(id(last))
            gen.close()
        # off: one buffer for all records; on: the key's buffer becomes last_key
        assert (len(ids) == 1) == (not swap)


def test_merged_cmp_off_formats_keys_into_two_reused_buffers(tmp_path: Path) -> None:
    tables = [_table(tmp_path / "1.ref", _refs(600), 1),
              _table(tmp_path / "2.ref", _refs(600, 2, 3), 2),
              _table(tmp_path / "3.ref", _refs(600, 3, 7), 3)]
    results = set()
    for cmp in (False, True):
        flags = Flags(merged_cmp=cmp, single_subiter_bypass=False)
        readers = [TableReader.open(p, flags) for p in tables]
        pq = MergedIterPQueue(make_less(REF, flags))
        its = [iter(r.refs()) for r in readers]
        for i, it in enumerate(its):
            pq.add([next(it), i])
        gen = as_python(merge_function(flags, REF))(pq.heap, its)    # it has a gi_frame
        seen: set[tuple[int, int]] = set()
        got = []
        for rec in gen:
            got.append((rec.refname, rec.value))
            local = gen.gi_frame.f_locals
            if cmp:
                assert "entry_key" not in local and "key" not in local
            else:
                assert type(local["key"]) is bytearray and type(local["entry_key"]) is bytearray
                assert bytes(local["entry_key"]) == rec.refname
                seen.add((id(local["key"]), id(local["entry_key"])))
        assert len(seen) == (0 if cmp else 1)      # the same two buffers throughout
        results.add(tuple(got))
        assert tuple(got) == tuple((r.refname, r.value) for r in MergedTable(readers, flags).refs())
        for r in readers:
            r.close()
    assert len(results) == 1 and len(next(iter(results))) == 600


def test_pq_cmp_off_builds_two_fresh_buffers_per_comparison() -> None:
    class Rec:
        __slots__ = ("refname",)

        def __init__(self, name: bytes) -> None:
            self.refname = name
    built: list[bytearray] = []

    class Spy(bytearray):
        def __init__(self, *a: object) -> None:
            super().__init__(*a)
            built.append(self)
    less = eval("lambda A, B: " + LESS[("ref", False)], {"bytearray": Spy})  # noqa: S307
    a, b = [Rec(b"refs/heads/a"), 0], [Rec(b"refs/heads/b"), 1]
    assert less(a, b) and not less(b, a)
    assert len(built) == 4 and len({id(x) for x in built[:2]}) == 2
    assert [bytes(x) for x in built] == [b"refs/heads/a", b"refs/heads/b", b"refs/heads/b", b"refs/heads/a"]
    assert "bytearray" not in LESS[("ref", True)]


def test_block_loader_uses_the_map_in_place_only_under_mmap(tmp_path: Path) -> None:
    path = _table(tmp_path / "t.ref", _refs(300))
    src = open_file_source(path, Flags(mmap=True))
    try:
        limit = src.size() - 68
        kept = block_loader(Flags(mmap=True))(src, 0, 24, 4096, limit, BLOCK_TYPE_REF)
        copied = block_loader(Flags(mmap=False))(src, 0, 24, 4096, limit, BLOCK_TYPE_REF)
        assert kept is not None and copied is not None
        assert type(kept.data) is mmap.mmap and type(copied.data) is bytes
        assert [r.refname for r in iter_block(kept, 20)] == \
            [r.refname for r in iter_block(copied, 20)]
    finally:
        del kept
        src.close()


def test_the_cython_rewrites_keep_every_line_and_check_their_counts(tmp_path: Path) -> None:
    """scripts/cython_rewrites.py rewrites the build's copy line for line (a compiled
    module's line numbers are the committed file's), keeps the committed file beside it,
    and a source whose lines no longer match a rewrite's count is an error naming it."""
    import shutil

    from scripts import cython_rewrites

    core = Path(__file__).resolve().parents[2] / "core" / "reftable_core"
    tree = tmp_path / "tree"
    shutil.copytree(core, tree / "reftable_core", ignore=shutil.ignore_patterns("__pycache__"))
    touched = cython_rewrites.apply(tree)
    assert touched == [cython_rewrites.RECORD, cython_rewrites.LOOPS, cython_rewrites.BLOCK,
                       cython_rewrites.ITER, cython_rewrites.TABLE, cython_rewrites.MERGED,
                       cython_rewrites.BLOCK_WRITER, cython_rewrites.PARSED_BLOCK,
                       cython_rewrites.BACKEND, cython_rewrites.UPDATE_REF,
                       cython_rewrites.API, cython_rewrites.BASICS,
                       cython_rewrites.STACK, cython_rewrites.PACKED,
                       cython_rewrites.REFNAME, cython_rewrites.IDX, cython_rewrites.DELTA,
                       cython_rewrites.TREE, cython_rewrites.SHOW_REF, cython_rewrites.READERS,
                       cython_rewrites.WRITER]
    for name in touched:
        new = (tree / name).read_text().split("\n")
        old = (core.parent / name).read_text().split("\n")
        assert (tree / (name + ".committed")).read_text() == "\n".join(old)
        assert len(new) == len(old)
        changed = [(a, b) for a, b in zip(old, new) if a != b]
        assert changed and all(a.strip() and b.strip() for a, b in changed)
    loops_text = (tree / cython_rewrites.LOOPS).read_text()
    assert "= data[off" not in loops_text and "bytes(key)" not in loops_text
    # a record loop's field slices all became take_at(); nothing else was touched
    assert loops_text.count("take_at(data, bp, bn, ") == 39
    # the ref and log loops read their bytes through the pointer, taken again at each
    # block and after each yield; no typed view is made
    records = loops_text[:loops_text.index("def obj_loop__swap_on(")]
    assert "buf[" not in records and "unsigned char[:]" not in records
    assert records.count("bp = bufptr(data, cython.address(bn))") == 18
    assert records.count("yield rec; bp = bufptr(data, cython.address(bn))") == 9
    # the seek's scans read data's bytes through cbytes.pxd's pointer, none by indexing
    scans = loops_text[loops_text.index("def restart_scan_start("):
                       loops_text.index("def walk_ref_records(")]
    assert "buf[" not in scans and scans.count("bp = bufptr(data, cython.address(bn))") == 3
    assert "data[o:o + n]" not in scans
    # get_varint and skip_value called in C: cimported, imported from Python no more
    assert "from .basics import MAX_U64\n" in loops_text and "    skip_value,\n" not in loops_text
    record_text = (tree / cython_rewrites.RECORD).read_text()
    assert "\nfrom .basics import MAX_U64, Buf, put_varint\n" in record_text
    # a record loop's kept last key: a new buffer copied by fresh(), as bytearray() makes one
    assert "bytearray(last)" not in loops_text and loops_text.count("last = fresh(last)") == 13
    # the seek's keys built by joinkey, the loader's few bytes read by byte_in
    block_text = (tree / cython_rewrites.BLOCK).read_text()
    assert block_text.count("= joinkey(") == 2 and "[:p] + data[lo:hi]" not in block_text
    assert block_text.count("byte_in(data, ") == 7
    # the table interface and the record iterators: extension types with no Python base
    iter_text = (tree / cython_rewrites.ITER).read_text()
    assert "class Reftable:" in iter_text and "class RecordIter:" in iter_text
    assert "__slots__" not in iter_text
    for name in (cython_rewrites.TABLE, cython_rewrites.MERGED):
        assert "__slots__" not in (tree / name).read_text()
    # the packed walk's usual rows: the ids decoded and the name taken by cline.pxd's C,
    # the interpreted spelling of each gone from the build's copy
    packed_text = (tree / cython_rewrites.PACKED).read_text()
    assert "unhex(line[" not in packed_text and "line[name_off:]" not in packed_text
    assert packed_text.count("unhex_c(unhex, line, ") == 2
    assert packed_text.count("tail(line, name_off)") == 1
    # apply_delta: every byte read from the view, every copy and insert put() into the
    # result made at once; split_tree: the entries walked in C
    delta_text = (tree / cython_rewrites.DELTA).read_text()
    apply_text = delta_text[delta_text.index("def apply_delta"):delta_text.index("def make_delta")]
    assert "delta[off]" not in apply_text and "out +=" not in apply_text
    assert apply_text.count("out = put(out, result_size, left + ") == 2
    assert "out = reserve(result_size, blen, len(delta))" in apply_text
    # the merge loops' off values: every strbuf key made, refilled and compared in C
    assert "bytearray(cython.cast" not in loops_text and "[:] = " not in loops_text
    assert loops_text.count("fresh(cython.cast(RefRecord, ") == 192
    # common_prefix_len: two bytes' or bytearrays' bytes compared in C first
    bw_text = (tree / cython_rewrites.BLOCK_WRITER).read_text()
    cpl = bw_text[bw_text.index("def common_prefix_len"):bw_text.index("def deflate_block")]
    assert cpl.count("if (c := prefix_len_c(a, b)) >= 0: return c") == 1
    assert 'int.from_bytes(a[:n], "big")' in cpl                  # the rest as committed
    # a read of one ref: the stack, the iterator and the record called on their types
    backend_text = (tree / cython_rewrites.BACKEND).read_text()
    assert "        self.stack.reload()" not in backend_text
    assert backend_text.count("cython.cast(Stack, self.stack, typecheck=True).reload()") == 5
    # a log record's name and index from its key in C, the record made by tp_new
    assert "int.from_bytes(key[kl - 8:]" not in loops_text and "LogRec(" not in loops_text
    assert loops_text.count("rec = new_log(") == 6
    # a restart point's offset: its three bytes read through the pointer
    pb_text = (tree / cython_rewrites.PARSED_BLOCK).read_text()
    assert "(d[q] << 16)" not in pb_text and pb_text.count("byte_in(d, q + 2)") == 1
    # get_varint: a bytes' or a map's varint of up to nine bytes summed in C first
    basics_text = (tree / cython_rewrites.BASICS).read_text()
    varint = basics_text[basics_text.index("def get_varint"):basics_text.index("def _get_be")]
    assert varint.count("if (t := varint_at(buf, off)) is not None: return t") == 1
    assert "val = ((val + 1) << 7) | (c & 0x7F)" in varint        # the rest as committed
    # stat_cache=on: tables.list's stat(2) compared with the kept key in C
    stack_text = (tree / cython_rewrites.STACK).read_text()
    assert "os.stat(self.list_file)" not in stack_text and "_stat_key(st)" not in stack_text
    assert "stat_is(self.list_file, self._list_stat)" in stack_text
    tree_text = (tree / cython_rewrites.TREE).read_text()
    assert "findall(data)" not in tree_text and "split_known(data, " in tree_text
    # a source edit that moves a rewritten line: an error naming the rewrite
    shutil.copytree(core, tmp_path / "edited" / "reftable_core",
                    ignore=shutil.ignore_patterns("__pycache__"))
    record = tmp_path / "edited" / cython_rewrites.RECORD
    record.write_text(record.read_text().replace("@dataclass(slots=True)\nclass IndexRecord",
                                                 "@dataclass\nclass IndexRecord"))
    try:
        cython_rewrites.apply(tmp_path / "edited")
    except SystemExit as e:
        assert "record.py" in str(e) and "matches 3 times, not 4" in str(e)
    else:
        raise AssertionError("a rewrite matched fewer lines than it lists, and no error")


def test_records_are_extension_types_in_the_cython_build_with_the_same_fields() -> None:
    """In the Cython build the record types are cdef classes (record.pxd; static types
    whose fields live in the object's C struct), in the mypyc build native classes (heap
    types, fields in the C struct, no __slots__), interpreted slotted dataclasses; all
    have the same fields, __init__, repr and equality, and none takes other attributes."""
    import dataclasses

    from reftable_core.reftable import record

    heap_type = 1 << 9                                  # Py_TPFLAGS_HEAPTYPE
    for cls in (record.RefRecord, record.LogRecord, record.ObjRecord, record.IndexRecord):
        if os.environ.get("REFTABLE_LAB_CORE") == "cython":
            assert not cls.__flags__ & heap_type, cls
        elif os.environ.get("REFTABLE_LAB_CORE") == "compiled":
            assert cls.__flags__ & heap_type and not hasattr(cls, "__slots__"), cls
        else:
            assert cls.__flags__ & heap_type and hasattr(cls, "__slots__"), cls
    rec = record.RefRecord(b"refs/heads/x", 3, 1, b"\x01" * 20)
    assert [f.name for f in dataclasses.fields(rec)] == [
        "refname", "update_index", "value_type", "value", "target_value", "target"]
    assert rec == record.RefRecord(b"refs/heads/x", 3, 1, b"\x01" * 20)
    assert repr(rec).startswith("RefRecord(refname=b'refs/heads/x', update_index=3")
    assert dataclasses.replace(rec, update_index=4).update_index == 4
    assert record.ObjRecord(b"ab").offsets == [] and \
        record.ObjRecord(b"ab").offsets is not record.ObjRecord(b"ab").offsets
    try:
        rec.other = 1                                   # type: ignore[attr-defined]
    except AttributeError:
        pass
    else:
        raise AssertionError("a record took an attribute it does not declare")
