"""packed-refs: reader strategies x lookup x refname safety agree; git interop; bad input."""
from __future__ import annotations

import itertools
import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from reftable_core.errors import FormatError, LockError, RefnameError, ReftableError
from reftable_core.flags import PACKED_LOOKUPS, PACKED_READERS, REFNAME_SAFETY, Flags
from reftable_core.refs.packed import (PACKED_REFS_HEADER, PackedEntry, PackedRefs, format_packed_refs,
                                  load_packed_refs, write_packed_refs)

ALL_FLAGS = [Flags(packed_reader=r, packed_lookup=l, refname_safety=s)
             for r, l, s in itertools.product(PACKED_READERS, PACKED_LOOKUPS, REFNAME_SAFETY)]
FLAG_IDS = [f"{f.packed_reader}-{f.packed_lookup}-{f.refname_safety}" for f in ALL_FLAGS]

A = bytes(range(20))
B = bytes(range(1, 21))
C = bytes(range(2, 22))


def oid(i: int, size: int = 20) -> bytes:
    return random.Random(i).randbytes(size)


def observe(path: Path, flags: Flags, probes: list[bytes], hash_size: int = 20) -> tuple:
    """Everything a caller can see: all records, lookups, prefix walks (or the error type)."""
    try:
        with PackedRefs(path, hash_size, flags) as p:
            everything = list(p)
    except (FormatError, RefnameError):
        # a file with several defects may report a different one first
        # (git itself checks the last line before the others)
        return ("error",)
    with PackedRefs(path, hash_size, flags) as p:
        looked = [p.get(n) for n in probes]
        walks = [list(p.iter(pre)) for pre in (b"refs/heads/", b"refs/tags/", b"refs/t", b"zzz")]
    return ("ok", everything, looked, walks)


# -- basic reading -----------------------------------------------------------------

SAMPLE = (PACKED_REFS_HEADER
          + A.hex().encode() + b" refs/heads/main\n"
          + B.hex().encode() + b" refs/tags/v1\n"
          + b"^" + A.hex().encode() + b"\n"
          + C.hex().encode() + b" refs/tags/v2\n")


@pytest.mark.parametrize("flags", ALL_FLAGS, ids=FLAG_IDS)
def test_read_sample(tmp_path: Path, flags: Flags) -> None:
    path = tmp_path / "packed-refs"
    path.write_bytes(SAMPLE)
    with PackedRefs(path, 20, flags) as p:
        assert list(p) == [
            PackedEntry(b"refs/heads/main", A, None, True),
            PackedEntry(b"refs/tags/v1", B, A, True),
            PackedEntry(b"refs/tags/v2", C, None, True),
        ]
        assert p.get(b"refs/tags/v1") == PackedEntry(b"refs/tags/v1", B, A, True)
        assert p.get(b"refs/heads/does-not-exist") is None
        assert p.get(b"refs/heads") is None
        assert p.get(b"refs/tags/v") is None
        assert [e.name for e in p.iter(b"refs/tags/")] == [b"refs/tags/v1", b"refs/tags/v2"]
        assert [e.name for e in p.iter(b"refs/heads/main")] == [b"refs/heads/main"]
        assert list(p.iter(b"refs/x")) == []


@pytest.mark.parametrize("flags", ALL_FLAGS, ids=FLAG_IDS)
def test_missing_and_empty_file(tmp_path: Path, flags: Flags) -> None:
    with PackedRefs(tmp_path / "nope", 20, flags) as p:
        assert list(p) == [] and p.get(b"refs/heads/x") is None
    (tmp_path / "empty").write_bytes(b"")
    with PackedRefs(tmp_path / "empty", 20, flags) as p:
        assert list(p) == [] and p.get(b"refs/heads/x") is None
    (tmp_path / "hdr").write_bytes(PACKED_REFS_HEADER)
    with PackedRefs(tmp_path / "hdr", 20, flags) as p:
        assert list(p) == [] and list(p.iter(b"refs/")) == []


@pytest.mark.parametrize("header,main_knows,tag_knows", [
    (b"", False, False),
    (b"# pack-refs with: peeled \n", False, True),
    (b"# pack-refs with: peeled fully-peeled \n", True, True),
    (b"# pack-refs with: fully-peeled sorted \n", True, True),
])
@pytest.mark.parametrize("lookup", PACKED_LOOKUPS)
def test_peeled_traits(tmp_path: Path, header: bytes, main_knows: bool, tag_knows: bool,
                       lookup: str) -> None:
    path = tmp_path / "packed-refs"
    path.write_bytes(header + A.hex().encode() + b" refs/heads/main\n"
                     + B.hex().encode() + b" refs/tags/v1\n")
    with PackedRefs(path, 20, Flags(packed_lookup=lookup)) as p:
        assert p.get(b"refs/heads/main").knows_peeled is main_knows
        assert p.get(b"refs/tags/v1").knows_peeled is tag_knows


@pytest.mark.parametrize("flags", ALL_FLAGS, ids=FLAG_IDS)
def test_unsorted_is_sorted_on_load(tmp_path: Path, flags: Flags) -> None:
    path = tmp_path / "packed-refs"
    path.write_bytes(b"# pack-refs with: peeled fully-peeled \n"
                     + C.hex().encode() + b" refs/tags/v2\n"
                     + B.hex().encode() + b" refs/tags/v1\n"
                     + b"^" + A.hex().encode() + b"\n"
                     + A.hex().encode() + b" refs/heads/main\n")
    with PackedRefs(path, 20, flags) as p:
        assert [(e.name, e.peeled) for e in p] == [
            (b"refs/heads/main", None), (b"refs/tags/v1", A), (b"refs/tags/v2", None)]
        assert p.get(b"refs/tags/v1").peeled == A
        assert p.get(b"refs/heads/main").oid == A


@pytest.mark.parametrize("flags", ALL_FLAGS, ids=FLAG_IDS)
def test_crlf_names_are_broken_refs(tmp_path: Path, flags: Flags) -> None:
    """git keeps the CR as part of the name: the ref is broken (skipped), not an error."""
    path = tmp_path / "packed-refs"
    path.write_bytes(b"# pack-refs with: peeled fully-peeled sorted \r\n"
                     + A.hex().encode() + b" refs/heads/main\r\n")
    with PackedRefs(path, 20, flags) as p:
        (e,) = list(p)
        assert e.name == b"refs/heads/main\r" and e.broken
        assert p.get(b"refs/heads/main") is None


@pytest.mark.parametrize("flags", ALL_FLAGS, ids=FLAG_IDS)
def test_crlf_peeled_line_is_an_error(tmp_path: Path, flags: Flags) -> None:
    path = tmp_path / "packed-refs"
    path.write_bytes(A.hex().encode() + b" refs/tags/v1\r\n^" + B.hex().encode() + b"\r\n")
    with pytest.raises(FormatError, match="unexpected line"):
        with PackedRefs(path, 20, flags) as p:
            list(p)


def test_sha256(tmp_path: Path) -> None:
    a, b = oid(1, 32), oid(2, 32)
    path = tmp_path / "packed-refs"
    write_packed_refs(path, [(b"refs/tags/t", a, b), (b"refs/heads/x", b)])
    for flags in ALL_FLAGS:
        with PackedRefs(path, 32, flags) as p:
            assert list(p) == [PackedEntry(b"refs/heads/x", b, None, True),
                               PackedEntry(b"refs/tags/t", a, b, True)]
    with pytest.raises(FormatError):
        load_packed_refs(path, 20, Flags(packed_lookup="parse_all"))


# -- bad input -----------------------------------------------------------------------

BAD_FILES = {
    "no final newline": PACKED_REFS_HEADER + A.hex().encode() + b" refs/heads/main",
    "truncated line": PACKED_REFS_HEADER + A.hex().encode() + b" refs/heads/main\n" + A.hex()[:30].encode() + b"\n",
    "bad object id": PACKED_REFS_HEADER + b"g" * 40 + b" refs/heads/main\n",
    "short object id": PACKED_REFS_HEADER + b"ab" * 19 + b" refs/heads/main\n",
    "peeled before any ref": PACKED_REFS_HEADER + b"^" + A.hex().encode() + b"\n" + A.hex().encode() + b" refs/heads/x\n",
    "two peeled lines": PACKED_REFS_HEADER + A.hex().encode() + b" refs/tags/v\n^" + A.hex().encode() + b"\n^" + B.hex().encode() + b"\n",
    "bad peeled id": PACKED_REFS_HEADER + A.hex().encode() + b" refs/tags/v\n^" + b"z" * 40 + b"\n",
    "bad header": b"# something else\n" + A.hex().encode() + b" refs/heads/main\n",
    "header only, unterminated": b"# pack-refs with: peeled",
    "comment later": PACKED_REFS_HEADER + b"# pack-refs with: peeled\n",
    "no separator": PACKED_REFS_HEADER + A.hex().encode() + b"Xrefs/heads/main\n",
}


@pytest.mark.parametrize("flags", ALL_FLAGS, ids=FLAG_IDS)
@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_input_raises_format_error(tmp_path: Path, flags: Flags, case: str) -> None:
    path = tmp_path / "packed-refs"
    path.write_bytes(BAD_FILES[case])
    with pytest.raises(FormatError) as info:
        with PackedRefs(path, 20, flags) as p:
            list(p)
    assert info.value.path == str(path)
    assert info.value.offset is not None and 0 <= info.value.offset <= len(BAD_FILES[case])
    assert str(path) in str(info.value)


@pytest.mark.parametrize("flags", ALL_FLAGS, ids=FLAG_IDS)
@pytest.mark.parametrize("name", [b"refs/heads/../../config", b"refs/../HEAD", b"../x", b""])
def test_dangerous_refname(tmp_path: Path, flags: Flags, name: bytes) -> None:
    path = tmp_path / "packed-refs"
    path.write_bytes(A.hex().encode() + b" refs/heads/a\n" + B.hex().encode() + b" " + name + b"\n")
    with pytest.raises(ReftableError) as info:       # RefnameError (or FormatError for "")
        with PackedRefs(path, 20, flags) as p:
            list(p)
    assert isinstance(info.value, (RefnameError, FormatError))
    if name:
        assert isinstance(info.value, RefnameError)


@pytest.mark.parametrize("flags", ALL_FLAGS, ids=FLAG_IDS)
def test_lookup_does_not_parse_the_rest(tmp_path: Path, flags: Flags) -> None:
    """Like git, a single lookup only looks at the records it visits; iteration
    reports the bad line when it reaches it (parse_all too: the flags change
    the algorithm, never the answer)."""
    path = tmp_path / "packed-refs"
    path.write_bytes(PACKED_REFS_HEADER + A.hex().encode() + b" refs/heads/a\n"
                     + b"g" * 40 + b" refs/heads/b\n" + C.hex().encode() + b" refs/heads/c\n")
    with PackedRefs(path, 20, flags) as p:
        assert p.get(b"refs/heads/c").oid == C
        it = iter(p)
        assert next(it).name == b"refs/heads/a"
        with pytest.raises(FormatError, match="^unexpected line in .*: g{40} refs/heads/b$"):
            next(it)


def test_stale_lock_is_lock_error_and_keeps_data(tmp_path: Path) -> None:
    path = tmp_path / "packed-refs"
    write_packed_refs(path, [(b"refs/heads/a", A)])
    before = path.read_bytes()
    (tmp_path / "packed-refs.lock").write_bytes(b"stale")
    with pytest.raises(LockError, match="packed-refs.lock"):
        write_packed_refs(path, [(b"refs/heads/b", B)])
    assert path.read_bytes() == before
    assert (tmp_path / "packed-refs.lock").read_bytes() == b"stale"


# -- writer --------------------------------------------------------------------------

def test_writer_format(tmp_path: Path) -> None:
    data = format_packed_refs([(b"refs/tags/v1", B, A), (b"refs/heads/main", A)])
    assert data == (PACKED_REFS_HEADER + A.hex().encode() + b" refs/heads/main\n"
                    + B.hex().encode() + b" refs/tags/v1\n^" + A.hex().encode() + b"\n")
    assert format_packed_refs([(b"refs/tags/v1", B.hex(), A.hex()), (b"refs/heads/main", A)]) == data
    assert format_packed_refs([(b"refs/tags/v1", B), (b"refs/heads/main", A)],
                              peeled={b"refs/tags/v1": A}) == data
    entries = load_packed_refs(_write(tmp_path, data))
    assert format_packed_refs(entries) == data


def _write(tmp_path: Path, data: bytes) -> Path:
    p = tmp_path / "pr"
    p.write_bytes(data)
    return p


# -- every flag gives the same answers (property test) -------------------------------

_NAME_PARTS = st.sampled_from([b"refs/heads/", b"refs/tags/", b"refs/t", b"a", b"b", b"/", b"-",
                               b"x.y", b"..", b"z", b"refs/heads/a/"])


@st.composite
def packed_files(draw: st.DrawFn) -> tuple[bytes, list[bytes]]:
    names = draw(st.lists(st.lists(_NAME_PARTS, min_size=1, max_size=4).map(b"".join),
                          max_size=12, unique=True))
    names = [n for n in names if n and b"\n" not in n]
    recs = []
    for n in names:
        o = oid(draw(st.integers(0, 1000)))
        p = oid(draw(st.integers(0, 1000))) if draw(st.booleans()) else None
        recs.append((n, o, p))
    unsorted = draw(st.booleans())
    if unsorted:
        recs = draw(st.permutations(recs))
    else:
        recs.sort()
    traits = draw(st.sampled_from([None, b"", b"peeled ", b"peeled fully-peeled ", b"fully-peeled "]))
    if traits is not None and not unsorted and draw(st.booleans()):
        traits += b"sorted "
    eol = draw(st.sampled_from([b"\n", b"\n", b"\r\n"]))
    upper = draw(st.booleans())
    lines = []
    if traits is not None:
        lines.append(b"# pack-refs with: " + traits + eol)
    for n, o, p in recs:
        h = o.hex().encode()
        lines.append((h.upper() if upper else h) + b" " + n + eol)
        if p is not None:
            lines.append(b"^" + p.hex().encode() + eol)
    data = b"".join(lines)
    if data and draw(st.integers(0, 5)) == 0:
        data = data[:-1]                                     # drop the final newline
    probes = names[:4] + [b"refs/heads/does-not-exist", b"refs/heads/a", b"refs/tags/"]
    return data, probes


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=packed_files())
def test_all_flags_agree(tmp_path: Path, case: tuple[bytes, list[bytes]]) -> None:
    data, probes = case
    path = tmp_path / "packed-refs"
    path.write_bytes(data)
    results = {f: observe(path, f, probes) for f in ALL_FLAGS}
    full = {f: r[:2] for f, r in results.items()}
    # every flag: the same records (or the same error)
    assert len({repr(r) for r in full.values()}) == 1, full
    # lookups and prefix walks too, whenever the file is valid
    if next(iter(results.values()))[0] == "ok":
        assert len({repr(r) for r in results.values()}) == 1
        everything = next(iter(results.values()))[1]
        assert [e.name for e in everything] == sorted(e.name for e in everything)


def test_all_flags_agree_larger_random(tmp_path: Path) -> None:
    rng = random.Random(7)
    refs = []
    for i in range(3000):
        kind = rng.choice([b"refs/heads/", b"refs/tags/", b"refs/remotes/origin/", b"refs/pull/"])
        refs.append((kind + b"n%05d/%d" % (rng.randrange(10**5), i), oid(i),
                     oid(-i) if kind == b"refs/tags/" and i % 2 else None))
    path = tmp_path / "packed-refs"
    write_packed_refs(path, refs)
    probes = [r[0] for r in rng.sample(refs, 50)] + [b"refs/heads/does-not-exist", b"refs/pull/n"]
    base = observe(path, ALL_FLAGS[-1], probes)
    assert base[0] == "ok" and len(base[1]) == 3000
    for f in ALL_FLAGS:
        if f.packed_reader == "fgetc" and f.refname_safety != "normalize":
            continue                         # slowest reader: one combination is enough
        assert observe(path, f, probes) == base, f
    # the same refs in random order, without the sorted trait
    shuffled = refs[:]
    rng.shuffle(shuffled)
    path.write_bytes(format_packed_refs(shuffled, header=b"# pack-refs with: peeled fully-peeled \n",
                                        sort=False))
    for f in (ALL_FLAGS[0], ALL_FLAGS[-1], Flags(packed_lookup="parse_all")):
        assert observe(path, f, probes) == base


# -- interop with git -----------------------------------------------------------------

def _setup_repo(git, make_repo) -> Path:
    repo = make_repo("r", ref_format="files")
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=repo)
    git.run(["commit", "-q", "--allow-empty", "-m", "two"], cwd=repo)
    for i in range(20):
        git.run(["branch", f"topic/b{i:02d}", "HEAD~1" if i % 2 else "HEAD"], cwd=repo)
    git.run(["tag", "-a", "-m", "annotated", "v1.0", "HEAD~1"], cwd=repo)
    git.run(["tag", "-a", "-m", "annotated", "v2.0"], cwd=repo)
    git.run(["tag", "light", "HEAD~1"], cwd=repo)
    git.run(["pack-refs", "--all"], cwd=repo)
    return repo


def _git_packed_view(git, repo: Path) -> list[tuple[bytes, bytes, bytes | None]]:
    out = git.out(["show-ref", "-d"], cwd=repo)
    rows: list[list] = []
    for line in out.splitlines():
        h, name = line.split(b" ", 1)
        if name.endswith(b"^{}"):
            rows[-1][2] = bytes.fromhex(h.decode())
        else:
            rows.append([name, bytes.fromhex(h.decode()), None])
    return [tuple(r) for r in rows]


@pytest.mark.parametrize("flags", [Flags(), Flags(packed_lookup="parse_all", packed_reader="getdelim"),
                                   Flags(packed_lookup="parse_all", packed_reader="fgetc",
                                         refname_safety="normalize")])
def test_reads_git_pack_refs_output(git, make_repo, flags: Flags) -> None:
    repo = _setup_repo(git, make_repo)
    path = repo / ".git" / "packed-refs"
    with PackedRefs(path, 20, flags) as p:
        ours = [(e.name, e.oid, e.peeled) for e in p]
    assert ours == _git_packed_view(git, repo)
    assert any(pe for _, _, pe in ours)


def test_writer_matches_git_pack_refs_bytes(git, make_repo, tmp_path: Path) -> None:
    repo = _setup_repo(git, make_repo)
    path = repo / ".git" / "packed-refs"
    theirs = path.read_bytes()
    entries = load_packed_refs(path)
    out = tmp_path / "ours"
    write_packed_refs(out, list(reversed(entries)))
    assert out.read_bytes() == theirs


def test_git_reads_our_packed_refs(git, make_repo) -> None:
    repo = _setup_repo(git, make_repo)
    expect = git.out(["show-ref", "-d"], cwd=repo)
    path = repo / ".git" / "packed-refs"
    entries = load_packed_refs(path)
    path.unlink()
    write_packed_refs(path, [(e.name, e.oid, e.peeled) for e in entries])
    assert git.out(["show-ref", "-d"], cwd=repo) == expect
    git.run(["fsck", "--strict"], cwd=repo)
    assert not os.path.exists(str(path) + ".lock")
