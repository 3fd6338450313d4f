"""FilesRefStore: reads merged over loose + packed, transactions with git's rules."""
from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from reftable_core.errors import LockError, ReftableError, RefnameError
from reftable_core.refs.files_backend import FilesRefStore
from reftable_core.flags import PACKED_LOOKUPS, PACKED_READERS, REFNAME_SAFETY, Flags
from reftable_core.refs.loose import write_loose
from reftable_core.refs.reflog import read_reflog
from reftable_core.refs.packed import PACKED_REFS_HEADER, write_packed_refs
from reftable_core.refs.api import Ref, RefStore, RefUpdate

A, B, C, D = (bytes([i]) * 20 for i in (1, 2, 3, 4))
Z = bytes(20)
ENV = {"GIT_COMMITTER_NAME": "C O Mitter", "GIT_COMMITTER_EMAIL": "committer@example.com",
       "GIT_COMMITTER_DATE": "1700000000 +0000"}


@pytest.fixture(autouse=True)
def _ident(monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in ENV.items():
        monkeypatch.setenv(k, v)


@pytest.fixture()
def gitdir(tmp_path: Path) -> str:
    """A files-backend git dir: packed refs (one tag with a ^ line), loose refs
    shadowing some, a symref, a broken loose ref, HEAD -> refs/heads/main."""
    gd = tmp_path / "git"
    (gd / "refs" / "heads").mkdir(parents=True)
    (gd / "refs" / "tags").mkdir()
    (gd / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n")
    write_packed_refs(gd / "packed-refs", [
        (b"refs/heads/main", A), (b"refs/heads/packed-only", B), (b"refs/heads/shadowed", A),
        (b"refs/tags/v1", C, A), (b"refs/tags/light", A), (b"refs/heads/x\r", A),
    ])
    g = str(gd)
    write_loose(g, b"HEAD", target=b"refs/heads/main")
    write_loose(g, b"refs/heads/shadowed", B)
    write_loose(g, b"refs/heads/loose-only", C)
    write_loose(g, b"refs/remotes/origin/HEAD", target=b"refs/heads/main")
    write_loose(g, b"refs/heads/dangling", target=b"refs/heads/nope")
    (gd / "refs" / "heads" / "broken").write_bytes(b"not an object id\n")
    return g


def store_of(gitdir: str, flags: Flags | None = None) -> FilesRefStore:
    return FilesRefStore(gitdir, 20, flags or Flags())


def test_is_a_refstore(gitdir: str) -> None:
    assert isinstance(store_of(gitdir), RefStore)


def test_read_ref(gitdir: str) -> None:
    s = store_of(gitdir)
    assert s.read_ref(b"refs/heads/main") == Ref(b"refs/heads/main", A)
    assert s.read_ref(b"refs/heads/shadowed") == Ref(b"refs/heads/shadowed", B)
    assert s.read_ref(b"refs/heads/packed-only") == Ref(b"refs/heads/packed-only", B)
    assert s.read_ref(b"refs/tags/v1") == Ref(b"refs/tags/v1", C, A)
    assert s.read_ref(b"HEAD") == Ref(b"HEAD", None, None, b"refs/heads/main")
    assert s.read_ref(b"refs/heads/broken") is None
    assert s.read_ref(b"refs/heads/x\r") is None
    assert s.read_ref(b"refs/heads/nope") is None
    assert s.read_ref(b"refs/heads") is None
    assert s.read_ref(b"refs/../config") is None
    assert s.read_ref(b"../../etc/passwd") is None


def test_resolve(gitdir: str) -> None:
    s = store_of(gitdir)
    assert s.resolve(b"HEAD") == Ref(b"refs/heads/main", A)
    assert s.resolve(b"refs/remotes/origin/HEAD").value == A
    assert s.resolve(b"refs/heads/dangling") is None
    write_loose(gitdir, b"refs/heads/loop", target=b"refs/heads/loop")
    assert s.resolve(b"refs/heads/loop") is None


def test_iter_refs_merged(gitdir: str) -> None:
    s = store_of(gitdir)
    refs = list(s.iter_refs())
    assert [r.name for r in refs] == [
        b"refs/heads/dangling", b"refs/heads/loose-only", b"refs/heads/main",
        b"refs/heads/packed-only", b"refs/heads/shadowed", b"refs/remotes/origin/HEAD",
        b"refs/tags/light", b"refs/tags/v1"]
    by = {r.name: r for r in refs}
    assert by[b"refs/heads/shadowed"].value == B                    # loose wins
    assert by[b"refs/remotes/origin/HEAD"].target == b"refs/heads/main"
    assert by[b"refs/tags/v1"].peeled == A
    assert [r.name for r in s.iter_refs(b"refs/tags/")] == [b"refs/tags/light", b"refs/tags/v1"]
    assert [r.name for r in s.iter_refs(b"refs/heads/s")] == [b"refs/heads/shadowed"]
    assert list(s.iter_refs(b"HEAD")) == []
    assert [r.name for r in s.iter_refs(b"refs")] == [r.name for r in refs]


def test_all_flags_agree(gitdir: str) -> None:
    def view(f: Flags) -> tuple:
        s = store_of(gitdir, f)
        return (list(s.iter_refs()), [s.read_ref(n) for n in (b"refs/tags/v1", b"refs/heads/main",
                                                            b"refs/heads/nope", b"HEAD")],
                list(s.iter_refs(b"refs/tags/")))
    base = view(Flags())
    for r, l, sf in itertools.product(PACKED_READERS, PACKED_LOOKUPS, REFNAME_SAFETY):
        assert view(Flags(packed_reader=r, packed_lookup=l, refname_safety=sf)) == base


def test_ref_rows(gitdir: str) -> None:
    """iter_ref_rows: the refs of iter_ref_records as (name, oid, peeled, target)
    tuples, broken ones (with include_broken) as the zero id, for every prefix
    and flag; loose refs merged, packed rows once the loose ones are done."""
    rows = list(store_of(gitdir).iter_ref_rows(b"", include_broken=True))
    assert rows == [
        (b"refs/heads/broken", Z, None, None),
        (b"refs/heads/dangling", None, None, b"refs/heads/nope"),
        (b"refs/heads/loose-only", C, None, None),
        (b"refs/heads/main", A, None, None),
        (b"refs/heads/packed-only", B, None, None),
        (b"refs/heads/shadowed", B, None, None),
        (b"refs/heads/x\r", Z, None, None),
        (b"refs/remotes/origin/HEAD", None, None, b"refs/heads/main"),
        (b"refs/tags/light", A, None, None),
        (b"refs/tags/v1", C, A, None)]
    for r, l, sf in itertools.product(PACKED_READERS, PACKED_LOOKUPS, REFNAME_SAFETY):
        s = store_of(gitdir, Flags(packed_reader=r, packed_lookup=l, refname_safety=sf))
        for prefix in (b"", b"refs/", b"refs/heads/", b"refs/heads/s", b"refs/tags/", b"HEAD"):
            for broken in (False, True):
                got = list(s.iter_ref_rows(prefix, include_broken=broken))
                assert got == [(rec.refname, rec.value, rec.target_value, rec.target)
                               for rec in s.iter_ref_records(prefix, include_broken=broken)]
                assert got == [row for row in rows if row[0].startswith(prefix)
                               and (broken or row[1] != Z)], (prefix, broken)


def test_packed_snapshot_follows_the_file(gitdir: str) -> None:
    s = store_of(gitdir)
    assert s.read_ref(b"refs/heads/packed-only").value == B
    write_packed_refs(os.path.join(gitdir, "packed-refs"), [(b"refs/heads/packed-only", D)])
    assert s.read_ref(b"refs/heads/packed-only").value == D
    os.unlink(os.path.join(gitdir, "packed-refs"))
    assert s.read_ref(b"refs/heads/packed-only") is None


# -- transactions ------------------------------------------------------------------

def commit(store: FilesRefStore, *updates: RefUpdate) -> None:
    tx = store.transaction()
    for u in updates:
        tx.queue(u)
    tx.commit()


def locks(gitdir: str) -> list[str]:
    return sorted(str(p) for p in Path(gitdir).rglob("*.lock"))


def test_create_update_delete_with_reflogs(gitdir: str) -> None:
    s = store_of(gitdir)
    commit(s, RefUpdate(b"refs/heads/new", new_value=D, old_value=Z, message=b"create  it"))
    assert s.read_ref(b"refs/heads/new").value == D
    assert Path(gitdir, "refs/heads/new").read_bytes() == D.hex().encode() + b"\n"
    (e,) = read_reflog(gitdir, b"refs/heads/new")
    assert (e.old_id, e.new_id, e.message, e.name, e.time) == (Z, D, b"create it", b"C O Mitter",
                                                               1700000000)
    commit(s, RefUpdate(b"refs/heads/new", new_value=A, old_value=D, message=b"move"))
    assert [x.message for x in s.iter_log(b"refs/heads/new")] == [b"move", b"create it"]
    commit(s, RefUpdate(b"refs/heads/new", new_value=Z, old_value=A))
    assert s.read_ref(b"refs/heads/new") is None
    assert not Path(gitdir, "logs/refs/heads/new").exists()
    assert locks(gitdir) == []


def test_head_log_when_its_branch_moves(gitdir: str) -> None:
    s = store_of(gitdir)
    commit(s, RefUpdate(b"refs/heads/main", new_value=B, message=b"via branch"))
    (h,) = read_reflog(gitdir, b"HEAD")
    assert (h.old_id, h.new_id, h.message) == (A, B, b"via branch")
    commit(s, RefUpdate(b"HEAD", new_value=C, message=b"via HEAD"))
    assert s.resolve(b"HEAD").value == C
    assert s.read_ref(b"HEAD").target == b"refs/heads/main"          # still a symref
    assert [e.message for e in s.iter_log(b"HEAD")] == [b"via HEAD", b"via branch"]
    assert [e.message for e in s.iter_log(b"refs/heads/main")] == [b"via HEAD", b"via branch"]


def test_no_deref_replaces_the_symref(gitdir: str) -> None:
    s = store_of(gitdir)
    commit(s, RefUpdate(b"refs/remotes/origin/HEAD", new_value=B, flags={"no-deref"}))
    assert s.read_ref(b"refs/remotes/origin/HEAD") == Ref(b"refs/remotes/origin/HEAD", B)
    assert s.read_ref(b"refs/heads/main").value == A


def test_symref_write(gitdir: str) -> None:
    s = store_of(gitdir)
    commit(s, RefUpdate(b"refs/heads/sym", new_target=b"refs/heads/packed-only"))
    assert s.read_ref(b"refs/heads/sym").target == b"refs/heads/packed-only"
    assert s.resolve(b"refs/heads/sym").value == B


@pytest.mark.parametrize("update,message", [
    (RefUpdate(b"refs/heads/main", new_value=B, old_value=C),
     f"cannot lock ref 'refs/heads/main': is at {A.hex()} but expected {C.hex()}"),
    (RefUpdate(b"refs/heads/main", new_value=B, old_value=Z),
     "cannot lock ref 'refs/heads/main': reference already exists"),
    (RefUpdate(b"refs/heads/nope", new_value=B, old_value=C),
     "cannot lock ref 'refs/heads/nope': unable to resolve reference 'refs/heads/nope'"),
    (RefUpdate(b"refs/heads/main/sub", new_value=B),
     "cannot lock ref 'refs/heads/main/sub': "
     "'refs/heads/main' exists; cannot create 'refs/heads/main/sub'"),
    (RefUpdate(b"refs/heads", new_value=B),
     "cannot lock ref 'refs/heads': 'refs/heads/broken' exists; cannot create 'refs/heads'"),
    (RefUpdate(b"refs/tags/v1/x", new_value=B),
     "cannot lock ref 'refs/tags/v1/x': 'refs/tags/v1' exists; cannot create 'refs/tags/v1/x'"),
])
def test_rejected_updates_change_nothing(gitdir: str, update: RefUpdate, message: str) -> None:
    """No ref or file changes; the directories made for the two locks stay, as git
    leaves them (safe_create_leading_directories; nothing removes them on rollback)."""
    s = store_of(gitdir)

    def tree() -> tuple[set[str], set[str]]:
        paths = list(Path(gitdir).rglob("*"))
        return ({str(p.relative_to(gitdir)) for p in paths if not p.is_dir()},
                {str(p.relative_to(gitdir)) for p in paths if p.is_dir()})
    refs, (files, dirs) = list(s.iter_refs()), tree()
    with pytest.raises(ReftableError) as info:
        commit(s, RefUpdate(b"refs/notes/other", new_value=D), update)
    assert str(info.value) == message
    assert list(s.iter_refs()) == refs
    files_after, dirs_after = tree()
    assert files_after == files
    lock_dirs = {str(d) for name in (b"refs/notes/other", update.refname)
                 for d in Path(name.decode()).parents if str(d) != "."}
    assert dirs_after - dirs <= lock_dirs and dirs <= dirs_after
    assert locks(gitdir) == []


def test_duplicate_updates(gitdir: str) -> None:
    with pytest.raises(ReftableError, match="multiple updates for ref 'refs/heads/a' not allowed"):
        commit(store_of(gitdir), RefUpdate(b"refs/heads/a", new_value=B),
               RefUpdate(b"refs/heads/a", new_value=C))


def test_dangerous_name_refused(gitdir: str) -> None:
    with pytest.raises(RefnameError):
        commit(store_of(gitdir), RefUpdate(b"refs/../../config", new_value=B))
    assert Path(gitdir, "config").read_text().startswith("[core]")


def test_stale_ref_lock(gitdir: str) -> None:
    Path(gitdir, "refs/heads/main.lock").write_bytes(b"stale")
    s = store_of(gitdir)
    with pytest.raises(LockError, match=r"cannot lock ref 'refs/heads/main': Unable to create "
                                            r"'.*refs/heads/main\.lock': File exists"):
        commit(s, RefUpdate(b"refs/heads/a", new_value=B), RefUpdate(b"refs/heads/main", new_value=B))
    assert s.read_ref(b"refs/heads/main").value == A
    assert s.read_ref(b"refs/heads/a") is None
    assert locks(gitdir) == [os.path.join(gitdir, "refs/heads/main.lock")]


def test_delete_packed_ref_rewrites_packed_refs(gitdir: str) -> None:
    s = store_of(gitdir)
    commit(s, RefUpdate(b"refs/heads/packed-only", new_value=Z),
           RefUpdate(b"refs/heads/shadowed", new_value=Z, old_value=B))
    data = Path(gitdir, "packed-refs").read_bytes()
    assert data.startswith(PACKED_REFS_HEADER)
    assert b"packed-only" not in data and b"shadowed" not in data
    assert b"refs/tags/v1\n^" + A.hex().encode() in data               # peeled line kept
    assert s.read_ref(b"refs/heads/shadowed") is None                  # not resurrected
    assert s.read_ref(b"refs/tags/v1") == Ref(b"refs/tags/v1", C, A)
    assert locks(gitdir) == []


def test_stale_packed_refs_lock(gitdir: str) -> None:
    Path(gitdir, "packed-refs.lock").write_bytes(b"stale")
    s = store_of(gitdir)
    before = Path(gitdir, "packed-refs").read_bytes()
    with pytest.raises(LockError, match="packed-refs.lock"):
        commit(s, RefUpdate(b"refs/heads/packed-only", new_value=Z))
    assert Path(gitdir, "packed-refs").read_bytes() == before
    assert s.read_ref(b"refs/heads/packed-only").value == B
    assert locks(gitdir) == [os.path.join(gitdir, "packed-refs.lock")]
    # a loose-only delete takes packed-refs.lock too, as git's files backend (t0600 #14)
    with pytest.raises(LockError, match="packed-refs.lock"):
        commit(s, RefUpdate(b"refs/heads/loose-only", new_value=Z))
    assert s.read_ref(b"refs/heads/loose-only") is not None
    os.unlink(os.path.join(gitdir, "packed-refs.lock"))
    commit(s, RefUpdate(b"refs/heads/loose-only", new_value=Z))
    assert s.read_ref(b"refs/heads/loose-only") is None


def test_abort_releases_locks(gitdir: str) -> None:
    s = store_of(gitdir)
    tx = s.transaction()
    tx.queue(RefUpdate(b"refs/heads/main", new_value=B))
    tx.queue(RefUpdate(b"refs/heads/packed-only", new_value=Z))
    tx.prepare()
    assert locks(gitdir)
    tx.abort()
    assert locks(gitdir) == []
    assert s.read_ref(b"refs/heads/main").value == A
    assert s.read_ref(b"refs/heads/packed-only").value == B


def test_verify_only(gitdir: str) -> None:
    s = store_of(gitdir)
    commit(s, RefUpdate(b"refs/heads/packed-only", old_value=B))
    with pytest.raises(ReftableError, match="is at"):
        commit(s, RefUpdate(b"refs/heads/packed-only", old_value=A))
    commit(s, RefUpdate(b"refs/heads/nope", old_value=Z))
    assert s.read_ref(b"refs/heads/nope") is None


def test_bare_repo_writes_no_reflog(tmp_path: Path) -> None:
    gd = tmp_path / "bare.git"
    (gd / "refs").mkdir(parents=True)
    (gd / "config").write_text("[core]\n\tbare = true\n")
    s = FilesRefStore(str(gd), 20)
    commit(s, RefUpdate(b"refs/heads/x", new_value=A))
    assert s.read_ref(b"refs/heads/x").value == A
    assert not (gd / "logs").exists()
    s2 = FilesRefStore(str(gd), 20, config={"core.bare": "true", "core.logallrefupdates": "always"})
    commit(s2, RefUpdate(b"refs/tags/t", new_value=A))
    assert len(read_reflog(str(gd), b"refs/tags/t")) == 1
