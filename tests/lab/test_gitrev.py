"""git at two revisions as peers (lab.builds, bench --git-src/--git-rev).

The local git.git is the provisioned git's source package committed twice
(pinned identity and dates: the same commit ids on every run, so the cached
builds under ~/.cache/reftable-lab/builds/<commit> are reused by later runs).
The first build starts from the provisioned built tree, the second from the
first: make recompiles only the one file the second commit changed.
"""
from __future__ import annotations

import json
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from lab.builds import BuildError, _export, build_all, resolve
from lab.cli import main
from gitbin import PROVISION_SCRIPT, find_git, hermetic_env, provisioned_source
from lab.harness import expand, run_scenario
from lab.results import Revisions
from lab.scenarios import SCENARIOS

# the trivial second commit: one comment in one builtin (only git relinks)
CHANGED = "builtin/show-ref.c"
COMMENT = "/* reftable-lab: a trivial change, the second revision of the build test */\n"


def _source_tarball() -> Path:
    """The provisioned git's upstream source tarball (provisioning it if need be)."""
    tree = provisioned_source()
    if tree is None:
        subprocess.run(["bash", str(PROVISION_SCRIPT), "--source"], check=True,
                       stdout=subprocess.DEVNULL)
        tree = provisioned_source()
    assert tree is not None, "provision-git.sh --source built no tree"
    (tarball,) = tree.parent.glob("*.orig.tar.*")
    return tarball


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], env=hermetic_env(), check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def git_src(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """(repository, first commit, second commit)."""
    root = tmp_path_factory.mktemp("git-src")
    with tarfile.open(_source_tarball()) as tar:
        top = tar.getmembers()[0].name.split("/")[0]
        tar.extractall(root, filter="tar")
    repo = root / top
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A", "-f")
    _git(repo, "commit", "-q", "-m", "the provisioned source")
    changed = repo / CHANGED
    changed.write_text(COMMENT + changed.read_text())
    _git(repo, "commit", "-q", "-a", "-m", "a trivial change: one comment")
    return repo, _git(repo, "rev-parse", "HEAD~"), _git(repo, "rev-parse", "HEAD")


def test_a_bad_source_or_revision_is_one_line(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(BuildError, match="not a git repository"):
        resolve(tmp_path, "HEAD")
    assert main(["bench", "update-ref-create-1", "--git-src", str(tmp_path), "--git-rev", "HEAD",
                 "--measure", "time"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a git repository" in err
    _git(tmp_path, "init", "-q")
    assert main(["bench", "update-ref-create-1", "--git-src", str(tmp_path), "--git-rev",
                 "no-such-rev", "--measure", "time"]) == 2
    err = capsys.readouterr().err
    assert err == f"reftable-lab bench: --git-rev no-such-rev: unknown revision in {tmp_path}\n"
    assert main(["bench", "update-ref-create-1", "--git-rev", "HEAD"]) == 2
    assert "--git-src" in capsys.readouterr().err


def test_each_build_is_a_peer_beside_the_git_peer(git_src: tuple[Path, str, str]) -> None:
    repo, first, second = git_src
    a, b = build_all(repo, ["HEAD~", "HEAD"], log=None)
    assert (a.commit, b.commit) == (first, second)
    variants, envs, rows = expand(SCENARIOS["update-ref-create-1"], "small", Revisions((a, b)))
    peers = [v for _, v in variants if v.peer]
    assert [v.label for v in peers] == ["git", a.label, b.label]
    assert {v.workload for v in peers} == {"git_update_ref_create"}
    assert envs == {a.label: {"REFTABLE_LAB_GIT": str(a.git)},
                    b.label: {"REFTABLE_LAB_GIT": str(b.git)}}
    assert ("git: HEAD~ -> HEAD", a.label, b.label) in rows
    assert (f"{b.label} (HEAD) over reftable-lab (all-on)", "all-on", b.label) in rows
    # a scenario without a git peer gets no build
    variants, _, _ = expand(SCENARIOS["packed-load"], "small", Revisions((a, b)))
    assert not any(v.label.startswith("git@") for _, v in variants)


def test_two_builds_measured_beside_git(git_src: tuple[Path, str, str], tmp_path: Path) -> None:
    """The second build recompiles only the changed file; one tiny scenario runs with
    the git peer and both builds, by time and allocations."""
    repo, first, second = git_src
    a, b = build_all(repo, [first, second], log=None)
    assert b.info()["compiled"] == [CHANGED.replace(".c", ".o")]
    assert b.info()["base"] == str(a.dir)          # the first build, copied
    for build in (a, b):
        out = subprocess.run([str(build.git), "--version"], capture_output=True, text=True)
        assert out.returncode == 0 and out.stdout.startswith("git version")
    r = run_scenario("update-ref-create-1", "small", tmp_path / "out", mode="quick",
                     only=["git"], datasets_dir=tmp_path / "ds", progress=False,
                     measures=("time", "allocations"), revisions=Revisions((a, b)))
    by = {v.label: v for v in r.variants}
    assert list(by) == ["git", a.label, b.label]
    for v in by.values():
        assert v.values and v.allocations and v.allocations > 0
    # the same source, the same allocations (a comment changes no code)
    assert by[a.label].allocations == by[b.label].allocations
    assert [q["title"] for q in r.ratios if q["measure"] == "allocations"] \
        == ["git: " + first + " -> " + second]
    assert r.to_json()["revisions"]["git"][1] == {"label": b.label, "rev": second,
                                                  "commit": second}


def test_a_cached_build_from_another_clone_is_not_a_base(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A build cached from another repository (its commit unknown here) cannot be
    diffed against: the next build of this repository starts elsewhere."""
    from lab import builds
    monkeypatch.setenv("REFTABLE_LAB_CACHE", str(tmp_path / "cache"))
    here, other = tmp_path / "here", tmp_path / "other"
    for repo in (here, other):
        repo.mkdir()
        _git(repo, "init", "-q")
        (repo / "f").write_text(repo.name)
        _git(repo, "add", "f")
        _git(repo, "commit", "-q", "-m", repo.name)
    for repo in (here, other):
        commit = _git(repo, "rev-parse", "HEAD")
        (builds.builds_root() / commit).mkdir(parents=True)
        (builds.builds_root() / commit / builds.BUILD_INFO).write_text(
            json.dumps({"commit": commit, "cc": "cc"}))
    newest = builds.builds_root() / _git(other, "rev-parse", "HEAD") / builds.BUILD_INFO
    os.utime(newest, (2_000_000_000, 2_000_000_000))
    assert builds._base(here, "cc") == (builds.builds_root() / _git(here, "rev-parse", "HEAD"),
                                         _git(here, "rev-parse", "HEAD"))
    assert builds._base(other, "cc") == (newest.parent, _git(other, "rev-parse", "HEAD"))


def test_export_removes_a_submodule_folder_the_base_had(tmp_path: Path) -> None:
    """An old tree built from a newer base: the base's submodule (a gitlink, a folder in
    the build tree, as sha1collisiondetection/ is in git.git) is removed, not unlink()ed."""
    src = tmp_path / "src"
    git = [find_git(), "-C", str(src)]
    env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@x", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    subprocess.run([find_git(), "init", "-q", str(src)], check=True, env=env)
    (src / "a.c").write_text("int a;\n")
    subprocess.run([*git, "add", "a.c"], check=True, env=env)
    subprocess.run([*git, "commit", "-qm", "old"], check=True, env=env)
    old = subprocess.run([*git, "rev-parse", "HEAD"], check=True, env=env,
                         capture_output=True, text=True).stdout.strip()
    subprocess.run([*git, "update-index", "--add", "--cacheinfo", f"160000,{old},sub"],
                   check=True, env=env)
    subprocess.run([*git, "commit", "-qm", "new"], check=True, env=env)
    new = subprocess.run([*git, "rev-parse", "HEAD"], check=True, env=env,
                         capture_output=True, text=True).stdout.strip()
    tree = tmp_path / "build"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "x.o").write_text("")
    (tree / "a.c").write_text("int a;\n")
    _export(src, old, tree, new)
    assert not (tree / "sub").exists() and (tree / "a.c").read_text() == "int a;\n"
