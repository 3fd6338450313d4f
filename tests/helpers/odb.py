"""Helpers shared by the tests/odb/ files: git-generated repositories (make_history),
`git cat-file --batch` parsing, and a tiny hand-made pack/idx writer for corrupt inputs."""
from __future__ import annotations

import hashlib
import os
import random
import struct
import zlib
from pathlib import Path

from gitbin import GitRunner, find_git, hermetic_env


def cat_file_all(git: GitRunner, gitdir: Path) -> dict[bytes, tuple[str, bytes]]:
    out = git.out(["cat-file", "--batch-all-objects", "--batch", "--unordered"], cwd=gitdir)
    objs: dict[bytes, tuple[str, bytes]] = {}
    i = 0
    while i < len(out):
        nl = out.index(b"\n", i)
        h, t, s = out[i:nl].split()
        n = int(s)
        objs[bytes.fromhex(h.decode())] = (t.decode(), out[nl + 1:nl + 1 + n])
        i = nl + 1 + n + 1
    return objs


def obj_header(typ: int, size: int) -> bytes:
    c = (typ << 4) | (size & 15)
    size >>= 4
    out = bytearray()
    while size:
        out.append(c | 0x80)
        c = size & 0x7F
        size >>= 7
    out.append(c)
    return bytes(out)


def ofs_encode(ofs: int) -> bytes:
    out = [ofs & 0x7F]
    ofs >>= 7
    while ofs:
        ofs -= 1
        out.append(0x80 | (ofs & 0x7F))
        ofs >>= 7
    return bytes(reversed(out))


def write_pack(dirpath: Path, objects: list[tuple], hash_len: int = 20,
               name: str = "pack-test") -> tuple[Path, Path, list[int]]:
    """objects: (oid, typ, payload, base[, raw_zlib_bytes]) with typ 1-4 (base None), 6 (base = index of an
    earlier object) or 7 (base = oid). Payload is the inflated body (the delta for 6/7).
    Writes name.pack and name.idx (v2); returns their paths and the offsets."""
    h = hashlib.sha1 if hash_len == 20 else hashlib.sha256
    body = bytearray(b"PACK" + struct.pack(">II", 2, len(objects)))
    offsets = []
    for oid, typ, payload, base, *raw in objects:
        off = len(body)
        offsets.append(off)
        body += obj_header(typ, len(payload))
        if typ == 6:
            body += ofs_encode(off - offsets[base])
        elif typ == 7:
            body += base
        body += raw[0] if raw else zlib.compress(payload)
    body += h(body).digest()
    pack_sum = bytes(body[-hash_len:])
    order = sorted(range(len(objects)), key=lambda i: objects[i][0])
    fan = [0] * 256
    for i in order:
        fan[objects[i][0][0]] += 1
    acc = 0
    for b in range(256):
        acc += fan[b]
        fan[b] = acc
    idx = bytearray(b"\xfftOc" + struct.pack(">I", 2) + struct.pack(">256I", *fan))
    for i in order:
        idx += objects[i][0]
    for i in order:
        idx += struct.pack(">I", 0)
    for i in order:
        idx += struct.pack(">I", offsets[i])
    idx += pack_sum
    idx += h(idx).digest()
    dirpath.mkdir(parents=True, exist_ok=True)
    pp = dirpath / f"{name}.pack"
    ip = dirpath / f"{name}.idx"
    pp.write_bytes(bytes(body))
    ip.write_bytes(bytes(idx))
    return pp, ip, offsets


def git_oid(typ: str, data: bytes, hash_len: int = 20) -> bytes:
    h = hashlib.sha1 if hash_len == 20 else hashlib.sha256
    return h(b"%s %d\0" % (typ.encode(), len(data)) + data).digest()


WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega", "foo", "bar", "baz", "qux", "quux", "corge", "grault", "garply", "waldo", "fred", "plugh", "xyzzy", "thud"]


def _line(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 10)))


def _data(b: bytes) -> bytes:
    return b"data %d\n" % len(b) + b + b"\n"


def make_history(gitdir: str | os.PathLike[str], commits: int, files: int, seed: int = 0,
                 object_format: str = "sha1", *, repack: bool = True, depth: int = 50,
                 window: int = 250, merges_every: int = 0, ref_format: str = "files",
                 file_lines: tuple[int, int] = (5, 60), git: GitRunner | None = None) -> Path:
    """Create a bare repository at gitdir with a deterministic linear history of
    `commits` commits over about `files` files (in nested directories), on
    refs/heads/main, and pack it with --depth/--window. Every merges_every-th
    commit (0 = never) is a merge of a one-commit side branch. New files get
    file_lines lines (about 40 bytes each). Returns gitdir."""
    gitdir = Path(gitdir)
    git = git or GitRunner(find_git(), hermetic_env())
    git.run(["init", "-q", "--bare", f"--object-format={object_format}",
             f"--ref-format={ref_format}", "-b", "main", str(gitdir)])
    rng = random.Random(seed)
    ndirs = max(1, int(files ** 0.5) // 2)
    tree: dict[str, list[str]] = {}
    modes: dict[str, str] = {}

    def new_path(i: int) -> str:
        d = rng.randrange(ndirs)
        sub = rng.randrange(3)
        return f"dir{d:03d}/sub{sub}/file{i:05d}.txt"

    out: list[bytes] = []
    w = out.append
    next_file = 0
    for _ in range(files):
        p = new_path(next_file)
        next_file += 1
        tree[p] = [_line(rng) for _ in range(rng.randint(*file_lines))]
        modes[p] = "100644"
    t0 = 1_700_000_000
    mark = 0
    side_n = 0
    for c in range(commits):
        changes: list[bytes] = []
        if c == 0:
            touched = sorted(tree)
        else:
            touched = []
            for _ in range(rng.randint(1, 4)):
                p = rng.choice(sorted(tree)) if len(tree) < 64 else rng.choice(list(tree))
                lines = tree[p]
                r = rng.random()
                if modes[p] == "120000":
                    tree[p] = [f"../dir{rng.randrange(ndirs):03d}/target{rng.randrange(99)}"]
                elif r < 0.5 and lines:
                    lines[rng.randrange(len(lines))] = _line(rng)
                elif r < 0.8:
                    lines.insert(rng.randint(0, len(lines)), _line(rng))
                elif lines:
                    del lines[rng.randrange(len(lines))]
                touched.append(p)
            r = rng.random()
            if r < 0.06:
                p = new_path(next_file)
                next_file += 1
                tree[p] = [_line(rng) for _ in range(rng.randint(*file_lines))]
                modes[p] = "100644"
                touched.append(p)
            elif r < 0.09 and len(tree) > 2:
                p = rng.choice(sorted(tree))
                del tree[p]
                changes.append(b"D " + p.encode() + b"\n")
            elif r < 0.10:
                p = rng.choice(sorted(tree))
                modes[p] = "100755" if modes[p] == "100644" else "100644"
                touched.append(p)
            elif r < 0.11:
                p = f"links/link{next_file:05d}"
                next_file += 1
                tree[p] = [rng.choice(sorted(t for t in tree if not t.startswith("links/")))]
                modes[p] = "120000"
                touched.append(p)
        for p in dict.fromkeys(touched):
            if p not in tree:
                continue
            if modes[p] == "120000":
                body = tree[p][0].encode()
            else:
                body = ("\n".join(tree[p]) + "\n").encode()
            changes.append(f"M {modes[p]} inline {p}\n".encode() + _data(body))
        merge_from = None
        if merges_every and c and c % merges_every == 0:
            side_n += 1
            sp = f"side/file{side_n:04d}.txt"
            body = ("\n".join(_line(rng) for _ in range(10)) + "\n").encode()
            mark += 1
            w(b"commit refs/heads/side\nmark :%d\n" % mark)
            w(b"committer C O Mitter <c@example.com> %d +0000\n" % (t0 + c * 60 - 30))
            w(_data(b"side %d" % side_n))
            w(b"from :%d\n" % (mark - 1))
            w(f"M 100644 inline {sp}\n".encode() + _data(body))
            w(b"\n")
            merge_from = mark
            tree[sp] = body.decode().splitlines()
            modes[sp] = "100644"
            changes.append(f"M 100644 inline {sp}\n".encode() + _data(body))
        mark += 1
        w(b"commit refs/heads/main\nmark :%d\n" % mark)
        w(b"author A U Thor <a@example.com> %d +0000\n" % (t0 + c * 60))
        w(b"committer C O Mitter <c@example.com> %d +0000\n" % (t0 + c * 60))
        w(_data(b"commit %d" % c))
        if merge_from is not None:
            w(b"from :%d\n" % (mark - 2))
            w(b"merge :%d\n" % merge_from)
        elif c:
            w(b"from :%d\n" % (mark - 1))
        out.extend(changes)
        w(b"\n")
    git.run(["fast-import", "--quiet"], cwd=gitdir, input=b"".join(out))
    if repack:
        git.run(["repack", "-adfq", f"--depth={depth}", f"--window={window}"], cwd=gitdir)
    return gitdir
