"""Workloads: each seed's benchmark as a plain function on a dataset.

Contract: WORKLOADS[name] is a factory
    factory(gitdir: Path, params: dict, flags: Flags) -> time_func(loops) -> seconds
that does all set-up (opening files, choosing the probe ref, copying a
template repository per loop) outside the timed region and returns the
elapsed seconds for `loops` runs of the measured operation. Every timed
region is read with lab.measure.clock.clock(), twice (t0, t1) and nowhere
else: the instruction measure counts exactly those regions.
Peers (real git, dulwich, our own CLI as a whole process) are workloads too,
so every number in a report comes from the same pyperf machinery.

build(workload, flags, dataset, params) is the one way to get a time_func:
the pyperf worker, the within-process interleaved runner, the profilers and
the notebooks all call it. Scenarios (lab.scenarios) name workloads by key;
this module knows nothing of them. dulwich is an optional peer (the `test`
extra): its three workloads import it when they are built.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import weakref
from pathlib import Path
from typing import Any, Callable, Mapping

from reftable_core.builtin.for_each_ref import for_each_ref
from reftable_core.builtin.odb import log_raw, log_S
from reftable_core.builtin.show_ref import show_ref
from reftable_core.builtin.update_ref import update_refs_stdin
from reftable_core.flags import Flags
from reftable_core.refs.api import RefUpdate
from reftable_core.refs.migrate import MigrateOptions, migrate_ref_storage
from reftable_core.refs.packed import PackedRefs
from reftable_core.refs.reftable_backend import ReftableRefStore
from reftable_core.repo import open_repo

from gitbin import find_git, hermetic_env

from .measure.clock import clock

TimeFunc = Callable[[int], float]
Factory = Callable[[Path, dict[str, Any], Flags], TimeFunc]


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
        t0 = clock()
        proc = subprocess.run(over.get("argv", argv), cwd=over.get("cwd", cwd), input=stdin,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        total += clock() - t0
        if proc.returncode not in ok_codes:
            raise RuntimeError(f"{argv[0]} exited {proc.returncode}: {proc.stderr[-500:]!r}")
    return total


class ScratchCopies:
    """Fresh copies of a template repository, one per loop, made outside the timing;
    their temporary root is removed when the object is collected or at exit."""

    def __init__(self, template: Path) -> None:
        self.template = template
        self.root = Path(tempfile.mkdtemp(prefix="reftable-lab-scratch-"))
        self.count = 0
        weakref.finalize(self, shutil.rmtree, self.root, ignore_errors=True)

    def next(self) -> Path:
        if self.count:
            shutil.rmtree(self.root / f"c{self.count - 1}", ignore_errors=True)
        dest = self.root / f"c{self.count}"
        shutil.copytree(self.template, dest, symlinks=True)
        self.count += 1
        return dest


def _reftable_lab_argv() -> list[str]:
    return [sys.executable, "-m", "lab.cli"]


def _facts(gitdir: Path) -> dict[str, Any]:
    """The dataset's manifest facts (probe refs, tip, scripts), from manifest.json beside it."""
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
        t0 = clock()
        for _ in range(loops):
            run()
        return clock() - t0
    return time_func


class _Sink:
    """A binary stdout stand-in that drops everything (output formatting still runs)."""

    def write(self, b: bytes) -> int:
        return len(b)

    def flush(self) -> None:
        pass


# -- seed 000: show-ref single matching ref ------------------------------------

def show_ref_inprocess(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """`show-ref <pattern>` in-process: open the repo, iterate every ref, print the match."""
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


def git_show_ref(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    argv = [find_git(), "--git-dir", str(gitdir), "show-ref", *params.get("show_ref_args", []),
            _probe(gitdir, params, params.get("probe_kind", "middle"))]
    ok = (params.get("expect_status", 0),)
    env = _git_env()
    return lambda loops: _time_subprocess(argv, loops, env=env, ok_codes=ok)


def cli_show_ref(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """The whole `reftable-lab show-ref` process (interpreter start-up included)."""
    argv = [*_reftable_lab_argv(), "show-ref", "--git-dir", str(gitdir),
            "--flags", flags.to_spec(), *params.get("show_ref_args", []),
            _probe(gitdir, params, params.get("probe_kind", "middle"))]
    ok = (params.get("expect_status", 0),)
    return lambda loops: _time_subprocess(argv, loops, ok_codes=ok)


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


def _lab_create(gitdir: Path, flags: Flags, script: bytes) -> None:
    """update-ref --stdin of "create <name> <tip>" lines: one transaction, each hex id
    parsed as git parses it (get_oid_basic's ambiguity reads included)."""
    repo = open_repo(gitdir, flags)
    try:
        update_refs_stdin(repo, io.BytesIO(script), io.BytesIO())
    finally:
        repo.close()


def update_ref_create(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """One transaction creating N refs by update-ref --stdin (each hex id checked
    against the refs of its name, each queued update reading the ref first, as git does)."""
    script = _create_script(gitdir, params)
    copies = ScratchCopies(gitdir)

    def time_func(loops: int) -> float:
        total = 0.0
        for _ in range(loops):
            target = copies.next()
            t0 = clock()
            _lab_create(target, flags, script)
            total += clock() - t0
        return total
    return time_func


def _create_lines(names: list[bytes], tip: bytes) -> bytes:
    """The update-ref --stdin script creating names at tip: "create <name> <tip>" lines."""
    return b"".join(b"create %s %s\n" % (n, tip.hex().encode()) for n in names)


def _create_script(gitdir: Path, params: dict[str, Any]) -> bytes:
    """The update-ref --stdin script of the scenario's creates."""
    tip, n, fmt = _create_updates(gitdir, params)
    return _create_lines([(fmt % i).encode() for i in range(n)], tip)


def git_update_ref_create(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    script = _create_script(gitdir, params)
    copies = ScratchCopies(gitdir)
    env = _git_env()
    git = find_git()

    def before() -> dict[str, Any]:
        return {"argv": [git, "--git-dir", str(copies.next()), "update-ref", "--stdin"]}
    return lambda loops: _time_subprocess([git], loops, stdin=script, env=env,
                                          before_each=before)


def cli_update_ref_create(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    script = _create_script(gitdir, params)
    copies = ScratchCopies(gitdir)
    base = _reftable_lab_argv()

    def before() -> dict[str, Any]:
        return {"argv": [*base, "update-ref", "--git-dir", str(copies.next()),
                         "--flags", flags.to_spec(), "--stdin"]}
    return lambda loops: _time_subprocess(base, loops, stdin=script, before_each=before)


# -- upstream 146a946321: t/perf/p1401, refs recreated after a mass delete -------------

def _p1401_names(params: dict[str, Any], key: str, default: str) -> list[bytes]:
    fmt = params.get(key, default)
    return [(fmt % i).encode() for i in range(1, int(params["refs"]) + 1)]


def _lab_delete_all(gitdir: Path, flags: Flags, prefix: bytes) -> None:
    """`for-each-ref --format="delete %(refname)" <prefix> | update-ref --stdin`."""
    repo = open_repo(gitdir, flags)
    names = [r.name for r in repo.refs.iter_refs(prefix)]
    repo.close()
    repo = open_repo(gitdir, flags)
    tx = repo.refs.transaction()
    for name in names:
        tx.queue(RefUpdate(name, new_value=bytes(repo.hash_size)))
    tx.commit()
    repo.close()


class _P1401:
    """p1401's set-up, made once per factory (untimed): a copy of the dataset in which
    params["refs"] tags (old_format) were created and all deleted by the lab with the
    default flags (one table of refs, one of tombstones: git's layout, auto-compaction
    on as in p1401); ScratchCopies of it give each loop a fresh one. The timed step
    creates the new_format tags and deletes every tag again."""

    def __init__(self, gitdir: Path, params: dict[str, Any]) -> None:
        self.tip, _, _ = _create_updates(gitdir, params)
        old = _p1401_names(params, "old_format", "refs/tags/tag-%d")
        self.new = _p1401_names(params, "new_format", "refs/tags/tag-%d")
        self.prefix = b"refs/tags/"
        self.root = Path(tempfile.mkdtemp(prefix="reftable-lab-p1401-"))
        shutil.copytree(gitdir, self.root / "repo", symlinks=True)
        _lab_create(self.root / "repo", Flags(), _create_lines(old, self.tip))
        _lab_delete_all(self.root / "repo", Flags(), self.prefix)
        self.copies = ScratchCopies(self.root / "repo")
        self.script = _create_lines(self.new, self.tip)


def p1401_recreate(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """p1401's timed step in-process: create N tags (one transaction, as update-ref
    --stdin), then delete every tag (for-each-ref | update-ref --stdin), on a copy
    holding N tombstones."""
    setup = _P1401(gitdir, params)

    def time_func(loops: int) -> float:
        total = 0.0
        for _ in range(loops):
            target = setup.copies.next()
            t0 = clock()
            _lab_create(target, flags, setup.script)
            _lab_delete_all(target, flags, setup.prefix)
            total += clock() - t0
        return total
    return time_func


def git_p1401_recreate(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """The same step by git: update-ref --stdin <input, then for-each-ref
    --format="delete %(refname)" refs/tags/ | update-ref --stdin."""
    setup = _P1401(gitdir, params)
    env = _git_env()
    git = find_git()

    def run(argv: list[str], stdin: bytes | None) -> bytes:
        proc = subprocess.run(argv, input=stdin, env=env, capture_output=True)
        if proc.returncode:
            raise RuntimeError(f"{argv[2:]} exited {proc.returncode}: {proc.stderr[-500:]!r}")
        return proc.stdout

    def time_func(loops: int) -> float:
        total = 0.0
        for _ in range(loops):
            gd = str(setup.copies.next())
            t0 = clock()
            run([git, "--git-dir", gd, "update-ref", "--stdin"], setup.script)
            deletes = run([git, "--git-dir", gd, "for-each-ref", "--format=delete %(refname)",
                           "refs/tags/"], None)
            run([git, "--git-dir", gd, "update-ref", "--stdin"], deletes)
            total += clock() - t0
        return total
    return time_func


# -- upstream e4929cdf79: git refs migrate ------------------------------------------

def _migrate(gitdir: Path, flags: Flags, to_format: str) -> None:
    """`refs migrate --ref-format=<to_format>`: open the repository, migrate its refs."""
    repo = open_repo(gitdir, flags)
    try:
        migrate_ref_storage(repo.commondir, repo.refs, repo.ref_storage, to_format,
                            MigrateOptions(flags=flags, object_format=repo.object_format,
                                           config=repo.config, objects=lambda: repo.objects))
    finally:
        repo.close()


def migrate_refs(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """refs migrate in-process on a fresh copy of the dataset per loop (params["to_format"]):
    every ref copied into an empty store through one initial transaction."""
    copies = ScratchCopies(gitdir)
    to_format = str(params["to_format"])

    def time_func(loops: int) -> float:
        total = 0.0
        for _ in range(loops):
            target = copies.next()
            t0 = clock()
            _migrate(target, flags, to_format)
            total += clock() - t0
        return total
    return time_func


def git_migrate_refs(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """`git refs migrate --ref-format=<to_format>` on a fresh copy per loop."""
    copies = ScratchCopies(gitdir)
    env = _git_env()
    git = find_git()
    argv = ["refs", "migrate", f"--ref-format={params['to_format']}"]

    def before() -> dict[str, Any]:
        return {"argv": [git, "--git-dir", str(copies.next()), *argv]}
    return lambda loops: _time_subprocess([git], loops, env=env, before_each=before)


# -- seed 001: packed-refs ---------------------------------------------------------

# -- upstream 2024-03/04 decoding series: reflog iteration, many ref reads --------------

def log_iterate_inprocess(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """Iterate every reflog record of a reftable repository: open it and run one log
    iterator over its stack to the end (git's iteration over many reflog entries)."""
    def run() -> None:
        repo = open_repo(gitdir, flags)
        try:
            store = repo.refs
            if not isinstance(store, ReftableRefStore):
                raise RuntimeError(f"{gitdir}: log_iterate needs a reftable repository")
            n = sum(1 for _ in store.stack.merged.logs())
        finally:
            repo.close()
        if not n:
            raise RuntimeError(f"{gitdir}: no reflog records to iterate")
    return _in_process(run)


def git_reflog_list(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """`git reflog list`: git iterates every log record to list the refs with reflogs."""
    argv = [find_git(), "--git-dir", str(gitdir), "reflog", "list"]
    env = _git_env()
    return lambda loops: _time_subprocess(argv, loops, env=env)


def _every_nth_ref(gitdir: Path, params: dict[str, Any]) -> list[bytes]:
    """The names read_refs reads: every params["every"]-th ref under refs/ (listed with
    the default flags, untimed)."""
    every = int(params.get("every", 10))
    repo = open_repo(gitdir, Flags())
    try:
        return [r.name for r in repo.refs.iter_refs(b"refs/")][::every]
    finally:
        repo.close()


def read_refs_inprocess(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """The ref reads of `rev-list --no-walk <refs>`: open the repository and read every
    params["every"]-th ref by name (the names listed once, untimed), one seek each."""
    names = _every_nth_ref(gitdir, params)

    def run() -> None:
        repo = open_repo(gitdir, flags)
        try:
            missing = [n for n in names if repo.refs.read_ref(n) is None]
        finally:
            repo.close()
        if missing:
            raise RuntimeError(f"{gitdir}: {len(missing)} refs not found, e.g. {missing[0]!r}")
    return _in_process(run)


def git_read_refs(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """git reading read_refs' names by name: `git show-ref --verify -q <names>` reads
    each one (refs_read_ref: one seek of the ref store each) and checks that its object
    exists; no output."""
    argv = [find_git(), "--git-dir", str(gitdir), "show-ref", "--verify", "-q",
            *(os.fsdecode(n) for n in _every_nth_ref(gitdir, params))]
    env = _git_env()
    return lambda loops: _time_subprocess(argv, loops, env=env)


def packed_load(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """Load every record of packed-refs with the chosen reader (packed_lookup forced to parse_all)."""
    path = gitdir / "packed-refs"
    load_flags = flags.replace(packed_lookup="parse_all")
    hash_size = open_repo(gitdir).hash_size

    def run() -> None:
        with PackedRefs(path, hash_size, load_flags) as p:
            n = sum(1 for _ in p)
        if n < 1:
            raise RuntimeError(f"{path}: no records loaded")
    return _in_process(run)


def dulwich_packed_load(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    from dulwich.repo import Repo as DRepo

    def run() -> None:
        r = DRepo(str(gitdir))
        try:
            r.refs.get_packed_refs()
        finally:
            r.close()
    return _in_process(run)


def _for_each_ref_args(params: dict[str, Any]) -> list[str]:
    """for-each-ref's arguments: params["for_each_ref_args"] (format, options) and
    params["prefix"], the pattern (seed 001: refs/remotes/2325298/)."""
    return [*params.get("for_each_ref_args", []), str(params["prefix"])]


def for_each_ref_inprocess(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """`for-each-ref <prefix>` in-process: open the repo, list the refs under the
    prefix (under packed_lookup=bsearch a seek into packed-refs), print them."""
    argv = ["--git-dir", str(gitdir), *_for_each_ref_args(params)]
    sink = _Sink()

    def run() -> None:
        status = for_each_ref(list(argv), flags, sink)
        if status != 0:
            raise RuntimeError(f"for-each-ref {argv} exited {status}")
    return _in_process(run)


def git_for_each_ref(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    argv = [find_git(), "--git-dir", str(gitdir), "for-each-ref", *_for_each_ref_args(params)]
    env = _git_env()
    return lambda loops: _time_subprocess(argv, loops, env=env)


def cli_for_each_ref(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """The whole `reftable-lab for-each-ref` process (interpreter start-up included)."""
    argv = [*_reftable_lab_argv(), "for-each-ref", "--git-dir", str(gitdir),
            "--flags", flags.to_spec(), *_for_each_ref_args(params)]
    return lambda loops: _time_subprocess(argv, loops)


# -- seed 002: delta base cache walks ---------------------------------------------

def _walk(kind: str) -> Factory:
    def factory(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
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


def spin(gitdir: Path, params: dict[str, Any], flags: Flags) -> TimeFunc:
    """A pure-Python loop of params["n"] additions, no dataset needed: the harness's
    self-test workload, and a probe of the machine's speed drift."""
    n = int(params.get("n", 100_000))

    def run() -> None:
        total = 0
        for i in range(n):
            total += i
    return _in_process(run)


# -- the registry ---------------------------------------------------------------------

WORKLOADS: dict[str, Factory] = {
    "show_ref": show_ref_inprocess,
    "git_show_ref": git_show_ref,
    "cli_show_ref": cli_show_ref,
    "dulwich_show_ref": dulwich_show_ref,
    "update_ref_create": update_ref_create,
    "git_update_ref_create": git_update_ref_create,
    "cli_update_ref_create": cli_update_ref_create,
    "p1401_recreate": p1401_recreate,
    "git_p1401_recreate": git_p1401_recreate,
    "log_iterate": log_iterate_inprocess,
    "git_reflog_list": git_reflog_list,
    "read_refs": read_refs_inprocess,
    "git_read_refs": git_read_refs,
    "migrate_refs": migrate_refs,
    "git_migrate_refs": git_migrate_refs,
    "packed_load": packed_load,
    "for_each_ref": for_each_ref_inprocess,
    "git_for_each_ref": git_for_each_ref,
    "cli_for_each_ref": cli_for_each_ref,
    "dulwich_packed_load": dulwich_packed_load,
    "odb_log_raw": _walk("log-raw"),
    "odb_log_S": _walk("log-S"),
    "git_log_raw": _git_log("log-raw"),
    "git_log_S": _git_log("log-S"),
    "dulwich_log_raw": dulwich_log_raw,
    "spin": spin,
}


def build(workload: str, flags: Flags | str, dataset: Path | str,
          params: Mapping[str, Any] | None = None) -> TimeFunc:
    """The time_func of WORKLOADS[workload] on the dataset at git dir `dataset`.

    flags: a Flags, or a flags spec applied on top of the defaults (what a
    worker gets on its command line). params: the scenario's parameters at
    its scale (probe kind, ref count, needle, ...).
    """
    if workload not in WORKLOADS:
        raise KeyError(f"unknown workload {workload!r}; known: {', '.join(WORKLOADS)}")
    if isinstance(flags, str):
        flags = Flags().with_spec(flags)
    return WORKLOADS[workload](Path(dataset), dict(params or {}), flags)
