"""table: whole-table round trips (hypothesis), seeks, obj lookups, sources, flags."""
from __future__ import annotations

import io
import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reftable_core.reftable.blocksource import BytesSource
from reftable_core.errors import FormatError
from reftable_core.flags import Flags, baseline
from reftable_core.reftable.record import (
    BLOCK_TYPE_INDEX,
    BLOCK_TYPE_LOG,
    BLOCK_TYPE_OBJ,
    LogRecord,
    RefRecord,
    log_key,
)
from reftable_core.reftable.table import TableReader, open_table
from reftable_core.reftable.writer import WriterOptions, write_table
from tests.helpers.table_strategies import (
    HASH_SIZES,
    log_records,
    ref_records,
    relaxed,
    unique_sorted_logs,
    unique_sorted_refs,
)

TABLE_FLAGS = [Flags(block_key_swap=a, ref_name_alloc=b, block_type_early_exit=c, mmap=d)
               for a, b, c, d in itertools.product([True, False], repeat=4)]


def _write(refs, logs, **opts) -> bytes:
    buf = io.BytesIO()
    write_table(buf, refs, logs, WriterOptions(**opts))
    return buf.getvalue()


def _reader(data: bytes, flags: Flags = Flags()) -> TableReader:
    return TableReader(BytesSource(data, "mem.ref"), flags)


def _check_table(data: bytes, refs, logs, flags: Flags, hash_id: str, seeks: bool = True):
    r = _reader(data, flags)
    assert r.hash_id == hash_id and r.hash_size == HASH_SIZES[hash_id]
    assert list(r.refs()) == refs
    assert list(r.logs()) == logs
    if not seeks:
        return r
    keys = [x.refname for x in refs]
    for i, k in enumerate(keys):
        assert r.seek_ref(k) == refs[i]
        it = r.refs().seek(k)
        assert next(it) == refs[i]
        assert list(r.refs().seek(k + b"\0")) == refs[i + 1:]      # between keys
        assert r.seek_ref(k + b"\0") is None
    assert list(r.refs().seek(b"")) == refs
    assert list(r.refs().seek(b"\xff" * 40)) == []
    lkeys = [x.key() for x in logs]
    for i, k in enumerate(lkeys):
        assert list(r.logs().seek(k)) == logs[i:]
    for lg in logs[:5]:
        assert list(r.logs_for(lg.refname)) == [x for x in logs if x.refname == lg.refname]
    return r


@settings(relaxed, max_examples=60)
@given(st.data(), st.sampled_from(["sha1", "sha256"]),
       st.one_of(st.sampled_from([256, 300, 512, 1024, 4096, 65536]),
                 st.integers(256, 65536)), st.integers(1, 20),
       st.sampled_from(TABLE_FLAGS), st.booleans())
def test_table_round_trip_property(data, hash_id, block_size, interval, flags, index_objects):
    hs = HASH_SIZES[hash_id]
    refs = unique_sorted_refs(data.draw(st.lists(ref_records(hs), max_size=120)))
    logs = unique_sorted_logs(data.draw(st.lists(log_records(hs), max_size=60)))
    blob = _write(refs, logs, block_size=block_size, restart_interval=interval,
                  hash_id=hash_id, index_objects=index_objects, min_update_index=0,
                  max_update_index=1000)
    r = _check_table(blob, refs, logs, flags, hash_id)
    for ref in refs[:8]:
        for oid in (ref.value, ref.target_value):
            if oid:
                want = [x for x in refs if oid in (x.value, x.target_value)]
                assert list(r.refs_for(oid)) == want


def _many_refs(n: int, hs: int = 20) -> list[RefRecord]:
    out = []
    for i in range(n):
        oid = (i * 2654435761 % (1 << 32)).to_bytes(4, "big") * (hs // 4)
        if i % 10 == 3:
            out.append(RefRecord(b"refs/tags/t%06d" % i, 2, 2, oid, oid[::-1]))
        else:
            out.append(RefRecord(b"refs/heads/b%06d" % i, 2, 1, oid))
    return sorted(out, key=lambda r: r.refname)


@pytest.mark.parametrize("hash_id", ["sha1", "sha256"])
def test_multi_level_index_and_obj_blocks(hash_id: str) -> None:
    hs = HASH_SIZES[hash_id]
    refs = _many_refs(6000, hs)
    logs = [LogRecord(x.refname, 2, 1, bytes(hs), x.value, b"n", b"e", 1, 0, b"m\n")
            for x in refs[:3000]]
    blob = _write(refs, logs, block_size=256, restart_interval=3, hash_id=hash_id,
                  min_update_index=1, max_update_index=2)
    r = _reader(blob)
    assert r.version == (1 if hash_id == "sha1" else 2)
    types = [b.typ for b in r.blocks()]
    assert r.ref_index_offset and r.obj_offset and r.obj_index_offset and r.log_index_offset
    assert types.count(BLOCK_TYPE_INDEX) > 10 and BLOCK_TYPE_OBJ in types
    # index levels: the top level (at ref_index_offset) points at index blocks
    top = r.load_block(r.ref_index_offset)
    first_child = next(iter(_index_records(r, top)))
    assert r.load_block(first_child.offset).typ == BLOCK_TYPE_INDEX
    for flags in (Flags(), baseline()):
        rr = _reader(blob, flags)
        assert list(rr.refs()) == refs
        assert list(rr.logs()) == logs
        for x in refs[::97]:
            assert rr.seek_ref(x.refname) == x
            assert rr.seek_ref(x.refname + b"-") is None
            assert list(rr.refs_for(x.value)) == [y for y in refs if x.value in
                                                  (y.value, y.target_value)]
        for lg in logs[::101]:
            assert next(rr.logs().seek(lg.key())) == lg


def _index_records(r: TableReader, block):
    from reftable_core.reftable.block import iter_block
    return iter_block(block, r.hash_size, r.flags)


def test_section_layout_without_index() -> None:
    refs = _many_refs(20)
    blob = _write(refs, [], block_size=4096, min_update_index=2, max_update_index=2)
    r = _reader(blob)
    assert r.ref_index_offset == 0 and r.obj_offset == 0 and not r.has_logs
    assert list(r.refs_for(refs[3].value)) == [refs[3]]       # full scan, no obj blocks
    assert list(r.logs()) == []


def test_empty_and_log_only_tables() -> None:
    blob = _write([], [], min_update_index=1, max_update_index=1)
    assert len(blob) == 24 + 68
    r = _reader(blob)
    assert list(r.refs()) == [] and list(r.logs()) == [] and r.seek_ref(b"HEAD") is None
    logs = [LogRecord(b"refs/heads/x", i, 1, bytes(32), bytes(32), b"n", b"e", i, 0, b"m\n")
            for i in range(50, 0, -1)]
    blob = _write([], logs, hash_id="sha256", block_size=256, min_update_index=1,
                  max_update_index=50)
    r = _reader(blob)
    assert r.first_block_type == BLOCK_TYPE_LOG and r.log_offset == 0
    assert list(r.logs()) == logs and list(r.refs()) == []
    assert list(r.logs().seek(log_key(b"refs/heads/x", 10))) == logs[40:]


def test_file_sources(tmp_path: Path) -> None:
    refs = _many_refs(500)
    path = tmp_path / "t.ref"
    write_table(path, refs, [], WriterOptions(block_size=512, min_update_index=2,
                                              max_update_index=2))
    for flags in (Flags(mmap=True), Flags(mmap=False)):
        with open_table(path, flags) as r:
            assert list(r.refs()) == refs
            assert r.seek_ref(refs[250].refname) == refs[250]
            assert r.name == "t.ref" and r.path == str(path)


def test_update_index_relative_to_min() -> None:
    refs = [RefRecord(b"refs/a", 1000, 1, bytes(20)), RefRecord(b"refs/b", 1001, 0)]
    blob = _write(refs, [], min_update_index=1000, max_update_index=1001)
    r = _reader(blob)
    assert (r.min_update_index, r.max_update_index) == (1000, 1001)
    assert list(r.refs()) == refs


def test_iterator_protocol() -> None:
    refs = _many_refs(100)
    r = _reader(_write(refs, [], block_size=256, min_update_index=2, max_update_index=2))
    it = r.refs()
    assert next(it) == refs[0]
    assert next(it) == refs[1]
    it.seek(refs[50].refname)
    assert [next(it) for _ in range(3)] == refs[50:53]
    assert list(it) == refs[53:]
    with pytest.raises(StopIteration):
        next(it)


def test_corrupt_header_and_footer() -> None:
    blob = _write(_many_refs(10), [], min_update_index=2, max_update_index=2)
    for bad, what in ((b"XXXX" + blob[4:], "magic"),
                      (blob[:4] + b"\x03" + blob[5:], "version"),
                      (blob[:-1] + bytes([blob[-1] ^ 1]), "CRC"),
                      (blob[:10], "small")):
        with pytest.raises(FormatError) as ei:
            _reader(bad)
        assert "mem.ref" in str(ei.value)


def test_table_and_merged_table_share_one_interface() -> None:
    """iter.Reftable / iter.RecordIter: one table and a one-table stack answer alike."""
    from reftable_core.reftable.iter import RecordIter, Reftable
    from reftable_core.reftable.merged import MergedTable
    oid = b"\x01" * 20
    refs = [RefRecord(b"refs/heads/%d" % i, 1, 1, oid) for i in range(30)]
    refs.append(RefRecord(b"refs/tags/v1", 1, 1, oid))
    logs = [LogRecord(b"refs/heads/1", u, 1, oid, oid, b"n", b"e", 10 + u, 0, b"m")
            for u in (1, 2, 3)]
    r = _reader(_write(refs, logs, min_update_index=1, max_update_index=3))
    mt = MergedTable([r])
    for t in (r, mt):
        assert isinstance(t, Reftable)
        assert (t.hash_id, t.min_update_index, t.max_update_index) == ("sha1", 1, 3)
        assert all(isinstance(it, RecordIter) for it in (t.refs(), t.logs()))
        assert [x.refname for x in t.iter_refs(b"refs/heads/2")] == [
            b"refs/heads/2", b"refs/heads/20", b"refs/heads/21", b"refs/heads/22",
            b"refs/heads/23", b"refs/heads/24", b"refs/heads/25", b"refs/heads/26",
            b"refs/heads/27", b"refs/heads/28", b"refs/heads/29"]
        assert list(t.iter_refs(b"refs/tags/")) == [refs[-1]]
        assert [x.update_index for x in t.iter_logs(b"refs/heads/1")] == [3, 2, 1]
        it = t.refs()
        assert it.seek_ref(b"refs/tags/") is it and next(it) == refs[-1]
        assert next(t.logs().seek_log(b"refs/heads/1", 2)).update_index == 2
        it.close()
