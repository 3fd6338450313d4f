"""The lab's git-mimicking commands against the provisioned git, byte for byte:
usage texts (-h, --help, --help-all) and parse-option errors of show-ref and
update-ref, show-ref's automatic --abbrev length on packs of different sizes,
and dump's clean failures on paths that are no table / no stack."""
from __future__ import annotations

from pathlib import Path

import pytest

from reftable_core.builtin.show_ref import default_abbrev
from gitbin import GitRunner, hermetic_env
from tests.helpers.labrun import run_lab


@pytest.fixture(scope="module")
def mgit(git_path: str, tmp_path_factory: pytest.TempPathFactory) -> GitRunner:
    return GitRunner(git_path, hermetic_env(tmp_path_factory.mktemp("home")))


@pytest.fixture(scope="module")
def repo(mgit: GitRunner, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("exact") / "repo"
    mgit.run(["init", "-q", "--ref-format=reftable", "-b", "main", str(d)])
    mgit.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=d)
    mgit.run(["tag", "-a", "-m", "t", "v1"], cwd=d)
    return d


def _same(mgit: GitRunner, repo: Path, argv: list[str]) -> tuple[int, bytes, bytes]:
    g = mgit.run(argv, cwd=repo, check=False)
    got = run_lab(argv, cwd=repo)
    assert got == (g.returncode, g.stdout, g.stderr), argv
    return got


USAGE_CASES = [
    ["show-ref", "-h"], ["show-ref", "--tags", "--help"], ["show-ref", "--tags", "--help-all"],
    ["show-ref", "--he"], ["show-ref", "--hel"], ["show-ref", "-x"], ["show-ref", "-dx"],
    ["show-ref", "--no-exclude-existing"], ["show-ref", "--no-abbrev=3"],
    ["show-ref", "--tags=1"], ["show-ref", "--abbrev=x"], ["show-ref", "--tags", "-h"],
    ["show-ref", "-h", "main"], ["show-ref", "--", "-h"],
    ["update-ref", "-h"], ["update-ref", "-d", "-h"], ["update-ref", "-hx"],
    ["update-ref", "--stdin", "--help"], ["update-ref", "--help-all"], ["update-ref", "-x"],
    ["update-ref", "--abc"], ["update-ref", "-m"], ["update-ref", "--stdin=3"],
]


@pytest.mark.parametrize("argv", USAGE_CASES, ids=" ".join)
def test_usage_and_option_errors_equal_git(mgit: GitRunner, repo: Path, argv: list[str]) -> None:
    _same(mgit, repo, argv)


def test_help_prints_the_usage_on_stdout(mgit: GitRunner, repo: Path) -> None:
    """A lone --help: git itself opens the manual; the lab prints what the builtin
    does with --help (its usage on stdout, status 129), outside a repository too."""
    for cmd in ("show-ref", "update-ref"):
        g = mgit.run([cmd, "-h"], cwd=repo, check=False)
        assert g.returncode == 129 and g.stdout.startswith(f"usage: git {cmd} ".encode())
        assert run_lab([cmd, "--help"], cwd=repo) == (129, g.stdout, b"")
        assert run_lab([cmd, "-h"], cwd=repo.parent) == (129, g.stdout, b"")


def _packed_repo(mgit: GitRunner, d: Path, blobs: int, loose: int = 0) -> Path:
    mgit.run(["init", "-q", "--bare", "-b", "main", str(d)])
    stream = [b"commit refs/heads/main\ncommitter C <c@e> 1700000000 +0000\ndata 2\nc\n"]
    for i in range(blobs):
        body = b"%d\n" % i
        stream.append(b"M 100644 inline f%d\ndata %d\n%s\n" % (i, len(body), body))
    mgit.run(["fast-import", "--quiet"], cwd=d, input=b"".join(stream))
    for i in range(loose):
        mgit.run(["hash-object", "-w", "--stdin"], cwd=d, input=b"loose %d\n" % i)
    return d


@pytest.mark.parametrize("blobs,loose", [(10, 0), (9000, 0), (17000, 0), (3, 40)])
def test_show_ref_abbrev_default_length(mgit: GitRunner, tmp_path: Path, blobs: int,
                                        loose: int) -> None:
    """8192..16383 packed objects: git abbreviates to 7 digits (the lab printed 8);
    16384..32767: 8; loose objects are not counted (approximate_object_count)."""
    d = _packed_repo(mgit, tmp_path / "r.git", blobs, loose)
    for argv in (["show-ref", "--abbrev"], ["show-ref", "--abbrev", "-s"]):
        status, out, _ = _same(mgit, d, argv)
        assert status == 0
    width = len(out.split()[0])
    assert width == default_abbrev(blobs + 2) and width == (8 if blobs > 16382 else 7)


def test_default_abbrev_formula() -> None:
    assert [default_abbrev(n) for n in (0, 1, 8191, 8192, 16383, 16384, 1 << 20, 1 << 21)] \
        == [7, 7, 7, 7, 7, 8, 11, 11]


def test_dump_stack_of_a_git_dir_and_bad_paths(mgit: GitRunner, repo: Path, tmp_path: Path) -> None:
    gitdir = repo / ".git"
    status, out, err = run_lab(["dump", "--stack", str(gitdir)])
    assert (status, err) == (0, b"")
    assert out == run_lab(["dump", "--stack", str(gitdir / "reftable")])[1]
    assert out.startswith(f"stack {gitdir / 'reftable'}\n".encode())
    assert b"tables 0" not in out and b"ref{refs/tags/v1(" in out
    empty = tmp_path / "empty"
    empty.mkdir()
    cases = {
        ("--stack", str(empty)): f"fatal: {empty}: not a reftable stack: no tables.list in it "
                                 f"(nor in {empty / 'reftable'})\n",
        ("--stack", str(tmp_path / "nope")): f"fatal: {tmp_path / 'nope'}: no such reftable "
                                             "stack directory\n",
        ("--table", str(empty)): f"fatal: {empty}: is a directory, not a reftable file\n",
        ("--table", str(gitdir / "reftable")): f"fatal: {gitdir / 'reftable'}: is a directory, "
                                               "not a reftable file (a stack: use --stack)\n",
        ("--table", str(tmp_path / "nope")): f"fatal: {tmp_path / 'nope'}: no such table\n",
    }
    for argv, msg in cases.items():
        assert run_lab(["dump", *argv]) == (128, b"", msg.encode()), argv
