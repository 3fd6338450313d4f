"""Prefix iteration of packed-refs: packed_lookup=bsearch (seek by binary search in
the mapped file, stop at the first record past the prefix) gives exactly what
parse_all (load every line, then bisect) gives, for prefixes that are record
names, fall between records, before the first and after the last, match nothing,
cover the whole file; and the two do different work (the bsearch walk parses
only the lines it crosses)."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
from reftable_core import counters
from reftable_core.flags import Flags
from reftable_core.refs.packed import PackedRefs, write_packed_refs

BSEARCH = Flags().with_spec("packed_lookup=bsearch")
PARSE_ALL = Flags().with_spec("packed_lookup=parse_all")


def _names(rng: random.Random, n: int) -> list[bytes]:
    out = {b"refs/heads/main", b"refs/tags/v1"}
    while len(out) < n:
        kind = rng.choice((b"heads", b"tags", b"remotes/origin", b"remotes/fork", b"mr"))
        out.add(b"refs/%s/%s-%d" % (kind, rng.choice((b"a", b"b", b"\xc3\xbc", b"z")),
                                    rng.randrange(10 ** 4)))
    return sorted(out)


@pytest.fixture(scope="module", params=[40, 3000])     # 3000 refs: mapped, not read
def packed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[bytes]]:
    rng = random.Random(request.param)
    names = _names(rng, request.param)
    refs = []
    for i, name in enumerate(names):
        oid = rng.randbytes(20)
        refs.append((name, oid, rng.randbytes(20)) if name.startswith(b"refs/tags/") and i % 2
                    else (name, oid))
    path = tmp_path_factory.mktemp("packed") / "packed-refs"
    write_packed_refs(path, refs)
    return path, names


def _prefixes(names: list[bytes]) -> list[bytes]:
    out = {b"", b"refs/", b"refs/heads/", b"refs/tags/", b"refs/remotes/", b"refs/remotes/fork/",
           b"a", b"zzz", b"refs/heads/\xff", b"refs/nothing/", b"refs/heads/main", b"refs/mr/"}
    for name in names[::7]:
        out.add(name)                                   # a record itself
        out.add(name[:-1])                              # a proper prefix of it
        out.add(name + b"\x00")                         # between it and the next
        out.add(name[:-1] + bytes((name[-1] + 1,)))     # just past it
    out.add(names[0][:-1])
    out.add(names[-1] + b"x")
    return sorted(out)


def test_bsearch_prefix_iteration_equals_parse_all(packed: tuple[Path, list[bytes]]) -> None:
    path, names = packed
    with PackedRefs(path, 20, BSEARCH) as b, PackedRefs(path, 20, PARSE_ALL) as p:
        for prefix in _prefixes(names):
            got = list(b.iter(prefix))
            assert got == list(p.iter(prefix)), prefix
            assert [e.name for e in got] == [n for n in names if n.startswith(prefix)], prefix
        assert [e.name for e in b.iter(b"")] == names                   # the whole file
        assert list(b.iter(b"refs/nothing/")) == []


def test_bsearch_walk_parses_only_the_prefix(packed: tuple[Path, list[bytes]]) -> None:
    path, names = packed
    prefix = b"refs/remotes/fork/"
    k = sum(1 for n in names if n.startswith(prefix))
    counters.reset()
    with PackedRefs(path, 20, BSEARCH) as b:
        assert len(list(b.iter(prefix))) == k
    w = counters.snapshot()
    assert w["packed_bsearch_seeks"] == 1 and w["packed_files_parsed"] == 0
    assert k <= w["packed_lines"] <= 2 * k + 2                 # its lines (and "^" lines), one past
    counters.reset()
    with PackedRefs(path, 20, PARSE_ALL) as p:
        assert len(list(p.iter(prefix))) == k
    w = counters.snapshot()
    assert w["packed_files_parsed"] == 1 and w["packed_bsearch_seeks"] == 0
    assert w["packed_lines"] >= len(names)
    counters.reset()
