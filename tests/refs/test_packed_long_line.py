"""A packed-refs file of one huge unterminated (or bad) line: git's message, and no copy
of the line (a 500 MB line took 1,035 MB where git takes 504: the message copied the
whole line to show its first 75 bytes). Memory by tracemalloc, exact: no clock."""
from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from reftable_core.flags import Flags
from reftable_core.refs.packed import PackedRefs
from reftable_core.refs.packed_format import PackedRefsError

HEADER = b"# pack-refs with: peeled fully-peeled sorted \n"
SIZE = 16 << 20


@pytest.mark.parametrize("reader", ["mmap", "getdelim", "fgetc"])
@pytest.mark.parametrize("body, words", [
    (b"a" * SIZE, "unterminated line in"),                      # no newline at all
    (b"0" * 40 + b" " + b"r" * SIZE, "unterminated line in"),   # a ref, unterminated
    (b"z" * SIZE + b"\n", "unexpected line in"),                # a bad line
])
def test_a_huge_line_is_refused_without_a_copy(tmp_path: Path, reader: str, body: bytes,
                                              words: str) -> None:
    path = tmp_path / "packed-refs"
    path.write_bytes(HEADER + body)
    del body
    tracemalloc.start()
    try:
        with pytest.raises(PackedRefsError) as e:
            with PackedRefs(path, 20, Flags(packed_reader=reader)) as p:
                list(p)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(e.value).startswith(f"{words} {path}: ") and str(e.value).endswith("...")
    if reader == "mmap":                    # the file is mapped, not read: no copy at all
        assert peak < SIZE // 4, peak
