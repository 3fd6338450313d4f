"""writer: API contract, layout rules (padding, index thresholds, obj ids), stats."""
from __future__ import annotations

import io
import zlib

import pytest
from reftable_core.reftable.blocksource import BytesSource
from reftable_core.errors import APIError, EntryTooBigError, ReftableError
from reftable_core.reftable.record import BLOCK_TYPE_INDEX, BLOCK_TYPE_LOG, LogRecord, RefRecord
from reftable_core.reftable.table import TableReader
from reftable_core.reftable.writer import TableWriter, WriterOptions, write_table


def _opts(**kw) -> WriterOptions:
    kw.setdefault("min_update_index", 1)
    kw.setdefault("max_update_index", 10)
    return WriterOptions(**kw)


def _ref(i: int, ui: int = 1) -> RefRecord:
    return RefRecord(b"refs/heads/r%05d" % i, ui, 1, i.to_bytes(20, "big"))


def _log(name: bytes, ui: int, msg: bytes = b"m") -> LogRecord:
    return LogRecord(name, ui, 1, bytes(20), b"\x01" * 20, b"N", b"e", 5, 0, msg)


def _read(buf: io.BytesIO) -> TableReader:
    return TableReader(BytesSource(buf.getvalue(), "w.ref"))


def test_api_misuse() -> None:
    w = TableWriter(io.BytesIO(), _opts())
    w.add_ref(_ref(2))
    with pytest.raises(APIError):
        w.add_ref(_ref(1))                  # out of order
    with pytest.raises(APIError):
        w.add_ref(_ref(2))                  # duplicate
    with pytest.raises(APIError):
        w.add_ref(_ref(3, ui=11))           # update index outside limits
    with pytest.raises(APIError):
        w.add_ref(RefRecord(b"refs/x", 1, 1, b"short"))
    with pytest.raises(APIError):
        w.add_ref(RefRecord(b"refs/y", 1, 7))
    w.add_log(_log(b"refs/a", 3))
    with pytest.raises(APIError):
        w.add_log(_log(b"refs/a", 4))       # newer entries must come first
    with pytest.raises(APIError):
        w.add_ref(_ref(9))                  # refs after logs
    with pytest.raises(APIError):
        w.add_log(_log(b"refs/b", 1, b"two\nlines"))
    w.close()
    with pytest.raises(APIError):
        w.add_log(_log(b"refs/z", 1))
    with pytest.raises(APIError):
        TableWriter(io.BytesIO(), WriterOptions(hash_id="md5"))
    with pytest.raises(APIError):
        TableWriter(io.BytesIO(), WriterOptions(min_update_index=3, max_update_index=2))


def test_entry_too_big() -> None:
    w = TableWriter(io.BytesIO(), _opts(block_size=128))
    with pytest.raises(EntryTooBigError):
        w.add_ref(RefRecord(b"refs/" + b"x" * 200, 1, 1, bytes(20)))
    assert issubclass(EntryTooBigError, ReftableError)


def test_log_message_normalization() -> None:
    buf = io.BytesIO()
    write_table(buf, [], [_log(b"refs/a", 2, b"hello\n\n\n"), _log(b"refs/b", 2, b""),
                          _log(b"refs/c", 2, "ünï".encode())], _opts())
    assert [x.message for x in _read(buf).logs()] == [b"hello\n", b"\n", "ünï\n".encode()]
    buf = io.BytesIO()
    write_table(buf, [], [_log(b"refs/a", 2, b"exact\n\n")], _opts(exact_log_message=True))
    assert next(_read(buf).logs()).message == b"exact\n\n"


@pytest.mark.parametrize("nblocks,indexed", [(1, False), (3, False), (4, True), (9, True)])
def test_index_threshold(nblocks: int, indexed: bool) -> None:
    refs, i = [], 0
    buf = io.BytesIO()
    # find how many refs make exactly nblocks blocks of 256 bytes
    while True:
        refs.append(_ref(i))
        i += 1
        probe = io.BytesIO()
        st = write_table(probe, refs, [], _opts(block_size=256, index_objects=False))
        if st.ref.blocks == nblocks:
            buf = probe
        if st.ref.blocks > nblocks:
            break
    r = _read(buf)
    assert bool(r.ref_index_offset) == indexed
    assert r.obj_offset == 0
    assert r.ref_index_offset % 256 == 0 and r.ref_index_offset == 256 * nblocks or not indexed


def test_padding_and_alignment() -> None:
    refs = [_ref(i) for i in range(200)]
    logs = [_log(x.refname, 1) for x in refs]
    buf = io.BytesIO()
    st = write_table(buf, refs, logs, _opts(block_size=512))
    data = buf.getvalue()
    r = _read(buf)
    blocks = list(r.blocks())
    first_log = next(b for b in blocks if b.typ == BLOCK_TYPE_LOG)
    for b in blocks:
        if b.typ != BLOCK_TYPE_LOG and b.off < first_log.off:
            assert b.off % 512 == 0                      # aligned, padded
    # the block before the log section is not padded: logs start right after it
    before = [b for b in blocks if b.off < first_log.off][-1]
    length = int.from_bytes(data[before.off + 1:before.off + 4], "big")
    assert first_log.off == before.off + length == r.log_offset == st.log.offset
    # log blocks are deflated and unpadded
    assert blocks[-1].off + blocks[-1].full_size == len(data) - 68
    assert st.log.blocks >= 2 and r.log_index_offset == st.log.index_offset
    assert zlib.decompressobj().decompress(data[first_log.off + 4:])


def test_obj_id_len_is_shortest_unique_prefix() -> None:
    refs = [RefRecord(b"refs/heads/%04d" % i, 1, 1,
                      bytes([0xAB, 0xCD, i % 256, 0]) + bytes(16)) for i in range(400)]
    refs.append(RefRecord(b"refs/heads/zz", 1, 1, bytes([0xAB, 0xCD, 7, 1]) + bytes(16)))
    buf = io.BytesIO()
    st = write_table(buf, refs, [], _opts(block_size=256))
    r = _read(buf)
    assert st.object_id_len == r.obj_id_len == 4         # 3 shared bytes + 1
    objs = list(r.objs())
    assert all(len(o.hash_prefix) == 4 for o in objs)
    assert len(objs) == 257
    target = bytes([0xAB, 0xCD, 7, 0]) + bytes(16)
    assert [x.refname for x in r.refs_for(target)] == [x.refname for x in refs
                                                       if x.value == target]


def test_obj_record_too_many_offsets_uses_scan_form() -> None:
    oid = b"\x42" * 20
    refs = [RefRecord(b"refs/heads/%05d" % i, 1, 1, oid) for i in range(3000)]
    refs += [RefRecord(b"refs/tags/x", 1, 1, b"\x43" * 20)]
    buf = io.BytesIO()
    write_table(buf, refs, [], _opts(block_size=128))
    r = _read(buf)
    objs = {o.hash_prefix: o for o in r.objs()}
    assert objs[oid[:2]].offsets == []                    # "scan all refs" form
    assert len(list(r.refs_for(oid))) == 3000


def test_stats_and_path_output(tmp_path) -> None:
    refs = [_ref(i) for i in range(1000)]
    p = tmp_path / "out.ref"
    st = write_table(p, refs, [_log(b"refs/heads/r00001", 3)], _opts(block_size=1024))
    assert st.size == p.stat().st_size
    assert st.ref.entries == 1000 and st.log.entries == 1 and st.ref.blocks > 4
    assert st.ref.index_offset and st.ref.max_index_level == 1
    assert st.obj.blocks > 0 and st.object_id_len >= 2
    r = TableReader.open(p)
    assert sum(1 for b in r.blocks() if b.typ == BLOCK_TYPE_INDEX) == st.index_blocks
    r.close()


def test_unpadded_option() -> None:
    refs = [_ref(i) for i in range(300)]
    buf = io.BytesIO()
    st = write_table(buf, refs, [], _opts(block_size=512, unpadded=True))
    r = _read(buf)
    assert st.ref.blocks > 1 and r.ref_index_offset        # index whenever > 1 block
    assert list(r.refs()) == refs
    assert r.seek_ref(refs[123].refname) == refs[123]


def test_deletions_and_symrefs_round_trip() -> None:
    refs = [RefRecord(b"HEAD", 4, 3, target=b"refs/heads/main"),
            RefRecord(b"refs/heads/gone", 5, 0),
            RefRecord(b"refs/heads/main", 6, 1, b"\x05" * 20)]
    logs = [LogRecord(b"refs/heads/gone", 5, 0), _log(b"refs/heads/main", 6)]
    buf = io.BytesIO()
    write_table(buf, refs, logs, _opts())
    r = _read(buf)
    assert list(r.refs()) == refs
    got = list(r.logs())
    assert got[0] == logs[0] and got[1].message == b"m\n"


def test_bulk_and_single_paths_write_identical_bytes() -> None:
    refs = [RefRecord(b"HEAD", 3, 3, target=b"refs/heads/main")]
    refs += [_ref(i, ui=1 + i % 3) for i in range(700)]
    refs += [RefRecord(b"refs/tags/t%03d" % i, 2, 2, bytes([i]) * 20, bytes([i + 1]) * 20)
             for i in range(50)]
    refs.append(RefRecord(b"refs/zz/deleted", 4, 0))
    logs = [LogRecord(x.refname, ui, 1, bytes(20), b"\x07" * 20, b"N%d" % (ui % 2), b"e",
                      1700000000 + ui, -ui, b"m %d\n\n" % ui)
            for x in refs[:300] for ui in (9, 5)]
    logs.append(LogRecord(b"refs/zz/deleted", 4, 0))
    outs = []
    for bulk in (True, False):
        buf = io.BytesIO()
        w = TableWriter(buf, _opts(block_size=512, restart_interval=5))
        if bulk:
            w.add_refs(refs)
            w.add_logs(logs)
        else:
            for x in refs:
                w.add_ref(x)
            for lg in logs:
                w.add_log(lg)
        w.close()
        outs.append(buf.getvalue())
    assert outs[0] == outs[1]
    r = _read(io.BytesIO(outs[0]))
    assert list(r.refs()) == refs
    assert len(list(r.logs())) == len(logs)


def test_bulk_api_errors_keep_state() -> None:
    w = TableWriter(io.BytesIO(), _opts())
    with pytest.raises(APIError):
        w.add_refs([_ref(1), _ref(3), _ref(2)])
    w.add_ref(_ref(4))                  # the writer continues after the last good record
    with pytest.raises(APIError):
        w.add_refs([_ref(4)])
    w.add_logs([_log(b"refs/a", 2)])
    with pytest.raises(APIError):
        w.add_logs([_log(b"refs/a", 1), _log(b"refs/a", 1)])
    bad = b"two\nlines"
    for _ in range(2):          # rejected every time, also when the same object recurs
        with pytest.raises(APIError):
            w.add_logs([_log(b"refs/b", 1, bad)])
    w.close()
