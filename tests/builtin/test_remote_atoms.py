"""ref_filter.remote_atoms: %(upstream) and %(push) with every argument, called directly,
against `git for-each-ref` on branches whose tracking config git itself writes
(branch.<b>.remote/merge, a "." remote, remote.<r>.fetch, pushRemote, remote.pushDefault,
push.default in each mode, a push refspec, a gone upstream)."""
from __future__ import annotations

from pathlib import Path

import pytest
from reftable_core.builtin.gitlike import Die
from reftable_core.builtin.ref_filter.atom import RefItem
from reftable_core.builtin.ref_filter.format import Context
from reftable_core.builtin.ref_filter.remote_atoms import REMOTE_ATOMS
from reftable_core.repo import open_repo

from gitbin import GitRunner, hermetic_env


@pytest.fixture(scope="module")
def mgit(git_path: str, tmp_path_factory: pytest.TempPathFactory) -> GitRunner:
    return GitRunner(git_path, hermetic_env(tmp_path_factory.mktemp("home")))


def _commit(g: GitRunner, d: Path, msg: str) -> None:
    (d / "f").write_text(msg)
    g.run(["add", "f"], cwd=d)
    g.run(["commit", "-q", "-m", msg], cwd=d)


@pytest.fixture(scope="module")
def repo(mgit: GitRunner, tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("remote")
    up = base / "up"
    g = mgit
    g.run(["init", "-q", "-b", "main", str(up)])
    _commit(g, up, "u1")
    _commit(g, up, "u2")
    g.run(["branch", "other"], cwd=up)
    d = base / "r"
    g.run(["clone", "-q", str(up), str(d)])
    g.run(["remote", "add", "second", str(up)], cwd=d)
    g.run(["fetch", "-q", "second"], cwd=d)
    g.run(["reset", "-q", "--hard", "HEAD~1"], cwd=d)
    _commit(g, d, "local")                                  # ahead 1, behind 1
    g.run(["branch", "behind", "origin/main~1"], cwd=d)
    g.run(["branch", "--set-upstream-to=origin/main", "behind"], cwd=d)
    g.run(["branch", "same", "origin/other"], cwd=d)
    g.run(["branch", "--set-upstream-to=origin/other", "same"], cwd=d)
    g.run(["branch", "ahead", "main"], cwd=d)
    g.run(["branch", "--set-upstream-to=origin/main~0", "ahead"], cwd=d, check=False)
    g.run(["config", "branch.ahead.remote", "."], cwd=d)
    g.run(["config", "branch.ahead.merge", "refs/heads/behind"], cwd=d)
    g.run(["branch", "gone", "main"], cwd=d)
    g.run(["config", "branch.gone.remote", "origin"], cwd=d)
    g.run(["config", "branch.gone.merge", "refs/heads/vanished"], cwd=d)
    g.run(["branch", "pushy", "main"], cwd=d)
    g.run(["config", "branch.pushy.remote", "origin"], cwd=d)
    g.run(["config", "branch.pushy.merge", "refs/heads/main"], cwd=d)
    g.run(["config", "branch.pushy.pushRemote", "second"], cwd=d)
    g.run(["config", "remote.second.push", "refs/heads/pushy:refs/heads/other"], cwd=d)
    g.run(["branch", "none", "main"], cwd=d)
    g.run(["tag", "t1"], cwd=d)
    return d


ARGS = ["", ":short", ":lstrip=1", ":rstrip=-2", ":track", ":trackshort", ":track,nobracket",
        ":remotename", ":remoteref", ":nobracket,track", ":lstrip=-1", ":strip=2"]
CONFIGS = [[], ["-c", "push.default=current"], ["-c", "push.default=upstream"],
           ["-c", "push.default=nothing"], ["-c", "push.default=matching"],
           ["-c", "remote.pushDefault=second"], ["-c", "push.default=simple"]]


def _refs(g: GitRunner, d: Path) -> list[bytes]:
    return g.out(["for-each-ref", "--format=%(refname)"], cwd=d).split()


@pytest.mark.parametrize("config", range(len(CONFIGS)))
@pytest.mark.parametrize("atom", ["upstream", "push"])
def test_remote_atoms_equal_git(mgit: GitRunner, repo: Path, atom: str, config: int) -> None:
    cfg = CONFIGS[config]
    command = {k: v for k, v in (c.split("=", 1) for c in cfg[1::2])}
    r = open_repo(repo / ".git", command_config={k.lower(): v for k, v in command.items()})
    ctx = Context(r, False)
    names = _refs(mgit, repo)
    for arg in ARGS:
        sep = "\x01"
        want = mgit.out([*cfg, "for-each-ref", f"--format=%({atom}{arg}){sep}"],
                        cwd=repo).split(sep.encode() + b"\n")[:-1]
        a = REMOTE_ATOMS[atom](ctx, atom, arg[1:] or None)
        got = [a.value(ctx, RefItem(n, b"", None), None).text for n in names]
        assert got == want, (atom, arg, cfg)


def test_some_values_are_not_empty(mgit: GitRunner, repo: Path) -> None:
    out = mgit.out(["for-each-ref", "--format=%(upstream:track)%(push:short)",
                    "refs/heads"], cwd=repo).decode()
    assert "[ahead 1, behind 1]" in out and "[gone]" in out and "second/other" in out


def test_bad_argument_is_gits(mgit: GitRunner, repo: Path) -> None:
    p = mgit.run(["for-each-ref", "--format=%(upstream:track,bogus)"], cwd=repo, check=False)
    assert p.stderr == b"fatal: unrecognized %(upstream) argument: track,bogus\n"
    with pytest.raises(Die) as e:
        REMOTE_ATOMS["upstream"](None, "upstream", "track,bogus")
    assert e.value.msg == "unrecognized %(upstream) argument: track,bogus"
