"""The model's I/O per created ref is git's, on seed 004's update-ref-create scenarios.

`update-ref --stdin` creating N refs in one transaction, counted by
lab.measure.syscalls for the lab's variants and for git 2.47.3; per created ref is
(count at 100 refs - count at 20) / 80, so each side's fixed cost (start-up, config,
the commit's table write) cancels. Per ref git stats tables.list 9 times (each
read's reftable_stack_reload -> stack_uptodate: the six get_oid_basic ambiguity
reads of the hex, the transaction's read of the ref, refs_verify_refname_available's
reads of refs and refs/heads) and reads blocks from its tables' maps.

Git 2.47.3 has both seed-004 patches: a variant with stat_cache and mmap on must be
within 10 % of git in every count. A variant with either off models git before
them, and differs from git 2.47.3 in exactly what its flag names: stat_cache=off
opens tables.list per ref where git only stats it (reftable/stack.c stack_uptodate's
stat of st->list_file); mmap=off preads blocks where git reads its map
(reftable/blocksource.c reftable_block_source_from_file's xmmap).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gitbin import GitRunner, hermetic_env
from lab.measure import syscalls
from lab.scenario import Variant
from lab.scenarios import SCENARIOS

pytestmark = pytest.mark.skipif(not syscalls.available(), reason="needs strace")

STATS = frozenset({"newfstatat", "fstat", "stat", "lstat", "statx"})
COUNTS = ("opens of tables.list", "stats", "preads", "mmaps")
VARIANTS = {v.label: v for v in SCENARIOS["update-ref-create-100"].variants("small")}
GIT = VARIANTS["git"]
BOTH_ON = [k for k, v in VARIANTS.items() if not v.peer and v.flags.stat_cache and v.flags.mmap]
NOT_BOTH = [k for k, v in VARIANTS.items() if not v.peer and k not in BOTH_ON]


def _key(c: syscalls.Call) -> str:
    if c.name == "openat" and '/tables.list"' in c.args:
        return "opens of tables.list"
    if c.name in STATS:
        return "stats"
    return {"pread64": "preads", "mmap": "mmaps"}.get(c.name, "other")


@pytest.fixture(scope="module")
def gitdir(tmp_path_factory: pytest.TempPathFactory, git_path: str) -> Path:
    root = tmp_path_factory.mktemp("sc")
    git = GitRunner(git_path, hermetic_env(root / "home"))
    git.run(["init", "-q", "--ref-format=reftable", str(root / "repo")])
    git.run(["commit", "-q", "--allow-empty", "-m", "c"], cwd=root / "repo")
    tip = git.out(["rev-parse", "HEAD"], cwd=root / "repo").decode().strip()
    (root / "repo" / "manifest.json").write_text(json.dumps({"facts": {"tip": tip}}))
    return root / "repo" / ".git"


_CACHE: dict[str, dict[str, float]] = {}


def per_ref(v: Variant, gitdir: Path) -> dict[str, float]:
    """Each of COUNTS per created ref (the count at 100 refs minus at 20, over 80)."""
    if v.label not in _CACHE:
        got = []
        for n in (20, 100):
            cmd = [sys.executable, "-m", "lab.worker", "--workload", v.workload,
                   "--gitdir", str(gitdir), "--params", json.dumps({"refs": n, "seed": 0}),
                   "--lab-flags", v.flags.to_spec(), "--syscalls"]
            got.append(syscalls.count_syscalls(cmd, children=v.peer, key=_key).by_call)
        _CACHE[v.label] = {k: (got[1].get(k, 0) - got[0].get(k, 0)) / 80 for k in COUNTS}
    return _CACHE[v.label]


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 0.10 * max(abs(a), abs(b)) or abs(a - b) < 1e-9


@pytest.mark.parametrize("label", BOTH_ON)
def test_within_ten_percent_of_git(gitdir: Path, label: str) -> None:
    ours, theirs = per_ref(VARIANTS[label], gitdir), per_ref(GIT, gitdir)
    assert theirs["stats"] >= 6            # at least the six ambiguity reads' checks
    for what in COUNTS:
        assert _close(ours[what], theirs[what]), (what, ours, theirs)


@pytest.mark.parametrize("label", NOT_BOTH)
def test_an_older_gits_io_where_its_flags_say(gitdir: Path, label: str) -> None:
    """Off variants model git before the patches: the flagged count is not git 2.47's."""
    v = VARIANTS[label]
    ours, theirs = per_ref(v, gitdir), per_ref(GIT, gitdir)
    if not v.flags.stat_cache:
        assert theirs["opens of tables.list"] == 0
        assert _close(ours["opens of tables.list"], theirs["stats"]), (ours, theirs)
    else:
        assert _close(ours["opens of tables.list"], 0) and _close(ours["stats"], theirs["stats"])
    if not v.flags.mmap:
        assert theirs["preads"] == 0 and ours["preads"] >= 1, (ours, theirs)
