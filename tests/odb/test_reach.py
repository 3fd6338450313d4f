"""odb.reach against git: is_ancestor == `git merge-base --is-ancestor`, ahead_behind ==
`git rev-list --count`, merged_filter / contains == `git for-each-ref --merged/--contains`,
ahead_behind == %(ahead-behind:X), branch_base_for_tip == %(is-base:X), merge_bases ==
`git merge-base --all`, on a history with merges, criss-cross merges, tags and a
commit whose date is older than its parent's (generation numbers != dates)."""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from reftable_core.odb.reach import (
    CommitInfo,
    ahead_behind,
    branch_base_for_tip,
    contains,
    is_ancestor,
    merge_bases,
    merged_filter,
)
from reftable_core.odb.store import open_object_store

from gitbin import GitRunner, hermetic_env


@pytest.fixture(scope="module")
def mgit(git_path: str, tmp_path_factory: pytest.TempPathFactory) -> GitRunner:
    return GitRunner(git_path, hermetic_env(tmp_path_factory.mktemp("home")))


def _commit(g: GitRunner, d: Path, msg: str, t: int) -> None:
    (d / "f").write_text(msg + "\n")
    g.run(["add", "f"], cwd=d)
    date = f"{t} +0000"
    g.run(["commit", "-q", "-m", msg], cwd=d,
          env={"GIT_COMMITTER_DATE": date, "GIT_AUTHOR_DATE": date})


def _merge(g: GitRunner, d: Path, other: str, t: int) -> None:
    date = f"{t} +0000"
    g.run(["merge", "-q", "--no-ff", "-s", "ours", "-m", f"merge {other}", other], cwd=d,
          env={"GIT_COMMITTER_DATE": date, "GIT_AUTHOR_DATE": date})


@pytest.fixture(scope="module")
def repo(mgit: GitRunner, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("reach") / "r"
    g = mgit
    g.run(["init", "-q", "-b", "main", str(d)])
    t = 1_100_000_000
    for i in range(4):
        _commit(g, d, f"m{i}", t := t + 100)
    g.run(["branch", "topic"], cwd=d)
    g.run(["branch", "side"], cwd=d)
    g.run(["tag", "-a", "-m", "v1", "v1"], cwd=d)
    for i in range(3):
        _commit(g, d, f"m{i + 4}", t := t + 100)
    g.run(["checkout", "-q", "topic"], cwd=d)
    for i in range(3):
        _commit(g, d, f"t{i}", t := t + 100)
    _commit(g, d, "skewed", t - 5000)           # older than its parent
    _merge(g, d, "main", t := t + 100)
    g.run(["checkout", "-q", "side"], cwd=d)
    _commit(g, d, "s0", t := t + 100)
    _merge(g, d, "topic", t := t + 100)
    g.run(["branch", "cc1"], cwd=d)
    g.run(["checkout", "-q", "main"], cwd=d)
    _commit(g, d, "m7", t := t + 100)
    g.run(["tag", "light"], cwd=d)
    g.run(["tag", "-a", "-m", "v2", "v2"], cwd=d)
    g.run(["tag", "-a", "-m", "tag of tag", "v2b", "v2"], cwd=d)
    g.run(["checkout", "-q", "-b", "cc2", "side~1"], cwd=d)
    _merge(g, d, "main~1", t := t + 100)
    g.run(["checkout", "-q", "cc1"], cwd=d)
    _merge(g, d, "main~1", t := t + 100)       # cc1 and cc2: criss-cross bases
    g.run(["checkout", "-q", "--orphan", "lone"], cwd=d)
    _commit(g, d, "lone", t := t + 100)
    g.run(["checkout", "-q", "main"], cwd=d)
    tree = g.out(["rev-parse", "main^{tree}"], cwd=d).decode().strip()
    g.run(["tag", "treetag", tree], cwd=d)
    return d


def refs(g: GitRunner, d: Path) -> list[tuple[str, bytes]]:
    out = g.out(["for-each-ref", "--format=%(refname) %(objectname)"], cwd=d).decode().split("\n")
    return [(ln.split()[0], bytes.fromhex(ln.split()[1])) for ln in out if ln]


def oid(g: GitRunner, d: Path, rev: str) -> bytes:
    return bytes.fromhex(g.out(["rev-parse", rev], cwd=d).decode().strip())


COMMITS = ["main", "main~1", "main~3", "topic", "topic~1", "side", "side^2", "cc1", "cc2",
           "lone", "v1", "v2b"]


def test_is_ancestor_equals_git(mgit: GitRunner, repo: Path) -> None:
    store = open_object_store(repo / ".git")
    info = CommitInfo(store)
    seen = set()
    for a, b in itertools.product(COMMITS, COMMITS):
        want = mgit.run(["merge-base", "--is-ancestor", a, b], cwd=repo, check=False).returncode
        got = is_ancestor(store, oid(mgit, repo, a), oid(mgit, repo, b), info)
        assert got == (want == 0), (a, b)
        seen.add(got)
    assert seen == {True, False}


def test_ahead_behind_equals_rev_list_and_git(mgit: GitRunner, repo: Path) -> None:
    store = open_object_store(repo / ".git")
    for base in ["main", "topic", "cc1", "lone"]:
        rs = refs(mgit, repo)
        commits = [(n, o) for n, o in rs if n != "refs/tags/treetag"]
        got = ahead_behind(store, oid(mgit, repo, base), [o for _, o in commits])
        fmt = mgit.out(["for-each-ref", f"--format=%(refname) %(ahead-behind:{base})"],
                       cwd=repo).decode().split("\n")
        want = dict(ln.split(" ", 1) for ln in fmt if ln)
        for (name, _), (ahead, behind) in zip(commits, got):
            assert want[name] == f"{ahead} {behind}", (base, name)
            n = mgit.out(["rev-list", "--count", f"{base}..{name}"], cwd=repo).decode().strip()
            assert int(n) == ahead


def test_merged_and_contains_equal_for_each_ref(mgit: GitRunner, repo: Path) -> None:
    store = open_object_store(repo / ".git")
    rs = refs(mgit, repo)
    for rev in COMMITS:
        for opt, fn in (("--merged", lambda b, ts: merged_filter(store, b, ts)),
                        ("--contains", lambda b, ts: contains(store, ts, [b]))):
            want = mgit.out(["for-each-ref", "--format=%(refname)", f"{opt}={rev}"],
                            cwd=repo).decode().split()
            got = fn(oid(mgit, repo, rev), [o for _, o in rs])
            assert [n for (n, _), ok in zip(rs, got) if ok] == want, (opt, rev)


def test_contains_several(mgit: GitRunner, repo: Path) -> None:
    store = open_object_store(repo / ".git")
    rs = refs(mgit, repo)
    want = mgit.out(["for-each-ref", "--format=%(refname)", "--contains=lone",
                     "--contains=side"], cwd=repo).decode().split()
    got = contains(store, [o for _, o in rs], [oid(mgit, repo, "lone"), oid(mgit, repo, "side")])
    assert [n for (n, _), ok in zip(rs, got) if ok] == want
    assert len(want) >= 2


@pytest.mark.parametrize("tip", ["main", "topic", "side", "cc1", "cc2", "lone", "topic~2",
                                 "main~2", "side^2~1"])
def test_is_base_equals_git(mgit: GitRunner, repo: Path, tip: str) -> None:
    store = open_object_store(repo / ".git")
    rs = [(n, o) for n, o in refs(mgit, repo) if n != "refs/tags/treetag"]
    fmt = mgit.out(["for-each-ref", f"--format=%(refname)%(is-base:{tip})"],
                   cwd=repo).decode().split()
    want = [n for n in fmt if n.endswith(f"({tip})")]
    i = branch_base_for_tip(store, oid(mgit, repo, tip), [o for _, o in rs])
    assert ([rs[i][0] + f"({tip})"] if i >= 0 else []) == want


def test_merge_bases_equal_git(mgit: GitRunner, repo: Path) -> None:
    store = open_object_store(repo / ".git")
    for a, b in itertools.combinations(["main", "topic", "side", "cc1", "cc2", "lone"], 2):
        p = mgit.run(["merge-base", "--all", a, b], cwd=repo, check=False)
        want = sorted(p.stdout.decode().split())
        got = sorted(o.hex() for o in merge_bases(store, oid(mgit, repo, a), oid(mgit, repo, b)))
        assert got == want, (a, b)


def test_generation_is_corrected_date(mgit: GitRunner, repo: Path) -> None:
    store = open_object_store(repo / ".git")
    info = CommitInfo(store)
    skew = oid(mgit, repo, "topic^2")       # not the skewed one: find it by message
    for line in mgit.out(["log", "--format=%H %s", "topic"], cwd=repo).decode().split("\n"):
        if line.endswith(" skewed"):
            skew = bytes.fromhex(line.split()[0])
    parent = info.parents_of(skew)[0]
    assert info.date(skew) < info.date(parent)
    assert info.generation(skew) == info.generation(parent) + 1
