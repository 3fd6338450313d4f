"""odb against real git: every object equals `git cat-file --batch`, for SHA-1 and
SHA-256 repositories packed with --depth=50 --window=250, thin packs fixed with
index-pack --fix-thin (REF_DELTA), idx v1 and 64-bit offsets, several packs plus
loose objects, tags and peeling."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from reftable_core.errors import NotExistError
from reftable_core.flags import Flags
from reftable_core.odb import PackIndex, open_object_store
from reftable_core.odb.pack import OBJ_REF_DELTA, decode_obj_header

from gitbin import GitRunner, hermetic_env
from tests.helpers.odb import cat_file_all, make_history


@pytest.fixture(scope="module")
def mgit(git_path: str, tmp_path_factory: pytest.TempPathFactory) -> GitRunner:
    home = tmp_path_factory.mktemp("home")
    return GitRunner(git_path, hermetic_env(home))


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def history(request, mgit: GitRunner, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp(f"hist-{request.param}") / "repo.git"
    return make_history(d, 200, 200, seed=5, object_format=request.param, merges_every=30,
                        git=mgit)


def check_all(mgit: GitRunner, gitdir: Path, flags: Flags | None = None) -> int:
    expect = cat_file_all(mgit, gitdir)
    with open_object_store(gitdir, flags=flags) as store:
        ids = list(store.iter_oids())
        assert len(ids) == len(set(ids)) and set(ids) == set(expect)
        for oid in ids:
            assert store.has(oid)
            assert store.read(oid) == expect[oid], oid.hex()
            assert store.read_header(oid) == (expect[oid][0], len(expect[oid][1]))
    return len(ids)


def test_every_object_equals_cat_file(mgit: GitRunner, history: Path) -> None:
    with open_object_store(history) as store:
        assert store.hash_algo == ("sha256" if "sha256" in history.parent.name else "sha1")
        assert len(store.packs) == 1 and store.packs[0].idx.version == 2
    assert check_all(mgit, history) > 1000


def test_tiny_cache_same_objects(mgit: GitRunner, history: Path) -> None:
    check_all(mgit, history, Flags(delta_cache_index="fixed:1", delta_cache_lru="blob_first",
                                   delta_cache_limit=0))


def test_missing_object(history: Path) -> None:
    with open_object_store(history) as store:
        oid = b"\x01" * store.hash_len
        assert not store.has(oid)
        with pytest.raises(NotExistError):
            store.read(oid)


def test_idx_v1_and_64bit_offsets(mgit: GitRunner, history: Path, tmp_path: Path) -> None:
    for version in ("1", "2,0x100"):
        copy = tmp_path / f"v{version[0]}.git"
        shutil.copytree(history, copy)
        packdir = copy / "objects" / "pack"
        for p in packdir.glob("*.pack"):
            idx = p.with_suffix(".idx")
            idx.chmod(0o644)
            idx.unlink()
            for extra in (".rev", ".bitmap"):
                p.with_suffix(extra).unlink(missing_ok=True)
            mgit.run(["index-pack", f"--index-version={version}", "-o", str(idx), str(p)], cwd=copy)
        with open_object_store(copy) as store:
            pi: PackIndex = store.packs[0].idx
            assert pi.version == int(version[0])
            if version != "1":
                assert pi._big_count > 0          # offsets above 0x100 in the 64-bit table
        check_all(mgit, copy)


def test_thin_pack_fixed_ref_delta(mgit: GitRunner, history: Path, tmp_path: Path) -> None:
    fmt = "sha256" if "sha256" in history.parent.name else "sha1"
    old = mgit.out(["rev-parse", "main~40"], cwd=history).decode().strip()
    # repo B: only the objects reachable from main~40
    b = tmp_path / "b.git"
    mgit.run(["init", "-q", "--bare", f"--object-format={fmt}", str(b)])
    base_pack = mgit.out(["pack-objects", "--revs", "--stdout"], cwd=history, input=old.encode() + b"\n")
    mgit.run(["index-pack", "--stdin"], cwd=b, input=base_pack)
    # a thin pack of main~40..main, completed in B with --fix-thin
    thin = mgit.out(["pack-objects", "--revs", "--thin", "--stdout"], cwd=history,
                    input=b"main\n^" + old.encode() + b"\n")
    mgit.run(["index-pack", "--fix-thin", "--stdin"], cwd=b, input=thin)
    mgit.run(["update-ref", "refs/heads/main",
              mgit.out(["rev-parse", "main"], cwd=history).decode().strip()], cwd=b)
    with open_object_store(b) as store:
        assert len(store.packs) == 2
        ref_deltas = 0
        for p in store.packs:
            for i in range(p.idx.count):
                typ, _, _ = decode_obj_header(p.buf, p.idx.offset_at(i))
                ref_deltas += typ == OBJ_REF_DELTA
        assert ref_deltas > 0
    check_all(mgit, b)


def test_several_packs_loose_and_tags(mgit: GitRunner, history: Path, tmp_path: Path) -> None:
    copy = tmp_path / "multi.git"
    shutil.copytree(history, copy)
    # a second pack from fast-import, loose blobs and loose annotated tags
    mgit.run(["-c", "fastimport.unpackLimit=0", "fast-import", "--quiet"], cwd=copy, input=(
        b"commit refs/heads/extra\ncommitter C <c@e> 1700000000 +0000\ndata 5\nextra\n"
        b"from refs/heads/main\nM 100644 inline extra.txt\ndata 6\nhello\n\n"))
    blob = mgit.out(["hash-object", "-w", "--stdin"], cwd=copy, input=b"a loose blob\n").strip()
    mgit.run(["tag", "-a", "-m", "t1", "t1", "main"], cwd=copy)
    mgit.run(["tag", "-a", "-m", "t2", "t2", "t1"], cwd=copy)
    t2 = mgit.out(["rev-parse", "t2"], cwd=copy).decode().strip()
    main = mgit.out(["rev-parse", "main"], cwd=copy).decode().strip()
    with open_object_store(copy) as store:
        assert len(store.packs) == 2
        assert store.has(bytes.fromhex(blob.decode()))
        assert store.peel(bytes.fromhex(t2)) == bytes.fromhex(main)
        assert store.read(bytes.fromhex(t2))[0] == "tag"
    n = check_all(mgit, copy)
    assert n > 1000
    # objects dir given directly
    with open_object_store(copy / "objects", hash_algo=None) as store:
        assert store.has(bytes.fromhex(main))
