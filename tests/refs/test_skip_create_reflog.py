"""git's REF_SKIP_CREATE_REFLOG (the flag refs migrate gives its updates): no reflog line
is written for the update, to an existing reflog either, in both backends (files:
files_log_ref_write returns at once; reftable: write_transaction_table writes no log
record), and none to HEAD's (files: split_head_update adds no HEAD update; reftable: the
HEAD update it adds carries the flag)."""
from __future__ import annotations

import pytest
from reftable_core.flags import Flags
from reftable_core.refs.api import RefUpdate
from reftable_core.repo import open_repo

from gitbin import GitRunner


@pytest.mark.parametrize("fmt", ["files", "reftable"])
def test_skip_create_reflog_writes_no_log_line(git: GitRunner, make_repo, fmt: str) -> None:
    path = make_repo(fmt, ref_format=fmt)
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=path)
    git.run(["commit", "-q", "--allow-empty", "-m", "two"], cwd=path)
    logs = [git.out(["reflog", "show", name, "--"], cwd=path) for name in ("main", "HEAD")]
    one = git.out(["rev-parse", "HEAD~"], cwd=path).decode().strip()
    repo = open_repo(path, Flags())
    try:
        txn = repo.refs.transaction()
        txn.queue(RefUpdate(b"refs/heads/main", bytes.fromhex(one), None, message=b"m",
                            flags={"skip-create-reflog"}))
        txn.prepare()
        txn.commit()
    finally:
        repo.close()
    assert git.out(["rev-parse", "main"], cwd=path).decode().strip() == one
    assert [git.out(["reflog", "show", name, "--"], cwd=path)
            for name in ("main", "HEAD")] == logs
