"""What the commands read of a ref store is in the RefStore protocol, on every store.

Each store (files, reftable, and the routing store of a repository with linked
worktrees over either) is a RefStore, says its own scan (SCAN_RECORDS or
SCAN_ROWS), gives the same refs as records and as rows with broken refs left out
or included, seeks, and answers ref_exists / is_broken; the commands in
reftable_core.builtin test no store's type, read value types by name and
ignore no types; the constructors the issue named take at most 8 parameters.
"""
from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from pathlib import Path

import pytest
import reftable_core.builtin
from reftable_core.flags import Flags
from reftable_core.refs import files_backend, reftable_backend, worktree
from reftable_core.refs.api import SCAN_RECORDS, SCAN_ROWS, RefStore
from reftable_core.refs.migrate import migrate_ref_storage
from reftable_core.refs.transaction import QueuedUpdate
from reftable_core.reftable.record import REF_SYMREF, REF_VAL1, REF_VAL2, RefRecord
from reftable_core.repo import open_repo

from gitbin import GitRunner

PREFIXES = [b"", b"refs/", b"refs/heads/", b"refs/heads/f", b"refs/tags/", b"x"]
BROKEN = b"refs/heads/broken"
SCANS = {"files": SCAN_ROWS, "reftable": SCAN_RECORDS}


@pytest.fixture(params=["files", "reftable"])
def fmt(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _fill(git: GitRunner, path: Path, fmt: str) -> None:
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=path)
    git.run(["branch", "feature/a"], cwd=path)
    git.run(["tag", "-a", "-m", "t", "v1"], cwd=path)
    git.run(["tag", "light"], cwd=path)
    git.run(["symbolic-ref", "refs/heads/sym", "refs/heads/main"], cwd=path)
    if fmt == "files":
        git.run(["pack-refs", "--all"], cwd=path)           # packed, with peeled ids
    git.run(["branch", "feature/loose"], cwd=path)


def _break(gitdir: Path, fmt: str) -> None:
    """A broken loose ref (contents no ref) in a files repository."""
    if fmt == "files":
        (gitdir / "refs" / "heads" / "broken").write_bytes(b"garbage\n")


def _rows(records: list[RefRecord]) -> list[tuple[bytes | None, ...]]:
    return [(r.refname, r.value, r.target_value, r.target) for r in records]


def _check_store(store: RefStore, broken_listed: bool, broken_read: bool) -> None:
    """store's scans agree with each other; the broken ref BROKEN is listed with
    include_broken (broken_listed) and read as broken (broken_read)."""
    assert isinstance(store, RefStore)
    assert store.scan in (SCAN_RECORDS, SCAN_ROWS)
    zero = bytes(store.hash_size)
    for prefix in PREFIXES:
        for include_broken in (False, True):
            records = list(store.iter_ref_records(prefix, include_broken))
            assert _rows(records) == list(store.iter_ref_rows(prefix, include_broken))
            assert all(r.value_type in (REF_VAL1, REF_VAL2, REF_SYMREF) for r in records)
            names = [r.refname for r in records]
            assert names == sorted(names)
            want_broken = include_broken and broken_listed and BROKEN.startswith(prefix)
            assert (BROKEN in names) == want_broken
            if want_broken:
                rec = records[names.index(BROKEN)]
                assert (rec.value_type, rec.value) == (REF_VAL1, zero)
        assert [r for r in store.iter_ref_records(prefix, True) if r.refname != BROKEN] == \
            list(store.iter_ref_records(prefix))
    live = list(store.iter_ref_records(b"refs/"))
    for start in (b"refs/", b"refs/heads/", b"refs/heads/f", b"refs/tags/", b"refs/zzz"):
        want = [r for r in live if r.refname >= start]
        got = []
        for rec in store.seek_ref_records(start):
            if not rec.refname.startswith(b"refs/"):
                break                                       # the caller's bound
            got.append(rec)
        assert got == want, start
    assert store.ref_exists(b"refs/heads/main") and not store.ref_exists(b"refs/heads/nope")
    assert not store.is_broken(b"refs/heads/main") and not store.is_broken(b"refs/heads/nope")
    assert store.is_broken(BROKEN) == broken_read
    assert store.ref_exists(BROKEN) == broken_read
    assert store.read_ref(BROKEN) is None


def test_each_backend_satisfies_the_protocol(git: GitRunner, make_repo, fmt: str) -> None:
    path = make_repo(fmt, ref_format=fmt)
    _fill(git, path, fmt)
    _break(path / ".git", fmt)
    repo = open_repo(path, Flags())
    try:
        store = repo.refs
        assert store.scan == SCANS[fmt]
        assert store.writes_full_worktree_names == (fmt == "reftable")
        _check_store(store, broken_listed=fmt == "files", broken_read=fmt == "files")
    finally:
        repo.close()


@pytest.mark.parametrize("where", ["repo", "wt1"])
def test_the_worktree_store_satisfies_the_protocol(git: GitRunner, tmp_path: Path, fmt: str,
                                                   where: str) -> None:
    """The routing store of a repository with linked worktrees, from the main one and
    from a linked one: it merges the stores' refs, broken ones when asked (a broken
    ref is read as missing there: it routes no raw read)."""
    top = tmp_path / "lab"
    git.run(["init", "-q", f"--ref-format={fmt}", "-b", "main", str(top / "repo")])
    _fill(git, top / "repo", fmt)
    git.run(["worktree", "add", "-q", "../wt1"], cwd=top / "repo")
    _break(top / "repo" / ".git", fmt)
    repo = open_repo(top / where, Flags())
    try:
        store = repo.refs
        assert isinstance(store, worktree.WorktreeRefStore)
        assert store.scan == SCAN_ROWS
        _check_store(store, broken_listed=fmt == "files", broken_read=False)
    finally:
        repo.close()


# -- the commands read the protocol only -----------------------------------------------

BUILTIN = Path(reftable_core.builtin.__file__).parent
STORE_TYPES = {"FilesRefStore", "ReftableRefStore", "WorktreeRefStore", "RefStore",
               "RefStoreBase", "SeekableRefStore", "Store"}


def _builtin_trees() -> list[tuple[str, ast.Module]]:
    return [(p.name, ast.parse(p.read_text(), str(p))) for p in sorted(BUILTIN.glob("*.py"))]


def _names(node: ast.expr) -> set[str]:
    return {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
            if isinstance(n, ast.Name | ast.Attribute)}


def test_builtin_tests_no_store_type() -> None:
    found = []
    for name, tree in _builtin_trees():
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and len(node.args) == 2):
                if node.func.id in ("isinstance", "issubclass") and \
                        _names(node.args[1]) & STORE_TYPES:
                    found.append(f"{name}:{node.lineno}")
                if node.func.id in ("hasattr", "getattr") and \
                        _names(node.args[0]) & {"store", "refs"}:
                    found.append(f"{name}:{node.lineno} sniffs a store")
            if isinstance(node, ast.ImportFrom) and node.module and any(
                    node.module.endswith(m) for m in ("files_backend", "reftable_backend",
                                                      "worktree", "stores")):
                found.append(f"{name}:{node.lineno} imports {node.module}")
    assert found == []


def test_builtin_reads_value_types_by_name_and_ignores_no_types() -> None:
    found = []
    for name, tree in _builtin_trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                typed = any(isinstance(s, ast.Name) and s.id == "vt"
                            or isinstance(s, ast.Attribute) and s.attr == "value_type"
                            for s in sides)
                if typed and any(isinstance(s, ast.Constant) for s in sides):
                    found.append(f"{name}:{node.lineno}")
        text = (BUILTIN / name).read_text()
        found += [f"{name}: type: ignore" for line in text.splitlines() if "type: ignore" in line]
    assert found == []


def test_the_stores_modules_give_every_store_the_protocol() -> None:
    for cls in (files_backend.FilesRefStore, reftable_backend.ReftableRefStore,
                worktree.WorktreeRefStore):
        for member in ("scan", "writes_full_worktree_names", "read_ref", "resolve",
                       "ref_exists", "is_broken", "iter_refs", "iter_ref_records",
                       "iter_ref_rows", "seek_ref_records", "iter_log", "transaction", "close"):
            assert hasattr(cls, member), (cls.__name__, member)
        params = inspect.signature(cls.iter_ref_records).parameters
        assert list(params)[1:] == ["prefix", "include_broken"], cls.__name__


def _parameters(fn: Callable[..., object]) -> int:
    return len([p for p in inspect.signature(fn).parameters if p != "self"])


def test_at_most_eight_parameters() -> None:
    assert _parameters(QueuedUpdate.__init__) <= 8
    assert _parameters(migrate_ref_storage) <= 8
