"""Tree entries: split_tree / decode_entry / parse_tree against a plain entry-by-entry
reading of git's format, for the modes git writes and the ones it only canonicalizes,
names with spaces and odd bytes, and every malformed shape."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reftable_core.errors import FormatError
from reftable_core.odb.tree import canon_mode, decode_entry, parse_tree, split_tree

MODES = [b"100644", b"100755", b"40000", b"120000", b"160000",      # what git writes
         b"100664", b"040000", b"644", b"100600", b"0160000", b"000"]


def reference(data: bytes, hash_len: int) -> list[tuple[bytes, int, bytes, bool]]:
    """git's tree format read one entry at a time: '<octal mode> <name>\\0<id>'."""
    out = []
    pos = 0
    while pos < len(data):
        sp = data.index(b" ", pos)
        nul = data.index(b"\0", sp + 1)
        raw_mode = int(data[pos:sp], 8)
        isdir = raw_mode & 0o170000 == 0o040000
        name = data[sp + 1:nul]
        oid = data[nul + 1:nul + 1 + hash_len]
        assert len(oid) == hash_len
        out.append((name + b"/" if isdir else name, canon_mode(raw_mode), oid, isdir))
        pos = nul + 1 + hash_len
    return out


entry = st.tuples(st.sampled_from(MODES),
                  st.binary(min_size=1, max_size=12).map(lambda b: b.replace(b"\0", b"n")),
                  st.integers(0, 255))


@settings(max_examples=300, deadline=None)
@given(entries=st.lists(entry, max_size=12), hash_len=st.sampled_from([20, 32]))
def test_split_and_parse_match_the_format(entries: list, hash_len: int) -> None:
    raws = [m + b" " + n + b"\0" + bytes([k]) * (hash_len - 1) + b"\0" for m, n, k in entries]
    data = b"".join(raws)
    assert split_tree(data, hash_len) == raws
    assert [decode_entry(r) for r in raws] == reference(data, hash_len)
    assert parse_tree(data, hash_len) == reference(data, hash_len)


def test_ids_holding_spaces_and_nuls() -> None:
    oid = b" \0 \0" * 5
    data = b"100644 a b\0" + oid + b"40000 \x01\0" + oid
    assert split_tree(data, 20) == [b"100644 a b\0" + oid, b"40000 \x01\0" + oid]
    assert parse_tree(data, 20) == [(b"a b", 0o100644, oid, False), (b"\x01/", 0o040000, oid, True)]


@pytest.mark.parametrize("data", [
    b"100644 f\0" + b"x" * 19,                               # short id
    b"100644 f" + b"x" * 20,                                 # no NUL
    b"100644f\0" + b"x" * 20 + b"100644 g\0",                # no space in the first entry
    b"100644 f\0" + b"x" * 20 + b"100644 g",                 # a truncated last entry
])
def test_malformed_entry(data: bytes) -> None:
    with pytest.raises(FormatError, match="malformed tree entry|bad tree entry mode"):
        split_tree(data, 20)


@pytest.mark.parametrize("mode", [b"10x644", b"", b"0x1", b"9"])
def test_bad_mode_anywhere_is_an_error(mode: bytes) -> None:
    good = b"100644 a\0" + b"x" * 20
    for data in (mode + b" f\0" + b"y" * 20 + good, good + mode + b" f\0" + b"y" * 20 + good):
        with pytest.raises(FormatError):
            split_tree(data, 20)
        with pytest.raises(FormatError):
            parse_tree(data, 20)


def test_an_empty_name_is_an_error_even_with_a_mode_git_writes() -> None:
    """An entry with an empty name, first or after a good one, is git's error (the Cython
    build's split in C hands such a tree to the entry-by-entry split, as the findall's
    gap does in the interpreter)."""
    oid = b"\x01" * 20
    data = b"100644 a b\0" + oid + b"40000 d\0" + oid + b"160000 s\0" + oid
    assert len(split_tree(data, 20)) == 3
    for bad in (b"100644 \0" + oid, b"100644 a\0" + oid + b"40000 \0" + oid):
        with pytest.raises(FormatError, match="empty filename"):
            split_tree(bad, 20)
