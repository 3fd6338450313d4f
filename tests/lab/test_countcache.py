"""lab.countcache: a count is reused only for exactly its inputs; lab.executors."""
from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import pytest

from lab import countcache
from lab.countcache import INPUTS, Counter, CountStore, count_key, sources_hash
from lab.executors import difference, environment, parse_executor
from lab.measure.context import RunContext
from lab.measure.instructions import Count
from lab.scenario import Variant
from reftable_core.flags import Flags

HAS_DASK = importlib.util.find_spec("distributed") is not None


def _inputs() -> dict[str, str]:
    return {**{name: f"{name}-value" for name in INPUTS}, "measure": "instructions"}


def test_each_input_changed_in_turn_is_a_miss(tmp_path: Path) -> None:
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


def test_sources_hash_covers_file_contents(tmp_path: Path) -> None:
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "m.py").write_text("x = 1\n")
    a = sources_hash(tmp_path, ["lab"])
    (tmp_path / "lab" / "m.py").write_text("x = 2\n")
    assert sources_hash(tmp_path, ["lab"]) != a


def test_parse_executor() -> None:
    assert parse_executor("local").kind == "local"
    assert parse_executor("local:3").workers == 3
    assert parse_executor("dask-local:2").workers == 2
    assert parse_executor("dask://h:8786").address == "tcp://h:8786"
    for bad in ("remote", "local:0", "dask://h"):
        with pytest.raises(ValueError):
            parse_executor(bad)


def test_a_worker_with_another_environment_is_refused(monkeypatch: pytest.MonkeyPatch
                                                      ) -> None:
    ours = environment()
    assert difference(ours, dict(ours)) is None
    monkeypatch.setenv("REFTABLE_LAB_WORKER_TAG", "other")
    diff = difference(ours, environment())
    assert diff is not None and diff.startswith("tag") and "\n" not in diff


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
def test_local_twice_and_a_two_worker_cluster_give_identical_counts(tmp_path: Path) -> None:
    """update-ref-create-1 at the small scale (the cheapest scenario with an
    instruction count), two variants: two local runs and one through a 2-worker
    LocalCluster (datasets built on the workers, checked by manifest hash)."""
    from lab.executors import DaskExecutor, ExecutorSpec
    from lab.harness import run_scenario
    from lab.measure import instructions
    if not instructions.available():
        pytest.skip("needs valgrind")
    kw = dict(only=["all-on", "all-off"], peers=False, progress=False,
              measures="instructions", work=False, datasets_dir=tmp_path / "datasets")
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
    assert (tmp_path / "dask" / "update-ref-create-1.all-on.instructions.json").exists()
