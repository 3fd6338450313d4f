"""Shared pytest fixtures: the provisioned git and throw-away repositories.

REFTABLE_LAB_CORE=compiled runs the tests against reftable_core compiled by mypyc
(lab.builds.compiled_core(), built on first use), REFTABLE_LAB_CORE=cython against the
one compiled by Cython (lab.builds.cython_core()): its folder goes first on sys.path
and on the PYTHONPATH of the processes the tests start, before anything imports
reftable_core, and the hot loops' module must then be the extension module.
REFTABLE_LAB_CORE=interpreted (or unset) is the source tree. Neither the system's nor
the user's git config is read by what the tests run (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable

import pytest

from lab.builds import CORE_BUILDERS, CORE_BUILDS
from gitbin import REPO_ROOT, GitRunner, find_git, hermetic_env

CORE = os.environ.get("REFTABLE_LAB_CORE") or "interpreted"

# A counted process lists the folders on its sys.path as it imports, the checkout's root
# among them (the current directory of `python -m`, and where `lab` is imported from), and
# that listing moves its count (README, "What makes that so": one more folder there moved a
# count by 1,281). The tests that count one command twice and expect one count run beside
# tests that make folders in the root (hypothesis's database, pytest's cache, bench's
# default ./datasets and ./results), so those are made here, before any test runs (this
# module is imported by pytest's main process before it starts its workers): the root's
# listing is then the same for every count of the session.
for _made_by_tests in (".hypothesis", ".pytest_cache", "datasets", "results"):
    (REPO_ROOT / _made_by_tests).mkdir(exist_ok=True)

# no system or user config reaches the lab in a test, as git's test-lib keeps it from git
# (the lab reads them as git does: reftable_core.config.config_files); a test that
# wants one sets these itself
os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
os.environ["GIT_CONFIG_GLOBAL"] = os.devnull


def _use_compiled_core(name: str) -> None:
    assert "reftable_core" not in sys.modules, "reftable_core was imported before conftest"
    folder = str(CORE_BUILDERS[name]())
    sys.path.insert(0, folder)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (folder, os.environ.get("PYTHONPATH")) if p)
    from reftable_core.reftable import loops    # only now: the import this check is about
    assert loops.__file__ and loops.__file__.endswith(".so"), loops.__file__


if CORE not in CORE_BUILDS:
    raise pytest.UsageError(f"REFTABLE_LAB_CORE={CORE}: not one of {', '.join(CORE_BUILDS)}")
if CORE in CORE_BUILDERS:
    _use_compiled_core(CORE)


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
