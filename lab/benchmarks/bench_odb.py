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
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lab.gitbin import GitRunner, find_git, hermetic_env

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


# -- workloads -------------------------------------------------------------------
def run_walk(gitdir: str | os.PathLike[str], workload: str, flags: Any, needle: bytes = b"foo",
             ref: str = "main") -> dict[str, Any]:
    """One timed walk with reftable_core.odb; returns seconds, result size and cache stats."""
    from reftable_core.odb.store import open_object_store
    from reftable_core.odb.walk import walk_log_raw, walk_log_S

    from lab.commands.odb import walk_start
    t0 = time.perf_counter()
    c0 = time.process_time()
    with open_object_store(gitdir, None, flags) as store:
        start = walk_start(gitdir, ref, store, flags)
        if workload == "log-raw":
            n = sum(len(ch) for _, ch in walk_log_raw(store, start))
        else:
            n = sum(1 for _ in walk_log_S(store, start, needle))
        secs = time.perf_counter() - t0
        return {"seconds": time.process_time() - c0, "wall": secs, "result": n,
                "stats": store.stats.as_dict()}


def run_dulwich(gitdir: str | os.PathLike[str], workload: str, needle: bytes = b"foo",
                ref: str = "main") -> dict[str, Any]:
    """The same walk through dulwich's object store (tree_changes, no rename detection)."""
    from dulwich.diff_tree import tree_changes
    from dulwich.repo import Repo
    t0 = time.perf_counter()
    c0 = time.process_time()
    repo = Repo(str(gitdir))
    store = repo.object_store
    oid: bytes | None = repo.refs[b"refs/heads/" + ref.encode()]
    n = 0
    while oid is not None:
        c = store[oid]
        parent = c.parents[0] if c.parents else None
        old_tree = store[parent].tree if parent is not None else None
        changes = list(tree_changes(store, old_tree, c.tree))
        if workload == "log-raw":      # dulwich splits a type change into delete + add
            n += len({(ch.new or ch.old).path for ch in changes})
        else:
            for ch in changes:
                c1 = store[ch.old.sha].data.count(needle) if ch.old and ch.old.sha else 0
                c2 = store[ch.new.sha].data.count(needle) if ch.new and ch.new.sha else 0
                if c1 != c2:
                    n += 1
                    break
        oid = parent
    repo.close()
    return {"seconds": time.process_time() - c0, "wall": time.perf_counter() - t0, "result": n,
            "stats": {}}


def git_cmd(workload: str, limit: int, needle: str = "foo", ref: str = "main") -> list[str]:
    base = ["-c", f"core.deltaBaseCacheLimit={limit}", "log", "--format=%H", "--first-parent",
            "--no-renames"]
    if workload == "log-raw":
        return base + ["--raw", "--no-abbrev", "-m", ref]
    return base + [f"-S{needle}", ref]


def workload_factory(workload: str) -> Callable[[Path, dict, Any], Callable[[int], float]]:
    """lab.worker-style factory: factory(gitdir, params, flags) -> time_func(loops)."""
    def factory(gitdir: Path, params: dict, flags: Any) -> Callable[[int], float]:
        needle = params.get("needle", "foo").encode()
        ref = params.get("ref", "main")

        def time_func(loops: int) -> float:
            total = 0.0
            for _ in range(loops):
                total += run_walk(gitdir, workload, flags, needle, ref)["seconds"]
            return total
        return time_func
    return factory


WORKLOADS = {"odb_log_raw": workload_factory("log-raw"), "odb_log_S": workload_factory("log-S")}


# -- the benchmark -----------------------------------------------------------------
def _child(args: argparse.Namespace) -> int:
    from reftable_core.flags import Flags
    if args.peer == "dulwich":
        res = run_dulwich(args.gitdir, args.workload, args.needle.encode())
    else:
        res = run_walk(args.gitdir, args.workload, Flags().with_spec(args.spec),
                       args.needle.encode())
    print(json.dumps(res))
    return 0


def _time_child(gitdir: str, workload: str, spec: str, needle: str, repeat: int,
                peer: str = "") -> dict[str, Any]:
    runs = []
    for _ in range(repeat):
        cmd = [sys.executable, "-m", "lab.benchmarks.bench_odb", "--child", "--gitdir", gitdir,
               "--workload", workload, "--spec", spec, "--needle", needle]
        if peer:
            cmd += ["--peer", peer]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        runs.append(json.loads(out))
    secs = sorted(r["seconds"] for r in runs)
    return {"best": secs[0], "median": secs[len(secs) // 2], "values": secs,
            "result": runs[0]["result"], "stats": runs[0]["stats"]}


def _time_git(gitdir: str, workload: str, limit: int, needle: str, repeat: int) -> dict[str, Any]:
    git = GitRunner(find_git(), hermetic_env())
    secs = []
    for _ in range(repeat):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        git.run(git_cmd(workload, limit, needle), cwd=gitdir)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        secs.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    secs.sort()
    return {"best": secs[0], "median": secs[len(secs) // 2], "values": secs}


def _mib(n: int) -> str:
    return f"{n >> 20}m" if n >= 1 << 20 and n % (1 << 20) == 0 else (f"{n >> 10}k" if n % 1024 == 0 else str(n))


def _table(title: str, header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    lines = [title, "  ".join(h.rjust(w) for h, w in zip(header, widths)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)


def _star(vals: list[float]) -> list[str]:
    m = min(vals)
    return [f"{v:.3f}s{'*' if v == m else ' '}" for v in vals]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--peer", default="", help=argparse.SUPPRESS)
    ap.add_argument("--spec", default="", help=argparse.SUPPRESS)
    ap.add_argument("--workload", default="log-raw", help=argparse.SUPPRESS)
    ap.add_argument("--gitdir", default=None, help="use this repository instead of generating one")
    ap.add_argument("--commits", type=int, default=3000)
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--file-lines", default="20,400", help="min,max lines of a new file")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cache-dir", default=os.path.expanduser("~/.cache/reftable-lab/odb-bench"))
    ap.add_argument("--needle", default="foo")
    ap.add_argument("--repeat", type=int, default=3, help="runs per variant (best and median kept)")
    ap.add_argument("--slots", default="256,1024,4096,16384")
    ap.add_argument("--slot-limits", default="4m,16m", help="limits for the slot sweep table")
    ap.add_argument("--limits", default="1m,4m,16m,96m,512m", help="limits for the hashmap table")
    ap.add_argument("--workloads", default="log-raw,log-S")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("-o", "--out", default="results/bench_odb.json")
    args = ap.parse_args(argv)
    if args.child:
        return _child(args)
    from reftable_core.flags import parse_size
    if args.gitdir:
        gitdir = args.gitdir
    else:
        lo, hi = (int(x) for x in args.file_lines.split(","))
        gitdir = os.path.join(args.cache_dir,
                              f"h{args.commits}x{args.files}-l{lo}-{hi}-s{args.seed}.git")
        if not os.path.isdir(gitdir):
            print(f"generating {gitdir} ...", file=sys.stderr)
            make_history(gitdir + ".tmp", args.commits, args.files, args.seed, "sha1",
                         merges_every=100, file_lines=(lo, hi))
            os.rename(gitdir + ".tmp", gitdir)
    workloads = args.workloads.split(",")
    slots = [int(s) for s in args.slots.split(",")]
    slot_limits = [parse_size(x) for x in args.slot_limits.split(",")]
    limits = [parse_size(x) for x in args.limits.split(",")]
    results: dict[str, Any] = {"gitdir": gitdir, "needle": args.needle, "repeat": args.repeat,
                               "python": sys.version.split()[0], "variants": {}}
    V = results["variants"]

    def run(label: str, wl: str, spec: str) -> dict[str, Any]:
        key = f"{wl} {label}"
        if key not in V:
            print(f"  {key} ...", file=sys.stderr, flush=True)
            V[key] = _time_child(gitdir, wl, spec, args.needle, args.repeat)
            V[key]["spec"] = spec
        return V[key]

    out_lines = [f"repository: {gitdir}  (CPU seconds, best of {args.repeat}; "
                 f"Python {results['python']})", ""]
    # Table 1: seed 5/7 -- MAX_DELTA_CACHE sweep, blob_first vs single
    for lim in slot_limits:
        header = ["slots"] + [f"{lru} {wl}" for lru in ("blob_first", "single") for wl in workloads]
        cols: list[list[float]] = []
        for lru in ("blob_first", "single"):
            for wl in workloads:
                cols.append([run(f"fixed:{n}/{lru}/{_mib(lim)}", wl,
                                 f"delta_cache_index=fixed:{n},delta_cache_lru={lru},"
                                 f"delta_cache_limit={lim}")["best"] for n in slots])
        starred = [_star(c) for c in cols]
        rows = [[str(n)] + [starred[j][i] for j in range(len(cols))] for i, n in enumerate(slots)]
        out_lines += [_table(f"fixed:N slot sweep at delta_cache_limit={_mib(lim)} (seed 002 5/7)",
                             header, rows), ""]
        wrows = []
        for n in slots:
            row = [str(n)]
            for lru in ("blob_first", "single"):
                for wl in workloads:
                    st = V[f"{wl} fixed:{n}/{lru}/{_mib(lim)}"]["stats"]
                    row.append(f"{st['deltas']}/{st['lru_steps']}")
            wrows.append(row)
        out_lines += [_table("  same, work done: deltas applied / LRU nodes walked", header, wrows), ""]
    # Table 2: seed 6/7 -- hashmap vs fixed:256 (and best fixed) across limits
    header = ["limit"] + [f"{v} {wl}" for wl in workloads
                          for v in ("fixed:256/blob_first", "fixed:256/single", "hashmap/single",
                                    "hashmap/blob_first")]
    rows = []
    for lim in limits:
        row = [_mib(lim)]
        for wl in workloads:
            for v in ("fixed:256/blob_first", "fixed:256/single", "hashmap/single",
                      "hashmap/blob_first"):
                idx, lru = v.split("/")
                r = run(f"{idx}/{lru}/{_mib(lim)}", wl,
                        f"delta_cache_index={idx},delta_cache_lru={lru},delta_cache_limit={lim}")
                row.append(f"{r['best']:.3f}s")
        rows.append(row)
    out_lines += [_table("hashmap vs fixed:256 across delta_cache_limit (seed 002 6/7)", header, rows), ""]
    # cache counters of the default at each limit
    rows = []
    for lim in limits:
        for wl in workloads:
            for v in ("fixed:256/blob_first", "hashmap/single"):
                st = V[f"{wl} {v}/{_mib(lim)}"]["stats"]
                rows.append([_mib(lim), wl, v, str(st["lookups"]), str(st["hits"]),
                             str(st["deltas"]), str(st["evictions"]), str(st["collisions"]),
                             str(st["lru_steps"]), str(st["peak_bytes"])])
    out_lines += [_table("cache counters (deterministic work: deltas applied, LRU nodes walked)",
                         ["limit", "walk", "strategy", "lookups", "hits", "deltas", "evictions",
                          "collisions", "lru_steps", "peak_bytes"], rows), ""]
    # Peers
    if not args.no_peers:
        rows = []
        for wl in workloads:
            for lim in (96 << 20,):
                g = _time_git(gitdir, wl, lim, args.needle, args.repeat)
                V[f"{wl} git/{_mib(lim)}"] = g
                d = _time_child(gitdir, wl, "", args.needle, args.repeat, peer="dulwich")
                V[f"{wl} dulwich"] = d
                mine = run(f"hashmap/single/{_mib(lim)}", wl,
                           f"delta_cache_index=hashmap,delta_cache_lru=single,delta_cache_limit={lim}")
                base = run(f"fixed:256/blob_first/{_mib(lim)}", wl,
                           f"delta_cache_index=fixed:256,delta_cache_lru=blob_first,"
                           f"delta_cache_limit={lim}")
                rows.append([wl, f"{g['best']:.3f}s", f"{d['best']:.3f}s", f"{mine['best']:.3f}s",
                             f"{base['best']:.3f}s", f"{mine['best'] / g['best']:.1f}x",
                             str(d["result"] == mine["result"])])
        out_lines += [_table("peers (limit 96m)", ["walk", "git", "dulwich", "lab default",
                                                   "lab baseline", "lab/git", "dulwich agrees"], rows), ""]
    text = "\n".join(out_lines)
    print(text)
    results["report"] = text
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
