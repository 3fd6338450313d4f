"""rev-list-many-refs' two sides (9da5c992dd's row): the lab's and git's `show-ref
--verify -q` over every n-th ref read the same names, and each fails when one is gone."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from gitbin import GitRunner
from lab.workloads import build


@pytest.fixture()
def thirty_refs(git: GitRunner, make_repo: Callable[..., Path]) -> Path:
    repo = make_repo("many", bare=True)
    blob = git.out(["hash-object", "-w", "--stdin"], cwd=repo, input=b"x\n").strip().decode()
    script = "".join(f"create refs/tags/t{i:03d} {blob}\n" for i in range(30))
    git.run(["update-ref", "--stdin"], cwd=repo, input=script.encode())
    return repo


@pytest.mark.parametrize("workload", ["show_ref_verify_many", "git_show_ref_verify_many"])
def test_both_sides_read_every_third_ref_and_fail_on_a_missing_one(
        git: GitRunner, thirty_refs: Path, workload: str) -> None:
    for spec in ("", "seek_in_place=off"):
        assert build(workload, spec, thirty_refs, {"every": 3})(2) >= 0
    run = build(workload, "", thirty_refs, {"every": 3})   # names listed now: t000, t003, ...
    git.run(["update-ref", "-d", "refs/tags/t027"], cwd=thirty_refs)
    with pytest.raises(RuntimeError, match="exited 1"):
        run(1)
    git.run(["update-ref", "-d", "refs/tags/t001"], cwd=thirty_refs)   # not one of them
    assert build(workload, "", thirty_refs, {"every": 3})(1) >= 0
