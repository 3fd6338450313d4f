"""Linked worktrees in `reftable-lab show-ref|update-ref`, both ref formats.

Inside a linked worktree (and from the main one) the lab routes names as git's
parse_worktree_ref does: HEAD and refs/bisect/... to the worktree's own store,
shared refs to the main repository's, main-worktree/... and worktrees/<w>/...
to the named worktree's. Each command runs once with the lab and once with git
on a copy of the same repositories; status, stdout, stderr and every
worktree's view of the refs (git for-each-ref) must be the same.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gitbin import GitRunner
from tests.helpers.labrun import run_lab

FORMATS = ["files", "reftable"]


@pytest.fixture(params=FORMATS)
def top(request: pytest.FixtureRequest, git: GitRunner, tmp_path: Path) -> Path:
    """<top>/repo with linked worktrees <top>/wt1 and <top>/wt2."""
    top = tmp_path / "lab"
    top.mkdir()
    git.run(["init", "-q", f"--ref-format={request.param}", "-b", "main", str(top / "repo")])
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=top / "repo")
    git.run(["worktree", "add", "-q", "../wt1"], cwd=top / "repo")
    git.run(["worktree", "add", "-q", "--detach", "../wt2"], cwd=top / "repo")
    git.run(["commit", "-q", "--allow-empty", "-m", "two"], cwd=top / "wt1")
    return top


def _reflog(git: GitRunner, where: Path, name: str) -> bytes:
    """name's reflog as git reads it from where: new id, old id, message."""
    p = git.run(["reflog", "show", "--format=%H %gs", name, "--"], cwd=where, check=False)
    return b"%s: %d %s" % (name.encode(), p.returncode, p.stdout)


def _views(git: GitRunner, top: Path) -> list[bytes]:
    """Every worktree's refs, HEAD and HEAD's reflog (git writes the current
    worktree's HEAD log when its branch moves), and the branches' reflogs."""
    return [git.out(["for-each-ref", "--format=%(refname) %(objectname)"], cwd=top / d)
            + git.run(["rev-parse", "-q", "--verify", "HEAD"], cwd=top / d, check=False).stdout
            + _reflog(git, top / d, "HEAD")
            for d in ("repo", "wt1", "wt2")] + [
                _reflog(git, top / "repo", b) for b in ("refs/heads/main", "refs/heads/wt1")]


def _same(git: GitRunner, top: Path, where: str, args: list[str], stdin: bytes = b"") -> None:
    twin = top.with_name("git")
    shutil.rmtree(twin, ignore_errors=True)
    shutil.copytree(top, twin, symlinks=True)
    for gitfile in (twin / "wt1" / ".git", twin / "wt2" / ".git"):      # repoint the copy
        gitfile.write_text(gitfile.read_text().replace(str(top), str(twin)))
    for wt in ("wt1", "wt2"):
        back = twin / "repo" / ".git" / "worktrees" / wt / "gitdir"
        back.write_text(back.read_text().replace(str(top), str(twin)))
    got = run_lab(args, cwd=top / where, stdin=stdin)
    p = git.run(args, cwd=twin / where, input=stdin, check=False)
    want = (p.returncode, p.stdout, p.stderr.replace(os.fsencode(twin), os.fsencode(top)))
    assert got == want, (where, args)
    assert _views(git, top) == _views(git, twin), (where, args)


@pytest.mark.parametrize("where,args", [
    ("wt1", ["update-ref", "refs/bisect/one", "HEAD"]),
    ("wt1", ["update-ref", "refs/heads/shared", "HEAD"]),
    ("wt1", ["update-ref", "refs/worktree/own", "HEAD~"]),
    ("wt1", ["update-ref", "HEAD", "HEAD~"]),
    ("wt1", ["update-ref", "-m", "moved", "refs/heads/wt1", "HEAD~"]),
    ("wt1", ["update-ref", "-m", "moved", "refs/heads/main", "HEAD"]),
    ("wt1", ["update-ref", "-d", "refs/heads/wt1"]),
    ("repo", ["update-ref", "-m", "from main", "worktrees/wt1/HEAD", "HEAD"]),
    ("wt2", ["update-ref", "-m", "to main", "main-worktree/HEAD", "refs/heads/wt1"]),
    ("wt2", ["update-ref", "--no-deref", "HEAD", "main"]),
    ("repo", ["update-ref", "worktrees/wt1/refs/bisect/from-main", "HEAD"]),
    ("wt1", ["update-ref", "worktrees/wt2/refs/bisect/from-wt1", "HEAD"]),
    ("wt2", ["update-ref", "main-worktree/refs/bisect/to-main", "HEAD"]),
    ("wt2", ["update-ref", "main-worktree/HEAD", "HEAD"]),
    # git's messages and its is_branch name the ref as queued (the lab named the bare
    # ref, and refused a tree in worktrees/<w>/HEAD as in a branch)
    ("repo", ["update-ref", "worktrees/wt1/refs/bisect/nope", "HEAD", "HEAD~"]),
    ("repo", ["update-ref", "--no-deref", "worktrees/wt1/HEAD", "HEAD^{tree}"]),
    # a reftable store reads the bare name (git's backend_for), writes the name as queued
    ("wt1", ["update-ref", "--no-deref", "main-worktree/HEAD", "HEAD", "HEAD~"]),
    ("repo", ["update-ref", "--no-deref", "-m", "m", "worktrees/wt1/HEAD", "HEAD", "HEAD"]),
    ("wt2", ["update-ref", "--no-deref", "main-worktree/HEAD", "HEAD^{tree}"]),
    ("wt1", ["show-ref"]),
    ("wt1", ["show-ref", "--head"]),
    ("wt2", ["show-ref", "--verify", "HEAD"]),
    ("wt1", ["show-ref", "--exists", "refs/heads/wt1"]),
    ("repo", ["show-ref", "--verify", "worktrees/wt1/HEAD"]),
])
def test_worktree_commands_like_git(git: GitRunner, top: Path, where: str,
                                    args: list[str]) -> None:
    git.run(["update-ref", "refs/bisect/own-wt1", "HEAD"], cwd=top / "wt1")
    _same(git, top, where, args)


def test_one_transaction_over_two_stores(git: GitRunner, top: Path) -> None:
    stdin = (b"create worktrees/wt1/refs/bisect/per-worktree HEAD\n"
             b"create refs/branches/shared HEAD\n")
    _same(git, top, "repo", ["update-ref", "--stdin"], stdin)
    _same(git, top, "wt2", ["update-ref", "--stdin"],
          b"create refs/bisect/a HEAD\ncreate main-worktree/refs/bisect/b HEAD\n"
          b"update refs/heads/main HEAD\n")


@pytest.mark.parametrize("where,stdin", [
    ("wt2", b"delete main-worktree/HEAD\n"),
    ("wt1", b"verify main-worktree/refs/bisect/x\n"),
    ("repo", b"delete worktrees/wt1/HEAD\n"),
    ("repo", b"verify worktrees/nope/refs/bisect/n\n"),
    ("wt1", b"symref-update main-worktree/HEAD refs/heads/main\n"),
    ("wt1", b"update main-worktree/refs/bisect/ok HEAD\n"),
])
def test_prefixed_names_checked_as_given(git: GitRunner, top: Path, where: str,
                                         stdin: bytes) -> None:
    """git's ref_transaction_update checks the name as given: without a new id (a
    delete, a verify, a symref update) main-worktree/... and worktrees/<w>/... are not
    safe names and are refused, "refusing to update ref with bad name" (the lab routed
    them: `delete main-worktree/HEAD` from a linked worktree removed the main HEAD and
    left no repository)."""
    _same(git, top, where, ["update-ref", "--stdin"], stdin)
    assert git.run(["rev-parse", "HEAD"], cwd=top / "repo").returncode == 0


def test_bisect_refs_stay_in_their_worktree(git: GitRunner, top: Path) -> None:
    """t1400's 'handle per-worktree refs in refs/bisect'."""
    assert run_lab(["update-ref", "refs/bisect/something", "HEAD"], cwd=top / "wt1")[0] == 0
    assert b"refs/bisect" not in run_lab(["show-ref"], cwd=top / "repo")[1]
    assert run_lab(["update-ref", "refs/bisect/something", "HEAD"], cwd=top / "repo")[0] == 0
    mine = git.out(["rev-parse", "refs/bisect/something"], cwd=top / "repo")
    theirs = git.out(["rev-parse", "refs/bisect/something"], cwd=top / "wt1")
    assert mine != theirs


@pytest.mark.parametrize("stdin", [
    b"update HEAD HEAD~\nupdate refs/heads/wt1 HEAD~\n",
    b"update refs/heads/wt1 HEAD~\nupdate HEAD HEAD~\n",
    b"update HEAD HEAD~ main\n",
    b"update HEAD HEAD~ HEAD\n",
])
def test_head_split_over_two_stores_like_git(git: GitRunner, top: Path, stdin: bytes) -> None:
    """A linked worktree's HEAD and its branch live in two stores: git's checks on
    the split (the branch or HEAD queued twice) and its messages naming the
    symref still hold."""
    _same(git, top, "wt1", ["update-ref", "--stdin"], stdin)


@pytest.mark.parametrize("stdin", [b"symref-update HEAD refs/heads/main\n",
                                   b"symref-update HEAD refs/heads/nope\n",
                                   b"symref-update HEAD refs/heads/main refs/heads/wt1\n"])
def test_symref_update_of_head_follows_it_to_its_branch(git: GitRunner, top: Path,
                                                        stdin: bytes) -> None:
    """git's split_symref_update follows a linked worktree's HEAD to its branch, in
    the main store: the branch becomes the symref, HEAD's reflog and the branch's get
    the entry (none to a missing target). The lab followed only an update of an id: it
    queued the whole symref update in the worktree's store, which wrote the branch
    into the worktree's own directory, where git never reads it, and exited 0."""
    _same(git, top, "wt1", ["update-ref", "-m", "msg", "--stdin"], stdin)
    twin = top.with_name("git")
    listing = ["for-each-ref", "--format=%(refname) %(symref)"]
    assert git.out(listing, cwd=top / "repo") == git.out(listing, cwd=twin / "repo")
    own = top / "repo" / ".git" / "worktrees" / "wt1"
    assert not [p for p in own.rglob("*") if p.name in ("wt1", "main", "nope")]


HOOK = '#!/bin/sh\n{ echo "$*"; cat; } >>"$(dirname "$0")/../hook.log"\n'
REFUSING = HOOK + 'test "$1" != prepared\n'


@pytest.mark.parametrize("where,stdin", [
    ("wt2", b"create refs/bisect/a HEAD\ncreate main-worktree/refs/bisect/b HEAD\n"
            b"update refs/heads/main HEAD\n"),
    ("repo", b"create worktrees/wt1/refs/bisect/per-worktree HEAD\n"
             b"create refs/branches/shared HEAD\n"),
    ("wt1", b"create refs/heads/shared HEAD\ncreate refs/bisect/own HEAD\n"
            b"create refs/heads/other HEAD\n"),
    ("wt1", b"update HEAD HEAD~\n"),
    ("wt1", b"update refs/heads/wt1 HEAD~\ncreate refs/bisect/own HEAD\n"),
    ("wt1", b"start\ncreate refs/bisect/x HEAD\ncreate refs/heads/y HEAD\nprepare\nabort\n"),
    ("wt1", b"create refs/bisect/x HEAD\ncreate refs/heads/main HEAD\n"),   # main exists: fails
])
@pytest.mark.parametrize("script", [HOOK, REFUSING], ids=["logging", "refusing"])
def test_reference_transaction_hook_runs_once_over_two_stores(
        git: GitRunner, top: Path, where: str, stdin: bytes, script: str) -> None:
    """git runs the reference-transaction hook once per transaction, whatever stores
    its refs live in (a linked worktree's own and the shared ones), with every
    update in the order queued; the lab's transaction over two stores does too."""
    hook = top / "repo" / ".git" / "hooks" / "reference-transaction"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(script)
    hook.chmod(0o755)
    _same(git, top, where, ["update-ref", "--stdin"], stdin)
    twin = top.with_name("git")
    log = lambda t: (t / "repo" / ".git" / "hook.log").read_bytes() \
        if (t / "repo" / ".git" / "hook.log").exists() else None    # a failed one: no hook
    assert log(top) == log(twin)
