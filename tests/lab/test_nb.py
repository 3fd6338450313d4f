"""lab.nb: the picker spells Flags, the quick look goes through the harness, Flags reach
the worker's argv unchanged.

Contract: the picker's controls come from reftable_core.flags (a dropdown where a flag's
values are a closed list, a text box parsed by the flag's own parser) and picker.flags
builds Flags without a text round trip; nb.quick_time runs lab.harness.run_scenario
(time, quick, interleaved in one worker process) into pyperf JSON and reads it back; a
picked Flags value is the picker variant's own Flags and arrives in the worker's
--lab-flags as that value; FlagLab and run_bench take at most 8 parameters. The
workload is the lab's "spin" loop on a stand-in dataset, so nothing is generated.
"""
from __future__ import annotations

import dataclasses
import inspect
import json
from pathlib import Path
from typing import Any

import ipywidgets as w
import pyperf
import pytest
from reftable_core.flags import (
    DELTA_CACHE_LRU,
    FLAG_INFO,
    PACKED_LOOKUPS,
    PACKED_READERS,
    REFNAME_SAFETY,
    Flags,
    baseline,
)

from lab import nb
from lab.measure import time as timing
from lab.scenarios import SCENARIOS, DatasetRef, Scenario

NAME = "nb-selftest"


@pytest.fixture
def spin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scenario:
    """A registered scenario timing the spin loop, on a stand-in dataset (tmp_path)."""
    monkeypatch.setattr(Scenario, "dataset",
                        lambda self, scale, datasets_dir=None: DatasetRef(tmp_path, tmp_path))
    s = dataclasses.replace(SCENARIOS["show-ref-1table"], name=NAME, workload="spin",
                            scale_params={"small": {"n": 2000}}, peer_workloads=())
    monkeypatch.setitem(SCENARIOS, NAME, s)
    return s


PICKED = Flags().replace(pq_cmp=False, packed_reader="getdelim",
                         delta_cache_limit=16 << 20, delta_cache_index="fixed:64")


def test_picker_controls_come_from_the_flags_module() -> None:
    picker = nb.FlagPicker()
    assert list(picker.controls) == list(FLAG_INFO)
    dropdowns = {n: list(c.options) for n, c in picker.controls.items()
                 if isinstance(c, w.Dropdown)}
    assert dropdowns == {"packed_reader": list(PACKED_READERS),
                         "packed_lookup": list(PACKED_LOOKUPS),
                         "refname_safety": list(REFNAME_SAFETY),
                         "delta_cache_lru": list(DELTA_CACHE_LRU)}
    texts = {n for n, c in picker.controls.items() if isinstance(c, w.Text)}
    assert texts == {"delta_cache_index", "delta_cache_limit"}
    assert all(isinstance(c, w.Checkbox) for n, c in picker.controls.items()
               if n not in dropdowns and n not in texts)
    assert picker.flags == Flags()
    assert nb.FlagPicker(baseline()).flags == baseline()


def test_picker_flags_need_no_spec_text(monkeypatch: pytest.MonkeyPatch) -> None:
    picker = nb.FlagPicker()
    picker.controls["pq_cmp"].value = False
    picker.controls["packed_reader"].value = "getdelim"
    picker.controls["delta_cache_limit"].value = "16m"       # typed: the flag's parser reads it
    picker.controls["delta_cache_index"].value = "fixed:64"

    def no_text(*_a: Any, **_k: Any) -> Flags:
        raise AssertionError("a Flags value went through its text form")
    monkeypatch.setattr(Flags, "with_spec", no_text)
    monkeypatch.setattr(Flags, "to_spec", no_text)
    assert picker.flags == PICKED


def test_picked_flags_are_the_variants_own(spin: Scenario) -> None:
    sc = nb.with_variants(SCENARIOS[NAME], {nb.PICKER: PICKED})
    (picked,) = [v for v in sc.variants("small") if v.label == nb.PICKER]
    assert picked.flags is PICKED
    assert [label for label, _ in sc.extra_variants][-1] == nb.PICKER


def test_run_bench_gives_the_worker_the_picked_flags(
        spin: Scenario, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    argv: dict[str, list[str]] = {}
    real = timing.time_worker

    def recording(cmd: list[str], *args: Any, **kw: Any) -> list[float]:
        argv[cmd[cmd.index("--name") + 1]] = cmd
        return real(cmd, *args, **kw)
    monkeypatch.setattr(timing, "time_worker", recording)
    r = nb.run_bench(NAME, ["all-on"], PICKED, tmp_path / "results", tmp_path,
                     nb.Settings(rounds=None), peers=False)
    assert [v.label for v in r.variants] == ["all-on", nb.PICKER]
    cmd = argv[f"{NAME}[{nb.PICKER}]"]
    assert Flags().with_spec(cmd[cmd.index("--lab-flags") + 1]) == PICKED
    assert all(v.values for v in r.variants)
    assert any(q["slow"] == nb.PICKER and q["fast"] == "all-on" for q in r.ratios)


def test_quick_time_writes_pyperf_json_and_reads_it_back(spin: Scenario,
                                                         tmp_path: Path) -> None:
    variants = {"all on": Flags(), "all off": baseline(), nb.PICKER: PICKED}
    out = tmp_path / "results"
    result = nb.quick_time(NAME, variants, out, tmp_path, nb.Settings(quick_rounds=2))
    (run_dir,) = out.iterdir()
    assert run_dir.name.endswith("-quick")
    suite = pyperf.BenchmarkSuite.load(str(run_dir / f"{NAME}.interleave.json"))
    names = {b.get_name(): b for b in suite.get_benchmarks()}
    assert sorted(names) == sorted(f"{NAME}[{label}]" for label in variants)
    assert all(len(b.get_values()) == 2 for b in names.values())
    spec = json.loads((run_dir / f"{NAME}.interleave-spec.json").read_text())
    flags = {v["label"]: Flags().with_spec(v["flags"]) for v in spec["variants"]}
    assert flags == variants and spec["warmups"] == 1
    assert [v.label for v in result.variants] == list(variants)
    times = nb.quick_times(result)
    assert list(times) == list(variants)
    for label, v in times.items():
        values = names[f"{NAME}[{label}]"].get_values()
        assert v["best"] == min(values) and v["best"] <= v["mean"]


def test_flag_lab_quick_look_shows_a_plot_and_a_table(spin: Scenario,
                                                       tmp_path: Path) -> None:
    lab = nb.FlagLab({NAME: ["all-on"]}, NAME, {"pq_cmp off": "pq_cmp=off"}, tmp_path,
                     tmp_path / "results", nb.Settings(quick_rounds=1))
    lab.picker.controls["mmap"].value = False
    plot, table = lab.quick_look().children
    assert isinstance(plot, w.Image) and plot.value[:4] == b"\x89PNG"
    assert list(lab.times) == ["all on", "all off", nb.PICKER, "pq_cmp off"]
    assert "mmap=off" in table.value


def test_few_parameters() -> None:
    for fn in (nb.FlagLab.__init__, nb.run_bench, nb.quick_time):
        params = [p for p in inspect.signature(fn).parameters if p != "self"]
        assert len(params) <= 8, (fn.__qualname__, params)
