"""odb walks against git: log-raw == `git log --raw --no-abbrev --format=%H --first-parent
-m --no-renames`, log-S finds the commits of `git log -S<s> --format=%H --first-parent
--no-renames`, and every delta-cache flag value gives identical output."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reftable_core.flags import Flags, baseline
from reftable_core.odb.store import open_object_store
from reftable_core.odb.walk import format_raw, walk_log_raw, walk_log_S

from lab.cli import main as cli_main
from lab.commands.odb import log_raw, log_S, walk_start
from lab.gitbin import GitRunner, hermetic_env
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
