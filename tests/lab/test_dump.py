"""`reftable-lab dump --table`: the documented line format, and exit 128 on corruption."""
from __future__ import annotations

import io
from pathlib import Path

from reftable_core.reftable.blocksource import BytesSource
from reftable_core.reftable.record import LogRecord, RefRecord
from reftable_core.reftable.table import TableReader
from reftable_core.reftable.writer import WriterOptions, write_table

from lab.cli import main
from lab.commands.dump import dump_table


def _table(path: Path) -> None:
    refs = [RefRecord(b"HEAD", 2, 3, target=b"refs/heads/main"),
            RefRecord(b"refs/heads/gone", 2, 0),
            RefRecord(b"refs/heads/main", 2, 1, bytes.fromhex("11" * 20)),
            RefRecord(b"refs/tags/v1", 1, 2, bytes.fromhex("22" * 20), bytes.fromhex("11" * 20))]
    logs = [LogRecord(b"refs/heads/main", 2, 1, bytes(20), bytes.fromhex("11" * 20),
                      "Zoë".encode(), b"z@x", 1700000000, -800, b"commit: first"),
            LogRecord(b"refs/heads/old", 1, 0)]
    write_table(path, refs, logs, WriterOptions(min_update_index=1, max_update_index=2))


def test_dump_format(tmp_path: Path, capsys) -> None:
    p = tmp_path / "t.ref"
    _table(p)
    assert main(["dump", "--table", str(p)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"table {p}"
    assert lines[1] == ("header version=1 hash=sha1 block_size=4096 min_update_index=1 "
                        "max_update_index=2")
    assert lines[2].startswith("footer ref_index=0 obj=0 obj_id_len=0 obj_index=0 log=")
    assert lines[3].startswith("block r at=0 len=")
    assert lines[4].startswith("block g at=")
    assert lines[5:] == [
        "ref{HEAD(2) symref refs/heads/main}",
        "ref{refs/heads/gone(2) delete}",
        "ref{refs/heads/main(2) val1 " + "11" * 20 + "}",
        "ref{refs/tags/v1(1) val2 " + "22" * 20 + " peeled " + "11" * 20 + "}",
        "log{refs/heads/main(2) old " + "00" * 20 + " new " + "11" * 20
        + r" Zo\xc3\xab <z@x> 1700000000 -0800 commit: first\n}",
        "log{refs/heads/old(1) delete}",
    ]


def test_dump_index_and_obj_records(tmp_path: Path) -> None:
    refs = [RefRecord(b"refs/heads/%04d" % i, 1, 1, bytes([i % 256, i // 256]) + bytes(18))
            for i in range(400)]
    buf = io.BytesIO()
    write_table(buf, refs, [], WriterOptions(block_size=256, min_update_index=1,
                                             max_update_index=1))
    out = io.StringIO()
    dump_table(TableReader(BytesSource(buf.getvalue(), "mem")), out)
    lines = out.getvalue().splitlines()
    assert sum(x.startswith("obj{") for x in lines) == 400
    idx = [x for x in lines if x.startswith("index{")]
    assert idx and any(" -> 0}" in x for x in idx) and all(x.startswith("index{") for x in idx)
    assert any(x.startswith("index{r ") for x in idx) and any(x.startswith("index{o ") for x in idx)


def test_dump_corrupt_file_exit_128(tmp_path: Path, capsys) -> None:
    p = tmp_path / "bad.ref"
    _table(p)
    data = bytearray(p.read_bytes())
    data[-1] ^= 0xFF
    p.write_bytes(bytes(data))
    assert main(["dump", "--table", str(p)]) == 128
    err = capsys.readouterr().err
    assert err.startswith(f"fatal: {p} at offset ") and "CRC" in err
