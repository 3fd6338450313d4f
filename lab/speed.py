"""The speed of the model (issue 15): whole commands of the lab beside git's, on the
same data, in one run.

Each workload is one command over one repository, run by git and by each lab variant:
this checkout's core (interpreted, compiled by mypyc, or compiled by Cython) and any
--core-rev REV (a worktree of that commit, lab.builds.core_rev; compiled too when asked
and when mypyc or Cython compiles it). Per command:

- instructions: the whole process under `valgrind --tool=callgrind` (interpreter
  start-up and imports included: they are part of what a user waits for), in the
  counting environment of lab.measure.instructions (PYTHONHASHSEED=0, the detrand
  preload, byte-code in its cache), so a count repeats to the instruction;
- CPU: user + system seconds of the process, the best of --repeat runs (moves with
  the machine's load; the counts do not);
- output: its stdout compared with git's, byte for byte (a faster lab that prints
  something else is no result).

Each lab build is a peer of the harness's kind (lab.scenario.Variant, peer: a whole
command; its environment, PYTHONPATH to its tree, by label beside it, as lab.harness
keeps a revision's), counted by the one callgrind counter
(lab.measure.instructions.count_process) and saved in the one result format
(lab.results, pyperf JSON: save()), so `reftable-lab report DIR` reads a speed run.

Workloads (workloads()): show-ref of the preset's middle ref over a reftable stack of
three tables and over a packed-refs file; log --raw over the synthetic history with
delta chains and over each --history DIR (a real repository); every object read
(cat-file --batch --batch-all-objects) of the same; for-each-ref with every atom family
(FOR_EACH_REF_FORMAT) over the refs-real-shaped preset (commits with bodies and trailers,
annotated tags, branches with upstreams), and, when named, the walk, clock and signature
atoms over the same (FOR_EACH_REF_WALKS_FORMAT: timed, not counted, no ratio: git's side
starts a child per ref); update-ref --stdin creating N refs in one transaction (the
empty-repo preset's script; a writing command, so each run, timed or counted, starts on a
new copy of the repository made before the process starts: fresh_argv; the copies are
removed once measured); and the start-up (show-ref --exists of a missing ref; python -c
pass beside it).
"""
from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyperf
from reftable_core.flags import Flags

import data_gen
from gitbin import REPO_ROOT, find_git, hermetic_env
from lab.builds import CORE_BUILDERS, BuildError, core_rev
from lab.measure import BenchError
from lab.measure.instructions import Count, count_env, count_process, write_count
from lab.results import ScenarioResult, VariantResult, compute_ratios
from lab.scenario import Variant
from lab.stages import STAGES

LOG_ARGS = ["log", "--format=%H", "--first-parent", "--no-renames", "--raw", "--no-abbrev",
            "-m", "refs/heads/main"]

# for-each-ref's whole format language in one format (issue 29): every atom family git
# 2.47's for-each-ref has, with their modifiers, but for the walks and the clock's atoms,
# which are FOR_EACH_REF_WALKS_FORMAT's row.
FOR_EACH_REF_FORMAT = (
    "%(refname) %(refname:short) %(refname:lstrip=1) %(refname:rstrip=-2) %(objectname) "
    "%(objectname:short=10) %(objecttype) %(objectsize) %(objectsize:disk) %(deltabase) "
    "%(tree) %(tree:short) %(parent) %(parent:short) %(numparent) %(object) %(type) %(tag) "
    "%(*objectname) %(*objecttype) %(*subject) %(*authorname) %(author) %(authorname) "
    "%(authoremail) %(authoremail:trim) %(authoremail:localpart) %(authordate) "
    "%(authordate:iso) %(authordate:iso-strict) %(authordate:rfc) %(authordate:short) "
    "%(authordate:raw) %(authordate:unix) %(authordate:format:%Y-%m-%d %H) %(committer) "
    "%(committername) %(committeremail) %(committerdate) %(committerdate:iso8601) %(tagger) "
    "%(taggername) %(taggeremail) %(taggerdate) %(taggerdate:default) %(creator) "
    "%(creatordate) %(creatordate:iso)%0a%(subject)|%(subject:sanitize)%0a%(body)%0a"
    "%(contents)%(contents:subject)%(contents:body)%(contents:signature)%(contents:size)%0a"
    "%(trailers)%(trailers:key=Signed-off-by,valueonly)%(trailers:only,unfold,separator=%x2C)"
    "%0a%(raw:size)%0a%(raw)%0a%(upstream) %(upstream:short) %(upstream:lstrip=2) "
    "%(upstream:track) %(upstream:trackshort) %(upstream:remotename) %(upstream:remoteref) "
    "%(push) %(push:short) %(push:remotename) %(HEAD) %(symref) %(symref:short) "
    "%(if)%(symref)%(then)sym%(else)plain%(end) %(align:30,right)%(refname:short)%(end) "
    "%(color:red)x%(color:reset)|")

# the rest (row for-each-ref-walks, run when named: --only for-each-ref-walks): the atoms
# that walk history per ref (%(describe), %(ahead-behind), %(is-base)), the dates relative
# to now ($GIT_TEST_DATE_NOW pinned, WALKS_ENV, so git and the lab share one "now"), and
# %(signature) (unsigned objects: git's "N" path). Its git side starts a `git describe`
# child per ref and %(describe) atom, so the row is timed (CPU of the command and its
# children) but not counted: callgrind over 200k children would take hours.
FOR_EACH_REF_WALKS_FORMAT = (
    "%(refname)|%(describe)|%(describe:exclude=*1*,tags=yes)|%(ahead-behind:refs/heads/main)|"
    "%(is-base:refs/heads/main)|%(authordate:relative)|%(committerdate:human)|"
    "%(taggerdate:relative)|%(creatordate:human)|%(signature)|%(signature:grade)|"
    "%(signature:signer)|%(signature:key)|%(signature:fingerprint)|"
    "%(signature:primarykeyfingerprint)|%(signature:trustlevel)")
WALKS_ENV = (("GIT_TEST_DATE_NOW", "1800000000"),)
# rows measured only when named
OPT_IN = frozenset({"for-each-ref-walks"})

# scale -> preset -> its data_gen parameters
SCALES: dict[str, dict[str, dict[str, Any]]] = {
    "small": {"refs-1m-3tables": {"refs": 20000, "tables": 3},
              "packed-1m": {"refs": 100000}, "history-depth50": {"commits": 300},
              "refs-real-shaped": {"refs": 2000, "commits": 300},
              "empty-repo": {"refs": 10000}},
    "full": {"refs-1m-3tables": {"refs": 1000000, "tables": 3},
             "packed-1m": {"refs": 1000000}, "history-depth50": {"commits": 3000},
             "refs-real-shaped": {"refs": 100000, "commits": 5000},
             "empty-repo": {"refs": 100000}},
}


# the workload name of a lab build's peer Variant: `python -m lab.cli` with a row's arguments
LAB_COMMAND = "reftable-lab"


@dataclass(frozen=True)
class Builds:
    """The lab builds measured: each a peer Variant (label, all flags on: every lab
    command runs with its defaults) and, by label, the PYTHONPATH its commands run with."""
    variants: tuple[Variant, ...]
    paths: Mapping[str, tuple[str, ...]]

    def __iter__(self) -> Any:
        return iter(self.variants)

    def __len__(self) -> int:
        return len(self.variants)

    def env(self, v: Variant) -> dict[str, str]:
        return {"PYTHONPATH": os.pathsep.join(self.paths[v.label]), "PYTHONSAFEPATH": "1"}


def build(label: str, pythonpath: Sequence[str]) -> Builds:
    """One lab build: label, and the PYTHONPATH its commands run with."""
    return builds([(label, tuple(pythonpath))])


def builds(items: Sequence[tuple[str, tuple[str, ...]]]) -> Builds:
    """Lab builds of (label, PYTHONPATH) pairs."""
    return Builds(tuple(Variant(label, Flags(), LAB_COMMAND, peer=True) for label, _ in items),
                  dict(items))


def lab_argv(args: Sequence[str]) -> list[str]:
    """A lab build's command line for a row's lab arguments."""
    return [sys.executable, "-m", "lab.cli", *args]


@dataclass(frozen=True)
class Workload:
    """A row: the title, the repository, git's arguments (after `git --git-dir D`) and
    the lab's (after `reftable-lab`, the git dir among them: odb takes it after its
    subcommand), and its name (key: show-ref-reftable, log-raw, ...; set by workloads())."""
    title: str
    gitdir: Path
    git_args: tuple[str, ...]
    lab_args: tuple[str, ...]
    stdin: bytes = b""
    key: str = ""
    env: tuple[tuple[str, str], ...] = ()     # on top of the hermetic environment, both sides
    count: bool = True                        # counted under callgrind (else timed only)
    same_work: bool = True                    # else no lab/git ratio: the sides do other work
    fresh: bool = False                       # the command writes: each run gets a new copy
                                              # of gitdir (fresh_argv), made before it starts


@dataclass
class Cell:
    instructions: int | None = None
    cpu: float | None = None            # the best of the repeats
    cpus: list[float] = field(default_factory=list)   # every repeat's CPU seconds
    status: int | None = None
    same_output: bool | None = None
    error: str = ""


@dataclass
class Row:
    workload: Workload
    git: Cell = field(default_factory=Cell)
    lab: dict[str, Cell] = field(default_factory=dict)


def variants(cores: Sequence[str], revs: Sequence[str],
             log: Callable[[str], None]) -> Builds:
    """This checkout's builds (cores), then each revision's, interpreted and, if
    "compiled" or "cython" is among cores, compiled by mypyc or Cython (lab.builds.
    CORE_BUILDERS; a revision that does not compile is skipped with a line on the log)."""
    here = (str(REPO_ROOT / "core"), str(REPO_ROOT))
    trees: list[tuple[str, tuple[str, ...], Path]] = [
        (rev, (str(t.dir / "core"), str(t.dir)), t.dir / "core")
        for rev in revs for t in [core_rev(REPO_ROOT, rev)]]
    out: list[tuple[str, tuple[str, ...]]] = []
    for name, path, core in [("this checkout", here, REPO_ROOT / "core"), *trees]:
        for kind in cores:
            label = name if kind == "interpreted" else f"{name} [{kind}]"
            if kind == "interpreted":
                out.append((label, path))
                continue
            try:
                out.append((label, (str(CORE_BUILDERS[kind](core, log=None)), *path)))
            except BuildError as e:
                log(f"speed: {label}: not measured: {e}")
    return builds(out)


def workloads(scale: str, datasets: Path, histories: Sequence[Path],
              names: Sequence[str] | None) -> list[Workload]:
    """The rows, datasets built (or reused) under datasets."""
    def ds(preset: str) -> Any:
        return data_gen.build(preset, root=datasets, progress=True, **SCALES[scale][preset])

    out: list[Workload] = []
    want = set(names) if names else None

    def add(key: str, make: Callable[[], Workload]) -> None:
        if (key in want) if want is not None else key not in OPT_IN:
            out.append(replace(make(), key=key))

    def show_ref(preset: str, what: str) -> Workload:
        d = ds(preset)
        probe = d.manifest["facts"]["probe_refs"]["middle"]
        n = SCALES[scale][preset]["refs"]
        return Workload(f"show-ref one match over {n:,} refs ({what})", d.gitdir,
                        ("show-ref", probe), ("--git-dir", str(d.gitdir), "show-ref", probe))

    def log_raw(gitdir: Path, what: str) -> Workload:
        return Workload(f"log --raw, {what}", gitdir, tuple(LOG_ARGS),
                        ("odb", "log-raw", "--git-dir", str(gitdir), "refs/heads/main"))

    def cat_all(gitdir: Path, what: str) -> Workload:
        return Workload(f"read every object, {what}", gitdir,
                        ("cat-file", "--batch", "--batch-all-objects"),
                        ("odb", "cat-file", "--git-dir", str(gitdir), "--batch",
                         "--batch-all-objects"))

    add("show-ref-reftable", lambda: show_ref("refs-1m-3tables", "reftable, 3 tables"))
    add("show-ref-packed", lambda: show_ref("packed-1m", "files backend, packed-refs"))
    hist = [(ds("history-depth50").gitdir,
             f"synthetic history-depth50 ({SCALES[scale]['history-depth50']['commits']} commits)")
            ] if want is None or want & {"log-raw", "read-objects"} else []
    hist += [(Path(h), f"{Path(h).name} ({_count(Path(h))} first-parent commits)")
             for h in histories]
    for gitdir, what in hist:
        add("log-raw", lambda: log_raw(gitdir, what))
    for gitdir, what in hist:
        add("read-objects", lambda: cat_all(gitdir, what))
    def for_each_ref() -> Workload:
        d = ds("refs-real-shaped")
        n = d.manifest["facts"]["ref_count"]
        fmt = f"--format={FOR_EACH_REF_FORMAT}"
        return Workload(f"for-each-ref, every atom family, over {n:,} refs (refs-real-shaped, "
                        "reftable)", d.gitdir, ("for-each-ref", fmt),
                        ("--git-dir", str(d.gitdir), "for-each-ref", fmt))

    add("for-each-ref-atoms", for_each_ref)

    def for_each_ref_walks() -> Workload:
        d = ds("refs-real-shaped")
        n = d.manifest["facts"]["ref_count"]
        fmt = f"--format={FOR_EACH_REF_WALKS_FORMAT}"
        return Workload(f"for-each-ref, the walk, clock and signature atoms, over {n:,} refs "
                        "(refs-real-shaped, reftable; timed, not counted)", d.gitdir,
                        ("for-each-ref", fmt), ("--git-dir", str(d.gitdir), "for-each-ref", fmt),
                        env=WALKS_ENV, count=False, same_work=False)

    add("for-each-ref-walks", for_each_ref_walks)

    def update_ref_create() -> Workload:
        d = ds("empty-repo")
        n = SCALES[scale]["empty-repo"]["refs"]
        script = (d.gitdir.parent / d.manifest["facts"]["update_ref_script"]).read_bytes()
        return Workload(f"update-ref --stdin creating {n:,} refs in one transaction (reftable; "
                        "each run on a new copy of the empty repository)", d.gitdir,
                        ("update-ref", "--stdin"),
                        ("--git-dir", str(d.gitdir), "update-ref", "--stdin"),
                        stdin=script, fresh=True)
    add("update-ref-create", update_ref_create)

    def startup() -> Workload:
        gitdir = ds("packed-1m").gitdir
        return Workload("start-up: show-ref --exists of a missing ref (a no-op)", gitdir,
                        ("show-ref", "--exists", "refs/nope"),
                        ("--git-dir", str(gitdir), "show-ref", "--exists", "refs/nope"))
    add("startup", startup)
    return out


def _count(gitdir: Path) -> str:
    out = subprocess.run([find_git(), "--git-dir", str(gitdir), "rev-list", "--first-parent",
                          "--count", "refs/heads/main"], capture_output=True, text=True)
    return f"{int(out.stdout):,}" if out.returncode == 0 else "?"


def fresh_argv(w: Workload, argv: list[str], slot: int) -> list[str]:
    """argv as is, or for a writing workload (w.fresh) with w.gitdir replaced by a new
    copy of it, made now at a path of its own per slot (a cell: cells counted at once
    never share one) and the same in every run, so a count repeats."""
    if not w.fresh:
        return argv
    src = Path(w.gitdir)
    dest = src.with_name(f"{src.name}.speed-{slot:03d}")
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(src, dest, symlinks=True)
    return [str(dest) if a == str(src) else a for a in argv]


def _run(argv: list[str], env: dict[str, str], stdin: bytes) -> tuple[int, bytes, float]:
    """(status, stdout, CPU seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(argv, input=stdin, capture_output=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc.returncode, proc.stdout, cpu


def measure(rows: list[Row], lab: Builds, repeat: int, jobs: int,
            count: bool, log: Callable[[str], None]) -> None:
    """Fill every cell: the CPU runs one at a time (in a changing order across the
    repeats would not help a 2-core machine's other load), then the counts, jobs at once."""
    cells: list[tuple[Cell, list[str], dict[str, str], bytes]] = []
    for row in rows:
        w = row.workload
        base = {**hermetic_env(), **dict(w.env)}
        gargv = [find_git(), "--git-dir", str(w.gitdir), *w.git_args]
        cells.append((row.git, gargv, count_env(base), w.stdin))
        for v in lab:
            cell = row.lab.setdefault(v.label, Cell())
            cells.append((cell, lab_argv(w.lab_args), count_env({**base, **lab.env(v)}),
                          w.stdin))
    expected: dict[int, bytes] = {}
    for i, row in enumerate(rows):
        gcell = cells[i * (len(lab) + 1)]
        status, out, _ = _run(fresh_argv(row.workload, gcell[1], 0), gcell[2],
                              row.workload.stdin)
        expected[id(row)] = out
        row.git.status = status
    for r in range(repeat):
        for k, (cell, argv, env, stdin) in enumerate(cells):
            row = rows[k // (len(lab) + 1)]
            status, out, cpu = _run(fresh_argv(row.workload, argv, k), env, stdin)
            cell.status = status
            cell.same_output = out == expected[id(row)] and status == row.git.status
            cell.cpu = cpu if cell.cpu is None else min(cell.cpu, cpu)
            cell.cpus.append(cpu)
        log(f"speed: CPU round {r + 1}/{repeat} done")
    if not count:
        return

    def one(item: tuple[int, tuple[Cell, list[str], dict[str, str], bytes]]) -> None:
        k, (cell, argv, env, stdin) = item
        try:
            argv = fresh_argv(rows[k // (len(lab) + 1)].workload, argv, k)
            cell.instructions = count_process(argv, env, stdin)
        except BenchError as e:
            cell.error = str(e)
        log(f"speed: counted {argv[-3:]}: {cell.instructions}")
    counted = [(k, c) for k, c in enumerate(cells) if rows[k // (len(lab) + 1)].workload.count]
    with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
        list(pool.map(one, counted))


def remove_copies(rows: Sequence[Row]) -> None:
    """The copies fresh_argv made of the writing workloads' repositories, removed."""
    for row in rows:
        if row.workload.fresh:
            src = Path(row.workload.gitdir)
            for copy in src.parent.glob(f"{src.name}.speed-*"):
                shutil.rmtree(copy, ignore_errors=True)


@dataclass
class Stages:
    """lab.stages' counts for one lab variant over the reftable workload's stack:
    instructions per stage (whole processes), and the records each went through."""
    counts: dict[str, int] = field(default_factory=dict)
    records: dict[str, int] = field(default_factory=dict)
    error: str = ""


def measure_stages(gitdir: Path, lab: Builds, jobs: int,
                   log: Callable[[str], None]) -> dict[str, Stages]:
    """Per lab variant, each of lab.stages.STAGES over gitdir: run once for its record
    count (stdout), then counted under callgrind as the commands are."""
    base = hermetic_env()
    out = {v.label: Stages() for v in lab}
    jobs_list: list[tuple[Stages, str, list[str], dict[str, str]]] = []
    for v in lab:
        env = count_env({**base, **lab.env(v)})
        for stage in STAGES:
            argv = [sys.executable, "-m", "lab.stages", stage, str(gitdir)]
            status, stdout, _ = _run(argv, env, b"")
            if status != 0:
                out[v.label].error = f"{stage}: exit {status}"
                continue
            out[v.label].records[stage] = int(stdout)
            jobs_list.append((out[v.label], stage, argv, env))

    def one(item: tuple[Stages, str, list[str], dict[str, str]]) -> None:
        st, stage, argv, env = item
        try:
            st.counts[stage] = count_process(argv, env, b"")
        except BenchError as e:
            st.error = str(e)
        log(f"speed: counted stage {stage}: {st.counts.get(stage)}")
    with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
        list(pool.map(one, jobs_list))
    return out


def stage_table(row: Row, lab: Builds, stages: dict[str, Stages]) -> str:
    """Where a ref's instructions go: the reftable row's whole command split by the
    stage counts into additive parts, each per ref show-ref reads (the merged
    iterator's records), beside git's whole command per ref; the walk's line is a
    part of the record loops' (what stepping through the bytes alone costs)."""
    head = ["per ref show-ref reads", "git"] + [v.label for v in lab]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    parts: list[list[str]] = [
        ["start-up, imports, the stack opened (whole, not per ref)", "—"],
        ["the record loops of the stack's tables (every table's records)", "—"],
        ["  of which the blocks loaded and the records stepped through, nothing decoded "
         "(lab.stages walk: a floor for a Python loop)", "—"],
        ["the merge loop (the priority queue over the tables)", "—"],
        ["show-ref's own loop (each ref's object checked, the pattern matched)", "—"],
        ["the whole command", "—"]]
    refs_git = None
    for v in lab:
        st = stages[v.label]
        c, whole = st.counts, row.lab[v.label].instructions
        refs = st.records.get("merged")
        if st.error or whole is None or not refs or len(c) < 4:
            for p in parts:
                p.append(st.error or "—")
            continue
        refs_git = refs
        per = [(c["tables"] - c["open"]) / refs, (c["walk"] - c["open"]) / refs,
               (c["merged"] - c["tables"]) / refs, (whole - c["merged"]) / refs]
        parts[0].append(_g(c["open"]))
        for p, x in zip(parts[1:5], per):
            p.append(f"{x:,.0f}")
        g = row.git.instructions
        ratio = f" ({whole / g:.1f}x git)" if g else ""
        parts[5].append(f"{whole / refs:,.0f}{ratio}")
    if refs_git and row.git.instructions:
        parts[5][1] = f"{row.git.instructions / refs_git:,.0f}"
    lines += ["| " + " | ".join(p) + " |" for p in parts]
    return "\n".join(lines) + "\n"


def _g(n: int | None) -> str:
    return "—" if n is None else f"{n / 1e9:.2f} G" if n >= 1e9 else f"{n / 1e6:.1f} M"


def _ratio(r: float) -> str:
    """A lab/git ratio: one decimal, two significant digits under 1 (0.038x, not 0.0x)."""
    return f"{r:.1f}x" if r >= 1 else f"{r:.2g}x"


def table(rows: list[Row], lab: Builds, python_pass: int | None) -> str:
    """The markdown table: per row git's figures, then each variant's with its ratio
    to git (instructions, and CPU in parentheses) and whether its output is git's."""
    head = ["workload", "git"] + [v.label for v in lab]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        g = row.git
        cells = [row.workload.title, f"{_g(g.instructions)}, {g.cpu or 0:.3f} s"]
        for v in lab:
            c = row.lab[v.label]
            ri = (_ratio(c.instructions / g.instructions)
                  if c.instructions and g.instructions else "—")
            rc = (_ratio(c.cpu / g.cpu) if c.cpu and g.cpu and row.workload.same_work
                  else "—")
            same = "" if c.same_output else " **output differs**"
            cells.append(f"{_g(c.instructions)} (**{ri}**), {c.cpu or 0:.3f} s ({rc}){same}")
        lines.append("| " + " | ".join(cells) + " |")
    if python_pass is not None:
        lines.append("")
        lines.append(f"`python -c pass`: {_g(python_pass)} instructions (within every lab "
                     "command's count).")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class SpeedOptions:
    """What `reftable-lab speed` measures: the scale; the lab builds (cores: interpreted,
    compiled; revs: --core-rev commits); the rows (histories: real repositories for the
    log and object rows; names: the workloads, None for all; datasets: where they are
    built); CPU runs per command (repeat); callgrind counts at once (jobs); count: the
    instruction counts at all; out: PATH.md and the result files beside it (save());
    stages: the reftable row split into stages; log: progress lines."""
    scale: str = "small"
    cores: Sequence[str] = ("interpreted",)
    revs: Sequence[str] = ()
    histories: Sequence[Path] = ()
    names: Sequence[str] | None = None
    datasets: Path = Path("datasets")
    repeat: int = 3
    jobs: int = 1
    count: bool = True
    out: Path | None = None
    stages: bool = False
    log: Callable[[str], None] = field(default=lambda s: print(s, file=sys.stderr))


def run(options: SpeedOptions | None = None, **changes: Any) -> str:
    """Measure and return the table (SpeedOptions; its fields may come as keywords); with
    out, also written to out.md and saved as results (save()); with stages (and count),
    also the reftable row's split into stages (stage_table; its workload is then
    measured whatever names says)."""
    o = replace(options or SpeedOptions(), **changes)
    lab = variants(o.cores, o.revs, o.log)
    names = o.names
    if o.stages and names is not None and "show-ref-reftable" not in names:
        names = [*names, "show-ref-reftable"]
    rows = [Row(w) for w in workloads(o.scale, Path(o.datasets), o.histories, names)]
    try:
        measure(rows, lab, o.repeat, o.jobs, o.count, o.log)
    finally:
        remove_copies(rows)
    python_pass = (count_process([sys.executable, "-c", "pass"], count_env(), b"")
                   if o.count else None)
    text = table(rows, lab, python_pass)
    split: dict[str, Stages] = {}
    if o.stages and o.count:
        row = next(r for r in rows if r.workload.key == "show-ref-reftable")
        split = measure_stages(row.workload.gitdir, lab, o.jobs, o.log)
        text += ("\nWhere a ref's instructions go (" + row.workload.title + "; "
                 "python -m lab.stages, whole processes counted, differences per ref):\n\n"
                 + stage_table(row, lab, split))
    if o.out is not None:
        o.out.parent.mkdir(parents=True, exist_ok=True)
        o.out.with_suffix(".md").write_text(text)
        save(o.out, o.scale, rows, lab, split)
    return text


GIT = Variant("git", Flags(), "git", peer=True)     # git's side of every row


def _cell_result(result: ScenarioResult, v: Variant, cell: Cell, spec: str,
                 out_dir: Path) -> VariantResult:
    """A row's side as a VariantResult, its CPU seconds and count in pyperf files."""
    res = VariantResult(v.label, "peer", spec, list(cell.cpus), "",
                        benchmark=f"{result.scenario}[{v.label}]")
    md = {"lab_workload": v.workload, "lab_status": cell.status,
          "lab_same_output": cell.same_output, "lab_error": cell.error}
    md = {k: val for k, val in md.items() if val not in (None, "")}
    stem = f"{result.scenario}.{v.label.replace(' ', '_')}"
    if cell.cpus:
        res.json_path = str(out_dir / f"{stem}.json")
        run = pyperf.Run(cell.cpus, metadata={**md, "name": res.benchmark, "unit": "second",
                                              "loops": 1, "lab_clock": "cpu"},
                         collect_metadata=True)
        pyperf.Benchmark([run]).dump(res.json_path, replace=True)
    if cell.instructions is not None:
        res.instructions = float(cell.instructions)
        res.instructions_json = str(out_dir / f"{stem}.instructions.json")
        write_count(Path(res.instructions_json), res.benchmark,
                    Count(cell.instructions, {"lab_whole_process": True}), md)
    return res


def save(out: Path, scale: str, rows: Sequence[Row], lab: Builds,
         split: Mapping[str, Stages]) -> list[Path]:
    """Each row as a lab.results.ScenarioResult (scenario "speed-<key>", git and each
    lab build a peer, CPU seconds of every repeat and the whole-process count in
    pyperf files; ratios: each build against git) in out's folder,
    <out stem>-<key>.result.json; the stage counts of the reftable row as its lab
    builds' work ("stage_<name>", "records_<name>"). The paths written."""
    folder = out.parent
    paths = []
    for row in rows:
        w = row.workload
        r = ScenarioResult(f"speed-{w.key or 'row'}", scale, str(w.gitdir), {},
                           published="", measures=["time", "instructions"])
        r.variants = [_cell_result(r, GIT, row.git, " ".join(w.git_args), folder)]
        for v in lab:
            res = _cell_result(r, v, row.lab.get(v.label, Cell()), " ".join(w.lab_args), folder)
            st = split.get(v.label) if w.key == "show-ref-reftable" else None
            if st is not None:
                res.work = {**{f"stage_{k}": n for k, n in st.counts.items()},
                            **{f"records_{k}": n for k, n in st.records.items()}}
            r.variants.append(res)
        r.ratios = compute_ratios(r, [(f"{w.title}: {v.label} beside git", v.label, "git")
                                      for v in lab])
        path = folder / f"{out.stem}-{w.key or 'row'}.result.json"
        path.write_text(json.dumps({**r.to_json(), "title": w.title}, indent=1))
        paths.append(path)
    return paths
