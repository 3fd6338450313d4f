"""The reference-transaction hook under `reftable-lab update-ref`, as git 2.47 runs it.

Two copies of one repository (both ref formats, some refs packed) get a hook
that logs its state argument and input lines; the same update-ref calls go to
git and to reftable-lab. The logs, stdout, stderr and exit statuses match
byte for byte: prepared / committed / aborted, the files backend's packed-refs
transaction for deletions, symref sides as "ref:<target>", a hook refusing in
"prepared" ("ref updates aborted by hook"), core.hooksPath.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.helpers.labrun import run_lab
from tests.lab.test_updateref_cli import _lab_env, _setup, _state  # noqa: F401  (fixture)

from gitbin import GitRunner

LOGGER = '#!/bin/sh\necho "$*" >>"$HOOK_LOG"\ncat >>"$HOOK_LOG"\n'
REFUSER = '#!/bin/sh\necho "$*" >>"$HOOK_LOG"\ncat >>"$HOOK_LOG"\ntest "$1" != prepared\n'

# (arguments, stdin)
CALLS: list[tuple[list[str], str]] = [
    (["HEAD", "{C1}"], ""),
    (["-d", "refs/heads/gone"], ""),                  # packed: packed-refs prepared
    (["-d", "refs/heads/nothere"], ""),
    (["--stdin"], "start\nupdate HEAD {C2} {C1}\ncreate refs/heads/new {C1}\nabort\n"),
    (["--stdin"], "start\nupdate refs/heads/side {C2}\nprepare\ncommit\n"),
    (["--stdin"], "update refs/heads/side {C1} {C1}\n"),   # fails in the backend: no hook
    (["--no-deref", "--stdin"], "start\nsymref-create refs/heads/sym refs/heads/main\n"
                                "symref-create refs/heads/symd refs/heads/main\ncommit\n"),
    (["--no-deref", "--stdin"], "start\nsymref-verify refs/heads/sym refs/heads/main\n"
                                "symref-delete refs/heads/symd refs/heads/main\n"
                                "symref-update refs/heads/sym refs/heads/side ref refs/heads/main\n"
                                "prepare\ncommit\n"),
    (["--stdin"], ""),
    (["--stdin"], "start\n"),                          # input ends: aborted
]


@pytest.mark.parametrize("ref_format", ["reftable", "files"])
@pytest.mark.parametrize("hook", ["logger", "refuser", "hookspath"])
def test_reference_transaction_hook(make_repo, git: GitRunner, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch, ref_format: str,
                                    hook: str) -> None:
    base, ids = _setup(make_repo, git, ref_format=ref_format)
    git.out(["pack-refs", "--all"], cwd=base)
    git.out(["update-ref", "refs/heads/loose", ids["C1"]], cwd=base)
    if hook == "hookspath":
        hooks = base / "myhooks"
        git.out(["config", "core.hooksPath", str(hooks)], cwd=base)
    else:
        hooks = base / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    script = hooks / "reference-transaction"
    script.write_text(REFUSER if hook == "refuser" else LOGGER)
    script.chmod(0o755)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    shutil.copytree(base, ours, symlinks=True)
    shutil.copytree(base, theirs, symlinks=True)
    if hook == "hookspath":                            # each copy's own hooks directory
        for copy in (ours, theirs):
            git.out(["config", "core.hooksPath", str(copy / "myhooks")], cwd=copy)
    for args, text in CALLS:
        data = text.format(**ids).encode()
        argv = ["update-ref", "-m", "hooked", *[a.format(**ids) for a in args]]
        monkeypatch.setenv("HOOK_LOG", str(theirs / "hook.log"))
        g = git.run(argv, cwd=theirs, input=data, check=False,
                    env={"HOOK_LOG": str(theirs / "hook.log")})
        monkeypatch.setenv("HOOK_LOG", str(ours / "hook.log"))
        assert run_lab(argv, cwd=ours, stdin=data) == (g.returncode, g.stdout, g.stderr), argv
        assert (ours / "hook.log").read_bytes() == (theirs / "hook.log").read_bytes(), argv
    assert _state(git, ours) == _state(git, theirs)


def test_a_hook_that_reads_nothing_is_no_broken_pipe(make_repo, git: GitRunner) -> None:
    """A hook that exits without reading its input (more than a pipe holds): git ignores
    SIGPIPE while it writes the lines and goes on; so does the program, run as a
    process (its own SIGPIPE death is for a closed stdout only)."""
    from tests.helpers.labrun import run_lab_proc
    seen = []
    for who in ("git", "lab"):
        repo = make_repo(who, ref_format="files")
        git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=repo)
        oid = git.out(["rev-parse", "HEAD"], cwd=repo).decode().strip()
        hook = repo / ".git" / "hooks" / "reference-transaction"
        hook.write_text("#!/bin/sh\nexit 0\n")
        hook.chmod(0o755)
        stdin = "".join(f"create refs/heads/branch-with-a-longer-name-{i:05d} {oid}\n"
                        for i in range(3000)).encode()
        args = ["update-ref", "--stdin"]
        if who == "git":
            p = git.run(args, cwd=repo, input=stdin, check=False)
            got = (p.returncode, p.stdout, p.stderr)
        else:
            got = run_lab_proc(args, cwd=repo, stdin=stdin, env=git.env)
        refs = git.out(["for-each-ref", "--format=%(refname)"], cwd=repo).count(b"\n")
        seen.append((got, refs))
    assert seen[1] == seen[0] == ((0, b"", b""), 3001)
