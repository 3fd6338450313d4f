"""lab.measure.allocations: the malloc-counting preload library and the measure built on it."""
from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gitbin import GitRunner
from lab.harness import run_scenario
from lab.results import ScenarioResult
from lab.measure import allocations as allocs
from lab.report import render
from lab.scenarios import SCENARIOS, DatasetRef, Scenario

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

# Allocates exactly argv[1] (<= 20000) blocks, one of five allocator calls in turn,
# and frees them all; every pointer is stored in a volatile array, so the compiler
# may not elide a malloc/free pair.
EXACT_N = r"""
#include <stdlib.h>
static void *volatile blocks[20000];
int main(int argc, char **argv) {
    int n = atoi(argv[1]);
    for (int i = 0; i < n; i++) {
        size_t size = 16 + (size_t)i;
        void *p = 0;
        switch (i % 5) {
        case 0: p = malloc(size); break;
        case 1: p = calloc(1, size); break;
        case 2: p = realloc(0, size); break;
        case 3: if (posix_memalign(&p, 64, size)) return 2; break;
        case 4: p = aligned_alloc(64, 64 * (1 + i % 3)); break;
        }
        if (!p) return 3;
        blocks[i] = p;
    }
    for (int i = 0; i < n; i++)
        free(blocks[i]);
    return 0;
}
"""


def _expected(n: int) -> tuple[int, int, int]:
    """(allocations, frees, bytes) of EXACT_N with argument n."""
    return n, n, sum(64 * (1 + i % 3) if i % 5 == 4 else 16 + i for i in range(n))


@pytest.fixture(scope="module")
def exact_n(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("exact")
    (d / "exact.c").write_text(EXACT_N)
    subprocess.run(["gcc", "-O2", "-o", str(d / "exact"), str(d / "exact.c")], check=True)
    return d / "exact"


@pytest.mark.parametrize("n", [0, 1, 1000, 12345])
def test_the_counter_is_exact_on_a_program_of_known_allocations(exact_n: Path, tmp_path: Path,
                                                                n: int) -> None:
    proc = subprocess.Popen([str(exact_n), str(n)], env=allocs.alloc_env(tmp_path))
    assert proc.wait() == 0
    totals = allocs.read_totals(tmp_path)
    assert list(totals) == [proc.pid]
    t = totals[proc.pid]
    assert t.counts == _expected(n)
    assert t.argv0 == str(exact_n) and t.maxrss > 0


def test_realloc_counts_an_allocation_and_a_free(tmp_path: Path) -> None:
    """valgrind's convention: a realloc of a block allocates one and frees one."""
    src = tmp_path / "re.c"
    src.write_text("#include <stdlib.h>\nint main(void) { void *volatile p = malloc(8);\n"
                   "p = realloc(p, 4000); p = realloc(p, 0); return p != 0; }\n")
    subprocess.run(["gcc", "-O0", "-o", str(tmp_path / "re"), str(src)], check=True)
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.Popen([str(tmp_path / "re")], env=allocs.alloc_env(out))
    assert proc.wait() == 0
    assert allocs.read_totals(out)[proc.pid].counts == (2, 2, 4008)


def test_the_library_is_built_once_per_source(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(allocs, "CACHE", tmp_path / "cache")
    first = allocs.library()
    assert first.exists() and first.parent == tmp_path / "cache"
    stamp = first.stat().st_mtime_ns
    assert allocs.library() == first and first.stat().st_mtime_ns == stamp


def _spin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int = 3000) -> Scenario:
    monkeypatch.setattr(Scenario, "dataset",
                        lambda self, scale, datasets_dir=None: DatasetRef(tmp_path, tmp_path))
    return dataclasses.replace(SCENARIOS["show-ref-1table"], name="alloc-selftest",
                               workload="spin", scale_params={"small": {"n": n}},
                               peer_workloads=())


def test_two_runs_give_identical_allocation_counts(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    s = _spin(tmp_path, monkeypatch)
    runs = [run_scenario(s, "small", tmp_path / f"out{i}", only=["all-on", "all-off"],
                         progress=False, measures="allocations", jobs=2) for i in (1, 2)]
    counts = [{v.label: (v.allocations, v.bytes_allocated) for v in r.variants} for r in runs]
    assert counts[0] == counts[1]
    assert all(a and a > 0 and b and b > 0 for a, b in counts[0].values())
    q = next(q for q in runs[0].ratios if q["measure"] == "allocations")
    assert q["exact"] and q["estimator"] == "count"
    assert q["ratio"] == 1.0 and "allocations" in q["in_words"]   # spin ignores the flags
    saved = json.loads((tmp_path / "out1" / "alloc-selftest.result.json").read_text())
    v = saved["variants"][0]
    assert v["allocations"] == counts[0][v["label"]][0]
    assert v["allocations_per_record"] == v["allocations"] / 3000
    loaded = ScenarioResult.from_json(saved, tmp_path / "out1")
    assert {v.label: (v.allocations, v.bytes_allocated) for v in loaded.variants} == counts[0]
    assert "allocs/record" in render([loaded], tmp_path / "out1").read_text()


def test_the_count_is_of_the_timed_region_only(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """spin's n additions allocate about two ints each beyond the small ints: 10x the
    n gives about 10x the count, the start-up's allocations (tens of thousands) cancel."""
    def count(n: int) -> float:
        r = run_scenario(_spin(tmp_path, monkeypatch, n), "small", tmp_path / f"o{n}",
                         only=["all-on"], progress=False, measures="allocations")
        a = r.variants[0].allocations
        assert a is not None
        return a
    small, big = count(3000), count(30_000)
    assert 9.5 < big / small < 10.5
    assert 1.8 < big / 30_000 < 2.2


def test_a_peer_is_counted_by_its_processes(make_repo: Callable[..., Path],
                                            git: GitRunner) -> None:
    """git show-ref in a small reftable repository: the worker's own Python (the
    subprocess call) is not counted, git's process minus `git --version` is, the
    same twice; a second spawn of the same git doubles nothing (the count is halved
    over the warm-up and the counted run)."""
    repo = make_repo()
    git.run(["commit", "-q", "--allow-empty", "-m", "c"], cwd=repo)
    for i in range(50):
        git.run(["branch", f"b{i}"], cwd=repo)
    cmd = [sys.executable, "-m", "lab.worker", "--workload", "git_show_ref",
           "--gitdir", str(repo / ".git"), "--params", json.dumps({"probe": "refs/heads/b7"}),
           "--allocations"]
    first = allocs.count_allocations(cmd, children=True)
    second = allocs.count_allocations(cmd, children=True)
    assert first.allocations == second.allocations > 0
    assert first.bytes_allocated == second.bytes_allocated > 0
    assert first.parts["lab_children"] == 2          # the warm-up's git and the counted one
    assert first.parts["lab_worker_allocations"] > 0  # the Python side, left out


def test_records_names_the_per_record_divisor() -> None:
    assert allocs.records({"refs": 2000, "seed": 0}) == 2000
    assert allocs.records({"commits": 300, "files": 300}) == 300
    assert allocs.records({"probe": "x"}) is None
