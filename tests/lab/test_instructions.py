"""lab.measure.instructions: exact, repeatable work counts under callgrind."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lab.harness import run_scenario
from lab.results import ScenarioResult
from lab.measure import instructions as counting
from lab.scenarios import SCENARIOS, DatasetRef, Scenario

pytestmark = pytest.mark.skipif(not counting.available(), reason="needs valgrind")


def _spin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scenario:
    monkeypatch.setattr(Scenario, "dataset",
                        lambda self, scale, datasets_dir=None: DatasetRef(tmp_path, tmp_path))
    return dataclasses.replace(SCENARIOS["show-ref-1table"], name="count-selftest",
                               workload="spin", scale_params={"small": {"n": 3000}},
                               peer_workloads=())


def test_two_runs_give_identical_counts_and_ratios(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    s = _spin(tmp_path, monkeypatch)
    runs = [run_scenario(s, "small", tmp_path / f"out{i}", only=["all-on", "all-off"],
                         progress=False, measures="instructions", jobs=2) for i in (1, 2)]
    counts = [{v.label: v.instructions for v in r.variants} for r in runs]
    assert counts[0] == counts[1]
    assert all(isinstance(n, float) and n > 0 for n in counts[0].values())
    ratios = [[(q["title"], q["ratio"]) for q in r.ratios] for r in runs]
    assert ratios[0] == ratios[1] and ratios[0]
    q = runs[0].ratios[0]
    assert q["measure"] == "instructions" and q["exact"] and q["ci_low"] == q["ratio"]
    assert q["published"] is None and q["work_differs"] is False   # spin: no core work
    saved = json.loads((tmp_path / "out1" / "count-selftest.result.json").read_text())
    assert not any(saved["variants"][0]["work"].values())
    assert saved["variants"][0]["summary"] is None
    loaded = ScenarioResult.from_json(saved, tmp_path / "out1")
    assert {v.label: v.instructions for v in loaded.variants} == counts[0]


def test_the_count_is_of_the_timed_region_only(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """spin's loop of n additions: 10x the n gives about 10x the count, start-up
    (hundreds of millions of instructions) cancels."""
    s = _spin(tmp_path, monkeypatch)
    small = run_scenario(s, "small", tmp_path / "a", only=["all-on"], progress=False,
                         measures="instructions").variants[0].instructions
    big = run_scenario(dataclasses.replace(s, scale_params={"small": {"n": 30_000}}), "small",
                       tmp_path / "b", only=["all-on"], progress=False,
                       measures="instructions").variants[0].instructions
    assert small is not None and big is not None
    assert 9.0 < big / small < 10.5


def test_analyse_pairs_segments_and_cancels_the_clock() -> None:
    P = counting.Part
    mark, bound = counting.MARK, counting.BOUNDARY
    parts = [P(1, 1, mark, "py", 500), P(1, 2, mark, "py", 1000), P(1, 3, bound, "py", 9),
             P(1, 4, mark, "py", 3), P(1, 5, mark, "py", 7), P(1, 6, bound, "py", 2),
             P(1, 7, mark, "py", 4), P(1, 8, mark, "py", 7 + 11), P(1, 9, bound, "py", 2),
             P(1, 10, mark, "py", 4), P(1, 11, mark, "py", 7 + 11 + 1234), P(1, 12, bound, "py", 2),
             P(1, 13, "", "py", 77)]
    c = counting.analyse({1: parts}, 1)
    assert c.instructions == 1234 and c.parts["lab_clock_pair"] == 7


def test_detrand_gives_every_process_the_same_randomness(tmp_path: Path) -> None:
    """Under count_env, os.urandom, random.Random() seeding, tempfile names and
    /dev/urandom reads are one fixed stream: the same in two processes, not
    constant within one."""
    code = ("import os, random, tempfile\n"
            "a = open('/dev/urandom', 'rb').read(8).hex()\n"
            "b = open('/dev/urandom', 'rb').read(8).hex()\n"
            "print(os.urandom(8).hex(), a, b, random.Random().random(),\n"
            "      os.path.basename(tempfile.mkdtemp(dir=os.environ['D'])))\n")
    env = counting.count_env()
    outs = []
    for i in (1, 2):
        (tmp_path / str(i)).mkdir()
        outs.append(subprocess.run([sys.executable, "-c", code],
                                   env={**env, "D": str(tmp_path / str(i))},
                                   capture_output=True, text=True, check=True).stdout.split())
    assert outs[0] == outs[1]
    assert len(set(outs[0][:3])) == 3
    plain = subprocess.run([sys.executable, "-c", "import os; print(os.urandom(8).hex())"],
                           capture_output=True, text=True, check=True).stdout.split()
    assert plain[0] != outs[0][0]


def test_a_count_gets_its_own_tmpdir_the_same_each_time() -> None:
    env = {"A": "1"}
    with counting.private_tmpdir(["x", "y"], env) as a:
        assert Path(a).is_dir() and not any(Path(a).iterdir())
        (Path(a) / "left").write_text("over")
    assert not Path(a).exists()
    with counting.private_tmpdir(["x", "y"], env) as b:
        assert b == a and not any(Path(b).iterdir())
    with counting.private_tmpdir(["x", "z"], env) as c:
        assert c != a and len(c) == len(a)


def test_a_count_does_not_depend_on_the_callers_environment_or_clock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two counts of one command are identical whatever ambient variables the shell
    had (OLDPWD after a cd, a long junk variable: the environment's size moved the
    count before count_env kept only counted_variable()s), and a counted process's
    wall clock is detrand's counter, not the system's."""
    s = _spin(tmp_path, monkeypatch)
    counts = []
    for i, (oldpwd, junk) in enumerate((("/", "x"), ("/a/much/longer/directory", "y" * 300))):
        monkeypatch.setenv("OLDPWD", oldpwd)
        monkeypatch.setenv("SOME_AMBIENT_VARIABLE", junk)
        counts.append(run_scenario(s, "small", tmp_path / f"out{i}", only=["all-on"],
                                   progress=False, measures="instructions",
                                   work=False).variants[0].instructions)
    assert counts[0] == counts[1] and counts[0]
    env = counting.count_env({"OLDPWD": "/", "PATH": "/bin", "GIT_DIR": "g"})
    assert "OLDPWD" not in env and env["PATH"] == "/bin" and env["GIT_DIR"] == "g"
    out = subprocess.run([sys.executable, "-c", "import time; print(time.time(), time.time())"],
                         env=counting.count_env(), capture_output=True, text=True,
                         check=True).stdout.split()
    assert 1700000000 <= float(out[0]) < float(out[1]) < 1700000001


def test_a_count_is_the_median_of_its_layouts(monkeypatch: pytest.MonkeyPatch) -> None:
    """count_worker counts the command once in each layout (the padding variable that
    many bytes long in its environment) and gives the median: one layout whose
    allocator state costs a percent more (as 2 of 33 paddings did for a show-ref
    variant) does not move the count."""
    seen: list[tuple[int, str]] = []

    def once(cmd, env, pad, keep):   # type: ignore[no-untyped-def]
        seen.append((pad, str(keep)))
        return counting.Count({0: 1000, 104: 1012, 232: 999, 8: 1001, 16: 1000}[pad],
                              {"lab_worker": pad})
    monkeypatch.setattr(counting, "_count_worker_in", once)
    monkeypatch.setattr(counting, "available", lambda: True)
    c = counting.count_worker(["cmd"], env={}, keep=Path("/k"))
    assert [p for p, _ in seen] == list(counting.LAYOUTS) and len(counting.LAYOUTS) >= 3
    assert seen[1][1] == f"/k/layout-{counting.LAYOUTS[1]}"
    assert c.instructions == 1000 and c.parts["lab_worker"] == 0
    assert c.parts["lab_layouts"] == "0:1000 104:1012 232:999"
    assert counting.count_worker(["cmd"], layouts=(8, 104, 16, 0, 232)).instructions == 1000
    with pytest.raises(counting.BenchError):
        counting.count_worker(["cmd"], layouts=())


def test_a_saved_count_carries_its_layouts(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Each layout's count is its own run, in one scenario run: the saved count
    carries all of them, in LAYOUTS' order, and is their median."""
    s = _spin(tmp_path, monkeypatch)
    r = run_scenario(s, "small", tmp_path / "out", only=["all-on"], progress=False,
                     measures="instructions", work=False)
    v = r.variants[0]
    _, md = counting.load_count_metadata(Path(v.instructions_json))
    layouts = [tuple(map(int, x.split(":"))) for x in md["lab_layouts"].split()]
    assert [p for p, _ in layouts] == list(counting.LAYOUTS)
    assert v.instructions == sorted(n for _, n in layouts)[1]
