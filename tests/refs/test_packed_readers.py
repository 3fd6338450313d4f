"""packed-refs line readers: every packed_reader yields the same lines, and the
fgetc model's strbuf grows as git's does (amortized: O(log n) grows, O(n) copied)."""
from __future__ import annotations

import math
from pathlib import Path

from reftable_core.flags import Flags
from reftable_core.refs.packed import PackedRefs
from reftable_core.refs.packed_readers import LINE_READERS, StrBuf, alloc_nr, lines_fgetc

OID = b"1" * 40
LONG = b"refs/heads/" + b"a" * (4 << 20)


def test_alloc_nr_is_gits() -> None:
    assert [alloc_nr(x) for x in (0, 1, 24, 60)] == [24, 25, 60, 114]


def test_fgetc_long_line_grows_amortized(tmp_path: Path) -> None:
    path = tmp_path / "packed-refs"
    line = OID + b" " + LONG + b"\n"
    path.write_bytes(b"# pack-refs with: peeled fully-peeled sorted \n" + line)
    sb = StrBuf()
    lines = list(lines_fgetc(str(path), sb))
    assert lines[1] == line
    # ALLOC_GROW multiplies by 3/2: about log_1.5(n) grows, under 3n bytes copied
    assert sb.grows <= math.log(len(line), 1.5) + 2
    assert sb.copied < 3 * len(line)
    with PackedRefs(path, 20, Flags(packed_reader="fgetc")) as p:
        e = p.get(LONG)
        assert e is not None and e.oid == bytes.fromhex(OID.decode())


def test_readers_agree(tmp_path: Path) -> None:
    path = tmp_path / "packed-refs"
    data = (b"# pack-refs with: peeled \n" + OID + b" refs/heads/x\n^" + OID + b"\n"
            + OID + b" " + b"refs/tags/" + b"t" * 5000 + b"\n\n" + OID + b" refs/no-lf")
    path.write_bytes(data)
    got = {name: list(reader(str(path))) for name, reader in LINE_READERS.items()}
    assert all(lines == got["getdelim"] for lines in got.values())
    assert b"".join(got["fgetc"]) == data
