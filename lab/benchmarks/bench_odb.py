"""Benchmark of the odb layer (seed 002): log-raw and log-S over a depth-50 pack.

make_history(gitdir, commits, files, seed, object_format) builds a deterministic
history with `git fast-import` (reusable by data_gen's `history-depth50` preset),
packed with `git repack -adf --depth=50 --window=250`.

Run:  .venv/bin/python -m lab.benchmarks.bench_odb [--commits N --files M ...]
It times reftable-lab's walks for each delta-cache strategy (single vs blob_first,
hashmap vs fixed:N, across byte limits), next to `git log --raw` / `git log -S`
(with the matching core.deltaBaseCacheLimit) and dulwich reading the same objects.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from lab.gitbin import GitRunner, find_git, hermetic_env

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi "
         "rho sigma tau upsilon phi chi psi omega foo bar baz qux quux corge grault garply "
         "waldo fred plugh xyzzy thud").split()


def _line(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 10)))


def _data(b: bytes) -> bytes:
    return b"data %d\n" % len(b) + b + b"\n"


def make_history(gitdir: str | os.PathLike[str], commits: int, files: int, seed: int = 0,
                 object_format: str = "sha1", *, repack: bool = True, depth: int = 50,
                 window: int = 250, merges_every: int = 0, ref_format: str = "files",
                 git: GitRunner | None = None) -> Path:
    """Create a bare repository at gitdir with a deterministic linear history of
    `commits` commits over about `files` files (in nested directories), on
    refs/heads/main, and pack it with --depth/--window. Every merges_every-th
    commit (0 = never) is a merge of a one-commit side branch. Returns gitdir."""
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
        tree[p] = [_line(rng) for _ in range(rng.randint(5, 60))]
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
                tree[p] = [_line(rng) for _ in range(rng.randint(5, 60))]
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
