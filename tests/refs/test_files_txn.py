"""Files transactions over large batches: D/F conflicts inside the batch and against
existing loose and packed refs give git's first error, as a plain (quadratic)
reading of refs_verify_refname_available would; a clean batch commits all refs."""
from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from reftable_core.errors import ReftableError
from reftable_core.refs.api import RefUpdate
from reftable_core.refs.files_backend import FilesRefStore
from reftable_core.refs.loose import write_loose
from reftable_core.refs.packed import write_packed_refs

A = bytes([1]) * 20
B = bytes([2]) * 20
Z = bytes(20)
LOOSE = [b"refs/heads/lo/x", b"refs/heads/lf", b"refs/tags/t1"]
PACKED = [b"refs/heads/pk/y/z", b"refs/heads/pf", b"refs/tags/t2"]


@pytest.fixture(autouse=True)
def _ident(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_COMMITTER_NAME", "C O Mitter")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "committer@example.com")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "1700000000 +0000")


def _gitdir(tmp_path: Path) -> str:
    gd = tmp_path / "git"
    (gd / "refs" / "heads").mkdir(parents=True)
    (gd / "refs" / "tags").mkdir()
    (gd / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n")
    write_packed_refs(gd / "packed-refs", [(n, A) for n in PACKED])
    for n in LOOSE:
        write_loose(str(gd), n, A)
    write_loose(str(gd), b"HEAD", target=b"refs/heads/main")
    return str(gd)


def _oracle(batch: list[bytes], existing: set[bytes]) -> str | None:
    """The first conflict git reports, by scanning everything for every name."""
    affected = set(batch)
    for name in batch:
        parts = name.split(b"/")
        msg = None
        for i in range(1, len(parts)):
            d = b"/".join(parts[:i])
            if d in existing:
                msg = f"'{d.decode()}' exists; cannot create '{name.decode()}'"
            elif d in affected:
                msg = f"cannot process '{name.decode()}' and '{d.decode()}' at the same time"
            if msg:
                break
        if msg is None:
            under = sorted(n for n in existing if n.startswith(name + b"/"))
            if under:
                msg = f"'{under[0].decode()}' exists; cannot create '{name.decode()}'"
        if msg is None:
            under = sorted(n for n in affected if n.startswith(name + b"/"))
            if under:
                msg = (f"cannot process '{name.decode()}' and '{under[0].decode()}' "
                       f"at the same time")
        if msg is not None:
            return f"cannot lock ref '{name.decode()}': {msg}"
    return None


def _batch(rng: random.Random, n: int) -> list[bytes]:
    return [b"refs/heads/d%d/b%d" % (rng.randrange(40), i) for i in range(n)]


INJECT = [
    lambda rng, batch: batch[rng.randrange(len(batch))].rsplit(b"/", 1)[0],  # a batch dir
    lambda rng, batch: batch[rng.randrange(len(batch))] + b"/under",        # under a batch ref
    lambda rng, batch: b"refs/heads/lo",                                    # loose ref's dir
    lambda rng, batch: b"refs/heads/lo/x/y",                                # under a loose ref
    lambda rng, batch: b"refs/heads/lf/q",
    lambda rng, batch: b"refs/heads/pk",                                    # packed ref's dirs
    lambda rng, batch: b"refs/heads/pk/y",
    lambda rng, batch: b"refs/heads/pf/q/r",                                # under a packed ref
    lambda rng, batch: b"refs/tags/t2/x",
    lambda rng, batch: b"refs/heads",
]


@pytest.mark.parametrize("kind", range(len(INJECT)))
def test_conflict_in_large_batch(tmp_path: Path, kind: int) -> None:
    rng = random.Random(1000 + kind)
    gitdir = _gitdir(tmp_path)
    batch = _batch(rng, 1200)
    extra = INJECT[kind](rng, batch)
    batch.insert(rng.randrange(len(batch) + 1), extra)
    expected = _oracle(batch, set(LOOSE) | set(PACKED))
    assert expected is not None
    store = FilesRefStore(gitdir, 20)
    before = sorted(r.name for r in store.iter_refs())
    tx = store.transaction()
    for name in batch:
        tx.queue(RefUpdate(name, new_value=B, old_value=Z))
    with pytest.raises(ReftableError) as info:
        tx.commit()
    assert str(info.value) == expected
    assert sorted(r.name for r in store.iter_refs()) == before
    assert not [f for _d, _s, fs in os.walk(gitdir) for f in fs if f.endswith(".lock")]


def test_clean_large_batch_commits_every_ref(tmp_path: Path) -> None:
    gitdir = _gitdir(tmp_path)
    batch = _batch(random.Random(7), 1000)
    assert _oracle(batch, set(LOOSE) | set(PACKED)) is None
    store = FilesRefStore(gitdir, 20)
    tx = store.transaction()
    for name in batch:
        tx.queue(RefUpdate(name, new_value=B, old_value=Z))
    tx.commit()
    got = {r.name: r.value for r in store.iter_refs()}
    assert all(got[n] == B for n in batch)
    assert set(got) == set(batch) | set(LOOSE) | set(PACKED)


def test_a_transaction_holds_locks_not_descriptors(make_repo, git, tmp_path: Path) -> None:
    """2,000 creates in one files transaction under `ulimit -n 128`: every ref's lock
    is held, but its file is open only while it is written (git's close_ref_gently),
    so the transaction does not run out of descriptors (it did, with EMFILE)."""
    repo = make_repo(ref_format="files")
    git.run(["commit", "-q", "--allow-empty", "-m", "c"], cwd=repo)
    oid = git.out(["rev-parse", "HEAD"], cwd=repo).strip().decode()
    stdin = "".join(f"create refs/heads/d{i % 40}/b{i} {oid}\n" for i in range(2000))
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128)); "
            "from lab.cli import main; sys.exit(main(sys.argv[1:]))")
    proc = subprocess.run([sys.executable, "-c", code, "update-ref", "--stdin",
                           "--git-dir", str(repo / ".git")], input=stdin.encode(),
                          capture_output=True, env=git.env, check=False)
    assert proc.returncode == 0, proc.stderr
    refs = git.out(["for-each-ref", "--format=%(refname)", "refs/heads/d7/"], cwd=repo).split()
    assert len(refs) == 50
    assert not list((repo / ".git" / "refs").rglob("*.lock"))


def test_skip_create_reflog_writes_no_reflog_even_an_existing_one(tmp_path: Path) -> None:
    """git's REF_SKIP_CREATE_REFLOG (refs migrate's updates): files_log_ref_write returns
    at once, so no reflog line is written, to an existing reflog either (the lab appended
    to one that existed, and looked for it on every update)."""
    gd = _gitdir(tmp_path)
    log = Path(gd) / "logs" / "refs" / "heads" / "lf"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"")
    store = FilesRefStore(gd)
    txn = store.transaction()
    txn.queue(RefUpdate(b"refs/heads/lf", B, A, message=b"m", flags={"skip-create-reflog"}))
    txn.queue(RefUpdate(b"refs/heads/new", B, Z, message=b"m",
                        flags={"skip-create-reflog", "create-reflog"}))
    txn.prepare()
    txn.commit()
    assert store.read_ref(b"refs/heads/lf").value == B
    assert log.read_bytes() == b""
    assert not (Path(gd) / "logs" / "refs" / "heads" / "new").exists()
