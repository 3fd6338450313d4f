"""packed-refs walk (packed_lookup=bsearch): the chunked walk (lines split per
chunk, names checked in a batch) gives exactly what git's next_record gives
record by record: the same rows, the same error at the same record, the same
lines counted, whatever the chunk sizes and wherever an odd record sits."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from reftable_core import counters
from reftable_core.errors import ReftableError
from reftable_core.flags import REFNAME_SAFETY, Flags
from reftable_core.refs import packed as packed_mod
from reftable_core.refs.packed import PACKED_REFS_HEADER, PackedRefs

ZERO = bytes(20)


def _hex(i: int) -> bytes:
    return random.Random(i).randbytes(20).hex().encode()


# records git's next_record reads otherwise than the usual "hex SP name LF [^hex LF]",
# or whose name the batch check refuses: each is planted among usual ones
ODD_RECORDS = {
    "tab separator": lambda h, n: h + b"\t" + n + b"\n",
    "LF separator": lambda h, n: h + b"\n" + n + b"\n",
    "upper-case hex": lambda h, n: h.upper() + b" " + n + b"\n",
    "CR name (broken)": lambda h, n: h + b" " + n + b"\r\n",
    "./ name (false alarm)": lambda h, n: h + b" " + n + b"./x\n",
    "name with SP (broken)": lambda h, n: h + b" " + n + b" x\n",
    "name ending .lock (broken)": lambda h, n: h + b" " + n + b".lock\n",
    "peeled": lambda h, n: h + b" " + n + b"\n^" + _hex(7) + b"\n",
    "peeled, broken name": lambda h, n: h + b" " + n + b"~\n^" + _hex(7) + b"\n",
    "bad peeled id": lambda h, n: h + b" " + n + b"\n^" + b"z" * 40 + b"\n",
    "short peeled line": lambda h, n: h + b" " + n + b"\n^" + _hex(7)[:30] + b"\n",
    "long peeled line": lambda h, n: h + b" " + n + b"\n^" + _hex(7) + b"x\n",
    "two peeled lines": lambda h, n: h + b" " + n + b"\n^" + _hex(7) + b"\n^" + _hex(8) + b"\n",
    "bad hex": lambda h, n: b"g" + h[1:] + b" " + n + b"\n",
    "short line": lambda h, n: h[:20] + b"\n",
    "empty line": lambda h, n: b"\n",
    "empty name": lambda h, n: h + b" \n",
    "dangerous name": lambda h, n: h + b" refs/heads/../../" + n[-6:] + b"\n",
}


def _file(tmp_path: Path, odd: str | None, where: int, n: int = 600) -> Path:
    """n usual records (a few peeled), sorted, with one odd record at index where."""
    recs = []
    for i in range(n):
        name = b"refs/%s/n%05d" % (b"heads" if i < n // 2 else b"tags", i)
        h = _hex(i)
        if odd is not None and i == where:
            recs.append(ODD_RECORDS[odd](h, name))
        elif i % 7 == 3:
            recs.append(h + b" " + name + b"\n^" + _hex(-i) + b"\n")
        else:
            recs.append(h + b" " + name + b"\n")
    path = tmp_path / "packed-refs"
    path.write_bytes(PACKED_REFS_HEADER + b"".join(recs))
    return path


def _walk(path: Path, flags: Flags, prefix: bytes) -> tuple:
    """(entries, rows with broken ones as the zero id, lines counted); an error
    ends the entries and the rows, as (type, text, offset)."""
    out: list = []
    counters.reset()
    try:
        with PackedRefs(path, 20, flags) as p:
            for e in p.iter(prefix):
                out.append(e)
    except ReftableError as e:
        out.append((type(e).__name__, str(e), getattr(e, "offset", None)))
    lines = counters.snapshot()["packed_lines"]
    rows: list = []
    try:
        with PackedRefs(path, 20, flags) as p:
            rows.extend(p.rows(prefix, lambda name, oid: (name, ZERO, None, None)))
    except ReftableError as e:
        rows.append(str(e))
    return out, rows, lines


def _record_by_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """No usual rows: every record goes through next_record itself."""
    monkeypatch.setattr(packed_mod._BsearchLookup, "_usual_rows",
                        lambda self, pos, end, prefix: ([], pos))


@pytest.mark.parametrize("odd", sorted(ODD_RECORDS))
@pytest.mark.parametrize("prefix", [b"", b"refs/heads/", b"refs/tags/n004"])
def test_chunked_walk_is_next_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     odd: str, prefix: bytes) -> None:
    rng = random.Random(odd)
    for where in (0, 1, rng.randrange(2, 599), 300, 599):
        path = _file(tmp_path, odd, where)
        for mode in REFNAME_SAFETY:
            flags = Flags(refname_safety=mode)
            got = _walk(path, flags, prefix)
            with monkeypatch.context() as m:
                m.setattr(packed_mod, "FIRST_CHUNK", 97)           # chunks of a record or two
                m.setattr(packed_mod, "CHUNK", 211)
                small = _walk(path, flags, prefix)
            with monkeypatch.context() as m:
                _record_by_record(m)
                want = _walk(path, flags, prefix)
            assert got[:2] == small[:2] == want[:2], (where, mode)
            # the lines parsed: the same for a whole walk (one that stops at an
            # error has parsed the rest of its chunk)
            if not (got[0] and isinstance(got[0][-1], tuple)):
                assert got[2] == small[2] == want[2], (where, mode)


def test_usual_file_takes_the_batch_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean file never reaches next_record, and reads as record by record."""
    path = _file(tmp_path, None, 0, n=3000)
    got = _walk(path, Flags(), b"")
    calls = []
    real = packed_mod._BsearchLookup._next_record

    def counted(self, pos, prefix, on_broken):                    # type: ignore[no-untyped-def]
        calls.append(pos)
        return real(self, pos, prefix, on_broken)

    monkeypatch.setattr(packed_mod._BsearchLookup, "_next_record", counted)
    assert _walk(path, Flags(), b"") == got
    assert calls == []
    assert len(got[0]) == 3000 and got[2] == 3000 + len([i for i in range(3000) if i % 7 == 3])
    with monkeypatch.context() as m:
        _record_by_record(m)
        assert _walk(path, Flags(), b"") == got


@pytest.mark.parametrize("prefix", [b"refs/heads/", b"refs/a", b"refs/", b"refs/zzz"])
def test_prefix_walk_over_a_file_out_of_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              prefix: bytes) -> None:
    """A "sorted" file that is not: git's walk passes over a name before the
    prefix and stops at the first one after it, in the batch path as record by
    record (the batch's test of the prefix cannot take the names' order for granted)."""
    names = [b"refs/heads/a", b"refs/heads/b", b"refs/aaa", b"refs/heads/c", b"refs/zzz",
             b"refs/heads/d", b"refs/heads/e"] * 40
    path = tmp_path / "packed-refs"
    path.write_bytes(PACKED_REFS_HEADER + b"".join(_hex(i) + b" " + n + b"\n"
                                                   for i, n in enumerate(names)))
    got = _walk(path, Flags(), prefix)
    with monkeypatch.context() as m:
        _record_by_record(m)
        assert _walk(path, Flags(), prefix) == got
    assert all(e.name.startswith(prefix) for e in got[0])
