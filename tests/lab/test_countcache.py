"""lab.countcache: a count is reused only for exactly its inputs; lab.executors."""
from __future__ import annotations

import ast
import dataclasses
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from reftable_core.flags import Flags

from gitbin import REPO_ROOT
from lab import countcache
from lab.countcache import INPUTS, Counter, CountStore, count_key, counted_sources, sources_hash
from lab.executors import difference, environment, parse_executor
from lab.measure.context import RunContext
from lab.measure.instructions import Count
from lab.scenario import Variant
from lab.scenarios import SCENARIOS

HAS_DASK = importlib.util.find_spec("distributed") is not None


def _inputs() -> dict[str, str]:
    return {**{name: f"{name}-value" for name in INPUTS}, "measure": "instructions"}


def test_each_input_changed_in_turn_is_a_miss(tmp_path: Path) -> None:
    assert "paths" in INPUTS            # the dataset's, the checkout's, Python's, ...
    store = CountStore(tmp_path)
    base = _inputs()
    store.put(base, Count(123, {"lab_worker": 123}), run="run-1")
    entry = store.get(base)
    assert entry is not None and entry["count"]["instructions"] == 123
    assert entry["run"] == "run-1" and entry["time"]
    for name in INPUTS:
        other = {**base, name: base[name] + "-changed"}
        assert count_key(other) != count_key(base)
        assert store.get(other) is None, name
    # a stale entry under a colliding key is never read for other inputs
    path = store.path(count_key(base))
    path.write_text(path.read_text().replace("scale-value", "scale-other"))
    assert store.get(base) is None


def test_the_counter_recounts_what_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    """The real key function over a fake measure: a rerun counts nothing; a change of
    the sources, the dataset, the git binary or a variant's flags recounts."""
    monkeypatch.setattr(countcache, "git_id", lambda extra=None: "git-A")
    counted: list[str] = []

    def local(todo: dict) -> dict:
        counted.extend(v.label for v in todo.values())
        return {k: Count(len(v.label)) for k, v in todo.items()}
    ctx = RunContext("s", tmp_path, {"n": 1}, tmp_path)
    todo = {"a": Variant("all-on", Flags(), "spin"), "b": Variant("x", Flags(), "spin")}
    c = dataclasses.replace(Counter(CountStore(tmp_path / "store"), run="r1"), scale="small",
                            _sources="src-1", _manifest="ds-1")
    first = c.count(ctx, "instructions", todo, local)
    assert counted == ["all-on", "x"] and all(o is None for _, o in first.values())
    again = c.count(ctx, "instructions", todo, local)
    assert counted == ["all-on", "x"] and again["a"][1]["run"] == "r1"
    for changed in (dataclasses.replace(c, _sources="src-2"),
                    dataclasses.replace(c, _manifest="ds-2"),
                    dataclasses.replace(c, scale="full")):
        counted.clear()
        changed.count(ctx, "instructions", todo, local)
        assert counted == ["all-on", "x"]
    counted.clear()
    c.count(ctx, "instructions",
            {"a": Variant("all-on", Flags().with_spec("mmap=off"), "spin")}, local)
    assert counted == ["all-on"]
    monkeypatch.setattr(countcache, "git_id", lambda extra=None: "git-B")
    counted.clear()
    c.count(ctx, "instructions", todo, local)
    assert counted == ["all-on", "x"]
    counted.clear()
    Counter(None).count(ctx, "instructions", todo, local)          # --no-cache
    assert counted == ["all-on", "x"]


def test_the_work_pass_is_cached_as_the_counts_are(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The work pass's counters go through the counter: a rerun runs no work pass and
    says where its work came from; traced and untraced counters are kept apart; a
    changed variant runs again; peers have none; --no-cache runs it all."""
    from lab.measure import work as work_measure
    monkeypatch.setattr(countcache, "git_id", lambda extra=None: "git-A")
    ran: list[tuple[str, bool]] = []

    def fake(ctx: RunContext, v: Variant) -> dict[str, int]:
        ran.append((v.label, ctx.trace_loops))
        return {"blocks_loaded": len(v.label), **({"loop_bytecodes": 7} if ctx.trace_loops
                                                   else {})}
    monkeypatch.setattr(work_measure, "work_variant", fake)
    variants = [Variant("all-on", Flags(), "spin"), Variant("x", Flags(), "spin"),
                Variant("git", Flags(), "git_spin", peer=True)]
    store = CountStore(tmp_path / "store")

    def run(run_id: str, trace: bool = True, store: CountStore | None = store,
            vs: list[Variant] = variants) -> dict[str, dict]:
        counter = dataclasses.replace(Counter(store, run=run_id), scale="small",
                                      _sources="src-1", _manifest="ds-1")
        ctx = RunContext("s", tmp_path, {"n": 1}, tmp_path, trace_loops=trace, counter=counter)
        got: dict[str, dict] = {}
        work_measure.MEASURE.run(ctx, vs, lambda label, f: got.setdefault(label, {}).update(f))
        return got
    first = run("r1")
    assert ran == [("all-on", True), ("x", True)]                   # no peer
    assert first["x"] == {"work": {"blocks_loaded": 1, "loop_bytecodes": 7}}
    ran.clear()
    again = run("r2")
    assert ran == []
    assert again["x"]["work"] == first["x"]["work"]
    assert again["x"]["cached"]["work"]["run"] == "r1"
    assert run("r3", trace=False) and ran == [("all-on", False), ("x", False)]
    ran.clear()
    run("r4", vs=[Variant("x", Flags().with_spec("mmap=off"), "spin")])
    assert ran == [("x", True)]
    ran.clear()
    run("r5", store=None)                                           # --no-cache
    assert ran == [("all-on", True), ("x", True)]


def test_the_paths_a_count_depends_on_are_in_its_key(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The same dataset (manifest) at another path, another checkout, interpreter
    path, current directory or a variable of the counted environment (PYTHONPATH):
    each is in the counted process's argv or environment and moves a count, so each
    recounts; the same paths again do not."""
    monkeypatch.setattr(countcache, "git_id", lambda extra=None: "git-A")
    counted: list[str] = []

    def local(todo: dict) -> dict:
        counted.extend(v.label for v in todo.values())
        return {k: Count(len(v.label)) for k, v in todo.items()}
    (tmp_path / "a" / ".git").mkdir(parents=True)
    (tmp_path / "b" / ".git").mkdir(parents=True)
    ctx = RunContext("s", tmp_path / "a" / ".git", {"n": 1}, tmp_path)
    todo = {"a": Variant("all-on", Flags(), "spin")}
    c = dataclasses.replace(Counter(CountStore(tmp_path / "store"), run="r1"), scale="small",
                            _sources="src-1", _manifest="ds-1")
    inputs = countcache.count_inputs(ctx, todo["a"], "instructions", "small", "ds-1", "src-1")
    paths = json.loads(inputs["paths"])
    assert paths["gitdir"] == str(tmp_path / "a" / ".git")
    assert paths["checkout"] == str(REPO_ROOT) and paths["executable"] == sys.executable
    assert paths["cwd"] == os.getcwd() and paths["env"]["PYTHONHASHSEED"] == "0"
    c.count(ctx, "instructions", todo, local)
    assert counted == ["all-on"]

    def recounts(**changes: object) -> bool:
        counted.clear()
        c.count(dataclasses.replace(ctx, **changes), "instructions", todo, local)
        return counted == ["all-on"]
    assert not recounts()
    assert recounts(gitdir=tmp_path / "b" / ".git")
    with monkeypatch.context() as m:
        m.setattr(countcache, "REPO_ROOT", tmp_path / "elsewhere")
        assert recounts()
    (tmp_path / "python3").symlink_to(sys.executable)    # the same binary, another path
    with monkeypatch.context() as m:
        m.setattr(sys, "executable", str(tmp_path / "python3"))
        assert recounts()
    with monkeypatch.context() as m:
        m.chdir(tmp_path)
        assert recounts()
    with monkeypatch.context() as m:
        m.setenv("PYTHONPATH", f"{os.environ.get('PYTHONPATH', '')}:{tmp_path}")
        assert recounts()
    with monkeypatch.context() as m:
        m.setenv("NOT_COUNTED_ANYWHERE", "x")              # not in a counted environment
        assert not recounts()
    assert not recounts()


def test_bench_makes_a_relative_datasets_folder_absolute(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """bench --datasets ds, relative (as the default ./datasets is): result.json's
    dataset, the counted command's --gitdir and the stored count's paths name the
    absolute folder, as a Dask task's (which is given the absolute one) do. (The counts
    are stubbed: what is checked is what reaches the counted command.)"""
    from lab.cli import main
    from lab.measure import instructions
    seen: list[list[str]] = []

    def count_worker(cmd: list[str], env: dict | None = None, keep: Path | None = None
                     ) -> Count:
        seen.append(list(cmd))
        return Count(1000, {"lab_worker": 1000})
    monkeypatch.setattr(instructions, "count_worker", count_worker)
    monkeypatch.setattr(instructions, "prepare", lambda ctx, variants: None)
    monkeypatch.setattr(instructions, "available", lambda: True)
    monkeypatch.setenv("REFTABLE_LAB_CACHE", str(tmp_path / "cache"))
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    assert main(["bench", "update-ref-create-1", "--datasets", "ds", "--measure",
                 "instructions", "--only", "all-on", "--no-peers", "--out", "out"]) == 0
    [result] = (tmp_path / "work" / "out").glob("*/update-ref-create-1.result.json")
    dataset = Path(json.loads(result.read_text())["dataset"])
    assert dataset.is_absolute() and dataset.parent == (tmp_path / "work" / "ds").resolve()
    [cmd] = seen
    gitdir = Path(cmd[cmd.index("--gitdir") + 1])
    assert gitdir.is_absolute() and gitdir.is_relative_to(dataset)
    entries = [json.loads(e.read_text()) for e in (tmp_path / "cache" / "counts").glob("*/*.json")]
    assert sorted(e["measure"] for e in entries) == ["instructions", "work-traced"]
    for e in entries:                                   # the count's and the work pass's
        assert json.loads(e["inputs"]["paths"])["gitdir"] == str(gitdir)


def test_sources_hash_covers_file_contents(tmp_path: Path) -> None:
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "m.py").write_text("x = 1\n")
    a = sources_hash(tmp_path, [tmp_path / "lab" / "m.py"])
    (tmp_path / "lab" / "m.py").write_text("x = 2\n")
    assert sources_hash(tmp_path, [tmp_path / "lab" / "m.py"]) != a


_TREE = ("core/reftable_core", "lab", "data_gen", "gitbin", "scripts")


def _copy_tree(dest: Path) -> Path:
    """The source folders of the repository, copied to dest (the root of the copy)."""
    for d in _TREE:
        shutil.copytree(REPO_ROOT / d, dest / d,
                        ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    return dest


def _append(path: Path, text: str = "\n# an edit\n") -> None:
    path.write_text(path.read_text() + text)


def _rel(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in counted_sources(root)}


def test_an_edit_outside_what_a_count_runs_keeps_the_sources_hash(tmp_path: Path) -> None:
    root = _copy_tree(tmp_path / "tree")
    before = sources_hash(root)
    for rel in ("lab/report.py", "lab/scenarios.py", "lab/commands/bench.py",
                "lab/harness.py", "scripts/gen_loops.py"):
        _append(root / rel)
        assert sources_hash(root) == before, rel


def test_an_edit_to_what_a_count_runs_changes_the_sources_hash(tmp_path: Path) -> None:
    root = _copy_tree(tmp_path / "tree")
    for rel in ("lab/workloads.py", "lab/worker.py", "lab/measure/instructions.py",
                "lab/measure/clock.py", "lab/measure/context.py", "lab/measure/c/detrand.c",
                "lab/cli.py", "core/reftable_core/reftable/block.py",
                "core/reftable_core/reftable/record.pxd", "gitbin/__init__.py",
                "data_gen/builders.py"):
        before = sources_hash(root)
        _append(root / rel, "\n/* an edit */\n" if rel.endswith(".c") else "\n# an edit\n")
        assert sources_hash(root) != before, rel


def test_the_counted_sources_are_the_closure_of_the_counted_processes() -> None:
    rel = _rel(REPO_ROOT)
    for name in ("lab/__init__.py", "lab/worker.py", "lab/workloads.py",
                 "lab/measure/__init__.py", "lab/measure/instructions.py",
                 "lab/measure/allocations.py", "lab/measure/clock.py",
                 "lab/measure/context.py", "lab/measure/c/detrand.c",
                 "lab/measure/c/alloccount.c",
                 # a CLI peer (workloads.cli_show_ref, ...) runs `python -m lab.cli`
                 "lab/cli.py",
                 "core/reftable_core/__init__.py", "core/reftable_core/reftable/loops.py",
                 "core/reftable_core/reftable/record.pxd", "gitbin/__init__.py",
                 "data_gen/__init__.py"):
        assert name in rel, name
    for name in ("lab/scenarios.py", "lab/report.py", "lab/harness.py", "lab/countcache.py",
                 "lab/commands/bench.py", "lab/executors.py"):
        assert name not in rel, name
    assert not any(r.startswith("scripts/") for r in rel)


def test_the_static_closure_holds_every_lab_module_a_counted_process_imports() -> None:
    """What the counted processes import, really: the worker, and a CLI peer's
    `python -m lab.cli` with each git-like command it may run (the COMMANDS whose
    module is the core's); every module of lab/ among them is in the closure."""
    code = ("import importlib, sys, lab.worker, lab.cli\n"
            "for m in lab.cli.COMMANDS.values():\n"
            "    if m.startswith('reftable_core.'): importlib.import_module(m)\n"
            "print(json.dumps(sorted(getattr(m, '__file__', None) or '' "
            "for m in list(sys.modules.values()))))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (os.environ.get("PYTHONPATH"), str(REPO_ROOT / "core"), str(REPO_ROOT)) if p)}
    out = subprocess.run([sys.executable, "-c", "import json\n" + code], env=env, cwd=REPO_ROOT,
                         capture_output=True, text=True, check=True).stdout
    lab = (REPO_ROOT / "lab").resolve()
    imported = {Path(f).resolve() for f in json.loads(out) if f}
    in_lab = {p for p in imported if p.is_relative_to(lab)}
    assert REPO_ROOT.resolve() / "lab" / "worker.py" in in_lab
    closure = {p.resolve() for p in counted_sources(REPO_ROOT)}
    assert in_lab <= closure, sorted(str(p) for p in in_lab - closure)


def test_a_cli_peer_runs_only_commands_of_the_core() -> None:
    """lab.cli imports a command's module when it runs it: the commands the workloads
    give `python -m lab.cli` must be the core's (else that module is not hashed)."""
    from lab.cli import COMMANDS
    tree = ast.parse((REPO_ROOT / "lab" / "workloads.py").read_text())
    words = {n.value for n in ast.walk(tree)
             if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    for command in words & set(COMMANDS):
        assert COMMANDS[command].startswith("reftable_core."), command


def test_a_changed_scenario_recounts_its_rows_only(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Two scenarios counted; then one's definition changes (its parameters, with an
    edit to lab/scenarios.py): the rerun counts that scenario's variants and takes
    the other's from the store. An edit to the workloads recounts both."""
    monkeypatch.setattr(countcache, "git_id", lambda extra=None: "git-A")
    root = _copy_tree(tmp_path / "tree")
    store = CountStore(tmp_path / "store")
    counted: list[str] = []

    def local(todo: dict) -> dict:
        counted.extend(v.label for v in todo.values())
        return {k: Count(len(v.label)) for k, v in todo.items()}

    def run(scenarios: list, run_id: str) -> dict[str, dict]:
        sources = sources_hash(root)
        out = {}
        for sc in scenarios:
            ctx = RunContext(sc.name, tmp_path, sc.params("small"), tmp_path)
            manifest = json.dumps(sc.dataset_params("small"), sort_keys=True)
            c = dataclasses.replace(Counter(store, run=run_id), scale="small",
                                    _sources=sources, _manifest=manifest)
            out[sc.name] = c.count(ctx, "instructions",
                                   {v.label: v for v in sc.variants("small")}, local)
        return out
    create, decoding = SCENARIOS["update-ref-create-100"], SCENARIOS["show-ref-decoding"]
    run([create, decoding], "r1")
    assert sorted(counted) == sorted(v.label for sc in (create, decoding)
                                     for v in sc.variants("small"))
    counted.clear()
    again = run([create, decoding], "r2")
    assert counted == [] and all(o == {"run": "r1", "time": o["time"]}
                                 for r in again.values() for _, o in r.values())
    small = decoding.params("small")
    changed = dataclasses.replace(decoding, scale_params={
        **decoding.scale_params, "small": {**small, "refs": small["refs"] - 1000}})
    _append(root / "lab" / "scenarios.py", "\n# show-ref-decoding: 1000 refs fewer\n")
    rerun = run([create, changed], "r3")
    assert sorted(counted) == sorted(v.label for v in decoding.variants("small"))
    assert all(o is not None and o["run"] == "r1" for _, o in rerun[create.name].values())
    assert all(o is None for _, o in rerun[decoding.name].values())
    counted.clear()
    _append(root / "lab" / "workloads.py")
    run([create, changed], "r4")
    assert sorted(counted) == sorted(v.label for sc in (create, decoding)
                                     for v in sc.variants("small"))


def test_parse_executor() -> None:
    assert parse_executor("local").kind == "local"
    assert parse_executor("local:3").workers == 3
    assert parse_executor("dask-local:2").workers == 2
    assert parse_executor("dask://h:8786").address == "tcp://h:8786"
    for bad in ("remote", "local:0", "dask://h"):
        with pytest.raises(ValueError):
            parse_executor(bad)


def test_a_worker_with_another_environment_is_refused(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    ours = environment()
    assert difference(ours, dict(ours)) is None
    with monkeypatch.context() as m:
        m.setenv("REFTABLE_LAB_WORKER_TAG", "other")
        diff = difference(ours, environment())
        assert diff is not None and diff.startswith("tag") and "\n" not in diff
    assert difference(ours, environment()) is None
    # the paths a count depends on: the checkout's, the current directory, a variable of
    # the counted environment (one the worker has and we have not, too)
    with monkeypatch.context() as m:
        m.setattr("lab.countcache.REPO_ROOT", tmp_path)
        assert str(difference(ours, environment())).startswith("checkout")
    with monkeypatch.context() as m:
        m.chdir(tmp_path)
        assert str(difference(ours, environment())).startswith("cwd")
    with monkeypatch.context() as m:
        m.setenv("PYTHONPATH", str(tmp_path))
        assert str(difference(ours, environment())).startswith("env PYTHONPATH")
    with monkeypatch.context() as m:
        m.setenv("REFTABLE_LAB_SOMETHING", "1")
        assert str(difference(ours, environment())).startswith("env REFTABLE_LAB_SOMETHING")


def test_a_worker_refuses_a_dataset_at_another_path(tmp_path: Path) -> None:
    """A task names the caller's git directory of its dataset (the counted process is
    given it): a worker whose dataset is elsewhere refuses the task."""
    from lab.executors import CountTask, run_task
    from lab.measure import BenchError
    sc = SCENARIOS["update-ref-create-1"]
    task = CountTask("instructions", sc.name, "small", sc.preset, sc.dataset_params("small"),
                     str(tmp_path / "datasets"), "", sc.params("small"), "all-on",
                     sc.workload, "", False, gitdir=str(tmp_path / "elsewhere" / ".git"))
    with pytest.raises(BenchError, match="not the caller's"):
        run_task(task)


@pytest.mark.skipif(not HAS_DASK, reason="needs distributed (pip install 'reftable-lab[dask]')")
def test_the_dask_executor_refuses_a_worker_of_another_environment() -> None:
    import distributed

    from lab.executors import DaskExecutor, ExecutorSpec
    from lab.measure import BenchError
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None,
                                  env={"REFTABLE_LAB_WORKER_TAG": "other"}) as cluster:
        spec = ExecutorSpec("dask", address=cluster.scheduler_address)
        with pytest.raises(BenchError, match="no worker shares this environment"):
            DaskExecutor(spec)


@pytest.mark.skipif(not HAS_DASK, reason="needs distributed (pip install 'reftable-lab[dask]')")
def test_local_twice_and_a_two_worker_cluster_give_identical_counts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """update-ref-create-1 at the small scale (the cheapest scenario with an
    instruction count), two variants: two local runs and one through a 2-worker
    LocalCluster (datasets built on the workers, checked by manifest hash). The
    datasets folder is given relative, as bench's default ./datasets is: a Dask
    task is given it absolute, so the local runs must count it absolute too. (The
    current directory is a count's input: one folder holding only the datasets.)"""
    from lab.executors import DaskExecutor, ExecutorSpec
    from lab.harness import run_scenario
    from lab.measure import instructions
    if not instructions.available():
        pytest.skip("needs valgrind")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    kw = dict(only=["all-on", "all-off"], peers=False, progress=False,
              measures="instructions", work=False, datasets_dir=Path("datasets"))
    runs = [run_scenario("update-ref-create-1", "small", tmp_path / f"local{i}", **kw)
            for i in (1, 2)]
    executor = DaskExecutor(ExecutorSpec("dask-local", 2))
    try:
        runs.append(run_scenario("update-ref-create-1", "small", tmp_path / "dask",
                                 counter=Counter(None, executor, run="dask"), **kw))
    finally:
        executor.close()
    counts = [{v.label: v.instructions for v in r.variants} for r in runs]
    assert counts[0] == counts[1] == counts[2] and all(counts[0].values())
    assert all(Path(r.dataset).parent == (tmp_path / "work" / "datasets").resolve()
               for r in runs)
    assert (tmp_path / "dask" / "update-ref-create-1.all-on.instructions.json").exists()
