"""`reftable-lab show-ref` prints exactly what git show-ref prints, with the same status.

Repositories are built by the provisioned git in varied shapes: dozens of tables
(auto-compaction off) with deletions and updates shadowing older tables, symrefs,
annotated (and nested) tags, lightweight tags, SHA-256, a files-backend repo.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.labrun import run_lab

from gitbin import GitRunner, find_git, hermetic_env

NOCOMPACT = ["-c", "reftable.autoCompaction=false"]
NOCOMPACT_ENV = {"GIT_TEST_REFTABLE_AUTOCOMPACTION": "false"}     # git 2.45 .. 2.47

OPTION_SETS: list[list[str]] = [
    [], ["--head"], ["-d"], ["--head", "-d"], ["--tags"], ["--branches"], ["--heads"],
    ["--tags", "--branches", "-d"], ["main"], ["heads/main"], ["v1"], ["nomatch"],
    ["-s"], ["--hash=10"], ["-s8", "main"], ["--hash", "-d", "v1"], ["--abbrev"],
    ["--abbrev=4", "-d"], ["--abbrev=50"], ["-q"], ["-q", "main"], ["--quiet", "nomatch"],
    ["--verify", "refs/heads/main"], ["--verify", "HEAD"], ["--verify", "main"],
    ["--verify", "-q", "refs/heads/nope"], ["--verify", "refs/heads/nope"],
    ["--verify", "refs/tags/v1", "-d"], ["--verify", "refs/tags/nested", "--dereference"],
    ["--verify"], ["--verify", "refs/heads/main", "refs/tags/v1", "-s"],
    ["--exists", "refs/heads/main"], ["--exists", "refs/heads/b03"], ["--exists", "HEAD"],
    ["--exists", "refs/remotes/origin/HEAD"], ["--exists"], ["--exists", "a", "b"],
    ["--verify", "--exists", "x"], ["-d", "--tags", "v1"], ["--dereference", "refs/tags/v1"],
    ["--head", "nomatch"], ["origin/HEAD"], ["a/b"], ["b"], ["heads"], ["refs/heads/b0"],
    ["-d", "--branches", "--head", "main", "v1"], ["--deref", "nested"], ["--", "main"],
    ["--tag"], ["--no-tags", "main"],
]


def _build(tmp: Path, git: GitRunner, name: str, ref_format: str, object_format: str) -> Path:
    path = tmp / name
    git.run(["init", "-q", f"--ref-format={ref_format}", f"--object-format={object_format}",
             "-b", "main", str(path)])
    git.run(["config", "reftable.autoCompaction", "false"], cwd=path)   # newer git
    g = lambda *a: git.out([*NOCOMPACT, *a], cwd=path, env=NOCOMPACT_ENV)
    g("commit", "-q", "--allow-empty", "-m", "one")
    g("commit", "-q", "--allow-empty", "-m", "two")
    g("tag", "-a", "-m", "annotated", "v1")
    g("tag", "light", "HEAD~1")
    g("tag", "-a", "-m", "tag of tag", "nested", "v1")
    g("tag", "-a", "-m", "tree tag", "treetag", "HEAD^{tree}")
    for i in range(12):
        g("branch", f"b{i:02d}", "HEAD~1" if i % 2 else "HEAD")
    for i in range(0, 12, 3):
        g("branch", "-D", f"b{i:02d}")                         # deletions shadowing older tables
    for i in range(1, 12, 4):
        g("branch", "-f", f"b{i:02d}", "HEAD")                 # updates shadowing older tables
    g("branch", "a/b")
    g("update-ref", "refs/remotes/origin/main", "HEAD~1")
    g("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
    g("symbolic-ref", "refs/heads/dangling", "refs/heads/nothing")
    g("update-ref", "refs/notes/x", "HEAD")
    g("commit", "-q", "--allow-empty", "-m", "three")
    return path


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("showref")
    home = tmp / "home"
    home.mkdir()
    git = GitRunner(find_git(), hermetic_env(home))
    out = {
        "reftable-sha1": _build(tmp, git, "r1", "reftable", "sha1"),
        "reftable-sha256": _build(tmp, git, "r256", "reftable", "sha256"),
        "files-sha1": _build(tmp, git, "f1", "files", "sha1"),
    }
    git.run(["pack-refs", "--all"], cwd=out["files-sha1"])
    git.run(["update-ref", "refs/heads/loose-after-pack", "HEAD"], cwd=out["files-sha1"])
    return out


@pytest.fixture(scope="module")
def gitrun(tmp_path_factory: pytest.TempPathFactory) -> GitRunner:
    home = tmp_path_factory.mktemp("home")
    return GitRunner(find_git(), hermetic_env(home))


def _files_available() -> bool:
    try:
        import reftable_core.refs.files_backend  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("shape", ["reftable-sha1", "reftable-sha256", "files-sha1"])
@pytest.mark.parametrize("opts", OPTION_SETS, ids=lambda o: " ".join(o) or "(none)")
def test_show_ref_matches_git(repos: dict[str, Path], gitrun: GitRunner, shape: str,
                              opts: list[str]) -> None:
    if shape.startswith("files") and not _files_available():
        pytest.skip("reftable_core.refs.files_backend not available yet")
    path = repos[shape]
    g = gitrun.run(["show-ref", *opts], cwd=path, check=False)
    status, out, err = run_lab(["show-ref", *opts], cwd=path)
    assert (status, out) == (g.returncode, g.stdout)
    if g.returncode != 129:                           # usage texts differ
        assert err == g.stderr


def test_many_tables_really_exist(repos: dict[str, Path]) -> None:
    names = (repos["reftable-sha1"] / ".git" / "reftable" / "tables.list").read_text().split()
    assert len(names) >= 25


def test_git_dir_option_and_broken_object(repos: dict[str, Path], gitrun: GitRunner,
                                          tmp_path: Path) -> None:
    path = repos["reftable-sha1"]
    g = gitrun.run(["--git-dir", str(path / ".git"), "show-ref", "--tags"], check=False)
    status, out, _ = run_lab(["show-ref", "--git-dir", str(path / ".git"), "--tags"], cwd=tmp_path)
    assert (status, out) == (0, g.stdout)
    status, _, err = run_lab(["show-ref", "--git-dir", str(tmp_path)], cwd=tmp_path)
    g = gitrun.run(["--git-dir", str(tmp_path), "show-ref"], check=False, cwd=tmp_path)
    assert (status, err) == (g.returncode, g.stderr) == (128, f"fatal: not a git repository: "
                                                            f"'{tmp_path}'\n".encode())
