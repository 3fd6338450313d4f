"""lab.export: Bencher Metric Format JSON and the results index."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import jsonschema
import pyperf
import pytest

from lab.export import INDEX, append_index, bmf, read_index, write_bmf
from lab.harness import run_scenario
from lab.results import ScenarioResult, VariantResult
from lab.scenarios import SCENARIOS, DatasetRef, Scenario

# Bencher's documented JSON Schema of BMF (https://bencher.dev/bmf.json, reference page
# "Bencher Metric Format"): benchmark -> measure -> {value, lower_value?, upper_value?}
BMF_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema",
    "type": "object",
    "patternProperties": {".+": {
        "type": "object",
        "patternProperties": {".+": {
            "type": "object",
            "properties": {"value": {"type": "number"}, "lower_value": {"type": "number"},
                           "upper_value": {"type": "number"}},
            "required": ["value"]}}}},
}


def _result() -> ScenarioResult:
    full = VariantResult("all-on", "flags", "", [0.010, 0.012, 0.011], "x.json",
                         benchmark="s[all-on]", instructions=1.5e6, allocations=300.0,
                         bytes_allocated=9000.0,
                         memory={"rss_above": 4096, "peak_rss": 1, "baseline_rss": 1,
                                 "tracemalloc_peak": 100})
    counted = VariantResult("git", "peer", "git_show_ref", [], "", benchmark="s[git]",
                            instructions=2e6)
    untouched = VariantResult("all-off", "flags", "", [], "", benchmark="s[all-off]")
    return ScenarioResult("s", "small", "d", {"refs": 10}, [full, counted, untouched],
                          measures=["time", "instructions", "allocations", "memory"])


def test_bmf_has_the_documented_shape(tmp_path: Path) -> None:
    doc = bmf([_result()])
    jsonschema.validate(doc, BMF_SCHEMA)
    assert set(doc) == {"s[all-on]", "s[git]"}             # all-off measured nothing
    on = doc["s[all-on]"]
    assert set(on) == {"latency", "instructions", "allocations", "peak-memory"}
    assert on["latency"]["value"] == pytest.approx(11e6)   # the mean, in nanoseconds
    assert on["latency"]["lower_value"] < on["latency"]["value"] < on["latency"]["upper_value"]
    assert on["peak-memory"] == {"value": 4096.0} and on["allocations"] == {"value": 300.0}
    assert doc["s[git]"] == {"instructions": {"value": 2e6}}
    path = write_bmf([_result()], tmp_path)
    jsonschema.validate(json.loads(path.read_text()), BMF_SCHEMA)
    for bad in ({"b": {"latency": {"lower_value": 1}}}, {"b": {"latency": 3}}):
        try:
            jsonschema.validate(bad, BMF_SCHEMA)
        except jsonschema.ValidationError:
            continue
        raise AssertionError(f"the schema accepts {bad}")


def test_each_run_appends_one_index_line(tmp_path: Path) -> None:
    for name in ("run-1", "run-2"):
        append_index(tmp_path, tmp_path / name, [_result()])
    lines = (tmp_path / INDEX).read_text().splitlines()
    assert len(lines) == 2
    entries = read_index(tmp_path)
    assert [e["run"] for e in entries] == ["run-1", "run-2"]
    e = entries[0]
    assert len(e["project"]["commit"]) == 40 and isinstance(e["project"]["dirty"], bool)
    assert e["git_version"].startswith("git version")
    assert e["python"].count(".") == 2 and e["machine"]["cpus"]
    assert e["scenarios"] == ["s"] and e["scale"] == "small"
    assert e["measures"] == ["allocations", "instructions", "memory", "time"]
    assert e["metrics"]["s"]["all-on"]["instructions"] == 1.5e6
    assert e["metrics"]["s"]["all-off"] == {}
    assert read_index(tmp_path / "none") == []


def test_every_measure_file_of_a_run_is_pyperf_json(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Time, instructions, allocations and memory all write pyperf's format: the files a
    tiny run leaves load as pyperf suites (one benchmark per variant and measure)."""
    s = dataclasses.replace(SCENARIOS["show-ref-1table"], name="export-selftest",
                            workload="spin", scale_params={"small": {"n": 2000}},
                            peer_workloads=())
    monkeypatch.setattr(Scenario, "dataset",
                        lambda self, scale, datasets_dir=None: DatasetRef(tmp_path, tmp_path))
    run_scenario(s, "small", tmp_path / "out", mode="quick", only=["all-on"],
                 progress=False, measures=("time", "allocations", "memory"), work=False)
    files = sorted(p.name for p in (tmp_path / "out").glob("*.json")
                   if not p.name.endswith(".result.json"))
    assert files == ["export-selftest.all-on.allocations.json", "export-selftest.all-on.json",
                     "export-selftest.all-on.memory.json"]
    for name in files:
        suite = pyperf.BenchmarkSuite.load(str(tmp_path / "out" / name))
        assert suite.get_benchmark_names() == ["export-selftest[all-on]"]
