"""Single-table benchmarks: read, seek and write a 1,000,000-ref reftable.

    python -m lab.benchmarks.bench_table --refs 1000000 [--flags SPEC] [--baseline]

1. Builds (once, cached in --dir) a reftable repository with N refs written by
   the provisioned git (`git update-ref --stdin`, then `git pack-refs`).
2. Sequential read of every ref record of that table, in-process (best of
   --repeat), beside `git show-ref refs/heads/<one name>` on the same
   repository (which iterates every ref).
3. Single-ref seek, hot (the table open, random existing names): mean time per
   seek_ref.
4. Writing N refs plus one log record per ref with TableWriter (records built
   beforehand; the time covers add_refs/add_logs/close).
Plain time.perf_counter; figures are printed as a small table.
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from reftable_core.flags import Flags, resolve
from reftable_core.reftable.record import LogRecord, RefRecord
from reftable_core.reftable.table import TableReader
from reftable_core.reftable.writer import TableWriter, WriterOptions

from lab.gitbin import GitRunner, find_git, hermetic_env


def refname(i: int) -> str:
    return f"refs/heads/branch-{i:07d}"


def ensure_repo(root: Path, n: int) -> Path:
    """A reftable repo with n refs (one commit as value), packed into one table."""
    repo = root / f"repo-{n}"
    stamp = repo / ".bench-ready"
    if stamp.exists():
        return repo
    git = GitRunner(find_git(), hermetic_env(root / "home"))
    (root / "home").mkdir(parents=True, exist_ok=True)
    if repo.exists():
        subprocess.run(["rm", "-rf", str(repo)], check=True)
    git.run(["init", "-q", "--ref-format=reftable", "-b", "main", str(repo)])
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=repo)
    oid = git.out(["rev-parse", "HEAD"], cwd=repo).decode().strip()
    print(f"creating {n} refs with git update-ref --stdin ...", file=sys.stderr)
    t0 = time.perf_counter()
    data = "".join(f"create {refname(i)} {oid}\n" for i in range(n)).encode()
    git.run(["update-ref", "--stdin"], cwd=repo, input=data)
    t1 = time.perf_counter()
    git.run(["pack-refs", "--all"], cwd=repo)
    print(f"  update-ref --stdin: {t1 - t0:.1f} s, pack-refs: {time.perf_counter() - t1:.1f} s",
          file=sys.stderr)
    stamp.write_text("ok\n")
    return repo


def only_table(repo: Path) -> Path:
    d = repo / ".git" / "reftable"
    names = (d / "tables.list").read_text().split()
    if len(names) != 1:
        raise SystemExit(f"expected one table in {d}, found {names}")
    return d / names[0]


CPU: dict[str, float] = {}     # label -> best process CPU time of the last best() call


def best(fn, repeat: int, label: str = "") -> float:
    """Best wall time of repeat runs (and the best CPU time, kept in CPU[label])."""
    times = []
    cpus = []
    for _ in range(repeat):
        c0 = time.process_time()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    if label:
        CPU[label] = min(cpus)
    return min(times)


def bench_read(table: Path, flags: Flags, repeat: int) -> tuple[float, int]:
    count = 0

    def run() -> None:
        nonlocal count
        with TableReader.open(table, flags) as r:
            n = 0
            for _ in r.refs():
                n += 1
            count = n
    return best(run, repeat, "read"), count


def bench_git_show_ref(repo: Path, n: int, repeat: int) -> float:
    git = find_git()
    env = hermetic_env()
    name = refname(n // 2)

    cpus = []

    def run() -> None:
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([git, "show-ref", name], cwd=repo, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    t = best(run, repeat)
    CPU["git"] = min(cpus)
    return t


def bench_seek(table: Path, flags: Flags, n: int, count: int = 20000) -> float:
    rnd = random.Random(1)
    names = [refname(rnd.randrange(n)).encode() for _ in range(count)]
    with TableReader.open(table, flags) as r:
        for name in names[:1000]:           # warm up
            r.seek_ref(name)
        seek = r.seek_ref
        c0 = time.process_time()
        t0 = time.perf_counter()
        for name in names:
            if seek(name) is None:
                raise SystemExit(f"missing {name!r}")
        CPU["seek"] = (time.process_time() - c0) / count
        return (time.perf_counter() - t0) / count


def bench_write(n: int, out_dir: Path, repeat: int) -> tuple[float, int]:
    oid = bytes.fromhex("833dd6d50e8db5d07f5737dd5549131995b1c5cc")
    zero = bytes(20)
    refs = [RefRecord(refname(i).encode(), 1, 1, oid) for i in range(n)]
    logs = [LogRecord(r.refname, 1, 1, zero, oid, b"C O Mitter", b"committer@example.com",
                      1700000000, 0, b"branch: Created from HEAD") for r in refs]
    size = 0

    def run() -> None:
        nonlocal size
        path = out_dir / "written.ref"
        w = TableWriter(path, WriterOptions(min_update_index=1, max_update_index=1))
        w.add_refs(refs)
        w.add_logs(logs)
        size = w.close().size
    t = best(run, repeat, "write")
    with TableReader.open(out_dir / "written.ref") as r:    # sanity check
        assert r.seek_ref(refs[n // 3].refname) == refs[n // 3]
    return t, size


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--refs", type=int, default=1_000_000)
    ap.add_argument("--dir", type=Path,
                    default=Path.home() / ".cache" / "reftable-lab" / "bench_table")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--flags", default=None)
    ap.add_argument("--baseline", action="store_true")
    ap.add_argument("--skip", default="", help="comma list of read,git,seek,write to skip")
    args = ap.parse_args(argv)
    flags = resolve(args.flags, args.baseline)
    skip = set(filter(None, args.skip.split(",")))
    args.dir.mkdir(parents=True, exist_ok=True)
    n = args.refs
    rows: list[tuple[str, str, str]] = []
    print(f"flags: {flags.to_spec(only_changed_from=Flags()) or 'default'}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} cpus (wall times inflate under load)")
    if skip != {"read", "git", "seek"} and not {"read", "git", "seek"} <= skip:
        repo = ensure_repo(args.dir, n)
        table = only_table(repo)
        print(f"table: {table} ({table.stat().st_size / 1e6:.1f} MB)")
        if "read" not in skip:
            t, count = bench_read(table, flags, args.repeat)
            rows.append(("sequential read, every ref (in-process)", f"{t:.3f} s",
                         f"{count} refs, {t / count * 1e9:.0f} ns/ref, "
                         f"cpu {CPU['read']:.3f} s"))
        if "git" not in skip:
            tg = bench_git_show_ref(repo, n, max(args.repeat, 5))
            rows.append((f"git show-ref {refname(n // 2)}", f"{tg:.3f} s",
                         f"iterates every ref, cpu {CPU['git']:.3f} s"))
            if "read" not in skip:
                rows.append(("ratio ours / git", f"{t / tg:.2f}x",
                             f"cpu ratio {CPU['read'] / max(CPU['git'], 1e-9):.2f}x, "
                             "target <= 5x"))
        if "seek" not in skip:
            ts = bench_seek(table, flags, n)
            rows.append(("single-ref seek, hot", f"{ts * 1e6:.1f} us",
                         f"cpu {CPU['seek'] * 1e6:.1f} us, target < 100 us"))
    if "write" not in skip:
        with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
            tw, size = bench_write(n, Path(tmp), max(1, args.repeat - 2))
        rows.append((f"write {n} refs + {n} logs", f"{tw:.2f} s",
                     f"{size / 1e6:.1f} MB, cpu {CPU['write']:.2f} s, target < 10 s"))
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    for a, b, c in rows:
        print(f"{a.ljust(w0)}  {b.rjust(w1)}  {c}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
