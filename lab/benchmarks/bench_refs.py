"""Benchmarks of the reftable read/write layers (seeds 000, 003, 004) next to git.

Scenarios (each timed in a fresh worker process per configuration, `--repeat`
runs, the minimum and median reported):

  showref    `show-ref <one ref>` over N refs (default 1,000,000) in 1 and in 3
             tables (3 tables: refs dealt round-robin, so the queue always holds 3
             entries), in-process reftable-lab with all flags on, all off, and
             each reftable read flag alone on top of all-off; `git show-ref` on
             the same repository.
  updateref  `update-ref --stdin` creating N refs (1, 100, 10000) in a repository
             with one commit: all-off, +stat_cache, +stat_cache+mmap (the seed's
             sequence), all-on minus each; `git update-ref --stdin`.
  earlyexit  creating N refs (default 100,000) where the table holds a ref block
             followed by a log block: block_type_early_exit on vs off.

Run:  .venv/bin/python -m lab.benchmarks.bench_refs [--what showref,updateref,earlyexit]
          [--refs 1000000] [--repeat 3] [--workdir DIR] [--json FILE]
Datasets are written with the TableWriter (data_gen's bulk writer when present)
into repositories created by the provisioned git, and cached in --workdir.
The workload functions (show_ref_once, update_ref_create_once) take a dataset
path and flags and return nothing; they print nothing and keep no globals.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from reftable_core.flags import Flags, baseline
from reftable_core.reftable.stack import format_name

READ_FLAGS = ("merged_cmp", "same_subiter_skip", "pq_cmp", "block_key_swap", "ref_name_alloc",
              "block_type_early_exit", "mmap")


def _git() -> tuple[str, dict[str, str]]:
    from lab.gitbin import find_git, hermetic_env
    env = hermetic_env()
    env["GIT_TEST_REFTABLE_AUTOCOMPACTION"] = "false"
    return find_git(), env


def _init_repo(path: Path, object_format: str = "sha1") -> bytes:
    """A reftable repository with one commit on main; the commit id."""
    git, env = _git()
    subprocess.run([git, "init", "-q", "--ref-format=reftable", f"--object-format={object_format}",
                    "-b", "main", str(path)], env=env, check=True)
    subprocess.run([git, "commit", "-q", "--allow-empty", "-m", "base"], cwd=path, env=env,
                   check=True)
    out = subprocess.run([git, "rev-parse", "HEAD"], cwd=path, env=env, check=True,
                         capture_output=True).stdout
    return bytes.fromhex(out.decode().strip())


def ref_names(n: int) -> list[bytes]:
    """n refs: refs/heads/main and n-1 branches, sorted."""
    names = [b"refs/heads/branch-%07d" % i for i in range(n - 1)] + [b"refs/heads/main"]
    names.sort()
    return names


def make_refs_repo(path: Path, n_refs: int, tables: int) -> tuple[Path, str]:
    """Repository with n_refs refs in `tables` tables; (gitdir, probe refname)."""
    from reftable_core.reftable.writer import WriterOptions
    gitdir = path / ".git"
    probe = "refs/heads/branch-%07d" % (n_refs // 2)
    marker = path / "done"
    if marker.exists():
        return gitdir, probe
    if path.exists():
        shutil.rmtree(path)
    tip = _init_repo(path)
    rdir = gitdir / "reftable"
    for f in rdir.iterdir():
        f.unlink()
    names = ref_names(n_refs)
    list_names = []
    for t in range(tables):
        part = names[t::tables]
        if t > 0:
            part = [n for n in part if n != b"refs/heads/main"]
        ui = t + 1
        fname = format_name(ui, ui) + ".ref"
        opts = WriterOptions(hash_id="sha1", min_update_index=ui, max_update_index=ui)
        _write_table(rdir / fname, opts, part, tip, ui)
        list_names.append(fname)
    (rdir / "tables.list").write_text("".join(n + "\n" for n in list_names))
    marker.touch()
    return gitdir, probe


def _write_table(path: Path, opts: Any, names: list[bytes], tip: bytes, ui: int) -> None:
    try:
        from data_gen.fastwrite import write_bulk_table
    except ImportError:
        write_bulk_table = None
    if write_bulk_table is not None:
        write_bulk_table(path, opts, names, [tip] * len(names), [None] * len(names))
        return
    from reftable_core.reftable.record import RefRecord
    from reftable_core.reftable.writer import TableWriter
    with open(path, "wb") as out:
        w = TableWriter(out, opts)
        w.add_ref(RefRecord(b"HEAD", ui, 3, target=b"refs/heads/main"))
        for n in names:
            w.add_ref(RefRecord(n, ui, 1, tip))
        w.close()


# -- workloads (plain functions on a dataset path) -----------------------------------

class _Sink:
    def write(self, b: bytes) -> int:
        return len(b)

    def flush(self) -> None:
        pass


def show_ref_once(gitdir: Path, probe: str, flags: Flags) -> None:
    """`reftable-lab show-ref <probe>` in-process (output discarded)."""
    from lab.commands.show_ref import show_ref
    status = show_ref(["--git-dir", str(gitdir), probe], flags, _Sink())
    if status != 0:
        raise RuntimeError(f"show-ref {probe} exited {status}")


def update_ref_create_once(gitdir: Path, names: list[bytes], tip: bytes, flags: Flags) -> None:
    """One transaction creating every name (each queued update reads the ref first)."""
    from reftable_core.refs.api import RefUpdate
    from reftable_core.repo import open_repo
    repo = open_repo(gitdir, flags)
    try:
        zero = bytes(len(tip))
        tx = repo.refs.transaction()
        for name in names:
            tx.queue(RefUpdate(name, new_value=tip, old_value=zero, flags={"create"}))
        tx.commit()
    finally:
        repo.close()


# -- worker side: runs one configuration, prints JSON timings ------------------------

def _worker(args: argparse.Namespace) -> None:
    flags = Flags.parse(args.flags) if args.flags else Flags()
    times = []
    if args.worker == "showref":
        gitdir = Path(args.git_dir)
        if args.warmup:
            show_ref_once(gitdir, args.probe, flags)        # warm-up (page cache)
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            show_ref_once(gitdir, args.probe, flags)
            times.append(time.perf_counter() - t0)
    else:
        src = Path(args.git_dir).parent
        tip = bytes.fromhex(args.tip)
        names = [b"refs/heads/new-%07d" % i for i in range(args.n)]
        with tempfile.TemporaryDirectory(dir=args.scratch) as tmp:
            for r in range(args.repeat):
                dst = Path(tmp) / f"r{r}"
                shutil.copytree(src, dst)
                t0 = time.perf_counter()
                update_ref_create_once(dst / ".git", names, tip, flags)
                times.append(time.perf_counter() - t0)
                shutil.rmtree(dst)
    json.dump(times, sys.stdout)


def _run_worker(argv: list[str]) -> list[float]:
    proc = subprocess.run([sys.executable, "-m", "lab.benchmarks.bench_refs", "--worker", *argv],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout)


def _time_git(argv: list[str], repeat: int, stdin: bytes | None = None,
              fresh_copy: Path | None = None, scratch: Path | None = None) -> list[float]:
    git, env = _git()
    times = []
    subprocess.run([git, *argv], env=env, capture_output=True, input=stdin, check=False)  # warm-up
    for r in range(repeat):
        args = list(argv)
        tmp = None
        if fresh_copy is not None:
            tmp = Path(tempfile.mkdtemp(dir=scratch))
            shutil.copytree(fresh_copy, tmp / "repo")
            args = ["--git-dir", str(tmp / "repo" / ".git"), *argv[2:]]
        t0 = time.perf_counter()
        p = subprocess.run([git, *args], env=env, capture_output=True, input=stdin, check=False)
        times.append(time.perf_counter() - t0)
        if p.returncode != 0:
            raise RuntimeError(p.stderr.decode()[-2000:])
        if tmp is not None:
            shutil.rmtree(tmp)
    return times


def _summary(times: list[float]) -> dict[str, float]:
    return {"min": min(times), "median": statistics.median(times), "runs": len(times)}


def _spec(flags: Flags) -> str:
    return flags.to_spec()


def _rounds(configs: list[tuple[str, list[str] | None]], repeat: int,
            git_run: Any, tag: str) -> dict[str, dict[str, float]]:
    """Interleave the configurations: each round runs every configuration once
    (worker argv, or None for git), so machine noise spreads over all of them."""
    times: dict[str, list[float]] = {label: [] for label, _ in configs}
    for _ in range(repeat):
        for label, argv in configs:
            t = git_run() if argv is None else _run_worker(argv)
            times[label].extend(t)
    rows = {label: _summary(ts) for label, ts in times.items()}
    for label, row in rows.items():
        print(f"{tag} {label:28s} min {row['min']:.3f}s median {row['median']:.3f}s", flush=True)
    return rows


def bench_showref(work: Path, n_refs: int, repeat: int, out: dict[str, Any]) -> None:
    for tables in (1, 3):
        gitdir, probe = make_refs_repo(work / f"refs-{n_refs}-{tables}t", n_refs, tables)
        flag_sets: list[tuple[str, Flags]] = [("all-on", Flags()), ("all-off", baseline())]
        flag_sets += [(f"{f} alone", baseline().replace(**{f: True})) for f in READ_FLAGS]
        _run_worker(["showref", "--git-dir", str(gitdir), "--probe", probe, "--repeat", "1"])
        configs: list[tuple[str, list[str] | None]] = [
            (label, ["showref", "--git-dir", str(gitdir), "--probe", probe,
                     "--flags", _spec(flags), "--repeat", "1"]) for label, flags in flag_sets]
        configs.append(("git", None))
        rows = _rounds(configs, repeat,
                       lambda g=str(gitdir), pr=probe: _time_git(["--git-dir", g, "show-ref", pr], 1),
                       f"show-ref {n_refs} refs {tables} table(s)")
        out[f"showref-{tables}t"] = rows


def make_logs_repo(path: Path, commits: int = 300) -> Path:
    """One table holding a ref block followed by log blocks: `commits` commits on
    main (two reflog entries each), compacted into one table."""
    if (path / "done").exists():
        return path
    if path.exists():
        shutil.rmtree(path)
    _init_repo(path)
    git, env = _git()
    script = []
    for i in range(commits):
        script.append(b"commit refs/heads/main\ncommitter C <c@x> %d +0000\ndata 2\n%02d\n%s"
                      % (1700000000 + i, i % 100, b"from refs/heads/main^0\n" if i == 0 else b""))
    subprocess.run([git, "fast-import", "--quiet"], cwd=path, env=env, check=True,
                   input=b"".join(script))
    tip = subprocess.run([git, "rev-parse", "refs/heads/main"], cwd=path, env=env, check=True,
                         capture_output=True).stdout.decode().strip()
    del tip
    # many reflog entries: rewrite main back and forth through the history
    revs = subprocess.run([git, "rev-list", "refs/heads/main"], cwd=path, env=env, check=True,
                          capture_output=True).stdout.split()
    lines = b"".join(b"start\nupdate refs/heads/main %s\ncommit\n" % r for r in reversed(revs))
    subprocess.run([git, "update-ref", "--stdin"], cwd=path, env=env, check=True, input=lines,
                   capture_output=True)
    subprocess.run([git, "pack-refs"], cwd=path, env=env, check=True)   # compacts the stack
    (path / "done").touch()
    return path


def bench_updateref(work: Path, counts: list[int], repeat: int, out: dict[str, Any],
                    label: str = "updateref",
                    configs: list[tuple[str, Flags]] | None = None,
                    base: Path | None = None) -> None:
    if base is None:
        base = work / "one-commit"
        if not (base / "done").exists():
            if base.exists():
                shutil.rmtree(base)
            _init_repo(base)
            (base / "done").touch()
    git, env = _git()
    tip = subprocess.run([git, "rev-parse", "HEAD"], cwd=base, env=env, capture_output=True,
                         check=True).stdout.decode().strip()
    if configs is None:
        b = baseline()
        configs = [("all-off", b), ("+stat_cache", b.replace(stat_cache=True)),
                   ("+stat_cache+mmap", b.replace(stat_cache=True, mmap=True)),
                   ("mmap alone", b.replace(mmap=True)), ("all-on", Flags()),
                   ("all-on stat_cache=off", Flags(stat_cache=False)),
                   ("all-on mmap=off", Flags(mmap=False))]
    scratch = work / "scratch"
    scratch.mkdir(exist_ok=True)
    for n in counts:
        script = b"".join(b"create refs/heads/new-%07d %s\n" % (i, tip.encode())
                          for i in range(n))
        wconfigs: list[tuple[str, list[str] | None]] = [
            (name, ["updateref", "--git-dir", str(base / ".git"), "--tip", tip, "--n", str(n),
                    "--flags", _spec(flags), "--repeat", "1", "--scratch", str(scratch)])
            for name, flags in configs]
        wconfigs.append(("git", None))
        rows = _rounds(wconfigs, repeat,
                       lambda script=script: _time_git(["--git-dir", "X", "update-ref", "--stdin"],
                                                       1, stdin=script, fresh_copy=base,
                                                       scratch=scratch),
                       f"{label} create {n} refs")
        out[f"{label}-{n}"] = rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--what", default="showref,updateref,earlyexit")
    p.add_argument("--refs", type=int, default=1_000_000)
    p.add_argument("--counts", default="1,100,10000")
    p.add_argument("--early-n", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--workdir", default=os.path.expanduser("~/.cache/reftable-lab/bench_refs"))
    p.add_argument("--json", default=None)
    # worker mode
    p.add_argument("--worker", choices=["showref", "updateref"])
    p.add_argument("--git-dir")
    p.add_argument("--probe")
    p.add_argument("--flags")
    p.add_argument("--tip")
    p.add_argument("--n", type=int, default=1)
    p.add_argument("--scratch")
    p.add_argument("--warmup", action="store_true")
    args = p.parse_args(argv)
    if args.worker:
        _worker(args)
        return 0
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {"python": sys.version.split()[0], "refs": args.refs}
    what = set(args.what.split(","))
    if "showref" in what:
        bench_showref(work, args.refs, args.repeat, out)
    if "updateref" in what:
        bench_updateref(work, [int(c) for c in args.counts.split(",")], args.repeat, out)
    if "earlyexit" in what:
        bench_updateref(work, [args.early_n], 1 if args.early_n >= 50000 else args.repeat, out,
                        label="earlyexit", base=make_logs_repo(work / "logs-repo"),
                        configs=[("block_type_early_exit=on", Flags()),
                                 ("block_type_early_exit=off", Flags(block_type_early_exit=False))])
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
