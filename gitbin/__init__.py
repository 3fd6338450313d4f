"""Locate and run the provisioned git (>= 2.45, reftable support).

find_git(): $REFTABLE_LAB_GIT if set, else scripts/provision-git.sh (which
uses the system git when new enough, or builds one once into a cache folder).
GitRunner runs git with a pinned, hermetic environment (no user/system config,
fixed identity and dates) so outputs are reproducible. cache_root() is the
cache folder the provisioning script uses ($REFTABLE_LAB_CACHE, else
$XDG_CACHE_HOME/reftable-lab, else ~/.cache/reftable-lab); provisioned_source()
the git source tree it built there, if any. Builds of git at other revisions
are lab.builds'.
"""
from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path
from typing import Mapping, Sequence

REPO_ROOT = Path(__file__).resolve().parent.parent
PROVISION_SCRIPT = REPO_ROOT / "scripts" / "provision-git.sh"

PINNED_DATE = "1700000000 +0000"


class GitNotAvailable(RuntimeError):
    pass


def cache_root() -> Path:
    """The cache folder (the provisioning script's CACHE_ROOT)."""
    if os.environ.get("REFTABLE_LAB_CACHE"):
        return Path(os.environ["REFTABLE_LAB_CACHE"])
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "reftable-lab"


def provisioned_source() -> Path | None:
    """The git source tree the provisioning script built (its .built stamp names it),
    or None when there is none."""
    stamp = cache_root() / "git-src" / ".built"
    if not stamp.is_file():
        return None
    tree = Path(stamp.read_text().strip())
    return tree if os.access(tree / "git", os.X_OK) else None


@functools.lru_cache(maxsize=1)
def find_git() -> str:
    env_git = os.environ.get("REFTABLE_LAB_GIT")
    if env_git and os.access(env_git, os.X_OK):
        return env_git
    if not PROVISION_SCRIPT.exists():
        raise GitNotAvailable(f"no {PROVISION_SCRIPT}; set REFTABLE_LAB_GIT to a git >= 2.45")
    proc = subprocess.run(["bash", str(PROVISION_SCRIPT)], capture_output=True, text=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise GitNotAvailable(f"provision-git.sh failed:\n{proc.stderr[-4000:]}")
    git = proc.stdout.strip().splitlines()[-1]
    os.environ["REFTABLE_LAB_GIT"] = git    # once per run: workers and peers inherit it
    return git


def hermetic_env(home: str | os.PathLike[str] | None = None,
                 extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment for reproducible git runs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "A U Thor",
        "GIT_AUTHOR_EMAIL": "author@example.com",
        "GIT_COMMITTER_NAME": "C O Mitter",
        "GIT_COMMITTER_EMAIL": "committer@example.com",
        "GIT_AUTHOR_DATE": PINNED_DATE,
        "GIT_COMMITTER_DATE": PINNED_DATE,
        "LC_ALL": "C",
        "LANG": "C",
        "TZ": "UTC",
        "GIT_TERMINAL_PROMPT": "0",
    })
    if home is not None:
        env["HOME"] = str(home)
    if extra:
        env.update(extra)
    return env


class GitRunner:
    """Run the provisioned git in a repository with a hermetic environment."""

    def __init__(self, git: str | None = None, env: Mapping[str, str] | None = None) -> None:
        self.git = git or find_git()
        self.env = dict(env) if env is not None else hermetic_env()

    def run(self, args: Sequence[str], cwd: str | os.PathLike[str] | None = None,
            input: bytes | None = None, check: bool = True,
            env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
        full_env = dict(self.env)
        if env:
            full_env.update(env)
        proc = subprocess.run([self.git, *args], cwd=cwd, input=input, env=full_env,
                              capture_output=True)
        if check and proc.returncode != 0:
            raise subprocess.CalledProcessError(proc.returncode, [self.git, *args],
                                                proc.stdout, proc.stderr)
        return proc

    def out(self, args: Sequence[str], cwd: str | os.PathLike[str] | None = None,
            input: bytes | None = None, env: Mapping[str, str] | None = None) -> bytes:
        return self.run(args, cwd=cwd, input=input, env=env).stdout

    def version(self) -> str:
        return self.out(["--version"]).decode().strip()
