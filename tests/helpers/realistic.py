"""A real-data-shaped git repository for the odb tests, built with the provisioned git.

make_realistic_repo(gitdir, git, seed, object_format) writes a bare repository with
`git fast-import` and repacks it with `git repack -adf --depth=50 --window=50`:
large poorly compressible blobs (random bytes, 100 KB-1 MB) changed a little commit
by commit (so git stores them as deltas whose zlib streams open with a long
Huffman-table header), a small text file edited in every commit (long delta
chains), C-quoted path names (tab, quote, backslash, newline, UTF-8), a deep tree,
an executable and a symlink, merges of side branches, annotated tags (one with a
big message, one on a tree, one on a blob, a tag of a tag) and, after the repack,
a few loose objects (a big random blob, an annotated tag).

delta_headers_over(store, limit) counts the delta objects whose zlib stream gives
fewer than the two delta-size varints from its first `limit` compressed bytes.
"""
from __future__ import annotations

import random
import zlib
from pathlib import Path

from reftable_core.errors import FormatError
from reftable_core.odb import ObjectStore
from reftable_core.odb.delta import delta_sizes
from reftable_core.odb.pack import OBJ_OFS_DELTA

from gitbin import GitRunner

QUOTED_PATHS = ["odd/tab\there.txt", 'odd/quo"te.txt', "odd/back\\slash.txt",
                "odd/new\nline.txt", "odd/ünïcödé-файл-名前.txt", "odd/ space .txt"]
DEEP_PATH = "/".join(f"d{i}" for i in range(24)) + "/leaf.txt"


def _data(b: bytes) -> bytes:
    return b"data %d\n" % len(b) + b + b"\n"


def quote_path(path: str) -> bytes:
    """fast-import's C-style quoted path (always quoted; non-ASCII as octal escapes)."""
    out = bytearray(b'"')
    for c in path.encode("utf-8"):
        if c in b'"\\':
            out += b"\\" + bytes([c])
        elif c == 9:
            out += b"\\t"
        elif c == 10:
            out += b"\\n"
        elif c < 32 or c >= 127:
            out += b"\\%03o" % c
        else:
            out.append(c)
    return bytes(out + b'"')


_WEIGHTS = [1.0 / (1 + (b % 97)) for b in range(256)]


def noise(rng: random.Random, n: int) -> bytes:
    """n random bytes of a skewed distribution: poorly compressible (deflate saves
    about a fifth) yet coded with a full dynamic Huffman table, like real binaries."""
    return bytes(rng.choices(range(256), _WEIGHTS, k=n))


def _mutate(rng: random.Random, blob: bytearray) -> None:
    """A few edits: overwrite, insert and delete random runs of up to 4 KB."""
    for _ in range(rng.randint(1, 4)):
        pos = rng.randrange(len(blob))
        r = rng.random()
        run = noise(rng, rng.randint(1, 4000))
        if r < 0.5:
            blob[pos:pos + len(run)] = run
        elif r < 0.8:
            blob[pos:pos] = run
        else:
            del blob[pos:pos + len(run)]


def make_realistic_repo(gitdir: Path, git: GitRunner, seed: int = 7,
                        object_format: str = "sha1", commits: int = 60) -> Path:
    rng = random.Random(seed)
    git.run(["init", "-q", "--bare", f"--object-format={object_format}", "-b", "main",
             str(gitdir)])
    sizes = [100_000, 300_000, 1_000_000]
    bigs = [bytearray(noise(rng, n)) for n in sizes]
    log = [f"line {i} of the long chain\n" for i in range(200)]
    out: list[bytes] = []
    w = out.append
    t0 = 1_700_000_000
    mark = 0
    main_marks: list[int] = []
    for c in range(commits):
        changes: list[bytes] = []
        if c == 0:
            for i, b in enumerate(bigs):
                changes.append(b"M 100644 inline big/blob%d.bin\n" % i + _data(bytes(b)))
            for j, p in enumerate(QUOTED_PATHS):
                changes.append(b"M 100644 inline " + quote_path(p) + b"\n"
                               + _data(f"file {j}: {p!r}\n".encode() * 20))
            changes.append(b"M 100755 inline tools/run.sh\n" + _data(b"#!/bin/sh\necho hi\n"))
            changes.append(b"M 120000 inline tools/link\n" + _data(b"run.sh"))
        else:
            i = 2 if c % 4 == 0 else c % 2      # the 1 MB blob changes less often
            _mutate(rng, bigs[i])
            changes.append(b"M 100644 inline big/blob%d.bin\n" % i + _data(bytes(bigs[i])))
            k = rng.randrange(len(QUOTED_PATHS))
            if c % 3 == 0:
                changes.append(b"M 100644 inline " + quote_path(QUOTED_PATHS[k]) + b"\n"
                               + _data(f"edit {c} of {QUOTED_PATHS[k]!r}\n".encode() * 20))
        log[rng.randrange(len(log))] = f"commit {c} changed this line {rng.random()}\n"
        changes.append(b"M 100644 inline chain/log.txt\n" + _data("".join(log).encode()))
        changes.append(b"M 100644 inline " + quote_path(DEEP_PATH) + b"\n"
                       + _data(b"deep %d\n" % c))
        merge_from = None
        if c and c % 10 == 0:
            mark += 1
            w(b"commit refs/heads/side\nmark :%d\n" % mark)
            w(b"committer S Ide <s@example.com> %d +0000\n" % (t0 + c * 60 - 30))
            w(_data("side branch at %d: ünïcödé message\n".encode() % c))
            w(b"from :%d\n" % main_marks[-1])
            side = b"side/f%d.txt" % c
            w(b"M 100644 inline " + side + b"\n" + _data(b"side %d\n" % c * 50))
            w(b"\n")
            merge_from = mark
            changes.append(b"M 100644 inline " + side + b"\n" + _data(b"side %d\n" % c * 50))
        mark += 1
        w(b"commit refs/heads/main\nmark :%d\n" % mark)
        w(b"author A U Thor <a@example.com> %d +0000\n" % (t0 + c * 60))
        w(b"committer C O Mitter <c@example.com> %d +0000\n" % (t0 + c * 60))
        w(_data(b"commit %d\n\n%s\n" % (c, b"body " * rng.randint(0, 40))))
        if main_marks:
            w(b"from :%d\n" % main_marks[-1])
        if merge_from is not None:
            w(b"merge :%d\n" % merge_from)
        out.extend(changes)
        w(b"\n")
        main_marks.append(mark)
    big_msg = "".join(f"release note {i}: {rng.random()}\n" for i in range(3000)).encode()
    for name, target, msg in [("v1", main_marks[5], b"v1\n"),
                              ("v2-big", main_marks[-1], big_msg),
                              ("v3", main_marks[commits // 2], "tag ünïcödé\n".encode())]:
        w(b"tag %s\nfrom :%d\ntagger T Agger <t@example.com> %d +0000\n"
          % (name.encode(), target, t0) + _data(msg))
    git.run(["fast-import", "--quiet"], cwd=gitdir, input=b"".join(out))
    git.run(["tag", "-a", "-m", "tag of a tag", "v2-again", "v2-big"], cwd=gitdir)
    git.run(["tag", "-a", "-m", "a tree", "tree-tag", "main^{tree}"], cwd=gitdir)
    git.run(["tag", "-a", "-m", "a blob", "blob-tag", "main:chain/log.txt"], cwd=gitdir)
    git.run(["repack", "-adfq", "--depth=50", "--window=50"], cwd=gitdir)
    loose = noise(rng, 500_000)
    git.run(["hash-object", "-w", "--stdin"], cwd=gitdir, input=loose)
    git.run(["tag", "-a", "-m", "loose tag\n" * 500, "loose-tag", "main~3"], cwd=gitdir)
    return gitdir


def delta_headers_over(store: ObjectStore, limit: int = 64) -> int:
    """How many delta objects need more than `limit` compressed bytes for their sizes."""
    count = 0
    for pack in store.packs:
        for i in range(pack.idx.count):
            off = pack.idx.offset_at(i)
            typ, _, pos = pack.header(off)
            if typ < OBJ_OFS_DELTA:
                continue
            _, pos = pack.delta_base(typ, pos, off)
            head = zlib.decompressobj().decompress(pack.buf[pos:pos + limit])
            try:
                delta_sizes(head)
            except FormatError:
                count += 1
    return count
