"""A deterministic fuzzer for the object database: real small git packs (OFS_DELTA and
REF_DELTA), their idx files, loose objects and deltas, mutated (bytes flipped, runs
overwritten, bytes inserted or deleted, varint continuation bits set, truncated).
Every read may succeed or raise a ReftableError -- nothing else may escape, no case
may hang (every inflate is bounded) and none may balloon: the cases run under an
address-space limit a few hundred MB above the process's size."""
from __future__ import annotations

import contextlib
import random
import resource
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from reftable_core.errors import ReftableError
from reftable_core.flags import Flags
from reftable_core.odb import PackIndex, open_object_store
from reftable_core.odb.delta import apply_delta
from reftable_core.odb.loose import LooseStore, decode_loose
from reftable_core.odb.pack import OBJ_OFS_DELTA

from gitbin import GitRunner, hermetic_env
from tests.helpers.realistic import noise, quote_path

SEED = 20240611
SLOW_CASE = 5.0          # seconds: far above any honest case, far below a hang


@contextlib.contextmanager
def address_space_limit(extra_mb: int) -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/status") as f:
        vm = int(f.read().split("VmSize:")[1].split()[0]) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (vm + (extra_mb << 20), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@pytest.fixture(scope="module")
def small_repo(git_path: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare repository with one OFS_DELTA pack (objects/pack) and a REF_DELTA copy of
    it (ref-pack/), deltas of text and binary blobs, trees, a merge and annotated tags."""
    base = tmp_path_factory.mktemp("fuzz")
    git = GitRunner(git_path, hermetic_env(base / "home"))
    gitdir = base / "small.git"
    git.run(["init", "-q", "--bare", "-b", "main", str(gitdir)])
    rng = random.Random(SEED)
    text = [f"line {i}\n" for i in range(60)]
    binary = bytearray(noise(rng, 3000))
    out = []
    for c in range(12):
        text[rng.randrange(len(text))] = f"changed in {c}\n"
        binary[rng.randrange(len(binary)):][:40] = noise(rng, 40)
        out.append(b"commit refs/heads/main\nmark :%d\n" % (c + 1)
                   + b"committer C <c@example.com> %d +0000\n" % (1_700_000_000 + c)
                   + b"data 9\ncommit %02d\n" % c
                   + (b"from :%d\n" % c if c else b"")
                   + (b"merge :%d\n" % (c - 2) if c == 6 else b"")
                   + b"M 100644 inline a/text.txt\ndata %d\n%s\n"
                   % (len("".join(text)), "".join(text).encode())
                   + b"M 100644 inline b/bin.dat\ndata %d\n%s\n" % (len(binary), bytes(binary))
                   + b"M 100644 inline " + quote_path(f"c/ü{c % 3}\t.txt")
                   + b"\ndata 4\nx%02d\n\n" % c)
    out.append(b"tag v1\nfrom :5\ntagger T <t@example.com> 1700000000 +0000\ndata 3\nv1\n")
    git.run(["fast-import", "--quiet"], cwd=gitdir, input=b"".join(out))
    git.run(["tag", "-a", "-m", "v2", "v2", "v1"], cwd=gitdir)
    git.run(["repack", "-adfq", "--depth=10", "--window=10"], cwd=gitdir)
    refpack = gitdir / "ref-pack"
    refpack.mkdir()
    pack = git.out(["pack-objects", "--all", "--stdout", "--window=10"], cwd=gitdir, input=b"")
    (refpack / "pack-ref.pack").write_bytes(pack)     # no --delta-base-offset: REF_DELTA
    git.run(["index-pack", str(refpack / "pack-ref.pack")], cwd=gitdir)
    for p in (gitdir / "objects" / "pack").glob("pack-*"):
        if p.suffix not in (".pack", ".idx"):
            p.unlink()
    return gitdir


def mutate(rng: random.Random, data: bytes, lo: int = 0, hi: int | None = None,
           hot: Sequence[int] = ()) -> bytes:
    """One random mutation of data[lo:hi] (the rest is kept, except for truncation),
    half of the time at one of the hot positions (object headers, sizes, offsets)."""
    hi = len(data) if hi is None else min(hi, len(data))
    hot = [h for h in hot if lo <= h < hi]
    if hi <= lo:
        return data
    b = bytearray(data)
    r = rng.random()
    i = rng.choice(hot) if hot and rng.random() < 0.5 else rng.randrange(lo, hi)
    if r < 0.35:
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(lo, hi)] ^= 1 << rng.randrange(8)
    elif r < 0.5:
        n = rng.randint(1, 16)
        b[i:i + n] = bytes(rng.randrange(256) for _ in range(min(n, hi - i)))
    elif r < 0.55:
        b[i] |= 0x80                           # a varint that goes on
        if i + 1 < hi:
            b[i + 1] = rng.choice((0xFF, 0x80, 0x7F))
    elif r < 0.65:                             # a varint made long: sizes up to 2^80
        b[i:i + 1] = (bytes([b[i] | 0x80]) + b"\xff" * rng.randint(4, 10)
                      + bytes([rng.randrange(1, 128)]))
    elif r < 0.75:
        b[i:i + rng.randint(1, 8)] = b""
    elif r < 0.85:
        b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    else:
        del b[rng.randrange(len(b) + 1):]
    return bytes(b)


def read_everything(objects: Path, ids: list[bytes], flags: Flags) -> int:
    """Open the store and read every id (and the first listed ones) every way; return
    how many reads succeeded."""
    good = 0
    with open_object_store(objects, "sha1", flags) as s:
        listed = list(s.iter_oids())
        for oid in ids + listed[:3]:
            for call in (s.read_header, s.read, s.peel):
                try:
                    call(oid)
                    good += 1
                except ReftableError:
                    pass
    return good


class Fuzz:
    def __init__(self, tmp_path: Path) -> None:
        self.rng = random.Random(SEED)
        self.tmp = tmp_path
        self.cases = 0
        self.outcomes: dict[str, set[bool]] = {}
        self.slowest = 0.0

    def case(self, kind: str, fn: Callable[..., object], *args: object) -> None:
        """Run fn(*args): it may return or raise a ReftableError, nothing else."""
        self.cases += 1
        t = time.perf_counter()
        try:
            fn(*args)
            ok = True
        except ReftableError:
            ok = False
        self.slowest = max(self.slowest, time.perf_counter() - t)
        self.outcomes.setdefault(kind, set()).add(ok)


def pack_files(gitdir: Path, sub: str) -> tuple[bytes, bytes, str, list[int]]:
    """The pack, its idx, their name and the hot positions of the pack: every object's
    header and the byte after it (a delta's base reference or zlib stream)."""
    pack = next((gitdir / sub).glob("*.pack"))
    idx = pack.with_suffix(".idx").read_bytes()
    offsets = [off for _, off in PackIndex(idx).entries()]
    return pack.read_bytes(), idx, pack.stem, offsets + [o + 2 for o in offsets]


def test_fuzz_odb(small_repo: Path, tmp_path: Path) -> None:
    fz = Fuzz(tmp_path)
    rng = fz.rng
    flag_sets = [Flags(), Flags(delta_cache_index="fixed:1", delta_cache_limit=0)]
    with open_object_store(small_repo) as s:
        ids = sorted(s.iter_oids())
        objects = {o: s.read(o) for o in ids}
        deltas = []                                   # (base data, delta bytes)
        pack = s.packs[0]
        for i in range(pack.idx.count):
            off = pack.idx.offset_at(i)
            typ, size, pos = pack.header(off)
            if typ >= OBJ_OFS_DELTA:
                base_off, pos = pack.delta_base(typ, pos, off)
                deltas.append((pack.read(base_off, s.cache)[1], pack.inflate(pos, size)))
    assert len(ids) > 40 and len(deltas) > 10
    work = tmp_path / "objects"
    with address_space_limit(400):
        for sub in ("objects/pack", "ref-pack"):
            pack_raw, idx_raw, stem, hot = pack_files(small_repo, sub)
            n_obj = len(ids)
            idx_hot = [8 + 1024 + 24 * n_obj + 4 * k for k in range(n_obj)] + [8 + 4 * 255]
            pdir = work / "pack"
            pdir.mkdir(parents=True, exist_ok=True)
            pp, ip = pdir / f"{stem}.pack", pdir / f"{stem}.idx"
            for n in range(700):
                if n % 7 == 0:                          # the idx
                    pp.write_bytes(pack_raw)
                    ip.write_bytes(mutate(rng, idx_raw, hot=idx_hot))
                else:                                   # the pack; trailer kept mostly
                    ip.write_bytes(idx_raw)
                    hi = len(pack_raw) - 20 if n % 5 else None
                    pp.write_bytes(mutate(rng, pack_raw, 12 if n % 3 else 0, hi, hot))
                fz.case(f"pack {sub}", read_everything, work, ids, flag_sets[n % 2])
            pp.unlink()
            ip.unlink()
        loose = LooseStore(str(work), 20)
        for n in range(800):
            oid = ids[n % len(ids)]
            typ, data = objects[oid]
            body = b"%s %d\0" % (typ.encode(), len(data)) + data
            raw = zlib.compress(body) if n % 2 else zlib.compress(mutate(rng, body, 0, 24))
            raw = mutate(rng, raw, 0) if n % 2 else raw
            fz.case("decode_loose", decode_loose, raw, "obj")
            if n % 4 == 0:
                p = Path(loose.path_of(oid))
                p.parent.mkdir(exist_ok=True)
                p.write_bytes(raw)
                fz.case("loose header", loose.read_header, oid)
                fz.case("loose store", loose.read, oid)
                p.unlink()
        for n in range(1500):
            base, delta = deltas[n % len(deltas)]
            fz.case("apply_delta", apply_delta, base, mutate(rng, delta, hot=range(5)))
    assert fz.cases > 3000
    assert fz.slowest < SLOW_CASE, fz.slowest
    # each kind of input both still reads sometimes and fails sometimes: the fuzz bites
    assert all(v == {True, False} for v in fz.outcomes.values()), fz.outcomes
