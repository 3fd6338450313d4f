"""The refs-real-shaped preset: a repository shaped as a real project's, for the listing
command's whole format language (for-each-ref with every atom: lab.speed).

Deterministic (one seed, fixed names and dates). git's fast-import writes the objects: a
first-parent history of --commits commits by a handful of people (author and committer
differ, time zones differ), each changing one file, with a real-shaped message (a subject;
most have a body paragraph, many trailers: Signed-off-by, Reviewed-by, Fixes); annotated
tags (a tagger, a message) on release commits. The refs (--refs in all, one transaction of
update-ref --stdin, as a clone's or a push's): branches (45 %), remote-tracking refs (25 %),
annotated tags (20 %), lightweight tags (10 %), each at a spread commit; HEAD a symref to
main and refs/remotes/origin/HEAD to refs/remotes/origin/main; and the first TRACKED
branches with an upstream and a push remote in config (git's branch.<b>.remote/merge,
remote.origin.fetch/push), so %(upstream) and %(push) have something to say.
"""
from __future__ import annotations

import random
import subprocess
from pathlib import Path
from typing import Any

from .objects import init_repo

TRACKED = 200
PEOPLE = [(b"Ada Lovelace", b"ada@example.org", b"+0000"),
          (b"Junio C Hamano", b"gitster@example.com", b"-0800"),
          (b"Linus Torvalds", b"torvalds@example.org", b"-0700"),
          (b"Patrick Steinhardt", b"ps@example.im", b"+0100"),
          (b"Taylor Blau", b"me@example.com", b"-0500"),
          (b"Jeff King", b"peff@example.net", b"-0400")]
WORDS = ("refs reftable packed loose stack table block record index merge iterator "
         "lock config object commit tag tree blob delta cache walk parse format atom "
         "sort filter prefix name branch remote upstream push reflog migrate").split()
VERBS = "fix add drop teach avoid simplify speed up rename document handle".split()
AREAS = "refs reftable refs/files ref-filter for-each-ref update-ref t/perf builtin".split()
BASE = 1_500_000_000


def _message(rng: random.Random, i: int) -> bytes:
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6)))
    lines = [f"{rng.choice(AREAS)}: {rng.choice(VERBS)} {words} ({i})"]
    if rng.random() < 0.8:
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40)))
        lines += ["", *[body[k:k + 72].strip() for k in range(0, len(body), 72)]]
    if rng.random() < 0.6:
        who = rng.choice(PEOPLE)
        lines += ["", f"Signed-off-by: {who[0].decode()} <{who[1].decode()}>"]
        if rng.random() < 0.4:
            lines.append(f"Reviewed-by: {rng.choice(PEOPLE)[0].decode()}")
        if rng.random() < 0.2:
            lines.append(f"Fixes: {i:07x} (an earlier commit)")
    return ("\n".join(lines) + "\n").encode()


def _data(b: bytes) -> bytes:
    return b"data %d\n%s\n" % (len(b), b)


def _stream(commits: int, tags: list[int], rng: random.Random) -> bytes:
    out = []
    for i in range(1, commits + 1):
        a, c = rng.choice(PEOPLE), rng.choice(PEOPLE)
        t = BASE + i * 3607
        out.append(b"commit refs/heads/main\nmark :%d\n" % i)
        out.append(b"author %s <%s> %d %s\n" % (a[0], a[1], t - 911, a[2]))
        out.append(b"committer %s <%s> %d %s\n" % (c[0], c[1], t, c[2]))
        out.append(_data(_message(rng, i)))
        if i > 1:
            out.append(b"from :%d\n" % (i - 1))
        f = rng.randrange(max(8, commits // 20))
        out.append(b"M 644 inline src/file%d.c\n" % f)
        out.append(_data(b"/* %d */\nint f%d(void) { return %d; }\n" % (i, f, rng.randrange(1000))))
    for k, i in enumerate(tags):
        p = PEOPLE[k % len(PEOPLE)]
        out.append(b"tag v%d.%d.%d\nfrom :%d\n" % (k // 100, (k // 10) % 10, k % 10, i))
        out.append(b"tagger %s <%s> %d %s\n" % (p[0], p[1], BASE + i * 3607 + 60, p[2]))
        out.append(_data(b"Release %d\n\nThe %d-th release: %s.\n"
                         % (k, k, " ".join(rng.choice(WORDS) for _ in range(6)).encode())))
    return b"".join(out) + b"done\n"


def _marks(path: Path) -> dict[int, str]:
    return {int(m[1:]): oid for m, oid in (line.split() for line in path.read_text().splitlines())}


def build_real_shaped(ctx: Any) -> dict[str, Any]:
    p = ctx.params
    n, commits = p["refs"], p["commits"]
    gd = ctx.gitdir
    init_repo(ctx.git, gd, p["ref_format"], ctx.hash_id)
    rng = random.Random(p["seed"])
    n_ann = n * 20 // 100
    tags = [1 + (k * 7919) % commits for k in range(n_ann)]
    marks = ctx.dir / "real-shaped.marks"
    proc = subprocess.run([ctx.git.git, "--git-dir", str(gd), "fast-import", "--quiet", "--done",
                           f"--export-marks={marks}"], input=_stream(commits, tags, rng),
                          env=dict(ctx.git.env), capture_output=True)
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, "git fast-import", b"", proc.stderr)
    oid = _marks(marks)
    marks.unlink()
    ctx.phase("fast-import")
    # refs/tags/v* came from fast-import (one transaction); the rest in one more
    n_br, n_rem = n * 45 // 100, n * 25 // 100
    n_light = n - n_br - n_rem - n_ann - 1          # refs/heads/main is one of n
    at = lambda k: oid[1 + (k * 104729) % commits]   # noqa: E731  a spread commit
    lines = [b"update refs/heads/main %s\n" % oid[commits].encode()]
    lines += [b"create refs/heads/topic/%05d %s\n" % (k, at(k).encode()) for k in range(n_br)]
    lines += [b"create refs/remotes/origin/topic/%05d %s\n" % (k, at(k + 1).encode())
              for k in range(n_rem - 1)]
    lines.append(b"create refs/remotes/origin/main %s\n" % oid[commits].encode())
    lines += [b"create refs/tags/light-%05d %s\n" % (k, at(k + 3).encode())
              for k in range(n_light)]
    ctx.git.run(["--git-dir", str(gd), "update-ref", "--stdin"], input=b"".join(lines))
    ctx.git.run(["--git-dir", str(gd), "symbolic-ref", "refs/remotes/origin/HEAD",
                 "refs/remotes/origin/main"])
    cfg = ["[remote \"origin\"]", "\turl = https://example.org/project.git",
           "\tfetch = +refs/heads/*:refs/remotes/origin/*", "\tpush = refs/heads/*:refs/heads/*",
           "[branch \"main\"]", "\tremote = origin", "\tmerge = refs/heads/main"]
    for k in range(min(TRACKED, n_br, n_rem - 1)):
        cfg += [f"[branch \"topic/{k:05d}\"]", "\tremote = origin",
                f"\tmerge = refs/heads/topic/{k:05d}"]
    with open(gd / "config", "a") as f:
        f.write("\n".join(cfg) + "\n")
    ctx.phase("refs")
    return {"probe_refs": {"existing": "refs/heads/main", "missing": "refs/heads/nope"},
            "ref_count": n + 1, "commits": commits, "annotated_tags": n_ann,
            "tip": oid[commits]}
