"""Workloads: each seed's benchmark as a plain function on a dataset.

Contract: WORKLOADS[name] is a factory
    factory(gitdir: Path, params: dict, flags: Flags) -> time_func(loops) -> seconds
that does all set-up (opening files, choosing the probe ref, copying a
template repository per loop) outside the timed region and returns the
elapsed perf_counter seconds for `loops` runs of the measured operation.
Peers (real git, dulwich, our own CLI as a whole process) are workloads too,
so every number in a report comes from the same pyperf machinery. Importing
this module registers the scenarios in lab.scenarios.SCENARIOS.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from reftable_core.flags import Flags

from .gitbin import find_git, hermetic_env

TimeFunc = Callable[[int], float]
Factory = Callable[[Path, dict[str, Any], Flags], TimeFunc]

WORKLOADS: dict[str, Factory] = {}


def workload(name: str) -> Callable[[Factory], Factory]:
    def deco(f: Factory) -> Factory:
        if name in WORKLOADS:
            raise ValueError(f"duplicate workload {name}")
        WORKLOADS[name] = f
        return f
    return deco


# -- helpers ------------------------------------------------------------------

def _git_env() -> dict[str, str]:
    return hermetic_env(os.environ.get("HOME"))


def _time_subprocess(argv: list[str], loops: int, cwd: Path | None = None,
                     stdin: bytes | None = None, env: dict[str, str] | None = None,
                     ok_codes: tuple[int, ...] = (0,),
                     before_each: Callable[[], dict[str, Any]] | None = None) -> float:
    """Wall time of `loops` runs of argv; before_each() (untimed) may return run() overrides."""
    total = 0.0
    for _ in range(loops):
        over = before_each() if before_each else {}
        t0 = time.perf_counter()
        proc = subprocess.run(over.get("argv", argv), cwd=over.get("cwd", cwd), input=stdin,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        total += time.perf_counter() - t0
        if proc.returncode not in ok_codes:
            raise RuntimeError(f"{argv[0]} exited {proc.returncode}: {proc.stderr[-500:]!r}")
    return total


class ScratchCopies:
    """Fresh copies of a template repository, one per loop, made outside the timing."""

    def __init__(self, template: Path) -> None:
        self.template = template
        self.root = Path(tempfile.mkdtemp(prefix="reftable-lab-scratch-"))
        self.count = 0

    def next(self) -> Path:
        if self.count:
            shutil.rmtree(self.root / f"c{self.count - 1}", ignore_errors=True)
        dest = self.root / f"c{self.count}"
        shutil.copytree(self.template, dest, symlinks=True)
        self.count += 1
        return dest

    def relative_gitdir(self, gitdir: Path) -> Path:
        """Where gitdir (inside the template) lands inside a copy, relative to the copy."""
        return gitdir.resolve().relative_to(self.template.resolve())


def _reftable_lab_argv() -> list[str]:
    return [sys.executable, "-m", "lab.cli"]


def _facts(gitdir: Path) -> dict[str, Any]:
    """The dataset's manifest facts (probe refs, tip, scripts), from manifest.json beside it."""
    import json
    for cand in (gitdir.parent / "manifest.json", gitdir / "manifest.json"):
        if cand.exists():
            return json.loads(cand.read_text()).get("facts", {})
    return {}


def _probe(gitdir: Path, params: dict[str, Any], kind: str = "middle") -> str:
    if params.get("probe"):
        return str(params["probe"])
    probes = _facts(gitdir).get("probe_refs", {})
    if kind in probes:
        return probes[kind]
    if kind == "missing":
        return "refs/heads/does-not-exist"
    raise KeyError(f"dataset {gitdir} names no {kind} probe ref; pass params['probe']")


def _in_process(run: Callable[[], object]) -> TimeFunc:
    def time_func(loops: int) -> float:
        t0 = time.perf_counter()
        for _ in range(loops):
            run()
        return time.perf_counter() - t0
    return time_func


class _Sink:
    """A binary stdout stand-in that drops everything (output formatting still runs)."""

    def write(self, b: bytes) -> int:
        return len(b)

    def flush(self) -> None:
        pass


# -- seed 000: show-ref single matching ref ------------------------------------

@workload("show_ref")
def show_ref_inprocess(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """`show-ref <pattern>` in-process: open the repo, iterate every ref, print the match."""
    from lab.commands.show_ref import show_ref
    argv = ["--git-dir", str(gitdir), *params.get("show_ref_args", []),
            _probe(gitdir, params, params.get("probe_kind", "middle"))]
    sink = _Sink()
    expect = params.get("expect_status", 0)

    def run() -> None:
        try:
            status = show_ref(list(argv), flags, sink)
        except Exception as e:            # Die (--verify of a missing ref) carries its status
            status = getattr(e, "status", None)
            if status is None:
                raise
        if status != expect:
            raise RuntimeError(f"show-ref {argv} exited {status}, expected {expect}")
    return _in_process(run)


@workload("git_show_ref")
def git_show_ref(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    argv = [find_git(), "--git-dir", str(gitdir), "show-ref", *params.get("show_ref_args", []),
            _probe(gitdir, params, params.get("probe_kind", "middle"))]
    ok = (params.get("expect_status", 0),)
    env = _git_env()
    return lambda loops: _time_subprocess(argv, loops, env=env, ok_codes=ok)


@workload("cli_show_ref")
def cli_show_ref(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """The whole `reftable-lab show-ref` process (interpreter start-up included)."""
    argv = [*_reftable_lab_argv(), "show-ref", "--git-dir", str(gitdir),
            "--flags", flags.to_spec(), *params.get("show_ref_args", []),
            _probe(gitdir, params, params.get("probe_kind", "middle"))]
    ok = (params.get("expect_status", 0),)
    return lambda loops: _time_subprocess(argv, loops, ok_codes=ok)


@workload("dulwich_show_ref")
def dulwich_show_ref(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """dulwich: open the repository and look the probe ref up (it parses packed-refs whole)."""
    from dulwich.repo import Repo as DRepo
    name = _probe(gitdir, params, params.get("probe_kind", "middle")).encode()

    def run() -> None:
        r = DRepo(str(gitdir))
        try:
            r.refs[name]
        except KeyError:
            pass
        finally:
            r.close()
    return _in_process(run)


# -- seed 004 / 003: update-ref --stdin creating N refs --------------------------

def _create_updates(gitdir: Path, params: dict[str, Any]) -> tuple[bytes, int, str]:
    facts = _facts(gitdir)
    tip = bytes.fromhex(facts["tip"])
    n = int(params.get("n", params.get("refs", 1)))
    fmt = params.get("name_format", "refs/heads/branch-%d")
    return tip, n, fmt


@workload("update_ref_create")
def update_ref_create(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """One transaction creating N refs (each queued update reads the ref first, as git does)."""
    from reftable_core.refs.api import RefUpdate
    from reftable_core.repo import open_repo
    tip, n, fmt = _create_updates(gitdir, params)
    zero = bytes(len(tip))
    names = [(fmt % i).encode() for i in range(n)]
    copies = ScratchCopies(gitdir)

    def time_func(loops: int) -> float:
        total = 0.0
        for _ in range(loops):
            target = copies.next()
            t0 = time.perf_counter()
            repo = open_repo(target, flags)
            tx = repo.refs.transaction()
            for name in names:
                tx.queue(RefUpdate(name, new_value=tip, old_value=zero, flags={"create"}))
            tx.commit()
            repo.close()
            total += time.perf_counter() - t0
        return total
    return time_func


@workload("git_update_ref_create")
def git_update_ref_create(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    tip, n, fmt = _create_updates(gitdir, params)
    script = b"".join(b"create %s %s\n" % ((fmt % i).encode(), tip.hex().encode())
                      for i in range(n))
    copies = ScratchCopies(gitdir)
    env = _git_env()
    git = find_git()

    def before() -> dict[str, Any]:
        return {"argv": [git, "--git-dir", str(copies.next()), "update-ref", "--stdin"]}
    return lambda loops: _time_subprocess([git], loops, stdin=script, env=env,
                                          before_each=before)


@workload("cli_update_ref_create")
def cli_update_ref_create(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    tip, n, fmt = _create_updates(gitdir, params)
    script = b"".join(b"create %s %s\n" % ((fmt % i).encode(), tip.hex().encode())
                      for i in range(n))
    copies = ScratchCopies(gitdir)
    base = _reftable_lab_argv()

    def before() -> dict[str, Any]:
        return {"argv": [*base, "update-ref", "--git-dir", str(copies.next()),
                         "--flags", flags.to_spec(), "--stdin"]}
    return lambda loops: _time_subprocess(base, loops, stdin=script, before_each=before)


# -- seed 001: packed-refs ---------------------------------------------------------

@workload("packed_load")
def packed_load(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """Load every record of packed-refs with the chosen reader (packed_lookup forced to parse_all)."""
    from reftable_core.refs.packed import PackedRefs
    path = gitdir / "packed-refs"
    load_flags = flags.replace(packed_lookup="parse_all")
    from reftable_core.repo import open_repo
    hash_size = open_repo(gitdir).hash_size

    def run() -> None:
        with PackedRefs(path, hash_size, load_flags) as p:
            n = sum(1 for _ in p)
        if n < 1:
            raise RuntimeError(f"{path}: no records loaded")
    return _in_process(run)


@workload("dulwich_packed_load")
def dulwich_packed_load(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    from dulwich.repo import Repo as DRepo

    def run() -> None:
        r = DRepo(str(gitdir))
        try:
            r.refs.get_packed_refs()
        finally:
            r.close()
    return _in_process(run)


# -- seed 002: delta base cache walks ---------------------------------------------

def _walk(kind: str) -> Factory:
    def factory(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
        from lab.commands.odb import log_raw, log_S
        ref = params.get("ref", "refs/heads/main")
        needle = params.get("needle", "foo")
        if "limit" in params:
            flags = flags.replace(delta_cache_limit=int(params["limit"]))

        def run() -> None:
            if kind == "log-raw":
                for _ in log_raw(gitdir, ref, flags):
                    pass
            else:
                for _ in log_S(gitdir, ref, needle, flags):
                    pass
        return _in_process(run)
    return factory


WORKLOADS["odb_log_raw"] = _walk("log-raw")
WORKLOADS["odb_log_S"] = _walk("log-S")


def _git_log(kind: str) -> Factory:
    def factory(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
        ref = params.get("ref", "refs/heads/main")
        limit = int(params.get("limit", flags.delta_cache_limit))
        argv = [find_git(), "--git-dir", str(gitdir), "-c", f"core.deltaBaseCacheLimit={limit}",
                "log", "--format=%H", "--first-parent", "--no-renames"]
        if kind == "log-raw":
            argv += ["--raw", "--no-abbrev", "-m", ref]
        else:
            argv += [f"-S{params.get('needle', 'foo')}", ref]
        env = _git_env()
        return lambda loops: _time_subprocess(argv, loops, env=env)
    return factory


WORKLOADS["git_log_raw"] = _git_log("log-raw")
WORKLOADS["git_log_S"] = _git_log("log-S")


@workload("dulwich_log_raw")
def dulwich_log_raw(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """dulwich reading the same objects: first-parent walk with tree_changes per commit."""
    from dulwich.diff_tree import tree_changes
    from dulwich.repo import Repo as DRepo
    ref = params.get("ref", "refs/heads/main").encode()

    def run() -> None:
        repo = DRepo(str(gitdir))
        store = repo.object_store
        oid: bytes | None = repo.refs[ref]
        while oid is not None:
            c = store[oid]
            parent = c.parents[0] if c.parents else None
            old_tree = store[parent].tree if parent is not None else None
            for _ in tree_changes(store, old_tree, c.tree):
                pass
            oid = parent
        repo.close()
    return _in_process(run)


@workload("spin")
def spin(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """A pure-Python loop of params["n"] additions, no dataset needed: the harness's
    self-test workload, and a probe of the machine's speed drift."""
    n = int(params.get("n", 100_000))

    def run() -> None:
        total = 0
        for i in range(n):
            total += i
    return _in_process(run)


# -- the scenarios ------------------------------------------------------------------

from .scenarios import Scenario, register  # noqa: E402

_REFTABLE_ITER_FLAGS = ("merged_cmp", "same_subiter_skip", "pq_cmp", "single_subiter_bypass",
                        "block_key_swap",
                        "ref_name_alloc")
# the generated loops for the profiled flags: the ref block decoder and the merge
# generator (which inlines the priority queue)
_HOT_ITER = ("lab.profiling:ref_record_loops()", "reftable_core.reftable.merged:merge_function()")
_SHOW_REF_PEERS = (("git", "git_show_ref"), ("reftable-lab-cli", "cli_show_ref"))

register(Scenario(
    name="show-ref-1table", seed="000",
    description="show-ref: single matching ref over N refs in 1 table",
    preset="refs-1m-1table",
    scale_params={"small": {"refs": 20_000, "seed": 0}, "full": {"refs": 1_000_000, "seed": 0}},
    workload="show_ref", studied=_REFTABLE_ITER_FLAGS + ("mmap",),
    published="1.11x (2/7 merged_cmp), 1.04x (3/7), 1.03x (5/7), 1.01x (6/7)",
    peer_workloads=_SHOW_REF_PEERS, hot=_HOT_ITER))

register(Scenario(
    name="show-ref-3tables", seed="000",
    description="show-ref: single matching ref over N refs in 3 tables",
    preset="refs-1m-3tables",
    scale_params={"small": {"refs": 20_000, "tables": 3, "seed": 0},
                  "full": {"refs": 1_000_000, "tables": 3, "seed": 0}},
    workload="show_ref", studied=_REFTABLE_ITER_FLAGS,
    published="1.30x (4/7 pq_cmp, 3 tables)",
    peer_workloads=_SHOW_REF_PEERS, hot=_HOT_ITER))

for _n in (1, 100, 10_000):
    register(Scenario(
        name=f"update-ref-create-{_n}", seed="004",
        description=f"update-ref --stdin: create {_n} refs in an otherwise empty repository",
        preset="empty-repo",
        scale_params={"small": {"refs": min(_n, 1000), "seed": 0},
                      "full": {"refs": _n, "seed": 0}},
        workload="update_ref_create", studied=("stat_cache", "mmap"),
        published="10k refs: 1.31 s -> 0.92 s (stat_cache) -> 0.48 s (mmap)",
        peer_workloads=(("git", "git_update_ref_create"),),
        dataset_keys=("refs", "seed", "object_format")))

register(Scenario(
    name="update-ref-create-100k", seed="003",
    description="update-ref --stdin: create 100k refs; each lookup meets a log block after "
                "the ref block",
    preset="empty-repo",
    scale_params={"small": {"refs": 2000, "seed": 0}, "full": {"refs": 100_000, "seed": 0}},
    workload="update_ref_create", studied=("block_type_early_exit",),
    published="1.62x (block_type_early_exit)",
    peer_workloads=(("git", "git_update_ref_create"),),
    dataset_keys=("refs", "seed", "object_format")))

register(Scenario(
    name="packed-verify-missing", seed="001",
    description="show-ref --verify of a missing ref in a huge packed-refs",
    preset="packed-1m",
    scale_params={
        "small": {"refs": 50_000, "seed": 0, "show_ref_args": ["--verify", "-q"],
                  "probe_kind": "missing", "expect_status": 1},
        "full": {"refs": 1_000_000, "seed": 0, "show_ref_args": ["--verify", "-q"],
                 "probe_kind": "missing", "expect_status": 1}},
    workload="show_ref", studied=("packed_lookup", "packed_reader"),
    flag_values={"packed_lookup": ("parse_all", "bsearch"),
                 "packed_reader": ("fgetc", "getc_unlocked", "getdelim", "mmap")},
    published="19.4 s -> 5.7 s (readers, 13M refs), 1.649 s -> 0.012 s (bsearch)",
    peer_workloads=(("git", "git_show_ref"), ("reftable-lab-cli", "cli_show_ref"),
                    ("dulwich", "dulwich_show_ref")),
    hot=("reftable_core.refs.packed:_BsearchLookup.get",)))

register(Scenario(
    name="packed-load", seed="001",
    description="load every record of a huge packed-refs file, per reader strategy",
    preset="packed-1m",
    scale_params={"small": {"refs": 50_000, "seed": 0}, "full": {"refs": 1_000_000, "seed": 0}},
    workload="packed_load", studied=("packed_reader", "refname_safety"),
    flag_values={"packed_reader": ("fgetc", "getc_unlocked", "getdelim", "mmap"),
                 "refname_safety": ("normalize", "escape_scan", "skip_sane")},
    published="getc 2.5%, unlocked 42%, grow 21%, getdelim 21% (per step)",
    peer_workloads=(("dulwich", "dulwich_packed_load"),),
    hot=("reftable_core.refs.packed:lines_fgetc", "reftable_core.refs.packed:load_lines")))

_ODB_SCALES = {"small": {"commits": 300, "files": 300, "seed": 0},
               "full": {"commits": 3000, "files": 2000, "seed": 0}}
for _kind, _wl, _pub in (("log-raw", "odb_log_raw", "-22.0% (log --raw)"),
                         ("log-S", "odb_log_S", "-4.7% (log -S)")):
    register(Scenario(
        name=f"odb-{_kind}", seed="002",
        description=f"{_kind} over a history packed with --depth=50 (delta base cache)",
        preset="history-depth50", scale_params=_ODB_SCALES, workload=_wl,
        studied=("delta_cache_lru", "delta_cache_index"),
        flag_values={"delta_cache_lru": ("blob_first", "single"),
                     "delta_cache_index": ("fixed:256", "fixed:1024", "fixed:4096", "hashmap")},
        # at the full scale the walk's bases fit in ~12-40 MB, so 96m never evicts: the
        # small limits are where blob_first's whole-list walks (and its upswing with
        # more slots, seed 5/7) show
        extra_variants=(("limit=4m", "delta_cache_limit=4m"),
                        ("limit=16m", "delta_cache_limit=16m"),
                        ("blob_first,limit=4m", "delta_cache_lru=blob_first,delta_cache_limit=4m"),
                        ("blob_first,fixed:16384,limit=4m",
                         "delta_cache_lru=blob_first,delta_cache_index=fixed:16384,"
                         "delta_cache_limit=4m"),
                        ("single,fixed:16384,limit=4m",
                         "delta_cache_index=fixed:16384,delta_cache_limit=4m")),
        published=_pub,
        peer_workloads=(("git", f"git_{_wl[4:]}"),)
        + ((("dulwich", "dulwich_log_raw"),) if _kind == "log-raw" else ()),
        dataset_keys=("commits", "files", "seed", "object_format"),
        hot=("reftable_core.odb.delta_cache:HashmapCache.add", "reftable_core.odb.delta_cache:FixedSlotCache.add")))
