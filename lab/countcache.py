"""Counts kept on disk, addressed by everything they depend on.

Contract: a count (instructions, allocations, and the work pass's counters,
lab.measure.work: exact and repeatable, so reusable; never wall time, memory or
anything else a machine's load moves) is stored under
<cache>/counts/<key[:2]>/<key>.json (cache: gitbin.cache_root(), which honours
REFTABLE_LAB_CACHE), where key = count_key(inputs) is the sha256 of the inputs
(count_inputs()): every thing the count depends on, each one entry of INPUTS:

- sources: the contents of the source files a count's processes can run
  (counted_sources(): the whole core, gitbin and data_gen, and of the lab only the
  static import closure of lab.worker, with lab.cli for the CLI peers, and its C
  preload sources; sources_hash(): the files' bytes, so a dirty tree is covered,
  and a commit that changes no such file is the same key). A change to a
  scenario's definition (lab.scenarios) reaches the key through scenario, scale,
  dataset and variant, so it recounts that scenario's rows only; a change to the
  code a counted process runs (the core, the workloads, the measures) recounts
  every row, as it can move every count;
- git: the content hash of the git binary the variant's worker runs (its own
  REFTABLE_LAB_GIT, a git build's, or the provisioned one);
- python: the interpreter's content hash and version; valgrind: its version;
- dataset: the dataset manifest's content hash (data_gen's manifest);
- paths: the paths a count depends on, besides the contents (count_paths()): they
  are in the counted process's argv and environment, and a checkout, datasets folder
  or current directory elsewhere counts some 10^-4 differently: the dataset's git
  directory as the counted process is given it (--gitdir; absolute: the harness
  resolves the datasets folder, lab.harness.datasets_root), the checkout
  (gitbin.REPO_ROOT), the interpreter's path (sys.executable), the current directory
  (`python -m` puts it first on sys.path), the scratch folder of the counted
  processes' TMPDIRs and the environment they start from (count_env: PYTHONPATH,
  HOME, PATH, the cache's paths, ...);
- scenario, scale, measure;
- variant: its workload, flags (the full spec), peer or not, the parameters;
- build: the variant's own environment (a core revision's worktree, a compiled
  core's build folder, named by its key, a git build's binary).

CountStore.get(inputs) gives the stored entry only when the entry's inputs are
those inputs, each one (so a stale entry cannot be read for other inputs, even
under a colliding key); put() writes atomically (temporary name, rename), with
the run that made it (run id and time): a reused row says which run it is from.

Counter is what a run's measures are given (RunContext.counter, bound to a
scenario by Counter.bind()): count(ctx, measure, todo, local) gives every
count of todo (key -> variant), from the store where it is there and by the
executor (lab.executors: local, or Dask tasks) where not, storing the new ones;
with it, the origin of each (None: counted now; else {"run", "time"}).
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from data_gen import read_manifest
from gitbin import REPO_ROOT, GitNotAvailable, cache_root, find_git

from .measure.allocations import Allocs
from .measure.instructions import SCRATCH_ROOT, VALGRIND, Count, count_env
from .measure.work import WorkCount

if TYPE_CHECKING:
    from .executors import Executor
    from .measure.context import RunContext
    from .scenario import Scenario, Variant

INPUTS = ("sources", "git", "python", "valgrind", "dataset", "paths", "scenario", "scale",
          "measure", "variant", "build")
# the measures whose counts are cached, and the type of each one's count (the work
# pass's counters too: lab.measure.work, untraced and with the loops' bytecodes)
COUNTED: dict[str, type] = {"instructions": Count, "allocations": Allocs, "work": WorkCount,
                            "work-traced": WorkCount}
# the source files: their suffixes; the folders hashed whole (the core, gitbin, data_gen)
SOURCE_SUFFIXES = (".py", ".c", ".pxd", ".pyx", ".sh", ".toml")
WHOLE_DIRS = ("core/reftable_core", "gitbin", "data_gen")
# the lab modules a counted process starts from (`python -m lab.worker --count ...`)
COUNTED_ENTRIES = ("lab.worker",)


def _files(root: Path, dirs: Iterable[str]) -> list[Path]:
    out = []
    for d in dirs:
        for dirpath, dirnames, filenames in os.walk(root / d):
            dirnames[:] = sorted(n for n in dirnames if n != "__pycache__")
            out += [Path(dirpath) / f for f in filenames if f.endswith(SOURCE_SUFFIXES)]
    return sorted(out)


def _module_file(root: Path, name: str) -> Path | None:
    """The file of module name (dotted) under root, or None (not a module: a name)."""
    p = root.joinpath(*name.split("."))
    for f in (p / "__init__.py", p.with_name(p.name + ".py")):
        if f.is_file():
            return f
    return None


def _imported(tree: ast.AST, module: str, is_package: bool) -> Iterator[str]:
    """Every module name tree may import (or run by `-m NAME`), anywhere in the file:
    function-level and TYPE_CHECKING imports too, relative ones made absolute, each
    name's packages first; `from M import x` gives M and M.x (x may be a module)."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - node.level + 1] + ([node.module] if node.module else [])
                base = ".".join(parts)
            names = [base, *(f"{base}.{a.name}" for a in node.names)]
        elif isinstance(node, (ast.List, ast.Tuple)):
            items = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
            names = [b for a, b in itertools.pairwise(items) if a == "-m" and isinstance(b, str)]
        for name in names:
            parts = name.split(".")
            yield from (".".join(parts[:i]) for i in range(1, len(parts) + 1))


def lab_closure(root: Path = REPO_ROOT, entries: Iterable[str] = COUNTED_ENTRIES
                ) -> list[Path]:
    """The lab's modules the entries can import, statically: each file parsed, every
    import in it (see _imported) that names a lab module resolved to its file under
    root, and so on; a module the files run with `python -m lab.X` (a CLI peer's
    lab.cli) is followed the same way."""
    seen: dict[str, Path] = {}
    todo = list(entries)
    while todo:
        name = todo.pop()
        if name in seen or name.split(".")[0] != "lab":
            continue
        path = _module_file(root, name)
        if path is None:
            continue
        seen[name] = path
        tree = ast.parse(path.read_bytes(), str(path))
        todo += _imported(tree, name, path.name == "__init__.py")
    return sorted(seen.values())


def counted_sources(root: Path = REPO_ROOT) -> list[Path]:
    """The source files a count can depend on: the code its processes can run.

    A count is made in a process of its own (`python -m lab.worker --count ...`, under
    callgrind or the alloccount preload); its heap and the code it runs are all the
    count depends on beyond the other INPUTS (git, Python, valgrind, dataset, the
    variant's workload, flags and parameters, its build), so a file it never imports
    cannot move a count. Those files: the whole core (its .py files, the Cython .pxd
    beside them), gitbin and data_gen (the datasets: kept whole, conservatively), and of
    the lab only lab_closure(): the static import closure of lab.worker, which holds
    the workloads, the measures (the code that builds the counted command and its
    environment, lab.measure.context and .instructions, among them) and lab.cli (a CLI
    peer's process), with the lab's non-Python sources (lab/measure/c: the preload
    libraries). lab.scenarios, the report, the harness and the commands are not in it:
    a scenario's definition reaches a count through the variant, scenario, scale and
    dataset inputs, so a change to one scenario recounts its rows only. scripts/ is
    not either: no counted process runs it (a compiled core is named by its build key
    in the build input, a git build by its binary's hash)."""
    lab = [p for p in _files(root, ["lab"]) if p.suffix != ".py"]
    return sorted({*_files(root, WHOLE_DIRS), *lab, *lab_closure(root)})


def sources_hash(root: Path = REPO_ROOT, files: Iterable[Path] | None = None) -> str:
    """sha256 over (path relative to root, bytes) of files (default: counted_sources)."""
    h = hashlib.sha256()
    for p in counted_sources(root) if files is None else files:
        rel = p.relative_to(root).as_posix().encode()
        data = p.read_bytes()
        h.update(b"%d:%s:%d\n" % (len(rel), rel, len(data)))
        h.update(data)
    return h.hexdigest()


@functools.lru_cache(maxsize=64)
def _file_hash(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_hash(path: Path | str) -> str:
    """sha256 of a file's bytes (remembered while its size and mtime stay)."""
    p = os.path.realpath(path)
    st = os.stat(p)
    return _file_hash(p, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=4)
def valgrind_version(program: str = VALGRIND) -> str:
    try:
        return subprocess.run([program, "--version"], capture_output=True, text=True,
                              check=False).stdout.strip()
    except OSError:
        return "none"


def python_id() -> str:
    return f"{sys.version.split()[0]} {file_hash(sys.executable)}"


def git_binary(extra_env: Mapping[str, str] | None) -> str:
    """The git the variant's worker runs: its own REFTABLE_LAB_GIT, else ours."""
    if extra_env and extra_env.get("REFTABLE_LAB_GIT"):
        return extra_env["REFTABLE_LAB_GIT"]
    try:
        return str(find_git())
    except GitNotAvailable:
        return ""


def git_id(extra_env: Mapping[str, str] | None = None) -> str:
    git = git_binary(extra_env)
    return file_hash(git) if git and os.path.exists(git) else "none"


def manifest_hash(dataset_dir: Path | str) -> str:
    """The dataset's manifest content hash ("" when it has no manifest)."""
    m = read_manifest(Path(dataset_dir)) or {}
    return str(m.get("content_hash", ""))


def machine_paths(env: Mapping[str, str]) -> dict[str, Any]:
    """The paths of this machine a counted process gets, whatever it counts: the
    checkout, the interpreter's path, the current directory, the TMPDIRs' scratch
    folder, and count_env(env) (env: the variant's worker environment,
    RunContext.env), the environment every counted process starts from. A Dask
    worker must have the same ones (lab.executors.environment)."""
    return {"checkout": str(REPO_ROOT), "executable": sys.executable, "cwd": os.getcwd(),
            "tmp": str(SCRATCH_ROOT), "env": count_env(env)}


def count_paths(gitdir: Path | str, env: Mapping[str, str]) -> str:
    """The paths input (see the module doc): the dataset's git directory as the counted
    process is given it (not made absolute here: a relative one is another argv) and
    machine_paths(env)."""
    return json.dumps({"gitdir": str(gitdir), **machine_paths(env)}, sort_keys=True)


def variant_spec(v: Variant, params: Mapping[str, Any]) -> str:
    return json.dumps({"label": v.label, "workload": v.workload, "flags": v.flags.to_spec(),
                       "peer": v.peer, "params": dict(params)}, sort_keys=True)


def count_inputs(ctx: RunContext, v: Variant, measure: str, scale: str, dataset: str,
                 sources: str) -> dict[str, str]:
    """Every input of the count of variant v by measure in ctx (see the module doc);
    dataset: the manifest's content hash, sources: sources_hash()."""
    extra = dict(ctx.extra_env(v) or {})
    return {"sources": sources, "git": git_id(extra), "python": python_id(),
            "valgrind": valgrind_version(), "dataset": dataset,
            "paths": count_paths(ctx.gitdir, ctx.env(v)), "scenario": ctx.scenario,
            "scale": scale, "measure": measure, "variant": variant_spec(v, ctx.params),
            "build": json.dumps(extra, sort_keys=True)}


def count_key(inputs: Mapping[str, str]) -> str:
    if set(inputs) != set(INPUTS):
        raise ValueError(f"count inputs must be exactly {INPUTS}, not {sorted(inputs)}")
    return hashlib.sha256(json.dumps(dict(inputs), sort_keys=True).encode()).hexdigest()


def count_to_json(count: Any) -> dict[str, Any]:
    return dataclasses.asdict(count)


def count_from_json(measure: str, data: Mapping[str, Any]) -> Any:
    return COUNTED[measure](**data)


@dataclass(frozen=True)
class CountStore:
    """The counts on disk (see the module doc)."""
    root: Path = field(default_factory=lambda: cache_root() / "counts")

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, inputs: Mapping[str, str]) -> dict[str, Any] | None:
        """The entry of exactly these inputs ({"count", "run", "time", ...}), or None."""
        path = self.path(count_key(inputs))
        try:
            entry = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        if entry.get("inputs") != dict(inputs) or entry.get("measure") not in COUNTED:
            return None
        return entry

    def put(self, inputs: Mapping[str, str], count: Any, run: str) -> None:
        key = count_key(inputs)
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"key": key, "inputs": dict(inputs), "measure": inputs["measure"],
                 "count": count_to_json(count), "run": run,
                 "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(entry, indent=1))
        os.replace(tmp, path)


Origin = dict[str, str] | None           # None: counted now; else the run it came from
Local = Callable[[dict[Any, "Variant"]], dict[Any, Any]]    # the measure's own counting


@dataclass
class Counter:
    """A bench invocation's counting: its store (None: --no-cache, count everything
    and store nothing), its executor (None: the measure's local counting) and run id.
    bind() ties it to one scenario's run (its scale and dataset)."""
    store: CountStore | None
    executor: Executor | None = None
    run: str = ""
    scale: str = ""
    scenario: Scenario | None = None
    dataset: Path | None = None
    _sources: str = ""
    _manifest: str = ""

    def bind(self, scenario: Scenario, scale: str, dataset: Path) -> Counter:
        return dataclasses.replace(self, scenario=scenario, scale=scale, dataset=Path(dataset),
                                   _sources=sources_hash(), _manifest=manifest_hash(dataset))

    def count(self, ctx: RunContext, measure: str, todo: Mapping[Any, Variant],
              local: Local) -> dict[Any, tuple[Any, Origin]]:
        """Every count of todo (key -> variant) with its origin; local(missing) counts
        the missing ones here (the measure's own path) unless an executor does."""
        out: dict[Any, tuple[Any, Origin]] = {}
        missing: dict[Any, Variant] = {}
        inputs = {k: count_inputs(ctx, v, measure, self.scale, self._manifest, self._sources)
                  for k, v in todo.items()}
        for k, v in todo.items():
            entry = self.store.get(inputs[k]) if self.store else None
            if entry is None:
                missing[k] = v
                continue
            out[k] = (count_from_json(measure, entry["count"]),
                      {"run": entry["run"], "time": entry["time"]})
            ctx.progress(f"{measure} {v.label} (cached)", 1)
        if missing:
            if self.executor is None or self.scenario is None or self.dataset is None:
                fresh = local(missing)
            else:
                fresh = self.executor.counts(ctx, measure, missing, self.scenario, self.scale,
                                             self.dataset, self._manifest)
            for k, c in fresh.items():
                if self.store:
                    self.store.put(inputs[k], c, self.run)
                out[k] = (c, None)
        return out

