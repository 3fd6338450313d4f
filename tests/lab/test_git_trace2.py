"""trace2 fsync counters under GIT_TRACE2_EVENT (t0610's 'writes are synced').

With core.fsync=reference and GIT_TEST_FSYNC=true, `reftable-lab update-ref`
writes git's counter event for its fsyncs, the same count as git's, in git's
JSON shape (the fields t0610's check_fsync_events reads, from "category" on);
with GIT_TEST_FSYNC=false, or without core.fsync naming references, no fsync
counter event at all, as git.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from gitbin import GitRunner
from tests.helpers.labrun import REPO_ROOT, run_lab_proc

FORMATS = ["files", "reftable"]


def _counters(trace: Path) -> list[str]:
    if not trace.exists():
        return []
    out = []
    for line in trace.read_text().splitlines():
        if line.startswith('{"event":"counter",') and '"category":"fsync",' in line:
            out.append(line.split('"category":"fsync",', 1)[1].removesuffix("}"))
            event = json.loads(line)
            assert list(event)[:5] == ["event", "sid", "thread", "time", "file"]
    return out


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fsync_env,fsync_cfg", [
    ("true", "reference"), ("false", "reference"), ("true", "objects"),
])
def test_fsync_counter_like_git(git: GitRunner, make_repo, tmp_path: Path, fmt: str,
                                fsync_env: str, fsync_cfg: str) -> None:
    repo = make_repo("r", ref_format=fmt)
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=repo)
    shutil.copytree(repo, tmp_path / "r2", symlinks=True)
    args = ["-c", f"core.fsync={fsync_cfg}", "-c", "core.fsyncMethod=fsync",
            "update-ref", "refs/heads/branch", "HEAD"]
    extra = {"GIT_TEST_FSYNC": fsync_env}
    p = git.run(["-C", "r", *args], cwd=tmp_path, check=False,
                env={**extra, "GIT_TRACE2_EVENT": str(tmp_path / "git.trace")})
    env = dict(git.env, **extra, GIT_TRACE2_EVENT=str(tmp_path / "lab.trace"),
               PYTHONPATH=os.pathsep.join([str(REPO_ROOT / "core"), str(REPO_ROOT)]))
    got = run_lab_proc(["-C", "r2", *args], cwd=tmp_path, env=env)
    assert got == (p.returncode, p.stdout, p.stderr)
    want = _counters(tmp_path / "git.trace")
    assert _counters(tmp_path / "lab.trace") == want
    assert bool(want) == (fsync_env == "true" and fsync_cfg == "reference")
