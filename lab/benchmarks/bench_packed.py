"""Benchmark of the packed-refs reader (seed 001).

Run:  .venv/bin/python -m lab.benchmarks.bench_packed [--refs 1000000] [--repeat 3]

Dataset: data_gen's `packed-1m` preset (a files-backend repository whose refs all
live in one sorted, fully peeled packed-refs file; --refs chooses the size), or
--gitdir DIR to use an existing repository.

1. Full load (packed_lookup=parse_all) with each packed_reader value, each in a
   fresh worker process, timed in-process around PackedRefs(...) (min and median
   of --repeat runs). The speed-up of each step is printed beside the seed's
   (fgetc -> getc macro 2.5%, -> getc_unlocked 42%, -> no per-char grow 21%,
   -> getdelim 21%; our getc_unlocked covers the seed's steps 2..4).
   --safety also times refname_safety normalize / escape_scan / skip_sane (mmap reader).
2. `show-ref --verify refs/heads/does-not-exist`:
   - in-process: PackedRefs(...) + get() with packed_lookup=bsearch (and parse_all);
   - whole command: `reftable-lab show-ref --verify ...` (python -m lab.cli);
   - `git show-ref --verify ...`;
   - dulwich: Repo(gitdir).refs[...] (parses the whole file).
Prints a table and, with --json FILE, writes the figures.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MISSING = "refs/heads/does-not-exist"

SEED_STEPS = [
    ("fgetc -> getc_unlocked", "2.5% (getc macro) + 42% (getc_unlocked) + 21% (grow_ch)"),
    ("getc_unlocked -> getdelim", "21% (getdelim)"),
    ("getdelim -> mmap", "~9% (mmap, discussion)"),
]

_LOAD_SNIPPET = r"""
import sys, time, json
from reftable_core.flags import Flags
from reftable_core.refs.packed import PackedRefs
path, spec, what = sys.argv[1], sys.argv[2], sys.argv[3]
flags = Flags.parse(spec)
t0 = time.perf_counter()
c0 = time.process_time()
p = PackedRefs(path, 20, flags)
if what == "load":
    n = len(p._impl.data.names) if hasattr(p._impl, "data") else sum(1 for _ in p)
else:
    n = 0 if p.get(b"refs/heads/does-not-exist") is None else 1
t1 = time.perf_counter()
c1 = time.process_time()
p.close()
print(json.dumps({"seconds": t1 - t0, "cpu": c1 - c0, "n": n}))
"""


def _worker(path: str, spec: str, what: str) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop("REFTABLE_LAB_FLAGS", None)
    proc = subprocess.run([sys.executable, "-c", _LOAD_SNIPPET, path, spec, what],
                          capture_output=True, text=True, env=env, cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr)
    return json.loads(proc.stdout)


def _series(fn: Any, repeat: int) -> dict[str, float]:
    vals = [fn() for _ in range(repeat)]
    return {"min": min(vals), "median": statistics.median(vals), "values": vals}


def _time_cmd(argv: list[str], repeat: int, env: dict[str, str] | None = None,
              cwd: Path | None = None) -> tuple[dict[str, float], int]:
    codes = []

    def one() -> float:
        t0 = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, env=env, cwd=cwd)
        t1 = time.perf_counter()
        codes.append(proc.returncode)
        return t1 - t0
    return _series(one, repeat), codes[-1]


def dataset(refs: int, gitdir: str | None) -> Path:
    if gitdir:
        return Path(gitdir)
    import data_gen
    ds = data_gen.build("packed-1m", refs=refs, progress=True)
    return Path(ds.gitdir)


def fmt_s(x: float) -> str:
    if x >= 1:
        return f"{x:8.3f} s "
    if x >= 1e-3:
        return f"{x * 1e3:8.2f} ms"
    return f"{x * 1e6:8.1f} us"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--refs", type=int, default=1_000_000)
    ap.add_argument("--gitdir", default=None, help="use this repository instead of data_gen's")
    ap.add_argument("--repeat", type=int, default=3, help="runs per full-load measurement")
    ap.add_argument("--lookups", type=int, default=20, help="runs per lookup/command measurement")
    ap.add_argument("--readers", default="fgetc,getc_unlocked,getdelim,mmap")
    ap.add_argument("--safety", action="store_true", help="also time each refname_safety value")
    ap.add_argument("--no-dulwich", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)

    from lab.gitbin import find_git, hermetic_env

    gitdir = dataset(args.refs, args.gitdir)
    packed = str(gitdir / "packed-refs")
    size = os.path.getsize(packed)
    print(f"# packed-refs: {packed} ({size / 1e6:.1f} MB)", flush=True)
    results: dict[str, Any] = {"packed_refs": packed, "bytes": size, "load": {}, "lookup": {}}

    # 1. full load per reader strategy
    readers = args.readers.split(",")
    base = "packed_lookup=parse_all,refname_safety=skip_sane"
    print("\n## full load (packed_lookup=parse_all, refname_safety=skip_sane), fresh process each")
    for r in readers:
        runs = [_worker(packed, f"{base},packed_reader={r}", "load") for _ in range(args.repeat)]
        secs = [x["seconds"] for x in runs]
        cpus = [x["cpu"] for x in runs]
        results["load"][r] = {"min": min(secs), "median": statistics.median(secs),
                              "values": secs, "cpu_min": min(cpus), "cpu_values": cpus,
                              "refs": runs[0]["n"]}
        print(f"  {r:14s} wall min {fmt_s(min(secs))}  median {fmt_s(statistics.median(secs))}"
              f"   cpu min {fmt_s(min(cpus))}  ({runs[0]['n']} refs)", flush=True)
    print("\n## each step vs the seed (speed-up = 1 - new/old on the min CPU time; wall in brackets)")
    order = [r for r in ("fgetc", "getc_unlocked", "getdelim", "mmap") if r in results["load"]]
    steps = []
    for (a, b) in zip(order, order[1:], strict=False):
        old, new = results["load"][a]["cpu_min"], results["load"][b]["cpu_min"]
        wold, wnew = results["load"][a]["min"], results["load"][b]["min"]
        seed = dict(SEED_STEPS).get(f"{a} -> {b}", "")
        steps.append({"step": f"{a} -> {b}", "speedup": 1 - new / old, "ratio": old / new,
                      "wall_speedup": 1 - wnew / wold, "seed": seed})
        print(f"  {a + ' -> ' + b:28s} {100 * (1 - new / old):6.1f}%  ({old / new:5.2f}x)"
              f"  [wall {100 * (1 - wnew / wold):6.1f}%]   seed: {seed}")
    results["steps"] = steps

    if args.safety:
        print("\n## refname_safety (packed_reader=mmap, parse_all)")
        results["safety"] = {}
        for s in ("normalize", "escape_scan", "skip_sane"):
            runs = [_worker(packed, f"packed_lookup=parse_all,packed_reader=mmap,refname_safety={s}",
                            "load") for _ in range(args.repeat)]
            secs = [x["seconds"] for x in runs]
            cpus = [x["cpu"] for x in runs]
            results["safety"][s] = {"min": min(secs), "median": statistics.median(secs),
                                    "cpu_min": min(cpus)}
            print(f"  {s:12s} wall min {fmt_s(min(secs))}  median {fmt_s(statistics.median(secs))}"
                  f"   cpu min {fmt_s(min(cpus))}", flush=True)
        n0 = results["safety"]["normalize"]["cpu_min"]
        for s in ("escape_scan", "skip_sane"):
            print(f"  normalize -> {s}: {100 * (1 - results['safety'][s]['cpu_min'] / n0):.1f}% (cpu)"
                  "   seed: 4% (6/6 escape scan), v2 8/9 skips it for sane names")

    # 2. a missing ref
    print(f"\n## show-ref --verify {MISSING}")
    sys.path.insert(0, str(ROOT / "core"))
    from reftable_core.flags import Flags
    from reftable_core.refs.packed import PackedRefs

    def inproc(spec: str) -> float:
        t0 = time.perf_counter()
        p = PackedRefs(packed, 20, Flags.parse(spec))
        assert p.get(MISSING.encode()) is None
        t1 = time.perf_counter()
        p.close()
        return t1 - t0
    inproc("packed_lookup=bsearch")                        # warm the page cache
    r = _series(lambda: inproc("packed_lookup=bsearch,packed_reader=mmap"), args.lookups)
    results["lookup"]["inprocess_bsearch"] = r
    print(f"  reftable_core in-process, bsearch      min {fmt_s(r['min'])}  median {fmt_s(r['median'])}")
    r = _series(lambda: inproc("packed_lookup=parse_all,packed_reader=mmap"), 1)
    results["lookup"]["inprocess_parse_all"] = r
    print(f"  reftable_core in-process, parse_all    min {fmt_s(r['min'])}  (one run)")

    env = hermetic_env()
    env.pop("REFTABLE_LAB_FLAGS", None)
    r, _ = _time_cmd([sys.executable, "-c", "pass"], args.lookups, env=env)
    results["lookup"]["python_startup"] = r
    print(f"  (python -c pass, for scale)            min {fmt_s(r['min'])}  median {fmt_s(r['median'])}")
    r, _ = _time_cmd([sys.executable, "-c", "import sys; sys.path[:0] = ['core']; "
                      "from reftable_core.refs.files_backend import FilesRefStore as F; "
                      f"assert F({str(gitdir)!r}, 20).read_ref({MISSING.encode()!r}) is None"],
                     args.lookups, env=env, cwd=ROOT)
    results["lookup"]["core_script"] = r
    print(f"  python: import core + FilesRefStore lookup  min {fmt_s(r['min'])}  median {fmt_s(r['median'])}")
    lab_cmd = [sys.executable, "-m", "lab.cli", "show-ref", "--git-dir", str(gitdir),
               "--verify", MISSING]
    r, code = _time_cmd(lab_cmd, args.lookups, env=env, cwd=ROOT)
    results["lookup"]["reftable_lab_cmd"] = {**r, "exit": code}
    print(f"  reftable-lab show-ref (whole command)  min {fmt_s(r['min'])}  median {fmt_s(r['median'])}"
          f"  exit {code}")
    r, code = _time_cmd(lab_cmd[:4] + ["--flags", "packed_lookup=parse_all"] + lab_cmd[4:], 1,
                        env=env, cwd=ROOT)
    results["lookup"]["reftable_lab_cmd_parse_all"] = {**r, "exit": code}
    print(f"  reftable-lab show-ref, parse_all       min {fmt_s(r['min'])}  (one run) exit {code}")
    git = find_git()
    r, code = _time_cmd([git, "--git-dir", str(gitdir), "show-ref", "--verify", MISSING],
                        args.lookups, env=env)
    results["lookup"]["git"] = {**r, "exit": code}
    print(f"  git show-ref --verify                  min {fmt_s(r['min'])}  median {fmt_s(r['median'])}"
          f"  exit {code}")
    if not args.no_dulwich:
        try:
            from dulwich.repo import Repo as DRepo
        except ImportError:
            DRepo = None
        if DRepo is not None:
            def dul() -> float:
                t0 = time.perf_counter()
                repo = DRepo(str(gitdir))
                try:
                    repo.refs[MISSING.encode()]
                except KeyError:
                    pass
                t1 = time.perf_counter()
                repo.close()
                return t1 - t0
            r = _series(dul, 1)
            results["lookup"]["dulwich"] = r
            print(f"  dulwich refs[...] (in-process)         min {fmt_s(r['min'])}  (one run)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
