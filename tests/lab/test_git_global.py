"""git's global options and repository discovery in `reftable-lab show-ref|update-ref`.

`reftable-lab -C DIR`, `-c name=value`, `--git-dir`, discovery from a subdirectory
and GIT_CEILING_DIRECTORIES give git's stdout, stderr and status; the
GIT_CONFIG_PARAMETERS the lab writes for -c is byte-for-byte git's, and the
config it carries reaches the ref store (core.logAllRefUpdates creates a reflog).
"""
from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

import pytest
from reftable_core.config import env_config, parse_config_parameters, push_config_parameter

from gitbin import GitRunner
from tests.helpers.labrun import REPO_ROOT, run_lab_proc

FORMATS = ["files", "reftable"]


def _env(git: GitRunner, **extra: str) -> dict[str, str]:
    env = dict(git.env)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT / "core"), str(REPO_ROOT)])
    env.update(extra)
    return env


def _git(git: GitRunner, args: list[str], cwd: Path, **extra: str) -> tuple[int, bytes, bytes]:
    p = git.run(args, cwd=cwd, check=False, env=extra)
    return p.returncode, p.stdout, p.stderr


def _same(git: GitRunner, args: list[str], cwd: Path, **extra: str) -> None:
    want = _git(git, args, cwd, **extra)
    got = run_lab_proc(args, cwd=cwd, env=_env(git, **extra))
    assert got == want, (args, got, want)


@pytest.fixture(params=FORMATS)
def repo(request: pytest.FixtureRequest, make_repo, git: GitRunner) -> Path:
    path = make_repo("r", ref_format=request.param)
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=path)
    git.run(["tag", "v1"], cwd=path)
    (path / "sub" / "deep").mkdir(parents=True)
    return path


@pytest.mark.parametrize("args", [
    ["-C", "r", "show-ref"],
    ["-C", "r", "-C", "sub", "show-ref", "--head"],
    ["-C", "", "-C", "r/sub/deep", "show-ref", "v1"],
    ["--git-dir=r/.git", "show-ref", "--verify", "refs/tags/v1"],
    ["--git-dir", "r/.git", "show-ref", "-s", "main"],
    ["--no-pager", "-C", "r", "show-ref", "--exists", "refs/tags/v1"],
    ["-C", "nowhere", "show-ref"],
    ["-C"],
    ["-C", "r", "-c"],
    ["--git-dir"],
    ["--git-dir=nowhere", "show-ref"],
    ["-c", "core.bogus=1", "-C", "r", "show-ref", "--exists", "refs/heads/nope"],
])
def test_global_options_like_git(git: GitRunner, repo: Path, args: list[str]) -> None:
    _same(git, args, repo.parent)


def test_discovery_from_a_subdirectory(git: GitRunner, repo: Path) -> None:
    _same(git, ["show-ref"], repo / "sub" / "deep")
    _same(git, ["update-ref", "refs/heads/x", "HEAD"], repo / "sub")
    _same(git, ["show-ref", "x"], repo / "sub" / "deep")


def test_ceiling_directories_stop_discovery(git: GitRunner, repo: Path) -> None:
    _same(git, ["show-ref"], repo / "sub" / "deep", GIT_CEILING_DIRECTORIES=str(repo))
    _same(git, ["show-ref"], repo / "sub" / "deep", GIT_CEILING_DIRECTORIES=str(repo / "sub"))
    _same(git, ["show-ref"], repo, GIT_CEILING_DIRECTORIES=str(repo.parent))


def test_config_parameters_are_gits(git: GitRunner, tmp_path: Path) -> None:
    pairs = [("alias.e", "!env"), ("a.B.c", "it's!"), ("x.y", None), ("core.fsync", "")]
    args = [a for k, v in pairs for a in ("-c", k if v is None else f"{k}={v}")]
    _, out, _ = _git(git, [*args, "e"], tmp_path)
    line = next(ln for ln in out.decode().splitlines() if ln.startswith("GIT_CONFIG_PARAMETERS="))
    env: dict[str, str] = {}
    for k, v in pairs:
        push_config_parameter(env, k, v)
    assert env["GIT_CONFIG_PARAMETERS"] == line.split("=", 1)[1]
    assert env_config(env) == {"alias.e": "!env", "a.B.c": "it's!", "x.y": "true",
                               "core.fsync": ""}
    assert parse_config_parameters("'Core.X=1' 'Sec.Sub.Key'='v' 'b.c'") == \
        {"core.x": "1", "sec.Sub.key": "v", "b.c": "true"}
    counted = {"GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "A.b", "GIT_CONFIG_VALUE_0": "1",
               "GIT_CONFIG_KEY_1": "c.d", "GIT_CONFIG_VALUE_1": "2",
               "GIT_CONFIG_PARAMETERS": "'a.b'='3'"}
    assert env_config(counted) == {"a.b": "3", "c.d": "2"}


@pytest.mark.parametrize("how", ["option", "environment"])
def test_command_line_config_reaches_the_ref_store(git: GitRunner, make_repo, how: str) -> None:
    """A bare repository logs no ref updates unless core.logAllRefUpdates says so."""
    outs = []
    for name, run in (("g", _git), ("l", run_lab_proc)):
        path = make_repo(name, ref_format="files", bare=True)
        tree = git.out(["mktree"], cwd=path, input=b"").decode().strip()
        oid = git.out(["commit-tree", "-m", "x", tree], cwd=path).decode().strip()
        if how == "option":
            args = ["-c", "core.logAllRefUpdates=true", "update-ref", "refs/heads/x", oid]
            extra: dict[str, str] = {}
        else:
            args = ["update-ref", "refs/heads/x", oid]
            extra = {"GIT_CONFIG_PARAMETERS": "'core.logallrefupdates'='true'"}
        if run is _git:
            status = _git(git, args, path, **extra)[0]
        else:
            status = run_lab_proc(args, cwd=path, env=_env(git, **extra))[0]
        assert status == 0
        outs.append((path / "logs" / "refs" / "heads" / "x").exists())
    assert outs == [True, True]


def _read_line(proc: subprocess.Popen[bytes], timeout: float = 20.0) -> bytes:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "no answer while stdin stays open"
    return proc.stdout.readline()


def test_stdin_answers_each_command_as_it_arrives(git: GitRunner, repo: Path) -> None:
    """git's t1400 "transaction can commit after prepare" pattern: stdin stays open."""
    oid = git.out(["rev-parse", "HEAD"], cwd=repo).strip()
    proc = subprocess.Popen([sys.executable, "-m", "lab.cli", "update-ref", "--stdin"],
                            cwd=repo, env=_env(git), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None
    try:
        for send, answer in ((b"start\n", b"start: ok\n"),
                             (b"create refs/heads/streamed " + oid + b"\nprepare\n",
                              b"prepare: ok\n"),
                             (b"commit\n", b"commit: ok\n")):
            proc.stdin.write(send)
            proc.stdin.flush()
            assert _read_line(proc) == answer
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert git.out(["rev-parse", "refs/heads/streamed"], cwd=repo).strip() == oid


@pytest.mark.parametrize("content", [None, b"", b"{oid}\n", b"{oid}\tbranch 'x' of y\n",
                                     b"ref: refs/heads/main\n"])
@pytest.mark.parametrize("name", ["FETCH_HEAD", "MERGE_HEAD"])
def test_exists_reads_pseudo_refs_from_the_git_dir(git: GitRunner, repo: Path, name: str,
                                                   content: bytes | None) -> None:
    """git's is_pseudo_ref: a file in the git dir under either ref format."""
    if content is not None:
        oid = git.out(["rev-parse", "HEAD"], cwd=repo).strip()
        (repo / ".git" / name).write_bytes(content.replace(b"{oid}", oid))
    _same(git, ["show-ref", "--exists", name], repo)
