"""odb.revision against `git rev-parse`: full and abbreviated ids, git's dwim rules,
~N ^N ^{} ^{commit} ^{tree}; unknown names, bad suffixes and ambiguous prefixes
give None; the object store is only asked for when the revision needs it."""
from __future__ import annotations

import hashlib
import itertools
import random
import re
import zlib
from pathlib import Path

import pytest
from reftable_core.errors import FormatError, NotExistError, ReftableError
from reftable_core.odb.revision import (
    DWIM_RULES,
    _suffix_start,
    apply_suffixes,
    commit_date,
    parse_commit,
    resolve_range,
    resolve_revision,
)
from reftable_core.odb.store import ObjectStore, open_object_store
from reftable_core.odb.walk import resolve_start

from gitbin import GitRunner, hermetic_env


@pytest.fixture(scope="module")
def mgit(git_path: str, tmp_path_factory: pytest.TempPathFactory) -> GitRunner:
    return GitRunner(git_path, hermetic_env(tmp_path_factory.mktemp("home")))


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def repo(request, mgit: GitRunner, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main: c1 - c2 - c3 - m (merge of side: c2 - s1) - c5; an annotated tag of c3,
    a tag of that tag, a lightweight tag, a remote with its HEAD symref."""
    d = tmp_path_factory.mktemp(f"rev-{request.param}") / "repo"
    mgit.run(["init", "-q", f"--object-format={request.param}", "-b", "main", str(d)])
    run = lambda *a: mgit.run(list(a), cwd=d)
    for i in (1, 2):
        (d / "f").write_text(f"{i}\n")
        run("add", "f")
        run("commit", "-q", "-m", f"c{i}")
    run("checkout", "-q", "-b", "side")
    (d / "g").write_text("side\n")
    run("add", "g")
    run("commit", "-q", "-m", "s1")
    run("checkout", "-q", "main")
    (d / "f").write_text("3\n")
    run("commit", "-q", "-am", "c3")
    run("tag", "-a", "-m", "v1", "v1")
    run("tag", "-a", "-m", "v1-outer", "v1-outer", "v1")
    run("merge", "-q", "--no-ff", "-m", "m", "side")
    (d / "f").write_text("5\n")
    run("commit", "-q", "-am", "c5")
    run("tag", "light", "main~1")
    run("update-ref", "refs/remotes/origin/main", "main~2")
    run("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
    return d


def _refs(mgit: GitRunner, repo: Path) -> dict[bytes, bytes]:
    """Every ref (and HEAD) -> the id it resolves to, as git sees them."""
    out = mgit.out(["for-each-ref", "--format=%(refname) %(objectname)"], cwd=repo).decode()
    refs = {}
    for line in out.splitlines():
        name, oid = line.split()
        refs[name.encode()] = bytes.fromhex(oid)
    refs[b"HEAD"] = refs[b"refs/heads/main"]
    return refs


def _rev_parse(mgit: GitRunner, repo: Path, rev: str) -> bytes:
    return bytes.fromhex(mgit.out(["rev-parse", "--verify", "-q", rev], cwd=repo).decode().strip())


REVS = ["HEAD", "main", "heads/main", "refs/heads/main", "side", "v1", "tags/v1", "v1-outer",
        "light", "origin", "origin/main", "main~0", "main~", "main~1", "main~2", "main~~",
        "main~4", "main^", "main^1", "main^0", "main~1^2~1", "main~1^2", "v1^{}",
        "v1-outer^{}", "v1^{commit}", "v1-outer^{commit}", "main^{tree}", "v1^{tree}",
        "v1~1", "v1^", "light^2", "HEAD~1^{tree}", "@", "@~1", "@^{tree}"]


@pytest.mark.parametrize("rev", REVS)
def test_matches_git_rev_parse(mgit: GitRunner, repo: Path, rev: str) -> None:
    refs = _refs(mgit, repo)
    with open_object_store(repo / ".git") as store:
        got = resolve_revision(rev.encode(), refs.get, lambda: store, store.hash_len)
        assert got == _rev_parse(mgit, repo, rev)


def test_full_and_abbreviated_ids(mgit: GitRunner, repo: Path) -> None:
    refs = _refs(mgit, repo)
    with open_object_store(repo / ".git") as store:
        hl = store.hash_len
        oids = sorted(o.hex() for o in store.iter_oids())
        for rev in ("main", "main~2", "side", "v1"):
            full = _rev_parse(mgit, repo, rev).hex()
            assert resolve_revision(full.encode(), {}.get, lambda: store, hl) == bytes.fromhex(full)
            short = mgit.out(["rev-parse", "--short=4", rev], cwd=repo).decode().strip()
            assert resolve_revision(short.encode(), {}.get, lambda: store, hl) == bytes.fromhex(full)
            assert resolve_revision(short.upper().encode(), {}.get, lambda: store, hl) \
                == bytes.fromhex(full)
            assert resolve_revision(short.encode() + b"~0", refs.get, lambda: store, hl) \
                == bytes.fromhex(full)
        assert resolve_revision(oids[0][:3].encode(), {}.get, lambda: store, hl) is None


def _two_blobs_sharing_4_hex_digits(objdir: Path) -> tuple[str, str]:
    """Write the first two loose blobs (contents "0", "1", ...) whose ids agree in
    their first 4 hex digits and differ in the 5th; their ids."""
    seen: dict[str, tuple[str, bytes]] = {}
    for i in itertools.count():
        obj = b"blob %d\0%d" % (len(str(i)), i)
        h = hashlib.sha1(obj).hexdigest()
        other = seen.setdefault(h[:4], (h, obj))
        if other[0] != h and other[0][4] != h[4]:
            break
    for hexid, data in (other, (h, obj)):
        (objdir / hexid[:2]).mkdir(parents=True, exist_ok=True)
        (objdir / hexid[:2] / hexid[2:]).write_bytes(zlib.compress(data))
    return other[0], h


def test_ambiguous_abbreviation(tmp_path: Path) -> None:
    a, b = _two_blobs_sharing_4_hex_digits(tmp_path / "objects")
    neither = next(a[:4] + d for d in "0123456789abcdef" if d not in (a[4], b[4]))
    with open_object_store(tmp_path / "objects", "sha1") as store:
        assert sorted(o.hex() for o in store.iter_oids()) == sorted([a, b])
        assert resolve_revision(a[:4].encode(), {}.get, lambda: store, 20) is None
        assert resolve_revision(a[:5].encode(), {}.get, lambda: store, 20) == bytes.fromhex(a)
        assert resolve_revision(b[:5].upper().encode(), {}.get, lambda: store, 20) \
            == bytes.fromhex(b)
        assert resolve_revision(neither.encode(), {}.get, lambda: store, 20) is None
        # a ref name wins over an abbreviated id
        refs = {b"refs/heads/" + a[:5].encode(): bytes.fromhex(b)}
        assert resolve_revision(a[:5].encode(), refs.get, lambda: store, 20) == bytes.fromhex(b)


@pytest.mark.parametrize("rev", ["nope", "main~9", "main^2", "main~1^3", "v1^{blob}",
                                 "main^{tree}~1", "light^{tree}^{commit}", "zzzz", "~1",
                                 "main^{}x"])
def test_unresolvable_gives_none(mgit: GitRunner, repo: Path, rev: str) -> None:
    refs = _refs(mgit, repo)
    with open_object_store(repo / ".git") as store:
        assert resolve_revision(rev.encode(), refs.get, lambda: store, store.hash_len) is None


def test_dwim_rules_order() -> None:
    """A name is tried as each rule in git's order; the first hit wins."""
    asked: list[bytes] = []
    table = {b"refs/tags/x": b"\1" * 20, b"refs/heads/x": b"\2" * 20,
             b"refs/remotes/r/HEAD": b"\3" * 20}

    def resolve(name: bytes) -> bytes | None:
        asked.append(name)
        return table.get(name)

    def no_objects() -> ObjectStore | None:
        raise AssertionError("a ref name must not open the object store")

    assert resolve_revision(b"x", resolve, no_objects, 20) == b"\1" * 20
    assert asked == [b"x", b"refs/x", b"refs/tags/x"]
    assert resolve_revision(b"r", resolve, no_objects, 20) == b"\3" * 20
    assert asked[3:] == [rule % b"r" for rule in DWIM_RULES]
    assert resolve_revision(b"ab" * 20, resolve, no_objects, 20) == bytes.fromhex("ab" * 20)
    assert resolve_revision(b"", resolve, no_objects, 20) is None


def test_no_object_store() -> None:
    """Without an object store, abbreviated ids and suffixes resolve to nothing."""
    refs = {b"refs/heads/m": b"\7" * 20}
    assert resolve_revision(b"m~1", refs.get, lambda: None, 20) is None
    assert resolve_revision(b"abcdef", refs.get, lambda: None, 20) is None
    with pytest.raises(ReftableError):
        apply_suffixes(None, b"\7" * 20, b"^{}")


def test_parse_commit() -> None:
    t, p1, p2 = "1" * 40, "2" * 40, "3" * 40
    data = (f"tree {t}\nparent {p1}\nparent {p2}\nauthor A <a> 0 +0000\n\nmsg\n"
            f"parent {'4' * 40}\n").encode()
    assert parse_commit(data) == (bytes.fromhex(t), [bytes.fromhex(p1), bytes.fromhex(p2)])
    assert parse_commit(f"tree {t}\n\n".encode()) == (bytes.fromhex(t), [])
    with pytest.raises(ReftableError):
        parse_commit(b"author A <a> 0 +0000\n\n")


def test_walk_start_from_a_resolver(mgit: GitRunner, repo: Path) -> None:
    """walk.resolve_start: None is HEAD, a raw id is itself, unknown names raise."""
    refs = _refs(mgit, repo)
    with open_object_store(repo / ".git") as store:
        head = refs[b"HEAD"]
        assert resolve_start(store, None, refs.get) == head
        assert resolve_start(store, head, refs.get) == head
        assert resolve_start(store, "main~1^2", refs.get) == _rev_parse(mgit, repo, "main~1^2")
        assert resolve_start(store, b"v1^{}", refs.get) == _rev_parse(mgit, repo, "v1^{}")
        with pytest.raises(NotExistError):
            resolve_start(store, "nope", refs.get)


def test_parse_commit_rejects_bad_ids_and_commit_date() -> None:
    for line in (b"tree zzzz", b"tree " + b"1" * 39 + b"Z", b"tree " + b"1" * 38 + "é".encode(),
                 b"tree " + b"1" * 41):
        with pytest.raises(FormatError, match="bad tree pointer"):
            parse_commit(line + b"\n\n")
    with pytest.raises(FormatError, match="bad parent pointer"):
        parse_commit(b"tree " + b"1" * 40 + b"\nparent 12\n\n")
    assert parse_commit(b"tree " + b"A" * 40 + b"\n\n")[0] == b"\xaa" * 20
    assert commit_date(b"tree x\ncommitter C <c@e> 1700000123 +0100\n\nm") == 1700000123
    assert commit_date(b"tree x\ncommitter C <c@e> junk\n\n") == 0
    assert commit_date(b"tree x\n\n") == 0


def test_resolve_range(mgit: GitRunner, repo: Path) -> None:
    refs = _refs(mgit, repo)
    with open_object_store(repo / ".git") as store:
        def rr(*args: bytes) -> tuple[list[bytes], list[bytes]]:
            return resolve_range(list(args), refs.get, lambda: store, store.hash_len)
        main, main1 = _rev_parse(mgit, repo, "main"), _rev_parse(mgit, repo, "main~1")
        assert rr() == ([refs[b"HEAD"]], [])
        assert rr(b"main~1..main") == ([main], [main1])
        assert rr(b"main~1..") == ([refs[b"HEAD"]], [main1])
        assert rr(b"^main~1", b"main", b"side") == ([main, _rev_parse(mgit, repo, "side")], [main1])
        for bad in (b"nope", b"main..nope", b"main...side", b"^nope"):
            with pytest.raises(NotExistError, match="unknown revision"):
                rr(bad)


def test_suffix_start_finds_the_run_git_parses_from_the_end() -> None:
    """_suffix_start scans back from the end (git's get_oid_1: a "}" back to its "^{",
    else the digits back to a "~" or "^"); its answer is where the leftmost run of
    ~N, ^N and ^{[a-z]*} reaching the end starts, as a regex search would find it."""
    run = re.compile(rb"(?:~\d*|\^\d*|\^\{[a-z]*\})+\Z")
    rng = random.Random(7)
    alphabet = [b"a", b"Z", b"0", b"7", b"~", b"^", b"{", b"}", b"-", b"/"]
    for length in range(10):
        for _ in range(3000):
            text = b"".join(rng.choice(alphabet) for _ in range(length))
            m = run.search(text)
            assert _suffix_start(text) == (m.start() if m else len(text)), text
    assert _suffix_start(b"HEAD~2^{commit}") == 4
    assert _suffix_start(b"v1.0^{tag") == 9           # no closing brace: no suffix
    assert _suffix_start(b"f" * 40) == 40
    assert _suffix_start(b"~2") == 0
