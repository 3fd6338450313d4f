#!/usr/bin/env python3
"""Compare the lab's `for-each-ref --format=FOR_EACH_REF_WALKS_FORMAT` (lab.speed) with git's,
byte for byte, over a repository too large for git's own run of it.

  PYTHONPATH=core:. python scripts/check_walks_bytes.py GITDIR [--lab-out FILE]

git's ref-filter starts `git describe ARGS <oid>` for every ref and %(describe) atom
(ref-filter.c grab_describe_values, v2.47.3): over 100,001 refs, two such atoms are 200k
children of about 0.1 s each, hours here. `git describe ARGS oid1 oid2 ...` describes each
argument as a child of its own would (builtin/describe.c: one describe() per argument,
its marks cleared before the next), so git's bytes are composed: git for-each-ref with
each %(describe...) atom replaced by %(objectname), then each ref's column filled from
batched `git describe` runs over the distinct objects. Both sides run under the hermetic
environment with WALKS_ENV's pinned "now". Prints git's CPU for the composed run, the
lab's CPU (or reads a saved --lab-out), and SAME or DIFF (exit status 1 on DIFF).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from gitbin import find_git, hermetic_env
from lab.speed import FOR_EACH_REF_WALKS_FORMAT, WALKS_ENV

BATCH = 5000


def _cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def git_bytes(git: str, gitdir: str, fmt: str, env: dict[str, str]) -> bytes:
    parts = fmt.split("|")
    describe = {i: p for i, p in enumerate(parts) if p.startswith("%(describe")}
    gfmt = "|".join("%(objectname)" if i in describe else p for i, p in enumerate(parts))
    out = subprocess.run([git, f"--git-dir={gitdir}", "for-each-ref", f"--format={gfmt}"],
                         env=env, capture_output=True, check=True).stdout
    rows = [line.split(b"|") for line in out.split(b"\n")[:-1]]
    for col, atom in describe.items():
        arg = atom[len("%(describe"):-1].lstrip(":")
        args = []
        for opt in filter(None, arg.split(",")):
            key, _eq, val = opt.partition("=")
            args.append(f"--{key}" if key == "tags" and val in ("", "yes", "true")
                        else f"--{key}={val}")
        oids = sorted({r[col] for r in rows})
        names: dict[bytes, bytes] = {}
        for k in range(0, len(oids), BATCH):
            chunk = oids[k:k + BATCH]
            p = subprocess.run([git, f"--git-dir={gitdir}", "describe", *args,
                                *(o.decode() for o in chunk)], env=env, capture_output=True)
            got = p.stdout.split(b"\n")[:-1]
            if p.returncode != 0 or len(got) != len(chunk):
                sys.exit(f"check_walks_bytes: git describe {' '.join(args)} failed on a batch: "
                         f"{p.stderr.decode(errors='replace').strip()[:200]}")
            names.update(zip(chunk, got))
        for r in rows:
            r[col] = names[r[col]]
    return b"".join(b"|".join(r) + b"\n" for r in rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("gitdir")
    ap.add_argument("--lab-out", help="the lab's saved output instead of a run of it")
    o = ap.parse_args()
    env = {**hermetic_env(), **dict(WALKS_ENV)}
    fmt = FOR_EACH_REF_WALKS_FORMAT
    c0, t0 = _cpu(), time.time()
    want = git_bytes(find_git(), o.gitdir, fmt, env)
    refs = want.count(b"\n")
    print(f"git (for-each-ref, describe batched): {_cpu() - c0:.1f} s CPU, "
          f"{time.time() - t0:.1f} s wall, {refs:,} refs")
    if o.lab_out:
        got = open(o.lab_out, "rb").read()
    else:
        c0, t0 = _cpu(), time.time()
        got = subprocess.run([sys.executable, "-m", "lab.cli", "--git-dir", o.gitdir,
                              "for-each-ref", f"--format={fmt}"], env=env,
                             capture_output=True, check=True).stdout
        print(f"lab: {_cpu() - c0:.1f} s CPU, {time.time() - t0:.1f} s wall")
    print("SAME" if got == want else "DIFF")
    return 0 if got == want else 1


if __name__ == "__main__":
    sys.exit(main())
