"""The config git reads before the repository's (system, XDG, ~/.gitconfig, and the
GIT_CONFIG_GLOBAL / GIT_CONFIG_SYSTEM / GIT_CONFIG_NOSYSTEM variables), and the
lab beside git: core.logAllRefUpdates=false set globally means no reflog record
from update-ref, in both ref formats (git's t0613 #10, #11)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from reftable_core.config import config_files, read_config

from gitbin import GitRunner, hermetic_env
from tests.helpers.labrun import run_lab


def test_levels_in_gits_order(tmp_path: Path) -> None:
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    (xdg / "git").mkdir(parents=True)
    home.mkdir()
    system = tmp_path / "system"
    system.write_text("[core]\n\tlogAllRefUpdates = always\n\tfsync = none\n[extensions]\n"
                      "\trefStorage = reftable\n")
    (xdg / "git" / "config").write_text("[core]\n\tlogAllRefUpdates = false\n\tabbrev = 9\n")
    (home / ".gitconfig").write_text("[core]\n\tabbrev = 12\n")
    gitdir = tmp_path / "repo"
    gitdir.mkdir()
    (gitdir / "config").write_text("[core]\n\tbare = true\n")
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(xdg), "GIT_CONFIG_SYSTEM": str(system)}
    assert config_files(env) == [str(system), str(xdg / "git" / "config"),
                                 str(home / ".gitconfig")]
    cfg = read_config(str(gitdir), env)
    assert cfg == {"core.logallrefupdates": "false", "core.fsync": "none",
                   "core.abbrev": "12", "core.bare": "true"}     # extensions: the repo's only
    assert config_files({**env, "GIT_CONFIG_NOSYSTEM": "1"})[0] == str(xdg / "git" / "config")
    assert config_files({**env, "GIT_CONFIG_GLOBAL": "/g"}) == [str(system), "/g"]
    assert config_files({"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "true"}) == [
        os.path.join(home, ".config", "git", "config"), str(home / ".gitconfig")]


@pytest.mark.parametrize("fmt", ["files", "reftable"])
def test_global_log_all_ref_updates_false(git_path: str, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[core]\n\tlogAllRefUpdates = false\n")
    env = hermetic_env(home)
    env.pop("GIT_CONFIG_GLOBAL", None)            # git reads $HOME/.gitconfig
    git = GitRunner(git_path, env)
    repo = tmp_path / "repo"
    git.run(["init", "-q", f"--ref-format={fmt}", str(repo)])
    git.run(["commit", "-q", "--allow-empty", "-m", "c"], cwd=repo)
    tip = git.out(["rev-parse", "HEAD"], cwd=repo).strip()
    git.run(["update-ref", "refs/heads/by-git", tip], cwd=repo)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    status, _, err = run_lab(["update-ref", "refs/heads/by-lab", tip.decode()], cwd=repo)
    assert (status, err) == (0, b"")
    exists = [git.run(["reflog", "exists", name], cwd=repo, check=False).returncode
              for name in ("refs/heads/by-git", "refs/heads/by-lab")]
    assert exists == [1, 1]                        # neither wrote a reflog
