"""The writers' key buffers as flags: writer_scratch (upstream 66ed011bf7) and
block_writer_scratch (upstream d94ac23d3b).

Each off/on pair does what git did before/after the commit and nothing else: the bytes
written are the same for every value (refs of every value type, logs, index and obj
blocks, the bulk and the one-record paths, errors); off takes a new buffer for each
record's key, and (writer_scratch) one more for each ref it indexes by object id,
in both writers, on takes the one scratch buffer each writer keeps (the block
writers' one shared by every block of the table); the counters report the same
numbers as the buffers seen. (tests/test_flags.py also writes a stack and migrates
refs under every value, with the other flags.)
"""
from __future__ import annotations

import io
import itertools

import pytest
from reftable_core import counters
from reftable_core.errors import APIError
from reftable_core.flags import Flags, baseline
from reftable_core.reftable.block_writer import BlockWriter
from reftable_core.reftable.buffers import KeyBuffers
from reftable_core.reftable.record import BLOCK_TYPE_REF, LogRecord, RefRecord
from reftable_core.reftable.writer import TableWriter, WriterOptions

WRITER_FLAGS = ("writer_scratch", "block_writer_scratch")
WRITER_COMBOS = [dict(zip(WRITER_FLAGS, bits))
                 for bits in itertools.product((False, True), repeat=len(WRITER_FLAGS))]


def _oid(i: int) -> bytes:
    return (i * 7 + 1).to_bytes(20, "big")


def _refs(n: int) -> list[RefRecord]:
    """n refs, a fifth annotated tags (two ids), one in 13 a symref, one in 11 deleted."""
    out = []
    for i in range(n):
        name = b"refs/heads/b-%05d" % i
        if i % 13 == 5:
            out.append(RefRecord(name, 1, 3, target=b"refs/heads/b-00000"))
        elif i % 11 == 3:
            out.append(RefRecord(name, 2, 0))
        elif i % 5 == 1:
            out.append(RefRecord(name, 1, 2, _oid(i), _oid(i + 1)))
        else:
            out.append(RefRecord(name, 2, 1, _oid(i % 400)))
    return out


def _logs(n: int) -> list[LogRecord]:
    return [LogRecord(b"refs/heads/b-%05d" % i, u, 1, _oid(u), _oid(u + 1), b"C O Mitter",
                      b"c@example.com", 1_700_000_000 + u, -800, b"update %d\n" % u)
            for i in range(n) for u in (2, 1)]


OPTIONS = {
    "4k": WriterOptions(min_update_index=1, max_update_index=2),
    "small-blocks": WriterOptions(block_size=256, restart_interval=3, min_update_index=1,
                                  max_update_index=2),       # indexes, obj blocks
    "unpadded-no-objs": WriterOptions(block_size=512, unpadded=True, index_objects=False,
                                      min_update_index=1, max_update_index=2),
    "sha256": WriterOptions(block_size=1024, hash_id="sha256", min_update_index=1,
                            max_update_index=2),
}


def _write(opts: WriterOptions, flags: Flags, refs: list[RefRecord], logs: list[LogRecord],
           bulk: bool = True) -> bytes:
    if opts.hash_id == "sha256":
        refs = [RefRecord(r.refname, r.update_index, r.value_type,
                          None if r.value is None else r.value + bytes(12),
                          None if r.target_value is None else r.target_value + bytes(12),
                          r.target) for r in refs]
        logs = [LogRecord(x.refname, x.update_index, 1, x.old_id + bytes(12),
                          x.new_id + bytes(12), x.name, x.email, x.time, x.tz_offset,
                          x.message) for x in logs]
    buf = io.BytesIO()
    w = TableWriter(buf, opts, flags=flags)
    if bulk:
        w.add_refs(refs)
        w.add_logs(logs)
    else:
        for r in refs:
            w.add_ref(r)
        for x in logs:
            w.add_log(x)
    w.close()
    return buf.getvalue()


@pytest.mark.parametrize("name", list(OPTIONS))
def test_every_value_writes_the_same_bytes(name: str) -> None:
    refs, logs = _refs(700), _logs(60)
    want = _write(OPTIONS[name], Flags(), refs, logs)
    for base, combo, bulk in itertools.product((Flags(), baseline()), WRITER_COMBOS,
                                               (True, False)):
        flags = base.replace(**combo)
        assert _write(OPTIONS[name], flags, refs, logs, bulk) == want, (flags, bulk)


@pytest.mark.parametrize("combo", WRITER_COMBOS, ids=lambda c: ",".join(
    f"{k}={'on' if v else 'off'}" for k, v in c.items()))
def test_every_value_refuses_the_same_misuse(combo: dict[str, bool]) -> None:
    flags = Flags(**combo)
    w = TableWriter(io.BytesIO(), WriterOptions(max_update_index=5), flags=flags)
    w.add_ref(RefRecord(b"refs/heads/b", 1, 1, bytes(20)))
    for bad in (b"refs/heads/a", b"refs/heads/b"):
        with pytest.raises(APIError, match="out of order"):
            w.add_ref(RefRecord(bad, 1, 1, bytes(20)))
    w.add_log(LogRecord(b"refs/heads/b", 3, 0))
    with pytest.raises(APIError, match="out of order"):
        w.add_log(LogRecord(b"refs/heads/b", 4, 0))
    w.close()
    with pytest.raises(ValueError, match="empty record key"):
        BlockWriter(BLOCK_TYPE_REF, 256, keys=KeyBuffers(combo["block_writer_scratch"])).add(
            b"", 1, bytes(21))


def test_key_buffers_hand_out_new_ones_or_the_one_scratch() -> None:
    fresh, kept = KeyBuffers(False), KeyBuffers(True)
    a, b = fresh.take(), fresh.take()
    assert type(a) is bytearray and a is not b and a == b == bytearray()
    a[:] = b"refs/heads/x"
    assert fresh.take() == bytearray() and fresh.taken() == 3
    s = kept.take()
    s[:] = b"refs/heads/x"
    assert kept.take() is s and s == b"refs/heads/x" and kept.taken() == 2
    assert not fresh.scratch and kept.scratch


def _spy(owner: object, attr: str) -> list[bytearray]:
    """Every buffer owner.<attr>() hands out from now on (each kept: ids stay distinct)."""
    seen: list[bytearray] = []
    take = getattr(owner, attr)

    def spy() -> bytearray:
        b = take()
        seen.append(b)
        return b
    setattr(owner, attr, spy)
    return seen


def _watched_write(opts: WriterOptions, flags: Flags, refs: list[RefRecord],
                   logs: list[LogRecord]) -> tuple[list[bytearray], list[bytearray], dict]:
    """(the table writer's buffers, its block writers', the work counters) of one write."""
    counters.reset()
    w = TableWriter(io.BytesIO(), opts, flags=flags)
    table = _spy(w._keys, "take")
    blocks = _spy(w._block_keys, "take")
    w._bw.key_buffer = w._block_keys.take      # the block writer already built
    w.add_refs(refs)
    w.add_logs(logs)
    w.close()
    return table, blocks, counters.snapshot()


@pytest.mark.parametrize("name", ["4k", "small-blocks", "unpadded-no-objs"])
def test_writer_scratch_off_builds_a_buffer_per_key_and_per_indexed_ref(name: str) -> None:
    opts = OPTIONS[name]
    refs, logs = _refs(700), _logs(60)
    with_ids = sum(1 for r in refs if r.value_type in (1, 2)) if opts.index_objects else 0
    for scratch in (False, True):
        table, _, work = _watched_write(opts, Flags(writer_scratch=scratch), refs, logs)
        # one per record for its key (writer_add_record), one per ref with an id
        # when objects are indexed (reftable_writer_add_ref: its value and peeled id
        # go into the same buffer, one after the other)
        assert len(table) == len(refs) + len(logs) + with_ids
        if scratch:
            assert all(b is table[0] for b in table)
            assert work["writer_buffers_built"] == 0
            assert work["writer_buffers_reused"] == len(table)
        else:
            assert len({id(b) for b in table}) == len(table)
            assert work["writer_buffers_built"] == len(table)
            assert work["writer_buffers_reused"] == 0
    # 66ed011bf7's two allocations per ref (5,032,171 -> 3,025,864 over 1M refs):
    # a ref with an object id takes two buffers when off
    table, *_ = _watched_write(OPTIONS["4k"], baseline(), [RefRecord(b"refs/a", 1, 1,
                                                                     bytes(20))], [])
    assert len(table) == 2 and table[0] is not table[1]


def test_block_writer_scratch_off_builds_a_buffer_per_add_on_one_per_table() -> None:
    opts = OPTIONS["small-blocks"]
    refs, logs = _refs(700), _logs(60)
    seen = {}
    for scratch in (False, True):
        _, blocks, work = _watched_write(opts, Flags(block_writer_scratch=scratch),
                                            refs, logs)
        # every record added to a block takes one, those refused by a full block once
        # more in the next block, and so do the index and obj records
        assert len(blocks) > len(refs) + len(logs)
        seen[scratch] = len(blocks)
        if scratch:
            assert all(b is blocks[0] for b in blocks)      # one for every block writer
            assert work["block_writer_buffers_built"] == 0
            assert work["block_writer_buffers_reused"] == len(blocks)
        else:
            assert len({id(b) for b in blocks}) == len(blocks)
            assert work["block_writer_buffers_built"] == len(blocks)
            assert work["block_writer_buffers_reused"] == 0
    assert seen[False] == seen[True]


def test_each_buffer_holds_the_key_it_was_taken_for() -> None:
    """Under off, each buffer keeps what it was filled with: the record's key in order
    (a ref's id right after its key), so the buffers are the keys git built."""
    refs = [RefRecord(b"refs/heads/a", 1, 1, _oid(1)), RefRecord(b"refs/heads/b", 1, 0),
            RefRecord(b"refs/tags/t", 1, 2, _oid(2), _oid(3))]
    logs = [LogRecord(b"refs/heads/a", 1, 0)]
    table, blocks, _ = _watched_write(OPTIONS["4k"], baseline(), refs, logs)
    log_key = logs[0].key()
    assert [bytes(b) for b in table] == [b"refs/heads/a", _oid(1), b"refs/heads/b",
                                         b"refs/tags/t", _oid(3), log_key]
    assert [bytes(b) for b in blocks] == [b"refs/heads/a", b"refs/heads/b", b"refs/tags/t",
                                          log_key]
