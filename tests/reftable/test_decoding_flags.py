"""The 2024-03/04 decoding series as flags: decode_key_in_place (daf4f43d0d),
restart_key_in_place (d51d8cc368), next_block_in_place (b00bcb7c49), seek_in_place
(9da5c992dd).

Each off/on pair does what git did before/after the commit and nothing else: the
generated record loops differ in the key-decoding lines only; a loop decoding in
place keeps one last-key buffer for all records; the two binary searches over the
restart points differ in how a probed key is read only (off: decoded into a new
buffer per probe, restart_keys_decoded; on: compared in place, no buffer), start the
scan at the same record and reject a restart record with a prefix length (or a key
past the block) with the same error; next_block_in_place=off starts a
record loop per block (block_iters_built), on one per section; seek_in_place=off
copies the iterator state twice per record it passes (seek_iter_copies), on never,
and both seeks return the same positions. Every value of the four, with the other
flags at their defaults and at baseline, reads the same records, seeks and logs
(tests/test_flags.py also runs them across the combinations of the other flags).
"""
from __future__ import annotations

import ast
import difflib
import itertools
import types
from pathlib import Path

import pytest
from reftable_core import counters
from reftable_core.errors import FormatError
from reftable_core.flags import Flags, baseline
from reftable_core.reftable import loops
from reftable_core.reftable.block import (block_loader, record_loop, restart_scan,
                                         seek_in_block, seek_in_block_copying)
from reftable_core.reftable.blocksource import BytesSource
from reftable_core.reftable.loops import restart_scan_start, restart_scan_start_decoding
from reftable_core.reftable.record import BLOCK_TYPE_LOG, BLOCK_TYPE_REF, LogRecord, RefRecord
from reftable_core.reftable.table import TableReader
from reftable_core.reftable.writer import WriterOptions, write_table

from tests.helpers.source import as_python, source_of

DECODE_FLAGS = ("decode_key_in_place", "restart_key_in_place", "next_block_in_place",
                "seek_in_place")
DECODE_COMBOS = [dict(zip(DECODE_FLAGS, bits))
                 for bits in itertools.product((False, True), repeat=len(DECODE_FLAGS))]


def _oid(i: int) -> bytes:
    return (i * 7 + 1).to_bytes(20, "big")


def _refs(n: int) -> list[RefRecord]:
    out = [RefRecord(b"refs/heads/b-%05d" % i, 1, 1, _oid(i)) for i in range(n)]
    out += [RefRecord(b"refs/tags/t-%04d" % i, 1, 2, _oid(i), _oid(i + 1)) for i in range(40)]
    out.append(RefRecord(b"HEAD", 1, 3, target=b"refs/heads/b-00001"))
    return out


def _logs(refs: int, per_ref: int) -> list[LogRecord]:
    return [LogRecord(b"refs/heads/b-%05d" % i, u, 1, _oid(u), _oid(u + 1), b"C O Mitter",
                      b"c@example.com", 1_700_000_000 + u, -800, b"update %d\n" % u)
            for i in range(refs) for u in range(1, per_ref + 1)]


@pytest.fixture(scope="module", params=[256, 4096], ids=["small-blocks", "4k-blocks"])
def table(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("decoding") / "t.ref"
    write_table(path, _refs(1500), _logs(120, 9),
                WriterOptions(block_size=request.param, min_update_index=1,
                              max_update_index=9))
    return path


def _observe(path: Path, flags: Flags) -> tuple:
    with TableReader.open(path, flags) as r:
        refs = list(r.refs())
        logs = list(r.logs())
        names = [x.refname for x in refs]
        probes = [b"", b"A", b"refs/heads/b-007", b"refs/heads/b-00999!", b"refs/zzz",
                  *names[::37], *(n + b"\0" for n in names[5::91])]
        seeks = [list(itertools.islice(r.refs().seek(k), 3)) for k in probes]
        exact = [r.seek_ref(n) for n in (*names[::53], b"refs/heads/b-01499x", b"HEAD")]
        reflogs = [list(r.logs_for(b"refs/heads/b-%05d" % i)) for i in (0, 7, 64, 119, 120)]
        return refs, logs, seeks, exact, reflogs


@pytest.mark.parametrize("base", [Flags(), baseline()], ids=["others-on", "others-off"])
def test_every_value_reads_the_same(table: Path, base: Flags) -> None:
    want = _observe(table, Flags())
    assert len(want[0]) == 1541 and len(want[1]) == 120 * 9
    assert [len(x) for x in want[4]] == [9, 9, 9, 9, 0]
    for combo in DECODE_COMBOS:
        flags = base.replace(**combo)
        assert _observe(table, flags) == want, flags.to_spec(Flags())


# -- decode_key_in_place ------------------------------------------------------------

def _changed_lines(a: object, b: object) -> tuple[list[str], list[str]]:
    """(lines only in a, lines only in b) of two functions' bodies (docstrings left out)."""
    def body(f: object) -> list[str]:
        src = source_of(f)                  # f may be compiled (its .py copy's def)
        doc_end = ast.parse(src).body[0].body[0].end_lineno      # type: ignore[attr-defined]
        return [line.strip() for line in src.splitlines()[doc_end:]]
    d = list(difflib.ndiff(body(a), body(b)))
    return ([x[2:] for x in d if x.startswith("- ")], [x[2:] for x in d if x.startswith("+ ")])


def test_decode_key_in_place_pairs_differ_in_the_key_lines_only() -> None:
    f = loops.RECORD_LOOPS
    in_place = ["del last[p:]", "last += data[off:nxt]", "key = last"]
    for typ, swap, alloc in itertools.product((BLOCK_TYPE_REF, BLOCK_TYPE_LOG), (True, False),
                                              (True, False)):
        off, on = _changed_lines(f[(typ, swap, alloc, True, False)],
                                 f[(typ, swap, alloc, True, True)])
        store = "last = key" if swap else "last[:] = key"
        assert off == ["key = last[:p]", "key += data[off:nxt]", store]
        assert [x.split("#")[0].strip() for x in on] == in_place
        # decode_key_in_place=on leaves block_key_swap no line to act on
        assert f[(typ, swap, alloc, True, True)] is f[(typ, not swap, alloc, True, True)]


@pytest.mark.parametrize("typ", [BLOCK_TYPE_REF, BLOCK_TYPE_LOG], ids=["ref", "log"])
def test_in_place_decodes_every_key_into_one_buffer(table: Path, typ: int) -> None:
    for in_place in (False, True):
        flags = Flags(decode_key_in_place=in_place, block_key_swap=True)
        with TableReader.open(table, flags) as r:
            block = r.load_block(0 if typ == BLOCK_TYPE_REF else r.log_offset, typ)
            assert block is not None
            # the loop's Python twin under the compiled core: a compiled generator has no frame
            gen = as_python(record_loop(typ, flags))(block, block.header_off + 4, b"", 20,
                                                     r.min_update_index, None)
            ids = set()
            for rec in itertools.islice(gen, 12):
                last = gen.gi_frame.f_locals["last"]
                assert type(last) is bytearray and rec.refname is not last
                assert bytes(last) == (rec.refname if typ == BLOCK_TYPE_REF else rec.key())
                ids.add(id(last))
            gen.close()
        # on: last_key itself is cut and extended; off (swap): each key a new buffer
        assert (len(ids) == 1) == in_place


# -- next_block_in_place ------------------------------------------------------------

def _blocks_of(r: TableReader, typ: int) -> int:
    return sum(1 for b in r.blocks() if b.typ == typ)


@pytest.mark.parametrize("typ", [BLOCK_TYPE_REF, BLOCK_TYPE_LOG], ids=["ref", "log"])
def test_next_block_in_place_starts_one_loop_per_section_off_one_per_block(
        table: Path, typ: int) -> None:
    got = {}
    for in_place in (False, True):
        with TableReader.open(table, Flags(next_block_in_place=in_place)) as r:
            blocks = _blocks_of(r, typ)
            counters.reset()
            recs = list(r.refs() if typ == BLOCK_TYPE_REF else r.logs())
            got[in_place] = (counters.snapshot()["block_iters_built"], recs)
    assert got[True][0] == 1
    assert got[False][0] == blocks
    assert got[False][1] == got[True][1]


# -- seek_in_place --------------------------------------------------------------------

def _seek_probes(r: TableReader) -> list[bytes]:
    names = [x.refname for x in r.refs()]
    return [b"", b"zzz", *names, *(n + b"!" for n in names[::7]), *(n[:-1] for n in names[::11])]


def test_both_seeks_give_the_same_positions(table: Path) -> None:
    with TableReader.open(table) as r:
        blocks = [b for b in r.blocks() if b.typ == BLOCK_TYPE_REF][:3]
        for block, want in itertools.product(blocks, _seek_probes(r)[::3]):
            assert seek_in_block(block, want, 20) == seek_in_block_copying(block, want, 20)


def test_seek_in_place_off_copies_the_iterator_twice_per_record_passed(table: Path) -> None:
    with TableReader.open(table) as r:
        block = r.load_block(0, BLOCK_TYPE_REF)
        assert block is not None
        loop = record_loop(BLOCK_TYPE_REF, Flags())
        keys = [x.refname for x in loop(block, block.header_off + 4, b"", 20, 1, None)]
        offs = [seek_in_block(block, k, 20)[0] for k in keys]    # each record's offset
        restarts = {block.restart_offset(i) for i in range(block.restart_count)}
        assert offs[0] in restarts and len(restarts) > 1
        for i, want in list(enumerate(keys))[::5]:
            counters.reset()
            on = seek_in_block(block, want, 20)
            assert counters.snapshot()["seek_iter_copies"] == 0
            off = seek_in_block_copying(block, want, 20)
            assert on == off
            # the scan starts at the last restart point at or before the wanted record
            start = max(j for j in range(i + 1) if offs[j] in restarts)
            assert counters.snapshot()["seek_iter_copies"] == 2 * (i - start) + 1


def test_both_seeks_reject_a_record_running_past_the_block(table: Path) -> None:
    with TableReader.open(table) as r:
        block = r.load_block(0, BLOCK_TYPE_REF)
        assert block is not None
        loop = record_loop(BLOCK_TYPE_REF, Flags())
        last = list(loop(block, block.header_off + 4, b"", 20, 1, None))[-1]
        block.end = seek_in_block(block, last.refname, 20)[0] + 3   # cut the last record
        for seek in (seek_in_block, seek_in_block_copying):
            with pytest.raises(FormatError):
                seek(block, b"refs/zzz", 20)


# -- restart_key_in_place -------------------------------------------------------------

SCANS = {False: restart_scan_start_decoding, True: restart_scan_start}


def _probe_path(block, keys: list[bytes]):
    """The restart indexes git's search probes for want (keys: the restart keys)."""
    def path(want: bytes) -> list[int]:
        lo, hi, out = 0, block.restart_count, []
        while lo < hi:
            mid = (lo + hi) >> 1
            out.append(mid)
            if keys[mid] > want:
                hi = mid
            else:
                lo = mid + 1
        return out
    return path


def _restart_keys(block) -> list[bytes]:
    """The key of each restart record of block (whole: restart records are uncompressed)."""
    offs = {block.restart_offset(i): i for i in range(block.restart_count)}
    keys: list[bytes] = [b""] * block.restart_count
    last = b""
    data, base, end = block.data, block.base, block.base + block.end
    off = base + block.header_off + 4
    while off < end:
        start = off
        p, lo, hi, off = loops.record_extent(block, data, off, end, len(last), 20)
        last = last[:p] + data[lo:hi]
        if start - base in offs:
            assert p == 0
            keys[offs[start - base]] = last
    return keys


def _blocks(path: Path) -> list:
    """Every block of the table, each with its own bytes (mmap=off: they outlive the map)."""
    with TableReader.open(path, Flags(mmap=False)) as r:
        return list(r.blocks())


def test_restart_scans_start_every_seek_at_the_same_record(table: Path) -> None:
    blocks = _blocks(table)
    assert {b.typ for b in blocks} >= {BLOCK_TYPE_REF, BLOCK_TYPE_LOG}
    probed = 0
    for block in blocks:
        keys = _restart_keys(block)
        wants = [b"", b"\xff", *keys, *(k + b"\0" for k in keys), *(k[:-1] for k in keys)]
        for want in wants:
            on = restart_scan_start(block, want)
            assert restart_scan_start_decoding(block, want) == on
            # and the seek through either is the same
            assert seek_in_block(block, want, 20, SCANS[False]) == \
                seek_in_block(block, want, 20, SCANS[True])
            probed += 1
    assert probed > 500
    assert restart_scan(Flags()) is restart_scan_start
    assert restart_scan(baseline()) is restart_scan_start_decoding


@pytest.fixture(scope="module")
def restart_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """4 KiB blocks with a restart point every 4 records: some 20-30 per ref block."""
    path = tmp_path_factory.mktemp("restarts") / "t.ref"
    write_table(path, _refs(1500), _logs(40, 3),
                WriterOptions(block_size=4096, restart_interval=4, min_update_index=1,
                              max_update_index=9))
    return path


def _spied(scan) -> tuple[object, list[bytearray]]:
    """scan run from its Python source with `bytearray` spied on: (function, buffers built)."""
    built: list[bytearray] = []

    class Spy(bytearray):
        def __init__(self, *a: object) -> None:
            super().__init__(*a)
            built.append(self)
    f = as_python(scan)
    return types.FunctionType(f.__code__, {**f.__globals__, "bytearray": Spy}), built


def test_restart_key_in_place_off_decodes_a_new_buffer_per_probe_on_none(
        restart_table: Path) -> None:
    block = next(b for b in _blocks(restart_table) if b.typ == BLOCK_TYPE_REF
                 and b.header_off == 0)
    assert block.restart_count > 16
    keys = _restart_keys(block)
    path = _probe_path(block, keys)
    off, off_built = _spied(restart_scan_start_decoding)
    on, on_built = _spied(restart_scan_start)
    for want in [b"", *keys[::2], *(k + b"!" for k in keys[1::3]), b"\xff"]:
        probes = path(want)
        assert probes
        counters.reset()
        del off_built[:]
        start = off(block, want)
        # one new buffer per restart point probed, holding that restart record's key
        assert [bytes(b) for b in off_built] == [keys[i] for i in probes]
        assert len({id(b) for b in off_built}) == len(off_built)
        assert counters.snapshot()["restart_keys_decoded"] == len(probes)
        counters.reset()
        assert on(block, want) == start and on_built == []
        assert counters.snapshot()["restart_keys_decoded"] == 0


def test_restart_key_in_place_pair_differs_in_the_key_lines_only() -> None:
    off, on = _changed_lines(restart_scan_start_decoding, restart_scan_start)
    prefix_error = 'raise block.error("restart point is not an uncompressed record", q - base)'
    # both read the suffix length alike (reftable_decode_keylen in both versions); off
    # reads the prefix length as a varint and refuses it when nonzero after both are
    # read (reftable_decode_key), then builds the key in a new buffer
    assert [x.split("#")[0].strip() for x in off] == [
        "o = r", "p = buf[o]", "if p < 0x80:", "o += 1", "else:", "p, o = get_varint(data, o)",
        "if p:", prefix_error, "key = bytearray()", "key += data[o:o + n]",
        "WORK.restart_keys_decoded += 1", "if key > want:"]
    # on: the prefix length's one byte checked to be 0, the suffix compared where it lies
    assert [x.split("#")[0].strip() for x in on] == [
        "if buf[r] != 0:", prefix_error, "o = r + 1", "if data[o:o + n] > want:"]


def _corrupt(block, i: int, pos: int, byte: int):
    """block's bytes with byte `byte` at position pos of restart record i (pos 0: its
    prefix length, 1: the start of its suffix length), loaded again as one block."""
    data = bytearray(block.data[block.base:block.base + block.length])
    data[block.restart_offset(i) + pos] = byte
    src = BytesSource(bytes(data), "corrupt.ref")
    got = block_loader(Flags())(src, 0, block.header_off, 0, len(data))
    assert got is not None
    return got


@pytest.mark.parametrize("pos, byte, msg", [
    (0, 1, "restart point is not an uncompressed record"),          # prefix length 1
    (0, 0x85, "restart point is not an uncompressed record"),       # a two-byte prefix length
    (1, 0xFF, "restart key runs past the block's records"),          # suffix of 2 KiB+
], ids=["prefix-1", "prefix-2-bytes", "suffix-past-end"])
def test_a_corrupt_restart_record_is_one_error_under_both_values(restart_table: Path, pos: int,
                                                                  byte: int, msg: str) -> None:
    """git before d51d8cc368 failed such a record too: reftable_decode_key rejects a prefix
    longer than the (empty) key it extends and a suffix past the input; after it,
    "if (n < 0 || prefix_len)" and "if (suffix_len > in.len)". Both are one
    REFTABLE_FORMAT_ERROR; here one FormatError naming the table and the offset of the
    restart table entry that points at the record."""
    block = next(b for b in _blocks(restart_table) if b.typ == BLOCK_TYPE_REF
                 and b.header_off == 0)
    i = block.restart_count >> 1                    # the search's first probe
    if pos == 1:
        # the last restart record (the search's last probe for a key past every one),
        # its suffix length's first byte 0xFF: a varint of 16384 or more, 2 KiB of key
        i = block.restart_count - 1
        assert block.end - block.restart_offset(i) < 2048
    bad = _corrupt(block, i, pos, byte)
    want = (_restart_keys(block)[i] + b"\0") if pos == 1 else b"refs/heads/b-00500"
    errors = []
    for in_place, scan in SCANS.items():
        with pytest.raises(FormatError) as e:
            scan(bad, want)
        errors.append(str(e.value))
        assert e.value.path == "corrupt.ref" and e.value.msg == msg
        assert e.value.offset == bad.off + bad.restart_start + 3 * i
    assert errors[0] == errors[1] and "\n" not in errors[0]
