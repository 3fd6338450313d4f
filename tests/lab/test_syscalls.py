"""lab.measure.syscalls: exact system calls of a workload's timed region, per call."""
from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gitbin import GitRunner
from lab.measure import syscalls
from lab.measure.registry import MEASURES
from lab.results import METRICS, UNITS

pytestmark = pytest.mark.skipif(not syscalls.available(), reason="needs strace")


def _repo(make_repo: Callable[..., Path], git: GitRunner) -> Path:
    """A reftable repository with one commit and the manifest facts update_ref_create reads."""
    repo = make_repo()
    git.run(["commit", "-q", "--allow-empty", "-m", "c"], cwd=repo)
    tip = git.out(["rev-parse", "HEAD"], cwd=repo).decode().strip()
    (repo / "manifest.json").write_text(json.dumps({"facts": {"tip": tip}}))
    return repo / ".git"


def _cmd(workload: str, gitdir: Path, params: dict, flags: str = "") -> list[str]:
    return [sys.executable, "-m", "lab.worker", "--workload", workload, "--gitdir", str(gitdir),
            "--params", json.dumps(params), "--lab-flags", flags, "--syscalls"]


def test_registered_and_in_the_result_model() -> None:
    assert "syscalls" in MEASURES
    assert "syscalls" in METRICS and UNITS["syscalls-openat"] == "system calls"


@pytest.mark.parametrize("workload", ["update_ref_create", "git_update_ref_create"])
def test_counts_repeat_exactly(make_repo: Callable[..., Path], git: GitRunner,
                               workload: str) -> None:
    """Two counts of one variant: the same calls, each the same number of times."""
    gitdir = _repo(make_repo, git)
    peer = workload.startswith("git_")
    a = syscalls.count_syscalls(_cmd(workload, gitdir, {"refs": 20}), children=peer)
    b = syscalls.count_syscalls(_cmd(workload, gitdir, {"refs": 20}), children=peer)
    assert a.by_call == b.by_call and a.total > 0
    assert a.by_call.get("rename", 0) >= 1          # the commit renames tables.list's lock


def test_only_the_region_counts(make_repo: Callable[..., Path], git: GitRunner) -> None:
    """More refs add work inside the region only: the start-up, imports and the copy of
    the repository are not counted, so 40 creates make more newfstatat calls than 20
    (the per-read up-to-date checks) yet the same renames and opens of the commit."""
    gitdir = _repo(make_repo, git)
    small = syscalls.count_syscalls(_cmd("update_ref_create", gitdir, {"refs": 20}))
    big = syscalls.count_syscalls(_cmd("update_ref_create", gitdir, {"refs": 40}))
    assert big.by_call["newfstatat"] > small.by_call["newfstatat"]
    assert big.by_call["rename"] == small.by_call["rename"]
    assert "execve" not in small.by_call and "clone" not in small.by_call


def test_the_markers_split_a_trace() -> None:
    """own_counts on a hand-made trace: the calls between the clock pair of the
    counted segment, minus those of the time_func(0) segment."""
    def calls(*names: str) -> list[syscalls.Call]:
        return [syscalls.Call(n, "", 0) for n in names]
    trace = calls("openat", "read",                       # start-up
                  "getppid", "getpgrp", "getpgrp",        # an empty clock pair
                  "getppid", "openat",                    # time_func(0): no loop
                  "getppid", "openat", "getpgrp", "read", "read", "pread64", "getpgrp",
                  "close", "getppid", "write")
    assert syscalls.own_counts(trace, 1) == {"read": 2, "pread64": 1}
