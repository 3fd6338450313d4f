"""`reftable-lab refs migrate` against git's own `git refs migrate` (git 2.47).

On the real-shaped repository of tests/helpers/realistic.py (bare, no reflogs; here
with a symref, a root ref ORIG_HEAD and a nested ref added), both ways (files ->
reftable, and back from git's reftable result) and with initial_transaction_check
off and on: copies migrated by git and by the lab list the same refs (`git
for-each-ref --include-root-refs`, symrefs and peeled ids too), have the same
reflogs (none: `git reflog list`, `git reflog show` of every ref), the same config
bytes, the old store removed, the same files (files -> reftable: the one table
byte for byte; reftable -> files: git 2.47 writes every ref loose where the lab,
as git since 00bd6c3e46, writes packed-refs, so the files are compared apart from
that) and `git fsck` is clean. Bad inputs give git's messages and statuses: an
unknown format, the format already in use, missing or extra arguments, reflogs,
worktrees; a store with locks held migrates as git's does (the locks go with the
old store, packed-refs.lock stays). The dry run leaves the repository alone and
the refs in the directory its message names. The work counters show the initial
transaction's check reading the new store only with the flag off.
"""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from reftable_core import counters
from reftable_core.flags import Flags
from reftable_core.refs.migrate import MigrateOptions, config_set, migrate_ref_storage
from reftable_core.repo import open_repo

from gitbin import GitRunner, hermetic_env
from tests.helpers.labrun import run_lab
from tests.helpers.realistic import make_realistic_repo

FOR_EACH_REF = ["for-each-ref", "--include-root-refs",
                "--format=%(refname) %(objectname) %(objecttype) %(symref) %(*objectname)"]


@pytest.fixture(scope="module")
def rgit(git_path: str, tmp_path_factory: pytest.TempPathFactory) -> GitRunner:
    return GitRunner(git_path, hermetic_env(tmp_path_factory.mktemp("home")))


@pytest.fixture(scope="module")
def files_repo(rgit: GitRunner, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The realistic repository plus a symref, a root ref and a ref two levels down
    (refs/heads/side is packed by the repack, the tags after it are loose)."""
    d = make_realistic_repo(tmp_path_factory.mktemp("mig") / "repo.git", rgit, commits=12)
    rgit.run(["symbolic-ref", "refs/heads/current", "refs/heads/main"], cwd=d)
    rgit.run(["update-ref", "ORIG_HEAD", "main~2"], cwd=d)
    rgit.run(["update-ref", "refs/remotes/origin/feature/x", "side"], cwd=d)
    assert not (d / "logs").exists()
    return d


@pytest.fixture(scope="module")
def reftable_repo(rgit: GitRunner, files_repo: Path,
                  tmp_path_factory: pytest.TempPathFactory) -> Path:
    """files_repo migrated to reftable by git."""
    d = tmp_path_factory.mktemp("mig-rt") / "repo.git"
    shutil.copytree(files_repo, d, symlinks=True)
    rgit.run(["refs", "migrate", "--ref-format=reftable"], cwd=d)
    return d


def _copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, symlinks=True)
    return dest


def _files(gitdir: Path) -> set[str]:
    """Every path in gitdir but the objects, the reftable tables named by kind."""
    out = set()
    for root, dirs, files in os.walk(gitdir):
        rel = os.path.relpath(root, gitdir)
        if rel.split(os.sep)[0] == "objects":
            continue
        for n in [*dirs, *files]:
            p = os.path.normpath(os.path.join(rel, n))
            if p.startswith("reftable/0x"):
                p = "reftable/<table>" + p[p.rindex("."):]
            out.add(p)
    return out


def _observe(git: GitRunner, gitdir: Path) -> dict[str, object]:
    refs = git.out(FOR_EACH_REF, cwd=gitdir)
    reflogs = {name: git.out(["reflog", "show", "--format=%H %gs", name], cwd=gitdir)
               for name in (line.split()[0].decode() for line in refs.splitlines())}
    return {"refs": refs, "reflog list": git.out(["reflog", "list"], cwd=gitdir),
            "reflogs": reflogs, "config": (gitdir / "config").read_bytes(),
            "fsck": git.run(["fsck", "--no-dangling"], cwd=gitdir, check=False).returncode}


def _migrate_both(git: GitRunner, src: Path, tmp: Path, fmt: str,
                  flags: str) -> tuple[Path, Path]:
    by_git, by_lab = _copy(src, tmp / "git.git"), _copy(src, tmp / "lab.git")
    git.run(["refs", "migrate", f"--ref-format={fmt}"], cwd=by_git)
    status, out, err = run_lab(["refs", "migrate", "--flags", flags, f"--ref-format={fmt}"],
                               cwd=by_lab)
    assert (status, out, err) == (0, b"", b"")
    return by_git, by_lab


FLAG_VALUES = ["initial_transaction_check=off", "initial_transaction_check=on"]


@pytest.mark.parametrize("flags", FLAG_VALUES)
def test_files_to_reftable_as_git(rgit: GitRunner, files_repo: Path, tmp_path: Path,
                                  flags: str) -> None:
    by_git, by_lab = _migrate_both(rgit, files_repo, tmp_path, "reftable", flags)
    want = _observe(rgit, by_git)
    assert want["fsck"] == 0 and b"refs/heads/current" in want["refs"]     # type: ignore
    assert b"ORIG_HEAD" in want["refs"] and b"extensions" in want["config"]  # type: ignore
    assert _observe(rgit, by_lab) == want
    assert _files(by_lab) == _files(by_git)
    assert not (by_lab / "packed-refs").exists() and (by_lab / "refs" / "heads").is_file()
    tables = [(d / "reftable" / "tables.list").read_text().split() for d in (by_git, by_lab)]
    assert [len(t) for t in tables] == [1, 1]
    assert (by_lab / "reftable" / tables[1][0]).read_bytes() == \
        (by_git / "reftable" / tables[0][0]).read_bytes()


@pytest.mark.parametrize("flags", FLAG_VALUES)
def test_reftable_to_files_as_git(rgit: GitRunner, reftable_repo: Path, tmp_path: Path,
                                  flags: str) -> None:
    by_git, by_lab = _migrate_both(rgit, reftable_repo, tmp_path, "files", flags)
    want = _observe(rgit, by_git)
    assert want["fsck"] == 0 and b"extensions" not in want["config"]      # type: ignore
    assert _observe(rgit, by_lab) == want
    assert not (by_lab / "reftable").exists()
    # git 2.47 writes each ref loose; the initial transaction of 00bd6c3e46
    # (migrate_initial=on) packs the regular ones
    packed = (by_lab / "packed-refs").read_bytes()
    assert packed.startswith(b"# pack-refs with: peeled fully-peeled sorted \n")
    assert b"refs/tags/v2-again\n^" in packed and b"HEAD" not in packed
    loose = {p for p in _files(by_git) - _files(by_lab)}
    assert loose and all(p.startswith("refs/") for p in loose)
    assert _files(by_lab) - _files(by_git) == {"packed-refs"}
    assert (by_lab / "HEAD").read_bytes() == (by_git / "HEAD").read_bytes()
    assert (by_lab / "ORIG_HEAD").read_bytes() == (by_git / "ORIG_HEAD").read_bytes()
    assert (by_lab / "refs/heads/current").read_bytes() == b"ref: refs/heads/main\n"


@pytest.mark.parametrize("check", ["on", "off"])
def test_reftable_to_files_loose_as_git_2_47(rgit: GitRunner, reftable_repo: Path,
                                             tmp_path: Path, check: str) -> None:
    """migrate_initial=off is git 2.47 (00bd6c3e46^): one ordinary transaction, every ref
    written loose, byte for byte what git 2.47 writes (t1460's last test)."""
    by_git, by_lab = _migrate_both(rgit, reftable_repo, tmp_path, "files",
                                   f"migrate_initial=off,initial_transaction_check={check}")
    assert _observe(rgit, by_lab) == _observe(rgit, by_git)
    assert _files(by_lab) == _files(by_git)
    assert not (by_lab / "packed-refs").exists()
    for p in _files(by_git):
        if (by_git / p).is_file() and p.startswith(("refs/", "HEAD", "ORIG_HEAD")):
            assert (by_lab / p).read_bytes() == (by_git / p).read_bytes(), p


def test_round_trip_back_to_the_same_refs(rgit: GitRunner, files_repo: Path,
                                          tmp_path: Path) -> None:
    d = _copy(files_repo, tmp_path / "r.git")
    want = rgit.out(FOR_EACH_REF, cwd=d)
    for fmt in ("reftable", "files", "reftable"):
        assert run_lab(["refs", "migrate", f"--ref-format={fmt}"], cwd=d)[0] == 0
        assert rgit.out(FOR_EACH_REF, cwd=d) == want
        assert rgit.run(["fsck", "--no-dangling"], cwd=d).returncode == 0


def _both(git: GitRunner, src: Path, tmp: Path, args: list[str],
          prepare=None) -> tuple[tuple, tuple]:
    """(status, stdout, stderr) of git and of the lab on copies of src."""
    a, b = _copy(src, tmp / "a.git"), _copy(src, tmp / "b.git")
    if prepare is not None:
        prepare(a)
        prepare(b)
    g = git.run(["refs", *args], cwd=a, check=False)
    lab = run_lab(["refs", *args], cwd=b)
    return (g.returncode, g.stdout, g.stderr), lab


@pytest.mark.parametrize("args", [
    ["migrate", "--ref-format=files"],
    ["migrate", "--ref-format=nope"],
    ["migrate"],
    ["migrate", "--ref-format=reftable", "extra"],
    ["migrate", "--ref-format"],
    ["migrate", "--no-ref-format"],
    ["migrate", "--bogus"],
    ["migrate", "-h"],
    [],
    ["nosuch"],
])
def test_bad_arguments_as_git(rgit: GitRunner, files_repo: Path, tmp_path: Path,
                              args: list[str]) -> None:
    g, lab = _both(rgit, files_repo, tmp_path, args)
    assert lab == g
    assert g[0] in (129, 255)
    assert rgit.out(FOR_EACH_REF, cwd=tmp_path / "b.git") == rgit.out(FOR_EACH_REF,
                                                                       cwd=files_repo)


def test_already_reftable_as_git(rgit: GitRunner, reftable_repo: Path, tmp_path: Path) -> None:
    g, lab = _both(rgit, reftable_repo, tmp_path, ["migrate", "--ref-format=reftable"])
    assert lab == g == (255, b"", b"error: repository already uses 'reftable' format\n")


def test_reflogs_refused_as_git(rgit: GitRunner, files_repo: Path, tmp_path: Path) -> None:
    def reflog(d: Path) -> None:
        rgit.run(["update-ref", "--create-reflog", "refs/heads/logged", "main"], cwd=d)
    g, lab = _both(rgit, files_repo, tmp_path, ["migrate", "--ref-format=reftable"], reflog)
    assert lab == g == (255, b"", b"error: migrating reflogs is not supported yet\n")
    assert not (tmp_path / "b.git" / "reftable").exists()
    assert not list((tmp_path / "b.git").glob("ref_migration.*"))


def test_reftable_reflogs_refused_as_git(rgit: GitRunner, reftable_repo: Path,
                                         tmp_path: Path) -> None:
    def reflog(d: Path) -> None:
        rgit.run(["update-ref", "--create-reflog", "refs/heads/logged", "main"], cwd=d)
    g, lab = _both(rgit, reftable_repo, tmp_path, ["migrate", "--ref-format=files"], reflog)
    assert lab == g == (255, b"", b"error: migrating reflogs is not supported yet\n")


def test_worktrees_refused_as_git(rgit: GitRunner, files_repo: Path, tmp_path: Path) -> None:
    def worktree(d: Path) -> None:
        rgit.run(["-c", "core.logAllRefUpdates=false", "worktree", "add", "-q",
                  "--detach", str(d.parent / f"{d.stem}-wt"), "main"], cwd=d)
        assert not list(d.rglob("logs"))
    g, lab = _both(rgit, files_repo, tmp_path, ["migrate", "--ref-format=reftable"], worktree)
    want = b"error: migrating repositories with worktrees is not supported yet\n"
    assert lab == g == (255, b"", want)


def test_locked_files_store_migrates_as_git(rgit: GitRunner, files_repo: Path,
                                            tmp_path: Path) -> None:
    """git 2.47 takes no lock of the old store: a held ref lock goes with refs/, a
    held packed-refs.lock stays behind."""
    def lock(d: Path) -> None:
        (d / "refs" / "heads" / "main.lock").write_bytes(b"")
        (d / "packed-refs.lock").write_bytes(b"")
    g, lab = _both(rgit, files_repo, tmp_path, ["migrate", "--ref-format=reftable"], lock)
    assert lab == g == (0, b"", b"")
    a, b = tmp_path / "a.git", tmp_path / "b.git"
    assert _files(b) == _files(a) and "packed-refs.lock" in _files(b)
    assert _observe(rgit, b) == _observe(rgit, a)


def test_locked_reftable_store_migrates_as_git(rgit: GitRunner, reftable_repo: Path,
                                               tmp_path: Path) -> None:
    def lock(d: Path) -> None:
        (d / "reftable" / "tables.list.lock").write_bytes(b"")
    g, lab = _both(rgit, reftable_repo, tmp_path, ["migrate", "--ref-format=files"], lock)
    assert lab == g == (0, b"", b"")
    a, b = tmp_path / "a.git", tmp_path / "b.git"
    assert not (b / "reftable").exists()
    assert _observe(rgit, b) == _observe(rgit, a)


def test_dry_run_as_git(rgit: GitRunner, files_repo: Path, tmp_path: Path) -> None:
    g, lab = _both(rgit, files_repo, tmp_path, ["migrate", "--ref-format=reftable",
                                                "--dry-run"])
    pattern = rb"Finished dry-run migration of refs, the result can be found at " \
              rb"'\./ref_migration\.[A-Za-z0-9]{6}'\n"
    assert g[0] == lab[0] == 0 and g[2] == lab[2] == b""
    assert re.fullmatch(pattern, g[1]) and re.fullmatch(pattern, lab[1])
    b = tmp_path / "b.git"
    new = b / lab[1].split(b"'")[1].decode()
    assert oct(new.stat().st_mode & 0o777) == "0o700"
    assert rgit.out(FOR_EACH_REF, cwd=b) == rgit.out(FOR_EACH_REF, cwd=files_repo)
    assert b"extensions" not in (b / "config").read_bytes()
    new_git = tmp_path / "a.git" / g[1].split(b"'")[1].decode()
    assert _files(new) == _files(new_git) == {"HEAD", "refs", "refs/heads", "reftable",
                                              "reftable/tables.list", "reftable/<table>.ref"}
    tables = [(d / "reftable" / "tables.list").read_text().split()[0] for d in (new_git, new)]
    assert (new / "reftable" / tables[1]).read_bytes() == \
        (new_git / "reftable" / tables[0]).read_bytes()


@pytest.mark.parametrize("on", [False, True])
def test_the_initial_check_reads_the_new_store_only_with_the_flag_off(
        files_repo: Path, tmp_path: Path, on: bool) -> None:
    d = _copy(files_repo, tmp_path / "r.git")
    repo = open_repo(d, Flags(initial_transaction_check=on))
    n = sum(1 for _ in repo.refs.iter_refs())
    counters.reset()
    done = migrate_ref_storage(repo.commondir, repo.refs, "files", "reftable",
                               MigrateOptions(flags=repo.flags, object_format=repo.object_format,
                                              config=repo.config, objects=lambda: repo.objects))
    checks = counters.snapshot()["refname_store_checks"]
    repo.close()
    assert done.refs == n + 2                        # HEAD and ORIG_HEAD as well
    # off: every ref's leading directories read and a seek under it; on: none
    assert checks == 0 if on else checks >= 3 * n


def test_config_set_as_git_config() -> None:
    lines = ["[core]\n", "\trepositoryformatversion = 0\n", "\tbare = true\n",
             "[remote \"o\"]\n", "\turl = x\n"]
    got = config_set(lines, "core", "repositoryformatversion", "1")
    assert got[1] == "\trepositoryformatversion = 1\n" and len(got) == 5
    got = config_set(got, "extensions", "refstorage", "reftable")
    assert got[-2:] == ["[extensions]\n", "\trefstorage = reftable\n"]
    got = config_set(got, "core", "logallrefupdates", "false")
    assert got[3] == "\tlogallrefupdates = false\n"
    assert config_set(got, "extensions", "refstorage", None) == got[:-2]
    assert config_set(lines, "extensions", "refstorage", None) == lines
