"""Real objects for the datasets, made by `git fast-import` with pinned dates.

Contract: `seed_objects(...)` builds a small linear history (commits) and
annotated tags in a scratch repository and copies the resulting pack into the
dataset's object store; `synthetic_history(...)` streams a larger history of
commits over many files straight into a dataset repository. Both are
deterministic: the same parameters give the same object ids and pack bytes.
Refs that fast-import itself creates stay in the scratch repository (seed
objects) or are removed by the caller (history), so ref storage is entirely
written by the dataset builders.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from gitbin import GitRunner

from .names import rng_for

IDENT = b"C O Mitter <committer@example.com>"
AUTHOR = b"A U Thor <author@example.com>"
BASE_TIME = 1700000000


@dataclass
class ObjectSet:
    """Object ids (hex, bytes) of the seed objects in a dataset."""
    commits: list[bytes]                 # oldest first; commits[-1] is the tip of main
    tags: list[tuple[bytes, bytes]]      # (tag object id, commit it peels to)

    @property
    def tip(self) -> bytes:
        return self.commits[-1]


def _data(payload: bytes) -> bytes:
    return b"data %d\n" % len(payload) + payload + b"\n"


def _seed_stream(n_commits: int, n_tags: int, seed: int) -> bytes:
    rng = rng_for(seed, "seed-objects")
    out: list[bytes] = []
    files = [f"src/module{i}.txt".encode() for i in range(8)]
    for i in range(1, n_commits + 1):
        when = BASE_TIME + i * 60
        f = files[rng.randrange(len(files))]
        content = b"revision %d of %s, seed %d, token %08x\n" % (i, f, seed, rng.getrandbits(32))
        out.append(b"commit refs/heads/main\nmark :%d\n" % i)
        out.append(b"author %s %d +0000\n" % (AUTHOR, when))
        out.append(b"committer %s %d +0000\n" % (IDENT, when))
        verb = rng.choice([b"fix", b"add", b"update", b"tune"])
        out.append(_data(b"commit %d: %s\n" % (i, verb)))
        if i > 1:
            out.append(b"from :%d\n" % (i - 1))
        out.append(b"M 100644 inline %s\n" % f)
        out.append(_data(content))
    for j in range(n_tags):
        target = 1 + (j * n_commits) // max(1, n_tags)
        out.append(b"tag seed-tag-%d\nmark :%d\nfrom :%d\n" % (j, n_commits + 1 + j, target))
        out.append(b"tagger %s %d +0000\n" % (IDENT, BASE_TIME + 10_000_000 + j))
        out.append(_data(b"release %d\n" % j))
    out.append(b"done\n")
    return b"".join(out)


def _read_marks(path: Path) -> dict[int, bytes]:
    marks: dict[int, bytes] = {}
    for line in path.read_bytes().splitlines():
        m, oid = line.split()
        marks[int(m[1:])] = oid
    return marks


def init_repo(git: GitRunner, gitdir: Path, ref_format: str, object_format: str) -> None:
    """`git init --bare` without templates (no hooks, no description: stable bytes)."""
    git.run(["init", "-q", "--bare", "--template=", f"--ref-format={ref_format}",
             f"--object-format={object_format}", "-b", "main", str(gitdir)])


def seed_objects(git: GitRunner, gitdir: Path, object_format: str, n_commits: int,
                 n_tags: int, seed: int) -> ObjectSet:
    """Make n_commits commits and n_tags annotated tags; copy their pack into gitdir."""
    n_commits = max(1, n_commits)
    with tempfile.TemporaryDirectory(prefix="data-gen-objects-", dir=gitdir.parent) as tmp:
        scratch = Path(tmp) / "scratch.git"
        init_repo(git, scratch, "files", object_format)
        marks = Path(tmp) / "marks"
        # unpackLimit=0: always a pack, even for a handful of objects (no loose objects)
        git.run(["--git-dir", str(scratch), "-c", "fastimport.unpackLimit=0", "fast-import",
                 "--quiet", "--done",
                 f"--export-marks={marks}"], input=_seed_stream(n_commits, n_tags, seed))
        m = _read_marks(marks)
        packdir = gitdir / "objects" / "pack"
        packdir.mkdir(parents=True, exist_ok=True)
        for p in sorted((scratch / "objects" / "pack").iterdir()):
            if p.suffix in (".pack", ".idx", ".rev"):
                shutil.copyfile(p, packdir / p.name)
    commits = [m[i] for i in range(1, n_commits + 1)]
    tags = [(m[n_commits + 1 + j], m[1 + (j * n_commits) // max(1, n_tags)])
            for j in range(n_tags)]
    return ObjectSet(commits, tags)


# --- synthetic history (history-depth50) -------------------------------------------

_VOCAB = ("static int struct return if else for while const char void unsigned size_t "
          "buf len ref table block record index offset hash name value error goto out "
          "free alloc read write seek iter next prev key cmp merge stack lock flush").split()


def _history_stream(commits: int, files: int, seed: int,
                    tick: Callable[[int], None] | None) -> Iterator[bytes]:
    rng = rng_for(seed, "history")
    dirs = max(1, int(files ** 0.5) // 2)
    paths = [f"d{i % dirs:02d}/s{(i // dirs) % 4}/file{i:05d}.c".encode() for i in range(files)]
    contents: list[list[bytes]] = []
    for i in range(files):
        n = rng.randint(20, 120)
        contents.append([b" ".join(rng.choice(_VOCAB).encode() for _ in range(rng.randint(3, 10)))
                         for _ in range(n)])
    # first commit adds every file
    yield b"commit refs/heads/main\nmark :1\n"
    yield b"author %s %d +0000\ncommitter %s %d +0000\n" % (AUTHOR, BASE_TIME, IDENT, BASE_TIME)
    yield _data(b"initial import\n")
    for p, lines in zip(paths, contents):
        yield b"M 100644 inline %s\n" % p + _data(b"\n".join(lines) + b"\n")
    yield b"\n"
    for c in range(2, commits + 1):
        when = BASE_TIME + c * 600
        yield b"commit refs/heads/main\nmark :%d\n" % c
        yield b"author %s %d +0000\ncommitter %s %d +0000\n" % (AUTHOR, when, IDENT, when)
        # skewed: a few hot files get hundreds of revisions (deep delta chains),
        # most files only a handful
        touched = sorted({int(files * rng.random() ** 3) for _ in range(rng.randint(1, 5))})
        msg = b"%s %s: commit %d\n" % (rng.choice(_VOCAB).encode(), rng.choice(_VOCAB).encode(), c)
        yield _data(msg)
        yield b"from :%d\n" % (c - 1)
        for i in touched:
            lines = contents[i]
            for _ in range(rng.randint(1, 4)):
                pos = rng.randrange(len(lines) + 1)
                r = rng.random()
                new = b" ".join(rng.choice(_VOCAB).encode() for _ in range(rng.randint(3, 10)))
                if r < 0.5 or len(lines) < 10:
                    lines.insert(pos, new + b" /* c%d */" % c)
                elif r < 0.8 and pos < len(lines):
                    lines[pos] = new
                elif pos < len(lines):
                    del lines[pos]
            yield b"M 100644 inline %s\n" % paths[i] + _data(b"\n".join(lines) + b"\n")
        yield b"\n"
        if tick:
            tick(1)
    yield b"done\n"


@dataclass(frozen=True)
class History:
    """What synthetic_history makes: commits over files (from seed), then repacked
    with --depth and --window."""
    commits: int
    files: int
    seed: int
    depth: int = 50
    window: int = 250


def synthetic_history(git: GitRunner, gitdir: Path, history: History,
                      tick: Callable[[int], None] | None = None,
                      wait_tick: Callable[[], None] | None = None) -> bytes:
    """Fast-import a history into gitdir, then `git repack -adf --depth --window`.

    Returns the tip commit id. The caller owns ref storage: fast-import's own
    ref update (refs/heads/main) is left for the caller to keep or rewrite.
    """
    marks = gitdir.parent / "history.marks"
    cmd = [git.git, "--git-dir", str(gitdir), "-c", "fastimport.unpackLimit=0", "fast-import",
           "--quiet", "--done",
           f"--export-marks={marks}"]
    env = dict(git.env)
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None
    try:
        buf: list[bytes] = []
        size = 0
        for piece in _history_stream(history.commits, history.files, history.seed, tick):
            buf.append(piece)
            size += len(piece)
            if size > 1 << 20:
                proc.stdin.write(b"".join(buf))
                buf, size = [], 0
        proc.stdin.write(b"".join(buf))
        proc.stdin.close()
    except BrokenPipeError:
        pass
    err = proc.stderr.read() if proc.stderr else b""
    if proc.wait() != 0:
        raise subprocess.CalledProcessError(proc.returncode, cmd, b"", err)
    tip = _read_marks(marks)[history.commits]
    os.unlink(marks)
    # one thread: a threaded delta search may pick other bases run to run
    args = ["--git-dir", str(gitdir), "-c", "pack.threads=1", "-c", "repack.writeBitmaps=false",
            "repack", "-adfq", f"--depth={history.depth}", f"--window={history.window}"]
    if wait_tick is None:
        git.run(args)
        return tip
    proc = subprocess.Popen([git.git, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=dict(git.env))
    while True:
        try:
            proc.wait(timeout=0.5)
            break
        except subprocess.TimeoutExpired:
            wait_tick()
    err = proc.stderr.read() if proc.stderr else b""
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, [git.git, *args], b"", err)
    return tip
