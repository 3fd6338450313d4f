"""`reftable-lab odb cat-file` against `git cat-file`, byte for byte: --batch-check and
--batch on names read from stdin (ids, abbreviations, refs, suffixes; missing ones
print `<name> missing` and the batch goes on), --batch-all-objects over packed and
loose objects, -t/-s/-e and `<type> <object>`; usage errors and bad names give
git's first stderr line and its exit status, no traceback."""
from __future__ import annotations

from pathlib import Path

import pytest

from gitbin import GitRunner, hermetic_env
from tests.helpers.labrun import run_lab


@pytest.fixture(scope="module")
def mgit(git_path: str, tmp_path_factory: pytest.TempPathFactory) -> GitRunner:
    return GitRunner(git_path, hermetic_env(tmp_path_factory.mktemp("home")))


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def repo(request, mgit: GitRunner, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp(f"cat-{request.param}") / "repo"
    mgit.run(["init", "-q", f"--object-format={request.param}", "-b", "main", str(d)])
    for i in range(3):
        (d / f"f{i}").write_bytes(b"x\0y %d\n" % i)
        mgit.run(["add", "."], cwd=d)
        mgit.run(["commit", "-q", "-m", f"c{i}"], cwd=d)
    mgit.run(["tag", "-a", "-m", "t", "v1", "HEAD~1"], cwd=d)
    mgit.run(["repack", "-adq"], cwd=d)
    (d / "late").write_text("loose\n")                  # loose objects after the pack
    mgit.run(["add", "late"], cwd=d)
    mgit.run(["commit", "-q", "-m", "late"], cwd=d)
    return d


def _lab(repo: Path, argv: list[str], stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    return run_lab(["odb", "cat-file", "--git-dir", str(repo / ".git"), *argv], stdin=stdin)


def _names(mgit: GitRunner, repo: Path) -> bytes:
    head = mgit.out(["rev-parse", "HEAD"], cwd=repo).strip()
    blob = mgit.out(["rev-parse", "HEAD:f1"], cwd=repo).strip()
    missing = b"0" * (len(head) - 1) + b"1"
    return b"\n".join([head, b"HEAD", b"main~1", b"v1", b"v1^{}", b"HEAD^{tree}", blob,
                       blob[:10], b"zz", missing, b"", b"  HEAD", b"HEAD extra",
                       b"refs/heads/main", b"nope~2", head.upper()]) + b"\n"


@pytest.mark.parametrize("mode", ["--batch-check", "--batch"])
def test_batch_on_stdin_equals_git(mgit: GitRunner, repo: Path, mode: str) -> None:
    names = _names(mgit, repo)
    g = mgit.run(["cat-file", mode], cwd=repo, input=names)
    got = _lab(repo, [mode], names)
    assert got == (0, g.stdout, b"")
    assert got[1].count(b" missing\n") == 6


@pytest.mark.parametrize("mode", ["--batch-check", "--batch"])
def test_batch_all_objects_equals_git(mgit: GitRunner, repo: Path, mode: str) -> None:
    g = mgit.out(["cat-file", "--batch-all-objects", mode], cwd=repo)
    assert _lab(repo, ["--batch-all-objects", mode]) == (0, g, b"")
    assert _lab(repo, [mode, "--batch-all-objects"]) == (0, g, b"")


SINGLE = [["-t", "HEAD"], ["-s", "HEAD"], ["-e", "HEAD"], ["-t", "v1"], ["-s", "v1^{}"],
          ["commit", "HEAD"], ["tree", "HEAD"], ["commit", "v1"], ["blob", "main~1^{tree}"],
          ["tag", "v1"], ["-e", "0" * 40], ["-t", "0" * 40], ["-t", "zz"], ["-s", "zz"],
          ["-e", "zz"], ["commit", "zz"], ["blob", "HEAD"], ["zz"], ["HEAD"], [],
          ["a", "b", "c"], ["-t"], ["-t", "HEAD", "HEAD"], ["-t", "-s", "HEAD"],
          ["-s", "-t", "HEAD"], ["--batch-check", "HEAD"], ["--batch-all-objects"],
          ["--batch-check", "--batch"], ["-t", "--batch"]]


@pytest.mark.parametrize("argv", SINGLE, ids=lambda a: " ".join(a) or "(none)")
def test_single_object_and_errors_equal_git(mgit: GitRunner, repo: Path, argv: list[str]) -> None:
    if "0" * 40 in argv and "sha256" in str(repo):
        argv = [a.replace("0" * 40, "0" * 64) for a in argv]
    g = mgit.run(["cat-file", *argv], cwd=repo, check=False)
    status, out, err = _lab(repo, argv)
    assert (status, out) == (g.returncode, g.stdout)
    first = g.stderr.split(b"\n", 1)[0]
    assert err == (first + b"\n" if first else b"")      # git's first line only, no usage
    assert b"Traceback" not in err
