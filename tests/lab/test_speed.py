"""lab.speed: whole commands of the lab beside git's, counted, timed and compared."""
from __future__ import annotations

from pathlib import Path

import pytest

from gitbin import REPO_ROOT, GitRunner
from lab import speed
from lab.measure.instructions import available


def _repo(git: GitRunner, make_repo) -> str:
    repo = make_repo(ref_format="reftable")
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=repo)
    for i in range(30):
        git.run(["branch", f"b{i:02d}"], cwd=repo)
    return str(repo / ".git")


def test_rows_compare_output_and_ratio(git: GitRunner, make_repo) -> None:
    gitdir = _repo(git, make_repo)
    here = speed.build("this checkout", (str(REPO_ROOT / "core"), str(REPO_ROOT)))
    rows = [speed.Row(speed.Workload("show-ref b07", gitdir, ("show-ref", "b07"),
                                     ("--git-dir", gitdir, "show-ref", "b07"))),
            # the lab asked for another ref than git: its output differs, and says so
            speed.Row(speed.Workload("show-ref, other ref", gitdir, ("show-ref", "b07"),
                                     ("--git-dir", gitdir, "show-ref", "b08")))]
    speed.measure(rows, here, repeat=2, jobs=1, count=False, log=lambda s: None)
    assert rows[0].git.status == 0 and rows[0].lab["this checkout"].same_output is True
    assert rows[1].lab["this checkout"].same_output is False
    assert rows[0].lab["this checkout"].cpu > 0
    text = speed.table(rows, here, None)
    assert text.count("\n| show-ref") == 2 and "**output differs**" in text
    assert text.splitlines()[0] == "| workload | git | this checkout |"


@pytest.mark.skipif(not available(), reason="valgrind (and gcc for detrand) needed")
def test_counts_repeat_to_the_instruction(git: GitRunner, make_repo) -> None:
    gitdir = _repo(git, make_repo)
    here = speed.build("this checkout", (str(REPO_ROOT / "core"), str(REPO_ROOT)))
    w = speed.Workload("show-ref", gitdir, ("show-ref", "b07"),
                       ("--git-dir", gitdir, "show-ref", "b07"))
    counts = []
    for _ in range(2):
        rows = [speed.Row(w)]
        speed.measure(rows, here, repeat=1, jobs=2, count=True, log=lambda s: None)
        counts.append((rows[0].git.instructions, rows[0].lab["this checkout"].instructions))
    assert counts[0] == counts[1]
    assert counts[0][1] > counts[0][0] > 0        # the lab's Python start-up alone is more
    text = speed.table(rows, here, 1)
    assert "x**)" in text


def test_a_writing_workload_runs_each_time_on_a_new_copy(git: GitRunner, make_repo) -> None:
    """update-ref --stdin creates refs: every run (git's, the lab's, each repeat) starts
    on a new copy of the repository, the template is never written, and both sides
    create every ref (git reads the lab's copy and the lab git's)."""
    gitdir = _repo(git, make_repo)
    tip = git.run(["rev-parse", "HEAD"], cwd=gitdir).stdout.strip().decode()
    script = "".join(f"create refs/heads/new-{i} {tip}\n" for i in range(40)).encode()
    w = speed.Workload("update-ref", gitdir, ("update-ref", "--stdin"),
                       ("--git-dir", gitdir, "update-ref", "--stdin"), stdin=script, fresh=True)
    here = speed.build("this checkout", (str(REPO_ROOT / "core"), str(REPO_ROOT)))
    rows = [speed.Row(w)]
    speed.measure(rows, here, repeat=2, jobs=1, count=False, log=lambda s: None)
    assert rows[0].git.status == 0 and rows[0].lab["this checkout"].same_output is True
    refs = git.run(["for-each-ref", "--format=%(refname)"], cwd=gitdir).stdout.split()
    assert not [r for r in refs if b"new-" in r]                    # the template untouched
    for slot in (0, 1):                                 # git's copy (cell 0), the lab's (1)
        ran = f"{gitdir}.speed-{slot:03d}"
        made = git.run(["for-each-ref", "--format=%(refname)", "refs/heads/new-*"],
                       cwd=ran).stdout.split()
        assert len(made) == 40, slot
    for slot in (0, 1):                                             # git's run, the lab's
        copy = speed.fresh_argv(w, [gitdir], slot)[0]
        assert copy != gitdir
        # fresh_argv made it anew: the template's refs, none of the script's yet
        assert not git.run(["for-each-ref", "refs/heads/new-*"], cwd=copy).stdout
        git.run(["update-ref", "--stdin"], cwd=copy, input=script)
        made = git.run(["for-each-ref", "--format=%(refname)", "refs/heads/new-*"],
                       cwd=copy).stdout.split()
        assert len(made) == 40
    assert speed.fresh_argv(speed.Workload("x", gitdir, (), ()), ["a", gitdir], 3) == \
        ["a", gitdir]                                               # not fresh: as it is
    speed.remove_copies(rows)                       # what speed.run does once measured
    assert not list(Path(gitdir).parent.glob(Path(gitdir).name + ".speed-*"))
    assert Path(gitdir, "HEAD").is_file()                           # the template stays


def test_stages_go_through_the_stack(git: GitRunner, make_repo) -> None:
    from lab import stages
    gitdir = _repo(git, make_repo)
    git.run(["update-ref", "-d", "refs/heads/b03"], cwd=gitdir)      # a newer table, a deletion
    git.run(["branch", "-f", "b05", "HEAD"], cwd=gitdir)
    names = git.run(["for-each-ref", "--format=%(refname)"], cwd=gitdir).stdout.split()
    assert stages.run("open", gitdir) == 0
    merged = stages.run("merged", gitdir)
    assert merged == len(names) == 31 - 1     # main and b00..b29, less the deleted one
    assert stages.run("tables", gitdir) >= merged
    from reftable_core.repo import open_repo
    repo = open_repo(gitdir)
    every = 0                       # every ref record of every table, HEAD's too
    for table in repo.refs.stack.merged.readers:
        it = table.refs()
        it.seek(b"")
        every += sum(1 for _ in it)
    repo.close()
    assert stages.run("walk", gitdir) == every > stages.run("tables", gitdir)
    with pytest.raises(ValueError, match="unknown stage"):
        stages.run("nope", gitdir)
    files = make_repo("files", ref_format="files")
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=files)
    with pytest.raises(ValueError, match="not a reftable repository"):
        stages.run("tables", str(files / ".git"))
    assert stages.main(["tables"]) == 2


def test_stage_table_parts_add_up_to_the_command() -> None:
    here = speed.build("this checkout", ("core", "."))
    row = speed.Row(speed.Workload("show-ref over reftable", "g", ("show-ref", "x"), ()))
    row.git.instructions = 2000
    row.lab["this checkout"] = speed.Cell(instructions=1000 + 100 * (10 + 5 + 3))
    st = speed.Stages(counts={"open": 1000, "walk": 1000 + 100 * 4, "tables": 1000 + 100 * 10,
                              "merged": 1000 + 100 * 15},
                      records={"open": 0, "walk": 106, "tables": 104, "merged": 100})
    lines = speed.stage_table(row, here, {"this checkout": st}).splitlines()
    cells = [line.split(" | ")[-1].rstrip(" |") for line in lines[2:]]
    assert cells == [speed._g(1000), "10", "4", "5", "3", "28 (1.4x git)"]
    assert lines[-1].split(" | ")[1] == "20"         # git: 2000 instructions over 100 refs
    failed = speed.Stages(error="tables: exit 1")
    text = speed.stage_table(row, here, {"this checkout": failed})
    assert text.count("tables: exit 1") == 6


@pytest.mark.skipif(not available(), reason="valgrind (and gcc for detrand) needed")
def test_stages_are_counted(git: GitRunner, make_repo) -> None:
    gitdir = _repo(git, make_repo)
    here = speed.build("this checkout", (str(REPO_ROOT / "core"), str(REPO_ROOT)))
    st = speed.measure_stages(gitdir, here, jobs=2, log=lambda s: None)["this checkout"]
    assert not st.error and st.records["merged"] == 31
    assert st.counts["merged"] > st.counts["tables"] > st.counts["open"] > 0
    assert st.counts["tables"] > st.counts["walk"] > st.counts["open"]


def test_a_speed_run_is_saved_in_the_one_result_format(tmp_path) -> None:
    """save(): each row a lab.results.ScenarioResult with pyperf files, which the
    report reads back (the builds are peers of the harness's kind)."""
    from lab.report import load_results, markdown
    here = speed.build("this checkout", ("core", "."))
    (v,) = here
    assert v.peer and v.label == "this checkout" and here.env(v)["PYTHONPATH"] == \
        f"core{__import__('os').pathsep}."
    row = speed.Row(speed.Workload("show-ref x", tmp_path, ("show-ref", "x"),
                                   ("--git-dir", str(tmp_path), "show-ref", "x"),
                                   key="show-ref-packed"))
    row.git = speed.Cell(instructions=2000, cpu=0.01, cpus=[0.01, 0.02], status=0,
                         same_output=True)
    row.lab["this checkout"] = speed.Cell(instructions=6000, cpu=0.05, cpus=[0.05, 0.06],
                                          status=0, same_output=True)
    (path,) = speed.save(tmp_path / "speed", "small", [row], here, {})
    assert path == tmp_path / "speed-show-ref-packed.result.json"
    (r,) = load_results(tmp_path)
    by = {x.label: x for x in r.variants}
    assert by["git"].instructions == 2000 and by["this checkout"].values == [0.05, 0.06]
    q = next(q for q in r.ratios if q["measure"] == "instructions")
    assert q["ratio"] == 3.0
    assert q["in_words"] == "git: 3x fewer instructions (base: this checkout)"
    assert "speed-show-ref-packed" in markdown([r])


FAMILIES = ["refname", "objectname", "objecttype", "objectsize", "deltabase", "tree", "parent",
            "numparent", "object", "type", "tag", "*objectname", "*subject", "author",
            "authordate", "committer", "committerdate", "tagger", "taggerdate", "creator",
            "creatordate", "subject", "body", "contents", "trailers", "raw", "upstream", "push",
            "HEAD", "symref", "if", "align", "color"]


def test_for_each_ref_row_has_every_atom_family_and_gits_bytes(tmp_path, monkeypatch) -> None:
    """The for-each-ref row (issue 29): its format has every atom family, and over a small
    refs-real-shaped repository the lab's output is git's byte for byte."""
    for family in FAMILIES:
        assert f"%({family}" in speed.FOR_EACH_REF_FORMAT, family
    monkeypatch.setitem(speed.SCALES["small"], "refs-real-shaped", {"refs": 300, "commits": 40})
    (w,) = speed.workloads("small", tmp_path, [], ["for-each-ref-atoms"])
    assert w.key == "for-each-ref-atoms" and "301 refs" in w.title
    here = speed.build("this checkout", (str(REPO_ROOT / "core"), str(REPO_ROOT)))
    rows = [speed.Row(w)]
    speed.measure(rows, here, repeat=1, jobs=1, count=False, log=lambda s: None)
    assert rows[0].git.status == 0
    assert rows[0].lab["this checkout"].same_output is True


def test_for_each_ref_walks_row_is_opt_in_timed_and_gits_bytes(tmp_path, monkeypatch) -> None:
    """The walk, clock and signature atoms' row: not among the default rows, run with a
    pinned "now" on both sides, not counted (git's describe children), and the lab's bytes
    are git's."""
    for atom in ("describe", "ahead-behind", "is-base", "signature", "authordate:relative",
                 "committerdate:human"):
        assert f"%({atom}" in speed.FOR_EACH_REF_WALKS_FORMAT, atom
    monkeypatch.setitem(speed.SCALES["small"], "refs-real-shaped", {"refs": 60, "commits": 40})
    assert "for-each-ref-walks" in speed.OPT_IN
    (w,) = speed.workloads("small", tmp_path, [], ["for-each-ref-walks"])
    assert w.count is False and dict(w.env)["GIT_TEST_DATE_NOW"]
    here = speed.build("this checkout", (str(REPO_ROOT / "core"), str(REPO_ROOT)))
    rows = [speed.Row(w)]
    speed.measure(rows, here, repeat=1, jobs=1, count=True, log=lambda s: None)
    assert rows[0].git.status == 0 and rows[0].git.instructions is None
    assert rows[0].lab["this checkout"].same_output is True
    text = speed.table(rows, here, None)
    assert "—, " in text and "s (—)" in text   # no count; CPU, but no ratio: git's children


def test_walks_bytes_composed_from_batched_describe_are_gits(tmp_path, monkeypatch) -> None:
    """scripts/check_walks_bytes.py's git side (for-each-ref, then `git describe` over many
    objects at once) is the bytes of git's own run, a describe child per ref."""
    import importlib.util
    import subprocess

    from gitbin import find_git, hermetic_env
    spec = importlib.util.spec_from_file_location(
        "check_walks_bytes", REPO_ROOT / "scripts" / "check_walks_bytes.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setitem(speed.SCALES["small"], "refs-real-shaped", {"refs": 60, "commits": 40})
    monkeypatch.setattr(mod, "BATCH", 7)                     # several batches per atom
    (w,) = speed.workloads("small", tmp_path, [], ["for-each-ref-walks"])
    env = {**hermetic_env(), **dict(speed.WALKS_ENV)}
    fmt = speed.FOR_EACH_REF_WALKS_FORMAT
    real = subprocess.run([find_git(), f"--git-dir={w.gitdir}", "for-each-ref",
                           f"--format={fmt}"], env=env, capture_output=True, check=True).stdout
    assert b"-g" in real                   # some describe names have a depth and an id
    assert mod.git_bytes(find_git(), str(w.gitdir), fmt, env) == real


def test_ratio_under_one_keeps_two_significant_digits() -> None:
    assert speed._ratio(15.63) == "15.6x" and speed._ratio(1.0) == "1.0x"
    assert speed._ratio(0.0382) == "0.038x" and speed._ratio(0.5) == "0.5x"
