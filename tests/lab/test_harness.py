"""The lab harness pieces that need no dataset: CLI listing, compare, reports, variants."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pyperf
import pytest
from reftable_core.flags import FLAG_INFO, Flags, baseline

from lab.cli import main
from lab.harness import picked_labels, run_scenario
from lab.measure import BenchError
from lab.measure.time import ROUND_KEY, load_runs, round_orders, rounds_benchmark
from lab.report import load_results, markdown, render
from lab.results import ScenarioResult, VariantResult, compute_ratios
from lab.scenarios import SCENARIOS, DatasetRef, Scenario
from lab.workloads import build


def test_flags_command_lists_every_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["flags"]) == 0
    out = capsys.readouterr().out
    for name, info in FLAG_INFO.items():
        assert name in out and info.seed in out


def test_bench_list_and_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--list"]) == 0
    out = capsys.readouterr().out
    for name in SCENARIOS:
        assert name in out
    assert main(["bench", "no-such-scenario"]) == 2
    assert "unknown scenario" in capsys.readouterr().err


def test_every_scenario_is_wired() -> None:
    import lab.workloads as w
    from lab.profiling import resolve_hot
    for s in SCENARIOS.values():
        assert s.workload in w.WORKLOADS
        for scale in ("small", "full"):
            labels = [v.label for v in s.variants(scale)]
            assert len(labels) == len(set(labels)), s.name
            assert "all-on" in labels and "all-off" in labels
            for v in s.variants(scale):
                if v.workload:
                    assert v.workload in w.WORKLOADS, (s.name, v.workload)
            for _, slow, fast in s.comparisons(scale):
                assert slow in labels and fast in labels, (s.name, slow, fast)
        for entry in s.hot:
            for flags in (Flags(), baseline()):
                funcs = resolve_hot(entry, flags)
                assert funcs and all(callable(f) for f in funcs), (s.name, entry)
        for scale in ("small", "full"):
            s.params(scale)


def test_variant_flags_differ_only_in_the_studied_flag() -> None:
    s = SCENARIOS["show-ref-3tables"]
    by = {v.label: v.flags for v in s.variants()}
    assert by["all-on"] == Flags() and by["all-off"] == baseline()
    assert by["pq_cmp=off"] == Flags().replace(pq_cmp=False)
    assert by["only-pq_cmp"] == baseline().replace(pq_cmp=True)


def _dump_pyperf(r: ScenarioResult, out_dir: Path) -> None:
    """Each variant's values as the pyperf file its json_path names (in out_dir)."""
    for v in r.variants:
        bench = rounds_benchmark(v.benchmark or v.label, v.rounds or [v.values],
                                 numbered=bool(v.rounds))
        pyperf.BenchmarkSuite([bench]).dump(str(out_dir / v.json_path), replace=True)


def _fake_result() -> ScenarioResult:
    r = ScenarioResult("show-ref-3tables", "small", "/nowhere", {"refs": 10}, published="1.30x",
                       seed="000")
    r.variants = [VariantResult("all-on", "flags", "", [1.0, 1.1, 0.9, 1.0], "x.json"),
                  VariantResult("all-off", "flags", "pq_cmp=off", [2.0, 2.1, 1.9, 2.0], "y.json"),
                  VariantResult("git", "peer", "git_show_ref", [0.1, 0.11, 0.09, 0.1], "z.json")]
    r.ratios = compute_ratios(r, [("all", "all-off", "all-on"), ("git", "all-on", "git"),
                                  ("missing", "nope", "all-on")])
    return r


def test_ratios_and_report_round_trip(tmp_path: Path) -> None:
    r = _fake_result()
    assert [q["title"] for q in r.ratios] == ["all", "git"]
    assert r.ratios[0]["ratio"] == pytest.approx(2.0, rel=0.01)
    assert r.ratios[0]["significant"]
    _dump_pyperf(r, tmp_path)
    (tmp_path / "show-ref-3tables.result.json").write_text(json.dumps(r.to_json()))
    assert "values" not in r.to_json()["variants"][0]
    loaded = load_results(tmp_path)
    assert loaded[0].to_json() == r.to_json()
    report = render(loaded, tmp_path)
    text = report.read_text()
    assert "| all | pq_cmp on: 2x faster (base: all others on) |  | 2.000x [" in text
    assert "show-ref-3tables.png" in text
    assert (tmp_path / "show-ref-3tables.png").read_bytes()[:4] == b"\x89PNG"


def _pyperf_file(path: Path, name: str, values: list[float], **metadata: Any) -> Path:
    runs = [pyperf.Run([v], metadata={"name": name, **metadata}, collect_metadata=False)
            for v in values]
    pyperf.Benchmark(runs).dump(str(path))
    return path


def _compare(*args: Path | str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lab.cli", "compare", *map(str, args)],
                          capture_output=True, text=True, check=False)


def test_compare_two_pyperf_files(tmp_path: Path) -> None:
    """Fixed values, so the ratio is known: no clock is read."""
    a = _pyperf_file(tmp_path / "a.json", "w", [2.0e-3, 2.1e-3, 1.9e-3, 2.0e-3],
                     unit="second", lab_workload="show_ref")
    b = _pyperf_file(tmp_path / "b.json", "w", [1.0e-3, 1.05e-3, 0.95e-3, 1.0e-3],
                     unit="second", lab_workload="show_ref")
    res = json.loads(_compare(a, b, "--json").stdout)
    assert res["ratio"] == pytest.approx(2.0) and res["significant"]
    assert res["measure"] == "time" and res["estimator"] == "mean"
    table = _compare(a, b)
    assert table.returncode == 0
    assert "| w " in table.stdout and "2x faster (95 % CI" in table.stdout, table.stdout


def test_compare_counts_is_their_quotient(tmp_path: Path) -> None:
    a = _pyperf_file(tmp_path / "a.json", "s[x]", [3.0e6], unit="integer",
                     lab_measure="instructions", lab_workload="spin")
    b = _pyperf_file(tmp_path / "b.json", "s[y]", [2.0e6], unit="integer",
                     lab_measure="instructions", lab_workload="spin")
    res = json.loads(_compare(a, b, "--json").stdout)
    assert res["ratio"] == 1.5 and res["estimator"] == "count"
    assert "1.5x fewer instructions" in _compare(a, b).stdout


@pytest.mark.parametrize("other, what", [
    ({"unit": "integer", "lab_measure": "instructions", "lab_workload": "show_ref"},
     "measure time vs instructions"),
    ({"unit": "second", "lab_workload": "update_ref_create"},
     "workload show_ref vs update_ref_create"),
])
def test_compare_refuses_files_of_different_things(tmp_path: Path, other: dict[str, str],
                                                   what: str) -> None:
    """Seconds of one workload against counts of another gave "3.07e+09x faster"."""
    a = _pyperf_file(tmp_path / "a.json", "a", [1.0, 1.1], unit="second",
                     lab_workload="show_ref")
    b = _pyperf_file(tmp_path / "b.json", "b", [3.0e9], **other)
    proc = _compare(a, b)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == f"reftable-lab compare: {a} and {b} are not comparable: {what}"


def test_old_result_files_load_without_rounds(tmp_path: Path) -> None:
    """Result files from before rounds (and before the values moved to the pyperf
    files) hold each variant's values inline."""
    fake = _fake_result()
    d = fake.to_json()
    for v, res in zip(d["variants"], fake.variants):
        del v["benchmark"]
        v["values"] = res.values
    del d["round_order"]
    for q in d["ratios"]:
        del q["paired"], q["rounds"]
    r = ScenarioResult.from_json(d)
    assert [v.rounds for v in r.variants] == [[], [], []]
    text = markdown([r])
    assert "| all | pq_cmp on: 2x faster (base: all others on) |  | 2.000x [" in text
    assert "(mean) | yes |" in text and "sequential" in text


def test_round_orders_are_balanced_and_seeded() -> None:
    for n in (2, 3, 4, 5):
        labels = [f"v{i}" for i in range(n)]
        cycle = n if n % 2 == 0 else 2 * n
        orders = round_orders(labels, cycle, seed="s")
        assert all(sorted(o) == labels for o in orders)
        follows = Counter((o[i], o[i + 1]) for o in orders for i in range(n - 1))
        assert len(follows) == n * (n - 1) and len(set(follows.values())) == 1
        places = Counter((o[i], i) for o in orders for i in range(n))
        assert len(places) == n * n and len(set(places.values())) == 1
        assert round_orders(labels, cycle, seed="s") == orders
    assert round_orders(["a", "b", "c"], 7, seed=1)[6] == round_orders(["a", "b", "c"], 7, seed=1)[0]


def _rounds_result(paired_rounds: int) -> ScenarioResult:
    r = ScenarioResult("s", "small", "/nowhere", {})
    slow = [[2.0 * d, 2.02 * d] for d in (1.0, 1.2, 0.85, 1.1)][:paired_rounds]
    fast = [[1.0 * d, 1.01 * d] for d in (1.0, 1.2, 0.85, 1.1)][:paired_rounds]
    r.variants = [VariantResult("all-off", "flags", "", [v for x in slow for v in x], "a.json",
                                rounds=slow),
                  VariantResult("all-on", "flags", "", [v for x in fast for v in x], "b.json",
                                rounds=fast)]
    r.ratios = compute_ratios(r, [("all", "all-off", "all-on")])
    return r


def test_ratios_are_paired_with_two_rounds_or_more(tmp_path: Path) -> None:
    one, four = _rounds_result(1), _rounds_result(4)
    assert not one.ratios[0]["paired"] and one.ratios[0]["rounds"] == 0
    q = four.ratios[0]
    assert q["paired"] and q["rounds"] == 4
    assert q["ratio"] == pytest.approx(2.0, rel=0.01) and q["significant"]
    _dump_pyperf(four, tmp_path)
    assert load_runs(tmp_path / "a.json") == (four.variants[0].values, four.variants[0].rounds)
    (tmp_path / "s.result.json").write_text(json.dumps(four.to_json()))
    loaded = load_results(tmp_path)
    assert loaded[0].to_json() == four.to_json()
    text = markdown(loaded)
    assert "| all | all-on: 2x faster (base: all-off) |  | 2.000x [" in text
    assert "(paired, 4 rounds) | yes |" in text
    assert "interleaved, 4" in text


def test_interleaved_rounds_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two variants of the dataset-free `spin` workload in 2 rounds of real pyperf workers."""
    monkeypatch.setattr(Scenario, "dataset",
                        lambda self, scale, datasets_dir=None: DatasetRef(tmp_path, tmp_path))
    s = dataclasses.replace(SCENARIOS["show-ref-1table"], name="selftest", workload="spin",
                            scale_params={"small": {"n": 20_000}}, peer_workloads=())
    res = run_scenario(s, "small", tmp_path / "out", mode="quick", only=["all-on", "all-off"],
                       progress=False, rounds=2)
    assert sorted(v.label for v in res.variants) == ["all-off", "all-on"]
    assert len(res.round_order) == 2 and sorted(res.round_order[0]) == ["all-off", "all-on"]
    for v in res.variants:
        assert len(v.rounds) == 2 and all(len(x) == 3 for x in v.rounds)
        assert v.values == v.rounds[0] + v.rounds[1]
        import pyperf
        bench = pyperf.Benchmark.load(v.json_path)
        assert bench.get_values() == tuple(v.values)
        assert len({run.get_loops() for run in bench.get_runs() if run.values}) == 1
        assert sorted({run.get_metadata()[ROUND_KEY] for run in bench.get_runs()
                       if run.values}) == [1, 2]
    assert res.ratios[0]["paired"] and res.ratios[0]["rounds"] == 2
    saved = json.loads((tmp_path / "out" / "selftest.result.json").read_text())
    loaded = ScenarioResult.from_json(saved, tmp_path / "out")
    assert [v.rounds for v in loaded.variants] == [v.rounds for v in res.variants]


def test_line_profile_shows_the_committed_loops(tmp_path: Path) -> None:
    """The hot-loop variant chosen for the flags is profiled from reftable/loops.py itself."""
    from line_profiler import LineProfiler
    from reftable_core.reftable import loops
    from reftable_core.reftable.record import RefRecord
    from reftable_core.reftable.table import open_table
    from reftable_core.reftable.writer import WriterOptions, write_table

    from lab.profiling import ref_record_loops, write_line_stats
    path = tmp_path / "t.ref"
    refs = [RefRecord(f"refs/heads/b{i:05d}".encode(), 1, 1, bytes(20)) for i in range(500)]
    write_table(str(path), refs, [], WriterOptions(min_update_index=1, max_update_index=1))
    (fn,) = ref_record_loops(Flags())
    assert fn.__code__.co_filename == loops.__file__
    lp = LineProfiler()
    lp.add_function(fn)
    lp.enable_by_count()
    try:
        assert len(list(open_table(str(path)).refs().seek(b""))) == 500
    finally:
        lp.disable_by_count()
    text = write_line_stats(lp, tmp_path / "line.txt").read_text()
    assert "Could not find file" not in text and loops.__file__ in text
    hits = [int(ln.split()[1]) for ln in text.splitlines()
            if ln.strip()[:1].isdigit() and len(ln.split()) > 4 and ln.split()[1].isdigit()]
    assert max(hits) >= 500                        # a per-record line ran once per record


def test_within_process_rounds_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """All rounds of two `spin` variants in one lab.interleave process, paired by round."""
    monkeypatch.setattr(Scenario, "dataset",
                        lambda self, scale, datasets_dir=None: DatasetRef(tmp_path, tmp_path))
    s = dataclasses.replace(SCENARIOS["show-ref-1table"], name="selftest-wp", workload="spin",
                            scale_params={"small": {"n": 20_000}}, peer_workloads=())
    res = run_scenario(s, "small", tmp_path / "out", only=["all-on", "all-off"],
                       progress=False, rounds=4, within_process=True)
    assert sorted(v.label for v in res.variants) == ["all-off", "all-on"]
    for v in res.variants:
        assert len(v.rounds) == 4 and all(len(x) == 1 and x[0] > 0 for x in v.rounds)
        assert v.json_path.endswith("selftest-wp.interleave.json")
    suite = pyperf.BenchmarkSuite.load(res.variants[0].json_path)       # pyperf's own model
    assert sorted(suite.get_benchmark_names()) == ["selftest-wp[all-off]", "selftest-wp[all-on]"]
    for v in res.variants:
        bench = suite.get_benchmark(v.benchmark)
        runs = bench.get_runs()
        assert [run.get_metadata()[ROUND_KEY] for run in runs] == [1, 2, 3, 4]
        assert list(bench.get_values()) == v.values and runs[0].warmups
    saved = json.loads((tmp_path / "out" / "selftest-wp.result.json").read_text())
    loaded = ScenarioResult.from_json(saved, tmp_path / "out")
    assert [v.rounds for v in loaded.variants] == [v.rounds for v in res.variants]
    q = res.ratios[0]
    assert q["paired"] and q["rounds"] == 4 and q["ratio"] > 0     # a clock's ratio: no bound
    text = markdown([res])
    assert "interleaved within one process, 4 rounds" in text
    with pytest.raises(BenchError):
        run_scenario(s, "small", tmp_path / "out2", only=["all-on"], progress=False,
                     within_process=True)


def test_scenarios_are_one_explicit_registry() -> None:
    """Importing lab.scenarios alone gives every scenario (no registration by importing
    lab.workloads), and every workload it names is built by lab.workloads.build."""
    code = ("import sys, lab.scenarios as s; "
            "print(len(s.SCENARIOS), 'lab.workloads' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == [str(len(SCENARIOS)), "False"]
    with pytest.raises(KeyError, match="unknown workload 'nope'"):
        build("nope", Flags(), Path("."))


def test_build_takes_flags_or_a_spec(tmp_path: Path) -> None:
    for flags in (Flags(), "mmap=off"):
        assert build("spin", flags, tmp_path, {"n": 1000})(2) > 0


def test_worker_once_runs_outside_pyperf(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "lab.worker", "--once", "--workload", "spin",
                           "--gitdir", str(tmp_path), "--params", '{"n": 1000}',
                           "--lab-flags", "mmap=off", "--loops", "3"],
                          capture_output=True, text=True, check=True)
    assert "spin:" in proc.stderr and "for 3 loop(s)" in proc.stderr


def test_flag_base_builds_the_variants_on_it() -> None:
    """packed-verify-missing's readers run on a full parse; show-ref-1table's merge
    flags with the single-table bypass off; odb's LRU at a limit that evicts."""
    s = SCENARIOS["packed-verify-missing"]
    by = {v.label: v.flags for v in s.variants()}
    assert by["packed_reader=fgetc"] == Flags().replace(packed_lookup="parse_all",
                                                        packed_reader="fgetc")
    rows = {title: (slow, fast) for title, slow, fast in s.comparisons()}
    assert rows["packed_reader: fgetc -> mmap (packed_lookup=parse_all)"] == \
        ("packed_reader=fgetc", "packed_lookup=parse_all")
    s = SCENARIOS["show-ref-1table"]
    by = {v.label: v.flags for v in s.variants()}
    assert by["merged_cmp=off"] == Flags().replace(merged_cmp=False, single_subiter_bypass=False)
    rows = {title: (slow, fast) for title, slow, fast in s.comparisons()}
    assert rows["merged_cmp alone, others on (single_subiter_bypass=off)"] == \
        ("merged_cmp=off", "single_subiter_bypass=off")
    assert not any(title.startswith("pq_cmp") for title in rows)     # 3 tables only
    s = SCENARIOS["odb-log-raw"]
    for scale, limit in (("small", 16 << 10), ("full", 4 << 20)):
        by = {v.label: v.flags for v in s.variants(scale)}
        assert by["delta_cache_lru=blob_first"] == Flags().replace(
            delta_cache_lru="blob_first", delta_cache_limit=limit)


def test_update_ref_cumulative_steps() -> None:
    """Seed 004's sequence: stat_cache on top of all-off, then mmap on top of that."""
    s = SCENARIOS["update-ref-create-10000"]
    by = {v.label: v.flags for v in s.variants()}
    assert by["only-stat_cache"] == baseline().replace(stat_cache=True)
    assert by["all-off+stat_cache+mmap"] == baseline().replace(stat_cache=True, mmap=True)
    rows = {(slow, fast): title for title, slow, fast in s.comparisons()}
    assert ("all-off", "only-stat_cache") in rows
    assert rows[("only-stat_cache", "all-off+stat_cache+mmap")] == \
        "+mmap on top of only-stat_cache"
    assert len(rows) == len(s.comparisons())


def test_delta_cache_sweeps() -> None:
    """Seed 002's tables: fixed:N slot counts per LRU at small limits, and the base
    cache limit for fixed:256 and hashmap."""
    slots = {v.label: v.flags for v in SCENARIOS["odb-log-S-slots"].variants("full")}
    assert slots["fixed:16384,blob_first,4m"] == Flags().replace(
        delta_cache_index="fixed:16384", delta_cache_lru="blob_first", delta_cache_limit=4 << 20)
    assert len(slots) == 2 + 4 * 2 * 2
    sizes = {v.label: v.flags for v in SCENARIOS["odb-log-raw-cache-size"].variants("full")}
    assert sizes["512m,fixed:256,single"] == Flags().replace(
        delta_cache_index="fixed:256", delta_cache_limit=512 << 20)
    assert len(sizes) == 2 + 5 * 2 * 2
    for name in ("odb-log-raw-slots", "odb-log-S-slots", "odb-log-raw-cache-size",
                 "odb-log-S-cache-size"):
        assert SCENARIOS[name].preset == "history-depth50"


@pytest.mark.parametrize("content", [None, "hello\n", '{"x": 1}\n', "[1, 2]\n"])
def test_compare_refuses_a_file_that_is_not_a_result(tmp_path: Path, content: str | None) -> None:
    """One line naming the file, exit 2, no traceback (missing, not JSON, JSON of another shape)."""
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    proc = subprocess.run([sys.executable, "-m", "lab.cli", "compare", str(bad), str(bad)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"reftable-lab compare: {bad}: not a pyperf result file")
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


def test_the_first_set_names_scenarios_and_studies_every_flag() -> None:
    """`make bench`'s default set: known scenarios, one for every seed and upstream
    commit a scenario cites, together studying every flag but seed 001's readers'."""
    from lab.scenarios import SCENARIOS, SETS, expand_names
    first = expand_names(["first"])
    assert first and all(n in SCENARIOS for n in first)
    assert {SCENARIOS[n].seed for n in first} == {s.seed for s in SCENARIOS.values()}
    studied = {f for s in SCENARIOS.values() for f in s.studied}
    left = studied - {f for n in first for f in SCENARIOS[n].studied}
    assert left == {"packed_reader", "refname_safety"}     # as the set's comment says
    assert expand_names(["show-ref-1table", "first", "show-ref-3tables"])[:2] == [
        "show-ref-1table", SETS["first"][0]]


def test_only_picks_a_label_with_commas_given_split_at_them() -> None:
    """--only is split at commas: a variant labelled "a=off,b=off" is still picked by
    its label, and not by any one part of it."""
    scenario = SCENARIOS["migrate-to-reftable"]
    labels = [v.label for v in scenario.variants("small")]
    base = next(label for label in labels if "," in label)
    picked = picked_labels(f"initial_transaction_check=off,{base},git".split(","))
    assert {label for label in labels if label in picked} == {
        "initial_transaction_check=off", base, "git"}
    assert base not in picked_labels(base.split(",")[:-1])


@pytest.mark.parametrize("argv, measures", [
    (["--measure", "allocations", "--measure", "memory"], ("allocations", "memory")),
    (["--measure", "time,instructions", "--measure", "time"], ("time", "instructions")),
    (["--measure", "memory"], ("memory",)),
])
def test_measure_options_accumulate(argv: list[str], measures: tuple[str, ...]) -> None:
    """--measure given twice measures both (it measured the last one only)."""
    from lab.cli import build_parser
    from lab.commands.bench import chosen_measures
    args = build_parser("bench").parse_args(["bench", *argv])
    assert chosen_measures(args) == measures


def test_git_is_found_once_before_anything_is_measured(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Over cached datasets the parent never looked git up, so each counted worker ran
    provision-git.sh inside its counted region: run_scenario finds it first, and the
    workers inherit REFTABLE_LAB_GIT."""
    from lab import harness
    seen: list[str] = []

    def find_git() -> str:
        seen.append("find_git")
        monkeypatch.setenv("REFTABLE_LAB_GIT", "/provisioned/git")
        return "/provisioned/git"

    def measure_all(ctx: Any, chosen: Any, variants: Any, results: Any) -> None:
        seen.append("measure")
        assert ctx.env(variants[0])["REFTABLE_LAB_GIT"] == "/provisioned/git"
    monkeypatch.delenv("REFTABLE_LAB_GIT", raising=False)
    monkeypatch.setattr(harness, "find_git", find_git)
    monkeypatch.setattr(harness, "measure_all", measure_all)
    monkeypatch.setattr(Scenario, "dataset",
                        lambda self, scale, datasets_dir=None: DatasetRef(tmp_path, tmp_path))
    s = dataclasses.replace(SCENARIOS["show-ref-1table"], name="selftest-git", workload="spin",
                            scale_params={"small": {"n": 10}}, peer_workloads=())
    run_scenario(s, "small", tmp_path / "out", only=["all-on"], progress=False,
                 measures=("instructions",), work=False)
    assert seen == ["find_git", "measure"]


@pytest.mark.parametrize("program, argv, may_fail", [
    ("/usr/bin/python3", ["/usr/bin/python3", "-c", "pass"], False),
    ("/opt/git/bin/git", ["/opt/git/bin/git", "--version"], False),
    ("/usr/bin/awk", ["/usr/bin/awk"], True),          # mawk refuses --version
])
def test_a_no_op_run_assumes_no_option_of_an_unknown_program(program: str, argv: list[str],
                                                             may_fail: bool) -> None:
    from lab.measure.instructions import noop_argv, noop_may_fail
    assert noop_argv(program) == argv and noop_may_fail(program) is may_fail
