"""The RefStore protocol on both backends: the same refs, as Refs and as ref records."""
from __future__ import annotations

from pathlib import Path

import pytest

from reftable_core.flags import Flags
from reftable_core.refs.api import RefStore, ref_from_record
from reftable_core.refs.reflog import log_mode, should_autocreate_reflog
from reftable_core.repo import open_repo

PREFIXES = [b"", b"r", b"refs/", b"refs/heads/", b"refs/heads/f", b"refs/tags/", b"HEAD", b"x"]


@pytest.fixture()
def repos(git, make_repo) -> dict[str, Path]:
    out = {}
    for fmt in ("files", "reftable"):
        repo = make_repo(fmt, ref_format=fmt)
        git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=repo)
        git.run(["branch", "feature/a"], cwd=repo)
        git.run(["tag", "-a", "-m", "t", "v1"], cwd=repo)
        git.run(["tag", "light"], cwd=repo)
        git.run(["symbolic-ref", "refs/heads/sym", "refs/heads/main"], cwd=repo)
        if fmt == "files":
            git.run(["pack-refs", "--all"], cwd=repo)          # packed, with peeled ids
        git.run(["branch", "feature/loose"], cwd=repo)             # loose over packed
        out[fmt] = repo
    return out


def test_both_stores_give_the_same_records(repos: dict[str, Path]) -> None:
    seen = {}
    for fmt, path in repos.items():
        repo = open_repo(path, Flags())
        store = repo.refs
        assert isinstance(store, RefStore)
        got = {}
        for prefix in PREFIXES:
            records = list(store.iter_ref_records(prefix))
            assert [ref_from_record(r) for r in records] == list(store.iter_refs(prefix))
            got[prefix] = [(r.refname, r.value_type, r.target) for r in records]
        sym = list(store.iter_ref_records(b"refs/heads/sym"))
        assert [(r.value_type, r.target) for r in sym] == [(3, b"refs/heads/main")]
        repo.close()
        seen[fmt] = got
    # the packed annotated tag carries its peeled id in the files store (value type 2),
    # as the reftable store does; the names and kinds agree for every prefix
    assert seen["files"] == seen["reftable"]
    assert seen["files"][b"HEAD"] == [] and seen["files"][b"x"] == []
    assert (b"refs/tags/v1", 2, None) in seen["files"][b"refs/tags/"]


@pytest.mark.parametrize("config,mode", [
    ({}, "normal"), ({"core.bare": "true"}, "none"), ({"core.bare": "2"}, "none"),
    ({"core.logallrefupdates": "2"}, "normal"), ({"core.logallrefupdates": "ALWAYS"}, "always"),
    ({"core.bare": "true", "core.logallrefupdates": "true"}, "normal"),
    ({"core.logallrefupdates": "false"}, "none"), ({"core.logallrefupdates": ""}, "none"),
])
def test_log_mode_uses_gits_boolean_rule(config: dict[str, str], mode: str) -> None:
    assert log_mode(config) == mode


def test_should_autocreate_reflog() -> None:
    assert should_autocreate_reflog("normal", b"refs/heads/x")
    assert should_autocreate_reflog("normal", b"HEAD")
    assert not should_autocreate_reflog("normal", b"refs/tags/x")
    assert should_autocreate_reflog("always", b"refs/tags/x")
    assert not should_autocreate_reflog("none", b"refs/heads/x")


def test_ref_update_is_the_same_dataclass_in_every_build() -> None:
    """RefUpdate (the Cython build: Cython's own dataclass, api.pxd) has the same fields in
    the same order, defaults (a new set of flags each), equality, replace() and slots."""
    import dataclasses

    from reftable_core.refs.api import RefUpdate
    names = [f.name for f in dataclasses.fields(RefUpdate)]
    assert names == ["refname", "new_value", "old_value", "new_target", "message", "flags",
                     "old_target", "original", "shown"]
    a = RefUpdate(b"refs/heads/a", new_value=b"\1" * 20)
    b = RefUpdate(b"refs/heads/a", new_value=b"\1" * 20)
    assert a == b and a.flags == set() and a.flags is not b.flags and a.message == b""
    assert (a.old_value, a.new_target, a.old_target, a.original, a.shown) == (None,) * 5
    c = dataclasses.replace(a, refname=b"refs/heads/c", flags={"create"})
    assert (c.refname, c.new_value, c.flags) == (b"refs/heads/c", b"\1" * 20, {"create"})
    assert a.refname == b"refs/heads/a" and a != c
    a.shown = b"x"                                   # mutable, as the transactions need
    assert a.shown == b"x"
    with pytest.raises(AttributeError):
        a.nope = 1                                   # type: ignore[attr-defined]
    assert "refs/heads/a" in repr(a)
