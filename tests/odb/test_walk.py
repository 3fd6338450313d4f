"""odb walks against git: log-raw == `git log --raw --no-abbrev --format=%H --first-parent
-m --no-renames`, log-S finds the commits of `git log -S<s> --format=%H --first-parent
--no-renames`, and every delta-cache flag value gives identical output."""
from __future__ import annotations

import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reftable_core.flags import Flags, baseline
from reftable_core.odb.store import open_object_store
from reftable_core.odb.walk import format_raw, quote_path, walk_log_raw, walk_log_S

from lab.cli import main as cli_main
from reftable_core.builtin.odb import log_raw, log_S, walk_start
from gitbin import GitRunner, hermetic_env
from tests.helpers.labrun import run_lab
from tests.helpers.odb import make_history

NEEDLES = ["foo bar", "omega", "thud\nalpha", "zeta zeta"]


@pytest.fixture(scope="module")
def mgit(git_path: str, tmp_path_factory: pytest.TempPathFactory) -> GitRunner:
    return GitRunner(git_path, hermetic_env(tmp_path_factory.mktemp("home")))


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def repo(request, mgit: GitRunner, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp(f"walk-{request.param}") / "repo.git"
    return make_history(d, 150, 120, seed=11, object_format=request.param, merges_every=25,
                        git=mgit)


def render(gitdir: Path, flags: Flags | None = None, ref: str = "main") -> str:
    out = []
    hl = 32 if "sha256" in str(gitdir) else 20
    for oid, changes in log_raw(gitdir, ref, flags):
        out.append(oid.hex() + "\n")
        if changes:
            out.append("\n" + "".join(format_raw(c, hl) + "\n" for c in changes))
    return "".join(out)


def git_raw(mgit: GitRunner, gitdir: Path, ref: str = "main") -> str:
    return mgit.out(["log", "--raw", "--no-abbrev", "--format=%H", "--first-parent", "-m",
                     "--no-renames", ref], cwd=gitdir).decode()


def git_S(mgit: GitRunner, gitdir: Path, needle: str) -> list[str]:
    return mgit.out(["log", f"-S{needle}", "--format=%H", "--first-parent", "--no-renames",
                     "main"], cwd=gitdir).decode().split()


def test_log_raw_equals_git(mgit: GitRunner, repo: Path) -> None:
    expect = git_raw(mgit, repo)
    assert render(repo) == expect
    assert expect.count("\t") > 300 and " D\t" in expect and " A\t" in expect


def test_log_raw_from_older_commit_and_hex(mgit: GitRunner, repo: Path) -> None:
    h = mgit.out(["rev-parse", "main~30"], cwd=repo).decode().strip()
    assert render(repo, ref=h) == git_raw(mgit, repo, h)


@pytest.mark.parametrize("needle", NEEDLES)
def test_log_S_equals_git(mgit: GitRunner, repo: Path, needle: str) -> None:
    got = [o.hex() for o in log_S(repo, "main", needle)]
    assert got == git_S(mgit, repo, needle)


def test_some_needle_matches(mgit: GitRunner, repo: Path) -> None:
    assert any(git_S(mgit, repo, n) for n in NEEDLES)


def test_cli(mgit: GitRunner, repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["odb", "log-raw", "--git-dir", str(repo), "--stats", "main"]) == 0
    cap = capsys.readouterr()
    assert cap.out == git_raw(mgit, repo)
    assert "hits=" in cap.err and "evictions=" in cap.err
    assert cli_main(["odb", "log-S", "--git-dir", str(repo), "--baseline", "omega"]) == 0
    assert capsys.readouterr().out.split() == git_S(mgit, repo, "omega")


def test_resolve_start(mgit: GitRunner, repo: Path) -> None:
    main = bytes.fromhex(mgit.out(["rev-parse", "main"], cwd=repo).decode().strip())
    with open_object_store(repo) as store:
        for name in ("HEAD", "main", "refs/heads/main", "heads/main"):
            assert walk_start(repo, name, store) == main
        mgit.run(["pack-refs", "--all"], cwd=repo)
        assert walk_start(repo, "main", store) == main


@pytest.fixture(scope="module")
def small(mgit: GitRunner, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("walk-small") / "repo.git"
    return make_history(d, 60, 60, seed=3, merges_every=20, git=mgit)


FLAG_GRID = [
    Flags(), baseline(),
    Flags(delta_cache_index="fixed:1", delta_cache_lru="blob_first", delta_cache_limit=0),
    Flags(delta_cache_index="fixed:16384", delta_cache_lru="single", delta_cache_limit=1),
    Flags(delta_cache_index="hashmap", delta_cache_lru="blob_first", delta_cache_limit=4096),
    Flags(delta_cache_index="fixed:7", delta_cache_lru="single", delta_cache_limit=50_000),
]


def _walk_all(repo: Path, flags: Flags) -> tuple[list, list, dict]:
    with open_object_store(repo, None, flags) as store:
        start = walk_start(repo, "main", store, flags)
        raw = list(walk_log_raw(store, start))
        s = [list(walk_log_S(store, start, b"omega"))]
        return raw, s, store.stats.as_dict()


def test_flag_grid_identical(repo: Path, small: Path) -> None:
    repo = small if "sha256" not in str(repo) else repo
    ref = _walk_all(repo, Flags())
    for f in FLAG_GRID:
        got = _walk_all(repo, f)
        assert got[:2] == ref[:2], f
        st_ = got[2]
        if f.delta_cache_limit <= 1:
            assert st_["evictions"] + st_["collisions"] > 0
        assert st_["entries"] >= 0 and st_["misses"] >= 0


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(index=st.one_of(st.just("hashmap"), st.integers(1, 16384).map(lambda n: f"fixed:{n}")),
       lru=st.sampled_from(["single", "blob_first"]),
       limit=st.sampled_from([0, 1, 100, 2048, 30_000, 200_000, 96 << 20]))
def test_flags_property(small: Path, index: str, lru: str, limit: int) -> None:
    repo = small
    f = Flags(delta_cache_index=index, delta_cache_lru=lru, delta_cache_limit=limit)
    ref = _ref_cache.get(repo)
    if ref is None:
        ref = _ref_cache[repo] = _walk_all(repo, Flags())[:2]
    assert _walk_all(repo, f)[:2] == ref


_ref_cache: dict[Path, tuple] = {}


def test_edge_cases_equal_git(mgit: GitRunner, tmp_path: Path) -> None:
    """Type change (symlink <-> file: T), file -> directory (D + A), exec bit, gitlink,
    an empty commit, deletions of whole directories; log-raw and log-S against git."""
    d = tmp_path / "edge.git"
    mgit.run(["init", "-q", "--bare", "-b", "main", str(d)])
    sub = "1" * 40

    def commit(n: int, body: bytes) -> bytes:
        return (b"commit refs/heads/main\ncommitter C <c@e> %d +0000\ndata 2\nc%d\n"
                % (1700000000 + n, n) + body + b"\n")

    def data(x: bytes) -> bytes:
        return b"data %d\n" % len(x) + x + b"\n"

    stream = b"".join([
        commit(0, b"M 100644 inline a\n" + data(b"foo\n") + b"M 120000 inline l\n" + data(b"a")
               + b"M 100644 inline x/y/z\n" + data(b"foo foo\n") + b"M 100644 inline b\n" + data(b"b\n")),
        commit(1, b"M 100644 inline l\n" + data(b"foo target\n")),            # symlink -> file: T
        commit(2, b"M 100755 inline a\n" + data(b"foo\n")),                   # exec bit only
        commit(3, b""),                                                       # empty commit
        commit(4, b"D b\nM 100644 inline b/c\n" + data(b"foo\n")),            # file -> dir
        commit(5, b"D x\nM 160000 " + sub.encode() + b" sm\n"),               # drop a dir, gitlink
        commit(6, b"M 120000 inline b/c\n" + data(b"a")),                     # file -> symlink
    ])
    mgit.run(["fast-import", "--quiet"], cwd=d, input=stream)
    mgit.run(["repack", "-adq"], cwd=d)
    assert render(d) == git_raw(mgit, d)
    for needle in ("foo", "a", "target"):
        got = [o.hex() for o in log_S(d, "main", needle)]
        assert got == git_S(mgit, d, needle), needle


# -- git-exact on hostile and real input: quoting, ranges, loops, depth -------------

def _cli(gitdir: Path, argv: list[str]) -> tuple[int, bytes, bytes]:
    return run_lab(["odb", *argv[:1], "--git-dir", str(gitdir), *argv[1:]])


def _git_log(mgit: GitRunner, gitdir: Path, argv: list[str]) -> tuple[int, bytes, bytes]:
    """git's log for the lab's argv (log-raw / log-S), stderr cut to its fatal line
    (git's "error: bogus commit object" before "fatal: bad object" is not repeated)."""
    base = (["log", "--raw", "--no-abbrev", "--format=%H", "--first-parent", "-m", "--no-renames"]
            if argv[0] == "log-raw" else
            ["log", f"-S{argv[1]}", "--format=%H", "--first-parent", "--no-renames"])
    rest = argv[1:] if argv[0] == "log-raw" else argv[2:]
    g = mgit.run([*base, *rest], cwd=gitdir, check=False)
    lines = g.stderr.splitlines()
    first = next((ln for ln in lines if ln.startswith(b"fatal: ")), lines[0] if lines else b"")
    return g.returncode, g.stdout, first + b"\n" if first else b""


NAMES = [b"caf\xc3\xa9", b"tab\there", b"new\nline", b'dq"x', b"back\\slash", b"bell\x07",
         b"del\x7f", b"latin1-\xe9", b"plain name", b"\xe2\x98\x83/snow"]


@pytest.mark.parametrize("quote", [None, "true", "false"])
def test_log_raw_quotes_paths_like_git(mgit: GitRunner, tmp_path: Path, quote: str | None) -> None:
    d = tmp_path / "q.git"
    mgit.run(["init", "-q", "--bare", "-b", "main", str(d)])
    if quote is not None:
        mgit.run(["config", "core.quotePath", quote], cwd=d)
    body = b"".join(b"M 100644 inline %s\ndata 2\nx\n\n" % (b'"' + n.replace(b"\\", b"\\\\")
                    .replace(b"\n", b"\\n").replace(b"\t", b"\\t").replace(b'"', b'\\"') + b'"')
                    for n in NAMES)
    mgit.run(["fast-import", "--quiet"], cwd=d, input=b"commit refs/heads/main\ncommitter C <c@e> "
             b"1700000000 +0000\ndata 2\nc\n" + body + b"commit refs/heads/main\ncommitter C <c@e> "
             b"1700000001 +0000\ndata 2\nd\nD \"caf\\303\\251\"\n\n")
    got = _cli(d, ["log-raw", "main"])
    assert got == _git_log(mgit, d, ["log-raw", "main"])
    assert (b'"caf\\303\\251"' in got[1]) == (quote != "false") and b'"tab\\there"' in got[1]


@pytest.fixture(scope="module")
def forked(mgit: GitRunner, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main: 8 commits, side forks from main~5 with 4 commits (dates interleaved),
    then main merges side; release tagged at main~3."""
    d = tmp_path_factory.mktemp("forked") / "repo.git"
    mgit.run(["init", "-q", "--bare", "-b", "main", str(d)])

    def commit(ref: str, n: int, date: int, extra: bytes = b"") -> bytes:
        body = b"f%d\n" % n
        return (b"commit %s\ncommitter C <c@e> %d +0000\ndata 3\nc%d\n" % (ref.encode(), date,
                n % 10) + extra + b"M 100644 inline f%d\ndata %d\n%s\n" % (n, len(body), body))
    s = [commit("refs/heads/main", i, 1700000000 + 10 * i) for i in range(3)]
    s.append(b"reset refs/heads/side\nfrom refs/heads/main\n\n")
    for i in range(4):
        s.append(commit("refs/heads/side", 100 + i, 1700000025 + 10 * i))
        s.append(commit("refs/heads/main", 3 + i, 1700000030 + 10 * i))
    s.append(commit("refs/heads/main", 50, 1700000200, b"merge refs/heads/side\n"))
    mgit.run(["fast-import", "--quiet"], cwd=d, input=b"".join(s))
    mgit.run(["tag", "release", "main~3"], cwd=d)
    return d


RANGES = [["main"], ["side", "main"], ["main", "side"], ["release..main"], ["main..side"],
          ["^release", "main", "side"], ["side..main"], ["^side", "main"], ["main", "-n", "3"],
          ["--max-count=2", "main", "side"], ["-n", "0", "main"], ["-n1", "release..main"],
          ["main..main"], ["..main"], ["main~6..main"], ["nope"], ["main..nope"], ["side^2"]]


@pytest.mark.parametrize("argv", RANGES, ids=" ".join)
def test_log_raw_ranges_equal_git(mgit: GitRunner, forked: Path, argv: list[str]) -> None:
    assert _cli(forked, ["log-raw", *argv]) == _git_log(mgit, forked, ["log-raw", *argv])


@pytest.mark.parametrize("argv", [["f1", "main"], ["f101", "side", "main"], ["c", "main", "-n", "1"],
                                  ["f", "release..main"], ["f5", "^side", "main"]],
                         ids=" ".join)
def test_log_S_ranges_equal_git(mgit: GitRunner, forked: Path, argv: list[str]) -> None:
    assert _cli(forked, ["log-S", *argv]) == _git_log(mgit, forked, ["log-S", *argv])


def _loose(gitdir: Path, name: bytes, typ: bytes, body: bytes) -> None:
    """A loose object stored under a chosen id (git reads it without checking the hash)."""
    hx = name.hex()
    p = gitdir / "objects" / hx[:2] / hx[2:]
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(zlib.compress(b"%s %d\0%s" % (typ, len(body), body)))


EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def test_hostile_commits_and_trees_like_git(mgit: GitRunner, tmp_path: Path) -> None:
    d = tmp_path / "h.git"
    mgit.run(["init", "-q", "--bare", "-b", "main", str(d)])
    mgit.run(["hash-object", "-t", "tree", "-w", "--stdin"], cwd=d, input=b"")
    self_parent = b"\x22" * 20
    _loose(d, self_parent, b"commit", b"tree %s\nparent %s\nauthor a <b> 1 +0000\ncommitter a <b> "
           b"1 +0000\n\nx\n" % (EMPTY_TREE.encode(), self_parent.hex().encode()))
    self_tree = b"\x11" * 20
    _loose(d, self_tree, b"tree", b"40000 d\0" + self_tree)
    loop = mgit.out(["commit-tree", "-m", "loop", self_tree.hex()], cwd=d).strip().decode()
    blob = mgit.out(["hash-object", "-w", "--stdin"], cwd=d, input=b"x\n").strip().decode()
    deep = {}
    t = mgit.out(["mktree"], cwd=d, input=f"100644 blob {blob}\tf\n".encode()).strip().decode()
    for depth in range(1, 2051):
        t = mgit.out(["hash-object", "-t", "tree", "-w", "--stdin"], cwd=d,
                     input=b"40000 d\0" + bytes.fromhex(t)).strip().decode()
        if depth in (2048, 2049, 2050):
            deep[depth] = mgit.out(["commit-tree", "-m", "deep", t], cwd=d).strip().decode()
    bad = []
    for tree_line in (b"tree zzzz", b"tree " + EMPTY_TREE[:-1].encode() + b"Z",
                      b"tree " + EMPTY_TREE[:-2].encode() + "é".encode()):
        bad.append(mgit.out(["hash-object", "-t", "commit", "-w", "--literally", "--stdin"], cwd=d,
                            input=tree_line + b"\nauthor a <b> 1 +0000\ncommitter a <b> 1 +0000\n"
                                              b"\nx\n").strip().decode())
    cases = [[self_parent.hex()], [loop], *([c] for c in deep.values()), *([c] for c in bad),
             [deep[2048], loop]]
    for argv in cases:
        got = _cli(d, ["log-raw", *argv])
        assert got == _git_log(mgit, d, ["log-raw", *argv]), argv
        assert b"Traceback" not in got[2]
    assert _cli(d, ["log-raw", self_parent.hex()])[1] == self_parent.hex().encode() + b"\n"
    assert _cli(d, ["log-raw", loop])[2] == b"fatal: exceeded maximum allowed tree depth\n"
    assert _cli(d, ["log-raw", bad[0]])[2] == f"fatal: bad object {bad[0]}\n".encode()


def test_trees_written_with_other_modes_like_git(mgit: GitRunner, tmp_path: Path) -> None:
    """Entries git canonicalizes (100664, 040000: the same entry as 100644, 40000 when
    the ids match), beside real changes, in trees written --literally."""
    d = tmp_path / "m.git"
    mgit.run(["init", "-q", "--bare", "-b", "main", str(d)])

    def obj(typ: str, body: bytes) -> bytes:
        return bytes.fromhex(mgit.out(["hash-object", "-t", typ, "-w", "--literally", "--stdin"],
                                      cwd=d, input=body).strip().decode())
    b1, b2 = obj("blob", b"one\n"), obj("blob", b"two\n")
    sub = obj("tree", b"100644 s\0" + b1)
    sub2 = obj("tree", b"100664 s\0" + b2)
    trees = [b"100664 a\0" + b1 + b"040000 d\0" + sub + b"100644 e\0" + b2,
             b"100644 a\0" + b1 + b"40000 d\0" + sub + b"100644 e\0" + b2,      # no change
             b"100755 a\0" + b1 + b"040000 d\0" + sub2 + b"100664 e\0" + b1,    # three changes
             b"100755 a\0" + b1 + b"100664 d\0" + b2 + b"100644 e\0" + b1]      # tree -> file
    parent: list[str] = []
    for n, body in enumerate(trees):
        c = mgit.out(["commit-tree", "-m", f"c{n}", *parent, obj("tree", body).hex()],
                     cwd=d).strip().decode()
        parent = ["-p", c]
    got = _cli(d, ["log-raw", c])
    assert got == _git_log(mgit, d, ["log-raw", c])
    assert got[1].count(b"\t") == 3 + 0 + 3 + 2, got[1]


@pytest.mark.parametrize("quote_high", [True, False])
def test_quote_path_every_byte(quote_high: bool) -> None:
    """git's rule: a path is printed as is unless it holds a control byte, DEL, '"',
    '\\' or (under core.quotePath) a byte >= 0x80; then it is C-quoted."""
    for c in range(256):
        name = bytes([0x61, c, 0x62])
        plain = 0x20 <= c < (0x80 if quote_high else 0x100) and c not in (0x22, 0x5C, 0x7F)
        got = quote_path(name, quote_high)
        assert (got == name) == plain, c
        assert plain or (got.startswith(b'"') and got.endswith(b'"')), c
