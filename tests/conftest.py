"""Shared pytest fixtures: the provisioned git and throw-away repositories."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from lab.gitbin import GitRunner, find_git, hermetic_env


@pytest.fixture(scope="session")
def git_path() -> str:
    return find_git()


@pytest.fixture()
def git(git_path: str, tmp_path: Path) -> GitRunner:
    """A GitRunner with a hermetic environment (HOME inside tmp_path)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return GitRunner(git_path, hermetic_env(home))


@pytest.fixture()
def make_repo(git: GitRunner, tmp_path: Path) -> Callable[..., Path]:
    """make_repo(name, ref_format="reftable", object_format="sha1", config={}) -> worktree path."""
    def make(name: str = "repo", ref_format: str = "reftable", object_format: str = "sha1",
             config: dict[str, str] | None = None, bare: bool = False) -> Path:
        path = tmp_path / name
        args = ["init", "-q", f"--ref-format={ref_format}", f"--object-format={object_format}",
                "-b", "main"]
        if bare:
            args.append("--bare")
        git.run([*args, str(path)])
        for k, v in (config or {}).items():
            git.run(["config", k, v], cwd=path)
        return path
    return make
