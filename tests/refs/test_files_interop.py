"""Interop with git on files-backend repositories, both directions, every flag value."""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from reftable_core.refs.files_backend import FilesRefStore
from reftable_core.flags import PACKED_LOOKUPS, PACKED_READERS, REFNAME_SAFETY, Flags
from reftable_core.odb import open_object_store
from reftable_core.refs.api import RefUpdate

ALL_FLAGS = [Flags(packed_reader=r, packed_lookup=l, refname_safety=s)
             for r, l, s in itertools.product(PACKED_READERS, PACKED_LOOKUPS, REFNAME_SAFETY)]


def build(git, make_repo, object_format: str = "sha1") -> Path:
    repo = make_repo("r", ref_format="files", object_format=object_format)
    run = lambda *a: git.run(list(a), cwd=repo)            # noqa: E731
    run("commit", "-q", "--allow-empty", "-m", "one")
    run("commit", "-q", "--allow-empty", "-m", "two")
    for i in range(10):
        run("branch", f"feature/f{i}", "HEAD~1" if i % 2 else "HEAD")
    run("tag", "-a", "-m", "annotated", "v1", "HEAD~1")
    run("tag", "-a", "-m", "annotated", "v2")
    run("tag", "lightweight")
    run("pack-refs", "--all")
    run("commit", "-q", "--allow-empty", "-m", "three")
    run("branch", "-f", "feature/f3", "HEAD")          # loose shadowing packed
    run("tag", "-a", "-m", "loose", "v3")             # loose annotated tag (peeled via the odb)
    run("update-ref", "-d", "refs/heads/feature/f4")   # deleted from packed-refs
    run("branch", "loose-only")
    run("symbolic-ref", "refs/remotes/origin/HEAD", "refs/heads/main")
    return repo


def our_show_ref(store: FilesRefStore, odb, deref: bool) -> bytes:
    """What `git show-ref [-d]` prints, computed from our store."""
    out = []
    for ref in store.iter_refs():
        r = store.resolve(ref.name) if ref.target is not None else ref
        if r is None:
            continue
        out.append(r.value.hex().encode() + b" " + ref.name + b"\n")
        if deref:
            peeled = r.peeled
            if peeled is None and odb.read_header(r.value)[0] == "tag":
                peeled = odb.peel(r.value)
            if peeled is not None:
                out.append(peeled.hex().encode() + b" " + ref.name + b"^{}\n")
    return b"".join(out)


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_reads_what_git_wrote(git, make_repo, object_format: str) -> None:
    repo = build(git, make_repo, object_format)
    gitdir = repo / ".git"
    hash_size = 32 if object_format == "sha256" else 20
    odb = open_object_store(str(gitdir), object_format)
    assert b"^" in (gitdir / "packed-refs").read_bytes()
    expect = git.out(["show-ref"], cwd=repo)
    expect_d = git.out(["show-ref", "-d"], cwd=repo)
    flags_list = ALL_FLAGS if object_format == "sha1" else [Flags(), Flags(packed_lookup="parse_all")]
    for flags in flags_list:
        store = FilesRefStore(str(gitdir), hash_size, flags)
        assert our_show_ref(store, odb, False) == expect, flags
        assert our_show_ref(store, odb, True) == expect_d, flags
        for name in (b"refs/heads/feature/f3", b"refs/tags/v1", b"refs/heads/main", b"HEAD"):
            want = git.out(["rev-parse", "--verify", name.decode()], cwd=repo).strip()
            assert store.resolve(name).value.hex().encode() == want
        assert store.read_ref(b"refs/heads/feature/f4") is None


def test_git_reads_what_we_wrote(git, make_repo) -> None:
    repo = build(git, make_repo)
    gitdir = repo / ".git"
    rp = lambda r: bytes.fromhex(git.out(["rev-parse", r], cwd=repo).decode().strip())  # noqa: E731
    head, one, tag = rp("HEAD"), rp("HEAD~2"), rp("refs/tags/v2")
    store = FilesRefStore(str(gitdir), 20, objects=lambda: open_object_store(str(gitdir)))
    tx = store.transaction()
    for u in [RefUpdate(b"refs/heads/new", new_value=head, old_value=bytes(20), message=b"create"),
              RefUpdate(b"refs/heads/feature/f0", new_value=one, message=b"rewind packed"),
              RefUpdate(b"refs/heads/feature/f5", new_value=bytes(20), message=b"drop packed"),
              RefUpdate(b"refs/heads/feature/f3", new_value=bytes(20), message=b"drop both"),
              RefUpdate(b"refs/tags/ours", new_value=tag, message=b"tag"),
              RefUpdate(b"refs/heads/main", new_value=one, old_value=head, message=b"reset"),
              RefUpdate(b"refs/heads/sym", new_target=b"refs/heads/new", message=b"symref")]:
        tx.queue(u)
    tx.commit()
    assert not list(gitdir.rglob("*.lock"))
    git.run(["fsck", "--strict", "--no-dangling"], cwd=repo)
    odb = open_object_store(str(gitdir))
    for flags in (Flags(), Flags(packed_lookup="parse_all", packed_reader="fgetc")):
        fresh = FilesRefStore(str(gitdir), 20, flags)
        assert our_show_ref(fresh, odb, True) == git.out(["show-ref", "-d"], cwd=repo)
    fe = git.out(["for-each-ref", "--format=%(refname) %(objectname) %(symref)"], cwd=repo)
    assert b"refs/heads/sym " + head.hex().encode() + b" refs/heads/new\n" in fe
    assert b"refs/heads/feature/f5" not in fe and b"refs/heads/feature/f3" not in fe
    assert b"refs/heads/feature/f5" not in (gitdir / "packed-refs").read_bytes()
    # reflogs as git reads them
    assert git.out(["reflog", "show", "--format=%gs", "refs/heads/main"], cwd=repo).startswith(b"reset\n")
    assert git.out(["reflog", "show", "--format=%gs", "HEAD"], cwd=repo).startswith(b"reset\n")
    assert git.out(["reflog", "show", "--format=%H %gs", "refs/heads/new"], cwd=repo) == \
        head.hex().encode() + b" create\n"
    assert not (gitdir / "logs" / "refs" / "heads" / "feature" / "f3").exists()
    # git packs our loose refs, we read its packed-refs
    git.run(["pack-refs", "--all"], cwd=repo)
    again = FilesRefStore(str(gitdir), 20)
    assert our_show_ref(again, odb, True) == git.out(["show-ref", "-d"], cwd=repo)
    assert [e.message for e in again.iter_log(b"refs/heads/main")][:1] == [b"reset"]
