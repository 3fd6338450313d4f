"""The time measure's workers run in the variant's whole environment.

pyperf's manager hands the worker processes it spawns only PATH, HOME, PYTHONPATH and a
few more of its own environment. A git@<commit> peer is a REFTABLE_LAB_GIT naming that
build, so without --copy-env every timed git peer ran the provisioned git: C trees
before and after a patch timed the same binary (the instruction, allocation and
syscall measures, which run no pyperf manager, were right)."""
from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

from gitbin import GitRunner, hermetic_env
from reftable_core.flags import Flags
from lab.measure.time import time_round, time_worker


def _recording_git(tmp_path: Path, real: str) -> tuple[Path, Path]:
    """A git that logs each run to a file, then runs the real one."""
    log = tmp_path / "runs.log"
    wrapper = tmp_path / "git-build" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {real} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper, log


def _worker_cmd(gitdir: Path, name: str) -> list[str]:
    return [sys.executable, "-m", "lab.worker", "--workload", "git_show_ref",
            "--gitdir", str(gitdir), "--params", json.dumps({"probe": "refs/heads/main"}),
            "--lab-flags", Flags().to_spec(), "--name", name, "--quiet"]


def test_a_timed_git_peer_runs_the_build_its_variant_names(
        git: GitRunner, make_repo, tmp_path: Path) -> None:
    repo = make_repo(ref_format="reftable")
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=repo)
    git.run(["branch", "-M", "main"], cwd=repo)
    wrapper, log = _recording_git(tmp_path, git.git)
    env = hermetic_env(None, {"REFTABLE_LAB_GIT": str(wrapper)})
    values, rounds = time_round(_worker_cmd(repo / ".git", "peer"), tmp_path / "r.json",
                                "peer", "quick", env)
    assert len(rounds) == 1 and values and all(v > 0 for v in values)
    runs = log.read_text().splitlines()
    assert len(runs) >= len(values) and all("show-ref" in r for r in runs)
    log.unlink()
    values = time_worker(_worker_cmd(repo / ".git", "peer"), tmp_path / "w.json", "quick", env)
    assert values and len(log.read_text().splitlines()) >= len(values)
