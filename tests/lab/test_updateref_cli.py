"""`reftable-lab update-ref --stdin` writes what git writes.

The same input goes to git and to reftable-lab on two copies of a repository
(committer date pinned); afterwards git reports identical refs
(for-each-ref, with peeled tags) and reflogs, and git fsck is clean. Failing
inputs give the same stdout, stderr and exit status.
"""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from tests.helpers.labrun import run_lab

from gitbin import GitRunner


@pytest.fixture(autouse=True)
def _lab_env(git: GitRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """reftable-lab runs in-process: give it git's hermetic identity and dates."""
    for k, v in git.env.items():
        if k.startswith("GIT_") or k in ("TZ", "HOME", "LC_ALL", "LANG"):
            monkeypatch.setenv(k, v)


def _setup(make_repo, git: GitRunner, ref_format: str = "reftable",
           object_format: str = "sha1") -> tuple[Path, dict[str, str]]:
    path = make_repo("base", ref_format=ref_format, object_format=object_format)
    g = lambda *a: git.out(list(a), cwd=path).decode().strip()
    g("commit", "-q", "--allow-empty", "-m", "one")
    g("commit", "-q", "--allow-empty", "-m", "two")
    g("tag", "-a", "-m", "annotated", "v1")
    g("branch", "side", "HEAD~1")
    g("branch", "gone")
    ids = {"C1": g("rev-parse", "HEAD~1"), "C2": g("rev-parse", "HEAD"),
           "T": g("rev-parse", "v1"), "TREE": g("rev-parse", "HEAD^{tree}"),
           "Z": "0" * len(g("rev-parse", "HEAD"))}
    return path, ids


def _state(git: GitRunner, path: Path) -> bytes:
    parts = [
        git.out(["for-each-ref", "--format=%(refname) %(objectname) %(*objectname) %(symref)"],
                cwd=path),
        git.out(["show-ref", "--head", "-d"], cwd=path),
        git.run(["symbolic-ref", "HEAD"], cwd=path, check=False).stdout,
    ]
    refs = git.out(["for-each-ref", "--format=%(refname)"], cwd=path).split()
    for r in [b"HEAD", *refs]:
        parts.append(git.run(["reflog", "show", "--format=%gD %H %gs %gn <%ge> %gd",
                              r.decode()], cwd=path, check=False).stdout)
        parts.append(git.run(["log", "-g", "--format=%gD %ct %gn %ge %gs", r.decode()],
                             cwd=path, check=False).stdout)
    fsck = git.run(["fsck", "--no-progress"], cwd=path, check=False)
    parts.append(b"fsck %d %s" % (fsck.returncode, fsck.stdout + fsck.stderr))
    return b"\n---\n".join(parts)


SCRIPTS: list[tuple[str, list[str]]] = [
    ("create-update-delete", [
        ("create refs/heads/x {C1}\nupdate refs/heads/side {C2} {C1}\n"
         "create refs/tags/t2 {T}\ndelete refs/heads/nothere\ndelete refs/heads/gone\n"
         "verify refs/tags/v1 {T}\n"),
        "update refs/heads/x {C2}\n",
    ]),
    ("head-deref", ["update HEAD {C1}\n", "update refs/heads/main {C2} {C1}\n"]),
    ("no-deref", ["option no-deref\nupdate HEAD {C1}\n"]),
    ("transactions", [
        ("start\ncreate refs/heads/t1 {C1}\nprepare\ncommit\n"
         "start\ncreate refs/heads/t2 {C1}\nabort\n"
         "start\ndelete refs/heads/t1 {C1}\ncommit\n"),
    ]),
    ("messages", ["update refs/heads/main {C1}\n"]),
    ("old-value-errors", [
        "create refs/heads/side {C1}\n",
        "update refs/heads/side {C2} {C2}\n",
        "delete refs/heads/nothere {C1}\n",
        "verify refs/heads/nothere\n",
        "verify refs/heads/side {C1}\nupdate refs/heads/side {C2}\n",
    ]),
    ("conflicts", [
        "create refs/heads/side/sub {C1}\n",
        "create refs/heads/new {C1}\ncreate refs/heads/new/sub {C1}\n",
        "create refs/heads/dup {C1}\nupdate refs/heads/dup {C2}\n",
        "create refs/heads/ma {C1}\n",
    ]),
    ("df-conflicts", [
        "create refs/heads/new/sub {C1}\ncreate refs/heads/new {C1}\n",
        "create refs/heads/a {C1}\ncreate refs/heads/a/b/c {C1}\n",
        "create refs/x {C1}\n", "create refs/x/y {C1}\n", "create refs/x/y/z {C1}\n",
        "update refs/heads/side/sub {C2} {C1}\n", "create refs/heads {C1}\n",
        "create refs/heads/side/x/y {C1}\n", "create refs/tags {C1}\n",
        "delete refs/heads/gone\ncreate refs/heads/gone/x {C1}\n",
        "".join(f"create refs/heads/b/{i} {{C1}}\n" for i in range(300)) + "create refs/heads/b {C1}\n",
        "create refs/heads/c {C1}\n" + "".join(f"create refs/heads/c{i}/d {{C1}}\n"
                                               for i in range(300)) + "create refs/heads/c/d {C1}\n",
    ]),
    ("object-checks", [
        "update refs/heads/side {T}\n", "update refs/heads/side {TREE} {C2}\n",
        "update HEAD {T}\n", "create refs/heads/missing 2222222222222222222222222222222222222222\n",
        "update refs/heads/side {C1} {C1}\ncreate refs/heads/nt {TREE}\n",
        "create refs/tags/tree {TREE}\n",
    ]),
    ("bad-input", [
        "create refs/heads/bad..name {C1}\n", "frobnicate x\n", "create refs/heads/q\n",
        "update refs/heads/q {C1} {C1} extra\n", "create refs/heads/q {Z}\n",
        "create refs/heads/q 1234\n", "start\nstart\n", "start\nprepare\ncreate refs/heads/q {C1}\n",
        "commit\n", " create refs/heads/q {C1}\n", "\n", "create refs/heads/q {C1}",
        "delete refs/heads/side {Z}\n", "create refs/heads/tree {TREE}\n",
        "create refs/heads/missing 1111111111111111111111111111111111111111\n",
        "option bogus\n",
    ]),
    ("refname-values", ["create refs/heads/fromname main\nupdate refs/heads/side v1^{{}}\n"]),
    ("tags-peeled", ["create refs/tags/peel {T}\ncreate refs/tags/lw {C1}\n"]),
    ("z-format", [("create refs/heads/zz\0{C1}\0update refs/heads/side\0{C2}\0\0"
                   "delete refs/heads/gone\0\0verify refs/heads/main\0{C2}\0")]),
]


def _files_available() -> bool:
    try:
        import reftable_core.refs.files_backend  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("shape", ["reftable-sha1", "reftable-sha256", "files-sha1",
                                   "files-sha1-packed"])
@pytest.mark.parametrize("name,inputs", SCRIPTS, ids=[s[0] for s in SCRIPTS])
def test_update_ref_interop(make_repo, git: GitRunner, tmp_path: Path, name: str,
                            inputs: list[str], shape: str) -> None:
    ref_format, object_format, *packed = shape.split("-")
    subset = ("create-update-delete", "head-deref", "tags-peeled", "old-value-errors")
    if packed:
        subset = ("conflicts", "df-conflicts", "object-checks", "old-value-errors")
    if shape not in ("reftable-sha1", "files-sha1") and name not in subset:
        pytest.skip("this shape runs a subset")
    if ref_format == "files" and not _files_available():
        pytest.skip("reftable_core.refs.files_backend not available yet")
    base, ids = _setup(make_repo, git, ref_format=ref_format, object_format=object_format)
    if packed:
        git.out(["pack-refs", "--all"], cwd=base)
    ours = tmp_path / "ours"
    theirs = tmp_path / "theirs"
    shutil.copytree(base, ours, symlinks=True)
    shutil.copytree(base, theirs, symlinks=True)
    z = name == "z-format"
    for text in inputs:
        data = text.format(**ids).encode()
        args = ["update-ref", "-m", "lab  test\tmessage "] if name == "messages" else ["update-ref"]
        args += ["--stdin"] + (["-z"] if z else [])
        g = git.run(args, cwd=theirs, input=data, check=False)
        status, out, err = run_lab(args, cwd=ours, stdin=data)
        assert (status, out, err) == (g.returncode, g.stdout, g.stderr), data
    assert _state(git, ours) == _state(git, theirs)


def test_committer_identity_from_env(make_repo, git: GitRunner, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    base, ids = _setup(make_repo, git)
    ours, theirs = tmp_path / "o", tmp_path / "t"
    shutil.copytree(base, ours)
    shutil.copytree(base, theirs)
    env = {"GIT_COMMITTER_NAME": "Someone Else", "GIT_COMMITTER_EMAIL": "else@example.org",
           "GIT_COMMITTER_DATE": "1712345678 -0230"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    data = "update refs/heads/main {C1}\n".format(**ids).encode()
    git.run(["update-ref", "-m", "who", "--stdin"], cwd=theirs, input=data, env=env)
    assert run_lab(["update-ref", "-m", "who", "--stdin"], cwd=ours, stdin=data)[0] == 0
    fmt = ["log", "-g", "--format=%gn %ge %gd %gs", "--date=raw", "main"]
    assert git.out(fmt, cwd=ours) == git.out(fmt, cwd=theirs)
    fmt = ["reflog", "--date=iso", "main"]
    assert git.out(fmt, cwd=ours) == git.out(fmt, cwd=theirs)


DATES = ["Thu, 07 Apr 2005 22:13:13 +0200", "2005-04-07T22:13:13", "2005-04-07 22:13:13 +0200",
         "@1112911993 +0200", "1112911993 +99999", "@1112911993 +0299", "1112911993 -0230",
         "04/07/2005 10:13:13 PM EST", "20050407T221313", "7.4.2005 22:13 +05:30"]


@pytest.mark.parametrize("ref_format", ["files", "reftable"])
@pytest.mark.parametrize("date", DATES)
def test_committer_date_forms(make_repo, git: GitRunner, tmp_path: Path,
                              monkeypatch: pytest.MonkeyPatch, ref_format: str,
                              date: str) -> None:
    """GIT_COMMITTER_DATE in git's other forms: the same reflog entry as git writes."""
    base, ids = _setup(make_repo, git, ref_format=ref_format)
    ours, theirs = tmp_path / "o", tmp_path / "t"
    shutil.copytree(base, ours)
    shutil.copytree(base, theirs)
    env = {"GIT_COMMITTER_DATE": date, "TZ": "America/New_York"}
    data = "update refs/heads/main {C1}\n".format(**ids).encode()
    git.run(["update-ref", "-m", "when", "--stdin"], cwd=theirs, input=data, env=env)
    with monkeypatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        time.tzset()                      # the zone a date without one is read in
        try:
            assert run_lab(["update-ref", "-m", "when", "--stdin"], cwd=ours, stdin=data)[0] == 0
        finally:
            mp.undo()
            time.tzset()
    fmt = ["log", "-g", "--format=%gd %gn <%ge> %gs", "--date=raw", "main"]
    assert git.out(fmt, cwd=ours) == git.out(fmt, cwd=theirs)
    if ref_format == "files":
        assert (ours / ".git" / "logs" / "refs" / "heads" / "main").read_bytes() == \
            (theirs / ".git" / "logs" / "refs" / "heads" / "main").read_bytes()


ARG_SEQUENCE = [
    ["-m", "hi", "refs/heads/x", "HEAD~1"], ["refs/heads/x", "HEAD", "HEAD"],
    ["refs/heads/x", "HEAD", "HEAD~1"], ["-d", "refs/heads/x"], ["-d", "refs/heads/nope"],
    ["refs/heads/bad..x", "HEAD"], ["refs/heads/y", "nosuch"], ["refs/heads/y", "HEAD~1", "nosuch"],
    ["HEAD", "HEAD~1"], ["--no-deref", "HEAD", "HEAD"], ["-d", "refs/heads/main", "HEAD~1"],
    ["onlyone"], ["refs/tags/p", "v1^{}"], ["refs/heads/q", "v1~1"], ["refs/heads/r", "HEAD^"],
    ["refs/tags/tt", "HEAD^{tree}"], ["-m", "", "refs/heads/s", "HEAD"],
    ["refs/heads/tagb", "v1"], ["refs/heads/main/x", "HEAD"], ["refs/heads", "HEAD"],
    ["refs/heads/miss", "2222222222222222222222222222222222222222"], ["HEAD", "v1"],
    ["refs/heads/side/x", "HEAD", "HEAD"], ["refs/heads/side", "HEAD^{tree}", "HEAD"],
]


@pytest.mark.parametrize("ref_format", ["reftable", "files"])
def test_update_ref_arguments_mode(make_repo, git: GitRunner, tmp_path: Path,
                                   ref_format: str) -> None:
    """`update-ref [-m] [--no-deref] [-d] <ref> [<new>] [<old>]` with rev syntax values."""
    if ref_format == "files" and not _files_available():
        pytest.skip("reftable_core.refs.files_backend not available yet")
    base, _ids = _setup(make_repo, git, ref_format=ref_format)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    shutil.copytree(base, ours)
    shutil.copytree(base, theirs)
    for args in ARG_SEQUENCE:
        g = git.run(["update-ref", *args], cwd=theirs, check=False)
        assert run_lab(["update-ref", *args], cwd=ours) == (g.returncode, g.stdout, g.stderr), args
    assert _state(git, ours) == _state(git, theirs)
