"""A reading command imports only what it uses (issue 15: start-up is part of every
command's cost; `python -X importtime` showed each of these in `show-ref`'s start).

Each command runs in a fresh interpreter over a repository git made, prints what
git prints, and leaves out the modules only other paths need: a migration (shutil,
and with it bz2 and lzma), hooks (subprocess), trace2 (json, hashlib, socket), the
reflog identity without config (getpass, socket), a contended lock or a stack reload
that retries (random), the table writer, and the argparse parsers of the lab's own
commands (a git-like command parses its arguments as git does).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitbin import GitRunner

NOT_IMPORTED = ("shutil", "bz2", "lzma", "subprocess", "json", "hashlib", "socket",
                "getpass", "random", "configparser", "reftable_core.reftable.writer",
                "reftable_core.reftable.block_writer", "reftable_core.refs.migrate",
                "lab.commands.bench")
REPO_ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
from lab.cli import main
status = main(sys.argv[1:])
sys.stdout.flush()
sys.stderr.write("MODULES " + " ".join(sorted(sys.modules)) + "\\n")
sys.exit(status)
"""


def _lab(args: list[str], base_env: dict[str, str]) -> tuple[int, bytes, set[str]]:
    env = dict(base_env)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO_ROOT / "core"), str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, "-c", SCRIPT, *args], capture_output=True,
                          env=env, timeout=120)
    line = [ln for ln in proc.stderr.decode().splitlines() if ln.startswith("MODULES ")]
    assert line, proc.stderr.decode()
    return proc.returncode, proc.stdout, set(line[-1].split()[1:])


@pytest.mark.parametrize("ref_format", ["reftable", "files"])
@pytest.mark.parametrize("command", [
    ["show-ref"], ["show-ref", "--exists", "refs/heads/nope"], ["show-ref", "main"],
    ["show-ref", "--verify", "refs/tags/v1"], ["for-each-ref"],
    ["for-each-ref", "--format=%(refname)", "refs/heads/"]])
def test_reading_command_imports_only_what_it_uses(
        git: GitRunner, make_repo, ref_format: str, command: list[str]) -> None:
    repo = make_repo(ref_format=ref_format)
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=repo)
    git.run(["tag", "-a", "-m", "tag", "v1"], cwd=repo)
    git.run(["branch", "side"], cwd=repo)
    if ref_format == "files":
        git.run(["pack-refs", "--all"], cwd=repo)
    gitdir = str(repo / ".git")
    status, out, modules = _lab(["--git-dir", gitdir, *command], git.env)
    want = git.run(["--git-dir", gitdir, *command], check=False)
    assert (status, out) == (want.returncode, want.stdout)
    assert not modules & set(NOT_IMPORTED), sorted(modules & set(NOT_IMPORTED))
    assert "reftable_core.repo" in modules          # it did open the repository
