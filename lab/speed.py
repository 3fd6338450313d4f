"""The speed of the model (issue 15): whole commands of the lab beside git's, on the
same data, in one run.

Each workload is one command over one repository, run by git and by each lab variant:
this checkout's core (interpreted, or compiled by mypyc) and any --core-rev REV
(a worktree of that commit, lab.builds.core_rev; compiled too when asked and when
mypyc compiles it). Per command:

- instructions: the whole process under `valgrind --tool=callgrind` (interpreter
  start-up and imports included: they are part of what a user waits for), in the
  counting environment of lab.measure.instructions (PYTHONHASHSEED=0, the detrand
  preload, byte-code in its cache), so a count repeats to the instruction;
- CPU: user + system seconds of the process, the best of --repeat runs (moves with
  the machine's load; the counts do not);
- output: its stdout compared with git's, byte for byte (a faster lab that prints
  something else is no result).

Workloads (WORKLOADS): show-ref of the preset's middle ref over a reftable stack of
three tables and over a packed-refs file; log --raw over the synthetic history with
delta chains and over each --history DIR (a real repository); every object read
(cat-file --batch --batch-all-objects) of the same; and the start-up (show-ref
--exists of a missing ref; python -c pass beside it).
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import data_gen

from lab.builds import BuildError, compiled_core, core_rev
from gitbin import REPO_ROOT, find_git, hermetic_env
from lab.measure.instructions import callgrind_argv, count_env, read_parts

LOG_ARGS = ["log", "--format=%H", "--first-parent", "--no-renames", "--raw", "--no-abbrev",
            "-m", "refs/heads/main"]

# scale -> preset -> its data_gen parameters
SCALES: dict[str, dict[str, dict[str, Any]]] = {
    "small": {"refs-1m-3tables": {"refs": 20000, "tables": 3},
              "packed-1m": {"refs": 100000}, "history-depth50": {"commits": 300}},
    "full": {"refs-1m-3tables": {"refs": 1000000, "tables": 3},
             "packed-1m": {"refs": 1000000}, "history-depth50": {"commits": 3000}},
}


@dataclass(frozen=True)
class Variant:
    """One lab build: its label and the PYTHONPATH its commands run with."""
    label: str
    pythonpath: tuple[str, ...]

    def argv(self, args: Sequence[str]) -> list[str]:
        return [sys.executable, "-m", "lab.cli", *args]

    def env(self) -> dict[str, str]:
        return {"PYTHONPATH": os.pathsep.join(self.pythonpath), "PYTHONSAFEPATH": "1"}


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


@dataclass
class Cell:
    instructions: int | None = None
    cpu: float | None = None
    status: int | None = None
    same_output: bool | None = None
    error: str = ""


@dataclass
class Row:
    workload: Workload
    git: Cell = field(default_factory=Cell)
    lab: dict[str, Cell] = field(default_factory=dict)


def variants(cores: Sequence[str], revs: Sequence[str],
             log: Callable[[str], None]) -> list[Variant]:
    """This checkout's builds (cores), then each revision's, interpreted and, if
    "compiled" is among cores, compiled (a revision mypyc cannot compile is skipped
    with a line on the log)."""
    here = (str(REPO_ROOT / "core"), str(REPO_ROOT))
    trees: list[tuple[str, tuple[str, ...], Path]] = [
        (rev, (str(t.dir / "core"), str(t.dir)), t.dir / "core")
        for rev in revs for t in [core_rev(REPO_ROOT, rev)]]
    out: list[Variant] = []
    for name, path, core in [("this checkout", here, REPO_ROOT / "core"), *trees]:
        for build in cores:
            label = name if build == "interpreted" else f"{name} [compiled]"
            if build == "interpreted":
                out.append(Variant(label, path))
                continue
            try:
                out.append(Variant(label, (str(compiled_core(core, log=None)), *path)))
            except BuildError as e:
                log(f"speed: {label}: not measured: {e}")
    return out


def workloads(scale: str, datasets: Path, histories: Sequence[Path],
              names: Sequence[str] | None) -> list[Workload]:
    """The rows, datasets built (or reused) under datasets."""
    def ds(preset: str) -> Any:
        return data_gen.build(preset, root=datasets, progress=True, **SCALES[scale][preset])

    out: list[Workload] = []
    want = set(names) if names else None

    def add(key: str, make: Callable[[], Workload]) -> None:
        if want is None or key in want:
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


def _run(argv: list[str], env: dict[str, str], stdin: bytes) -> tuple[int, bytes, float]:
    """(status, stdout, CPU seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(argv, input=stdin, capture_output=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc.returncode, proc.stdout, cpu


def _count_instructions(argv: list[str], env: dict[str, str], stdin: bytes) -> int:
    """The whole process's instructions, counted as instructions.noop_count counts one."""
    with tempfile.TemporaryDirectory(prefix="reftable-lab-cg-") as d:
        proc = subprocess.run([*callgrind_argv(Path(d)), *argv], input=stdin,
                              capture_output=True, env=env)
        parts = read_parts(Path(d))
    if not parts:
        raise RuntimeError(f"callgrind gave no count for {argv[:4]}: {proc.stderr[-300:]!r}")
    return sum(p.ir for ps in parts.values() for p in ps)


def measure(rows: list[Row], lab: Sequence[Variant], repeat: int, jobs: int,
            count: bool, log: Callable[[str], None]) -> None:
    """Fill every cell: the CPU runs one at a time (in a changing order across the
    repeats would not help a 2-core machine's other load), then the counts, jobs at once."""
    base = hermetic_env()
    genv = count_env(base)
    cells: list[tuple[Cell, list[str], dict[str, str], bytes]] = []
    for row in rows:
        w = row.workload
        gargv = [find_git(), "--git-dir", str(w.gitdir), *w.git_args]
        cells.append((row.git, gargv, genv, w.stdin))
        for v in lab:
            cell = row.lab.setdefault(v.label, Cell())
            largv = v.argv(w.lab_args)
            cells.append((cell, largv, count_env({**base, **v.env()}), w.stdin))
    expected: dict[int, bytes] = {}
    for i, row in enumerate(rows):
        status, out, _ = _run(cells[i * (len(lab) + 1)][1], genv, row.workload.stdin)
        expected[id(row)] = out
        row.git.status = status
    for r in range(repeat):
        for k, (cell, argv, env, stdin) in enumerate(cells):
            status, out, cpu = _run(argv, env, stdin)
            row = rows[k // (len(lab) + 1)]
            cell.status = status
            cell.same_output = out == expected[id(row)] and status == row.git.status
            cell.cpu = cpu if cell.cpu is None else min(cell.cpu, cpu)
        log(f"speed: CPU round {r + 1}/{repeat} done")
    if not count:
        return

    def one(item: tuple[Cell, list[str], dict[str, str], bytes]) -> None:
        cell, argv, env, stdin = item
        try:
            cell.instructions = _count_instructions(argv, env, stdin)
        except RuntimeError as e:
            cell.error = str(e)
        log(f"speed: counted {argv[-3:]}: {cell.instructions}")
    with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
        list(pool.map(one, cells))


@dataclass
class Stages:
    """lab.stages' counts for one lab variant over the reftable workload's stack:
    instructions per stage (whole processes), and the records each went through."""
    counts: dict[str, int] = field(default_factory=dict)
    records: dict[str, int] = field(default_factory=dict)
    error: str = ""


def measure_stages(gitdir: Path, lab: Sequence[Variant], jobs: int,
                   log: Callable[[str], None]) -> dict[str, Stages]:
    """Per lab variant, each of lab.stages.STAGES over gitdir: run once for its record
    count (stdout), then counted under callgrind as the commands are."""
    from lab.stages import STAGES
    base = hermetic_env()
    out = {v.label: Stages() for v in lab}
    jobs_list: list[tuple[Stages, str, list[str], dict[str, str]]] = []
    for v in lab:
        env = count_env({**base, **v.env()})
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
            st.counts[stage] = _count_instructions(argv, env, b"")
        except RuntimeError as e:
            st.error = str(e)
        log(f"speed: counted stage {stage}: {st.counts.get(stage)}")
    with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
        list(pool.map(one, jobs_list))
    return out


def stage_table(row: Row, lab: Sequence[Variant], stages: dict[str, Stages]) -> str:
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


def table(rows: list[Row], lab: Sequence[Variant], python_pass: int | None) -> str:
    """The markdown table: per row git's figures, then each variant's with its ratio
    to git (instructions, and CPU in parentheses) and whether its output is git's."""
    head = ["workload", "git"] + [v.label for v in lab]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        g = row.git
        cells = [row.workload.title, f"{_g(g.instructions)}, {g.cpu or 0:.3f} s"]
        for v in lab:
            c = row.lab[v.label]
            ri = (f"{c.instructions / g.instructions:.1f}x"
                  if c.instructions and g.instructions else "—")
            rc = f"{c.cpu / g.cpu:.1f}x" if c.cpu and g.cpu else "—"
            same = "" if c.same_output else " **output differs**"
            cells.append(f"{_g(c.instructions)} (**{ri}**), {c.cpu or 0:.3f} s ({rc}){same}")
        lines.append("| " + " | ".join(cells) + " |")
    if python_pass is not None:
        lines.append("")
        lines.append(f"`python -c pass`: {_g(python_pass)} instructions (within every lab "
                     "command's count).")
    return "\n".join(lines) + "\n"


def run(scale: str = "small", cores: Sequence[str] = ("interpreted",),
        revs: Sequence[str] = (), histories: Sequence[Path] = (),
        names: Sequence[str] | None = None, datasets: Path = Path("datasets"),
        repeat: int = 3, jobs: int = 1, count: bool = True, out: Path | None = None,
        log: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
        stages: bool = False) -> str:
    """Measure and return the table (also written to out.md and out.json if out);
    with stages (and count), also the reftable row's split into stages (stage_table;
    its workload is then measured whatever names says)."""
    lab = variants(cores, revs, log)
    if stages and names is not None and "show-ref-reftable" not in names:
        names = [*names, "show-ref-reftable"]
    rows = [Row(w) for w in workloads(scale, Path(datasets), histories, names)]
    measure(rows, lab, repeat, jobs, count, log)
    python_pass = (_count_instructions([sys.executable, "-c", "pass"], count_env(), b"")
                   if count else None)
    text = table(rows, lab, python_pass)
    split: dict[str, Stages] = {}
    if stages and count:
        row = next(r for r in rows if r.workload.key == "show-ref-reftable")
        split = measure_stages(row.workload.gitdir, lab, jobs, log)
        text += ("\nWhere a ref's instructions go (" + row.workload.title + "; "
                 "python -m lab.stages, whole processes counted, differences per ref):\n\n"
                 + stage_table(row, lab, split))
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".md").write_text(text)
        out.with_suffix(".json").write_text(json.dumps({
            "scale": scale, "python_pass": python_pass,
            "variants": [{"label": v.label, "pythonpath": list(v.pythonpath)} for v in lab],
            "rows": [{"title": r.workload.title, "gitdir": str(r.workload.gitdir),
                      "git_args": list(r.workload.git_args),
                      "lab_args": list(r.workload.lab_args),
                      "git": vars(r.git), "lab": {k: vars(c) for k, c in r.lab.items()}}
                     for r in rows],
            "stages": {k: vars(st) for k, st in split.items()}}, indent=1))
    return text
