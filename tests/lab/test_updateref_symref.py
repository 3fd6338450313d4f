"""`reftable-lab update-ref --stdin` symref-verify / -create / -update / -delete and
--create-reflog, byte for byte as git 2.47 (t1400's symref-* cases and more).

The same command lines go to git and to reftable-lab on two copies of one
repository, in both ref formats, with and without -z; each gives git's stdout,
stderr and exit status, and afterwards git sees identical refs, symrefs and
reflogs (tests.lab.test_updateref_cli._state).
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.helpers.labrun import run_lab
from tests.lab.test_updateref_cli import _lab_env, _setup, _state  # noqa: F401  (fixture)

from gitbin import GitRunner

A, M, S = "refs/heads/side", "refs/heads/main", "refs/heads/symref"

# (extra options, the command's words); several commands in one step are joined.
Step = tuple[list[str], list[list[str]]]
ND = ["--no-deref"]

STEPS: dict[str, list[Step]] = {
    "verify": [
        ([], [["symref-verify", S, A]]),                          # needs --no-deref
        (ND, [["symref-create", S, A]]),
        (ND, [["symref-verify", S, A, A]]),                       # extra input
        (ND, [["symref-verify", S, A]]),
        (ND, [["symref-verify", S, ""]]),
        (ND, [["symref-verify", S, M]]),                          # wrong target
        (ND, [["symref-verify", S, "{Z}"]]),
        (ND, [["symref-verify", "refs/heads/missing", "refs/heads/unknown"]]),
        (ND, [["symref-verify", "refs/heads/missing"]]),          # must not exist: ok
        (ND, [["symref-verify", M, A]]),                          # a regular ref
        (ND, [["symref-create", "refs/heads/dangling", "refs/heads/nonexistent"]]),
        (ND, [["symref-verify", "refs/heads/dangling", "refs/heads/nonexistent"]]),
        (ND, [["symref-verify", "refs/heads/bad..name", A]]),
        (ND, [["symref-verify", S, "refs/heads/bad..target"]]),
    ],
    "delete": [
        ([], [["symref-delete", S, A]]),
        (ND, [["symref-delete", ""]]),
        (ND, [["symref-delete", A, M]]),                          # regular ref
        (ND, [["symref-create", S, A]]),
        (ND, [["symref-delete", S, A, A]]),
        (ND, [["symref-delete", S, M]]),                          # wrong old target
        (ND, [["symref-delete", S, A]]),
        (ND, [["symref-create", S, A]]),
        (ND, [["symref-delete", S, ""]]),
        (ND, [["symref-create", "refs/heads/d2", "refs/heads/nonexistent"]]),
        (ND, [["symref-delete", "refs/heads/d2", "refs/heads/nonexistent"]]),
        (ND, [["symref-delete", "refs/heads/gone"]]),             # regular, no target
        (ND, [["symref-delete", "refs/heads/nothere", A]]),
    ],
    "create": [
        (ND, [["symref-create", S, A, A]]),
        (ND, [["symref-create", S]]),
        (ND, [["symref-create", S, ""]]),
        (ND, [["symref-create", S, A]]),
        (ND, [["symref-create", S, M]]),                          # already exists
        ([], [["symref-create", "refs/heads/s2", A]]),
        (ND, [["symref-create", "refs/heads/s3", "refs/heads/unknown"]]),
        (ND, [["symref-create", "refs/symref", A]]),              # no reflog by default
        (["--create-reflog"] + ND, [["symref-create", "refs/symref2", A]]),
        (ND, [["symref-create", "refs/heads/main/sub", A]]),       # D/F conflict
        (ND, [["symref-create", S + "x", "refs/heads/bad..t"]]),
    ],
    "update": [
        (ND, [["symref-update", S, A, "ref", A, A]]),
        (ND, [["symref-update", S, A, "foo", A, A]]),
        (ND, [["symref-update", S, A, "oid", "{Z}"]]),
        (ND, [["symref-update", S, M, "oid", "{Z}"]]),            # exists now
        (ND, [["symref-update", S, M, "ref", "refs/heads/other"]]),
        (ND, [["symref-update", S, M, "ref", A]]),
        (ND, [["symref-update", S, A]]),
        (ND, [["symref-update", S, M, "ref", ""]]),
        (ND, [["symref-update", S, M, "ref"]]),
        (ND, [["symref-update", S, M, "ref", "bad..ref"]]),
        (ND, [["symref-update", S, M, "oid", "not-an-oid"]]),
        (ND, [["symref-update", S]]),
        (ND, [["symref-update", "refs/heads/dang", "refs/heads/nonexistent"]]),
        (ND, [["symref-update", "refs/heads/dang", A, "ref", "refs/heads/wrong"]]),
        (ND, [["symref-update", "refs/heads/dang", A, "ref", "refs/heads/nonexistent"]]),
        ([], [["symref-update", "refs/heads/deref", A]]),          # creates
        ([], [["symref-update", "refs/heads/deref", M]]),          # side becomes the symref
        ([], [["symref-update", "refs/heads/gone", A, "oid", "{C2}"]]),
        ([], [["symref-update", "refs/heads/side", M, "oid", "{C1}"]]),
        ([], [["symref-update", "refs/heads/deref", "refs/heads/deref2"]]),   # two levels
        (["--create-reflog"], [["symref-update", "refs/other", A]]),
        (["--create-reflog"], [["create", "refs/plain", "{C1}"]]),
        ([], [["create", "refs/plain2", "{C1}"]]),
    ],
    "transaction": [
        (ND, [["start"], ["symref-create", S, A], ["symref-verify", S, A], ["prepare"],
              ["commit"]]),
        (ND, [["start"], ["symref-update", S, M, "ref", A], ["update", M, "{C1}"],
              ["abort"]]),
        (ND, [["symref-delete", S, A], ["create", S, "{C1}"]]),    # duplicate
        ([], [["symref-update", "HEAD", A]]),                      # HEAD -> main, deref
        (ND, [["symref-update", "HEAD", A, "ref", M]]),
        (ND, [["symref-verify", "HEAD", A], ["update", A, "{C1}"]]),
    ],
}


def _render(words: list[str], z: bool, ids: dict[str, str]) -> bytes:
    words = [w.format(**ids) for w in words]
    if z:
        return (words[0] + " " + "\0".join(words[1:]) + "\0" if len(words) > 1
                else words[0] + "\0").encode()
    return (" ".join(words) + "\n").encode()


@pytest.mark.parametrize("z", [False, True], ids=["lines", "z"])
@pytest.mark.parametrize("ref_format", ["reftable", "files"])
@pytest.mark.parametrize("name", list(STEPS))
def test_symref_commands(make_repo, git: GitRunner, tmp_path: Path, name: str,
                         ref_format: str, z: bool) -> None:
    base, ids = _setup(make_repo, git, ref_format=ref_format)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    shutil.copytree(base, ours, symlinks=True)
    shutil.copytree(base, theirs, symlinks=True)
    for opts, commands in STEPS[name]:
        data = b"".join(_render(c, z, ids) for c in commands)
        args = ["update-ref", "-m", "sym msg", *opts, "--stdin"] + (["-z"] if z else [])
        g = git.run(args, cwd=theirs, input=data, check=False)
        assert run_lab(args, cwd=ours, stdin=data) == (g.returncode, g.stdout, g.stderr), data
    assert _state(git, ours) == _state(git, theirs)


CREATE_REFLOG = [
    ["--create-reflog", "refs/forced", "HEAD"], ["refs/unforced", "HEAD"],
    ["--create-reflog", "-d", "refs/forced"], ["--create-reflog", "refs/forced", "HEAD~1"],
    ["--create-reflog", "--no-deref", "HEAD", "HEAD~1"],
]


@pytest.mark.parametrize("ref_format", ["reftable", "files"])
def test_create_reflog_arguments_mode(make_repo, git: GitRunner, tmp_path: Path,
                                      ref_format: str) -> None:
    """`update-ref --create-reflog <ref> <new>` writes a reflog outside git's
    autocreate rules (checked with `git reflog exists`), as git does."""
    base, _ids = _setup(make_repo, git, ref_format=ref_format)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    shutil.copytree(base, ours)
    shutil.copytree(base, theirs)
    for args in CREATE_REFLOG:
        g = git.run(["update-ref", *args], cwd=theirs, check=False)
        assert run_lab(["update-ref", *args], cwd=ours) == (g.returncode, g.stdout, g.stderr), args
        for ref in ("refs/forced", "refs/unforced"):
            e = ["reflog", "exists", ref]
            assert git.run(e, cwd=ours, check=False).returncode == \
                git.run(e, cwd=theirs, check=False).returncode, (args, ref)
    assert _state(git, ours) == _state(git, theirs)


def test_reftable_stack_locked(make_repo, git: GitRunner, tmp_path: Path) -> None:
    """A tables.list.lock held elsewhere: git's "cannot lock references" in every
    mode (t1400.190, t0610), the same status, nothing written."""
    base, ids = _setup(make_repo, git, ref_format="reftable")
    (base / ".git" / "reftable" / "tables.list.lock").write_bytes(b"")
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    shutil.copytree(base, ours)
    shutil.copytree(base, theirs)
    for args, data in [(["refs/heads/x", ids["C1"]], b""), (["-d", "refs/heads/side"], b""),
                       (["--stdin"], f"create refs/heads/y {ids['C1']}\n".encode())]:
        g = git.run(["update-ref", *args], cwd=theirs, input=data, check=False)
        assert run_lab(["update-ref", *args], cwd=ours, stdin=data) == \
            (g.returncode, g.stdout, g.stderr), args
        assert b"cannot lock references" in g.stderr
    assert _state(git, ours) == _state(git, theirs)
