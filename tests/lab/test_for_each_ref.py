"""`reftable-lab for-each-ref` prints exactly what git for-each-ref prints, with the
same status, on repositories the provisioned git builds: reftable (many tables,
SHA-1 and SHA-256) and files (packed + loose refs); annotated, nested, tree and
lightweight tags, symrefs (and a dangling one), non-ASCII names; every supported
format atom, patterns (prefixes, globs, "**"), --count, --sort, bad atoms and
options; missing objects and broken refs die or warn as git does.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.helpers.labrun import run_lab

from reftable_core.builtin.for_each_ref import longest_prefixes, match_name_as_path
from reftable_core.builtin.wildmatch import wildmatch
from reftable_core.flags import Flags
from reftable_core.reftable.record import REF_SYMREF, REF_VAL1, RefRecord
from reftable_core.reftable.stack import Stack, StackOptions
from gitbin import GitRunner, find_git, hermetic_env

NOCOMPACT = ["-c", "reftable.autoCompaction=false"]
NOCOMPACT_ENV = {"GIT_TEST_REFTABLE_AUTOCOMPACTION": "false"}
ALL_ATOMS = ("%(refname)|%(refname:short)|%(objectname)|%(objectname:short)|%(objecttype)|"
             "%(symref)|%(symref:short)|%(*objectname)|%(*objecttype)|%(*refname)|%(*symref)|"
             "%(objectname:short=12)|%(*objectname:short)")

OPTION_SETS: list[list[str]] = [
    [], ["--format=%(refname)"], ["--format=%(objectname) %(refname)"], [f"--format={ALL_ATOMS}"],
    ["--format", "%(refname:short)"], ["--format=%%%(refname)%41%zz%4%"], ["--format=%00x%0a"],
    ["--format=no atoms"], ["--format="], ["--omit-empty", "--format=%(symref)"],
    ["refs/tags"], ["refs/tags/"], ["refs/ta"], ["refs/heads/b0*"], ["refs/*/main"],
    ["refs/**/main"], ["**/HEAD"], ["refs/heads/[a-c]*"], ["refs/heads/[!b]*"], ["refs/heads/?/*"],
    ["refs/heads/ünï*"], ["refs/remotes/origin/", "refs/tags/v1"], ["refs/heads", "refs/heads/main"],
    ["*"], ["nomatch"], ["refs/heads/b01", "refs/heads/b05", "refs/heads/b01"],
    ["--count=3"], ["--count=0"], ["--count=1", "refs/tags"], ["--sort=-refname"],
    ["--sort=-refname", "--count=4"], ["--sort=-refname", "--sort=refname"], ["--no-sort"],
    ["--sort=refname", "--format=%(refname:short)", "refs/remotes"],
    ["--format=%(foo)"], ["--format=%(refname"], ["--format=%(objecttype:x)"],
    ["--format=%(refname:bad)"], ["--format=%(objectname:short=0)"], ["--format=%(*)"],
    ["--format=%()"], ["--format=%(*foo)"], ["--sort=bogus"], ["--sort=-"], ["--count=-1"],
    ["--count=x"], ["--count="], ["--count"], ["--bogus"], ["-h"],
]


def _build(tmp: Path, git: GitRunner, name: str, ref_format: str, object_format: str) -> Path:
    path = tmp / name
    git.run(["init", "-q", f"--ref-format={ref_format}", f"--object-format={object_format}",
             "-b", "main", str(path)])
    git.run(["config", "reftable.autoCompaction", "false"], cwd=path)
    g = lambda *a: git.out([*NOCOMPACT, *a], cwd=path, env=NOCOMPACT_ENV)
    g("commit", "-q", "--allow-empty", "-m", "one")
    g("commit", "-q", "--allow-empty", "-m", "two")
    g("tag", "-a", "-m", "annotated", "v1")
    g("tag", "light", "HEAD~1")
    g("tag", "-a", "-m", "tag of tag", "nested", "v1")
    g("tag", "-a", "-m", "tree tag", "treetag", "HEAD^{tree}")
    for i in range(8):
        g("branch", f"b{i:02d}", "HEAD~1" if i % 2 else "HEAD")
    g("branch", "-D", "b03")
    g("branch", "a/b")
    g("branch", "ünï/cödé")
    g("update-ref", "refs/remotes/origin/main", "HEAD~1")
    g("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
    g("symbolic-ref", "refs/heads/dangling", "refs/heads/nothing")
    g("update-ref", "refs/notes/x", "HEAD")
    g("update-ref", "refs/tags/main", "HEAD~1")             # makes "main" ambiguous for :short
    g("commit", "-q", "--allow-empty", "-m", "three")
    return path


@pytest.fixture(scope="module")
def gitrun(tmp_path_factory: pytest.TempPathFactory) -> GitRunner:
    home = tmp_path_factory.mktemp("home")
    return GitRunner(find_git(), hermetic_env(home))


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory, gitrun: GitRunner) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("foreachref")
    out = {
        "reftable-sha1": _build(tmp, gitrun, "r1", "reftable", "sha1"),
        "reftable-sha256": _build(tmp, gitrun, "r256", "reftable", "sha256"),
        "files-sha1": _build(tmp, gitrun, "f1", "files", "sha1"),
    }
    gitrun.run(["pack-refs", "--all"], cwd=out["files-sha1"])
    gitrun.run(["update-ref", "refs/heads/loose-after-pack", "HEAD"], cwd=out["files-sha1"])
    gitrun.run(["update-ref", "refs/heads/b01", "HEAD~1"], cwd=out["files-sha1"])  # loose shadows
    return out


def _same(gitrun: GitRunner, path: Path, opts: list[str], usage_too: bool = True) -> None:
    g = gitrun.run(["for-each-ref", *opts], cwd=path, check=False)
    status, out, err = run_lab(["for-each-ref", *opts], cwd=path)
    assert (status, out) == (g.returncode, g.stdout)
    assert err == g.stderr


@pytest.mark.parametrize("shape", ["reftable-sha1", "reftable-sha256", "files-sha1"])
@pytest.mark.parametrize("opts", OPTION_SETS, ids=lambda o: " ".join(o) or "(none)")
def test_for_each_ref_matches_git(repos: dict[str, Path], gitrun: GitRunner, shape: str,
                                  opts: list[str]) -> None:
    _same(gitrun, repos[shape], opts)


def test_output_is_real(repos: dict[str, Path]) -> None:
    """The comparisons above compare something: tags peel, symrefs show, names are listed."""
    status, out, _ = run_lab(["for-each-ref", f"--format={ALL_ATOMS}", "refs/tags/nested",
                              "refs/remotes/origin/HEAD"], cwd=repos["files-sha1"])
    lines = out.decode().splitlines()
    assert status == 0 and len(lines) == 2
    head, nested = (line.split("|") for line in lines)            # sorted by name
    assert nested[0] == "refs/tags/nested" and nested[4] == "tag" and nested[8] == "commit"
    assert head[5] == "refs/remotes/origin/main" and head[6] == "origin/main"


@pytest.mark.parametrize("shape", ["reftable-sha1", "files-sha1"])
def test_missing_objects_and_broken_refs(repos: dict[str, Path], gitrun: GitRunner, shape: str,
                                         tmp_path: Path) -> None:
    path = tmp_path / "copy"
    shutil.copytree(repos[shape], path, symlinks=True)
    for i in range(3):
        oid = gitrun.out(["hash-object", "-w", "--stdin"], cwd=path,
                         input=f"blob {i}\n".encode()).decode().strip()
        gitrun.run(["update-ref", f"refs/misc/m{i}", oid], cwd=path)
        (path / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    if shape.startswith("files"):
        heads = path / ".git" / "refs" / "heads"
        (heads / "zero").write_text("0" * 40 + "\n")
        (heads / "garbage").write_text("garbage\n")
    for opts in ([], ["--format=%(refname) %(objectname)"], ["--format=%(objecttype)"],
                 ["--format=%(*objectname)"], ["--count=1"], ["--sort=-refname"],
                 ["refs/misc/m1"], ["refs/misc/m2", "refs/heads"], ["refs/heads"]):
        _same(gitrun, path, opts)


def test_longest_prefixes_as_git() -> None:
    assert longest_prefixes([b"refs/heads/", b"refs/heads/main", b"refs/tags/v*"]) == \
        [b"refs/heads/", b"refs/tags/v"]
    assert longest_prefixes([b"refs/heads", b"refs/heads/x"]) == [b"refs/heads"]
    assert longest_prefixes([b"*"]) == [b""]
    assert longest_prefixes([b"refs/a", b"refs/b"]) == [b"refs/a", b"refs/b"]


def test_match_name_as_path() -> None:
    pats = [b"refs/heads"]
    assert match_name_as_path(pats, b"refs/heads/main")
    assert match_name_as_path(pats, b"refs/heads")
    assert not match_name_as_path(pats, b"refs/headsx/main")
    assert match_name_as_path([b"refs/he"], b"refs/he/x") and \
        not match_name_as_path([b"refs/he"], b"refs/heads/x")
    assert match_name_as_path([b"refs/heads/"], b"refs/heads/x/y")
    assert match_name_as_path([b"refs/*/main"], b"refs/heads/main")
    assert not match_name_as_path([b"refs/*"], b"refs/heads/main")


@pytest.mark.parametrize("pattern, text, expect", [
    (b"a*", b"abc", True), (b"a*", b"a/b", False), (b"a/**", b"a/b/c", True),
    (b"**/c", b"a/b/c", True), (b"a/**/c", b"a/c", True), (b"a/**/c", b"a/x/y/c", True),
    (b"a?c", b"abc", True), (b"a?c", b"a/c", False), (b"[a-c]x", b"bx", True),
    (b"[!a-c]x", b"bx", False), (b"[^a]x", b"zx", True), (b"[[:digit:]]", b"7", True),
    (b"[[:alpha:]]", b"7", False), (b"\\*", b"*", True), (b"\\*", b"a", False),
    (b"*/b", b"a/b", True), (b"*/b", b"a/x/b", False), (b"[]", b"]", False),
    (b"[]]", b"]", True), (b"[a-]", b"-", True), (b"x[/]y", b"x/y", False),
])
def test_wildmatch_cases(pattern: bytes, text: bytes, expect: bool) -> None:
    assert wildmatch(pattern, text) is expect


@pytest.mark.parametrize("shape", ["reftable-sha1", "files-sha1"])
def test_symref_to_a_broken_name_is_skipped_as_git(repos: dict[str, Path], gitrun: GitRunner,
                                                   shape: str, tmp_path: Path) -> None:
    """t1430's "for-each-ref emits warnings for broken names": a symref whose target
    fails the refname check does not resolve (git's refs_resolve_ref_unsafe without
    RESOLVE_REF_ALLOW_BAD_NAME), so for-each-ref and show-ref skip it silently, while
    the badly named refs themselves are warned about (for-each-ref) or fatal (show-ref,
    files store). Under reftable the bad names sit in a table, as t1430 writes them."""
    path = tmp_path / "copy"
    shutil.copytree(repos[shape], path, symlinks=True)
    oid = gitrun.out(["rev-parse", "HEAD"], cwd=path).decode().strip()
    symrefs = {"badname": "refs/heads/broken...ref", "broken...symref": "refs/heads/main",
               "toolong": "refs/heads/badname"}                  # two hops to the bad name
    if shape.startswith("files"):
        heads = path / ".git" / "refs" / "heads"
        (heads / "broken...ref").write_text(oid + "\n")
        for name, target in symrefs.items():
            (heads / name).write_text(f"ref: {target}\n")
    else:                          # a table written without the name check (test-tool's way)
        stk = Stack(path / ".git" / "reftable", Flags(), StackOptions(auto_compact=False))
        ui = stk.next_update_index()

        def write(wr) -> None:
            recs = [RefRecord(b"refs/heads/broken...ref", ui, REF_VAL1, bytes.fromhex(oid))]
            recs += [RefRecord(f"refs/heads/{n}".encode(), ui, REF_SYMREF, target=t.encode())
                     for n, t in symrefs.items()]
            for rec in sorted(recs, key=lambda r: r.refname):
                wr.add_ref(rec)
        stk.add(write)
        stk.close()
    for opts in ([], ["refs/heads/b*"], ["--format=%(refname) %(symref)"]):
        _same(gitrun, path, opts)
    _, out, err = run_lab(["for-each-ref"], cwd=path)
    assert b"badname" not in out and b"toolong" not in out and b"refs/heads/main" in out
    assert b"ignoring ref with broken name refs/heads/broken...symref" in err
    for opts in (["refs/heads/main"], ["--heads"], ["badname"]):
        g = gitrun.run(["show-ref", *opts], cwd=path, check=False)
        assert run_lab(["show-ref", *opts], cwd=path) == (g.returncode, g.stdout, g.stderr)


@pytest.mark.parametrize("command", [["for-each-ref"], ["show-ref"],
                                     ["for-each-ref", "--format=%(refname) %(objecttype)"]])
def test_a_closed_pipe_ends_the_program_as_git(repos: dict[str, Path], gitrun: GitRunner,
                                               command: list[str]) -> None:
    """stdout a pipe whose reader is gone (closed before the program starts): git dies
    of SIGPIPE, silently; so does the program (it printed "fatal: Broken pipe" and
    exited 128)."""
    import os
    import subprocess
    import sys
    seen = []
    for argv in ([gitrun.git, *command], [sys.executable, "-m", "lab.cli", *command]):
        r, w = os.pipe()
        os.close(r)
        try:
            proc = subprocess.run(argv, cwd=repos["files-sha1"], env=gitrun.env, stdout=w,
                                  stderr=subprocess.PIPE, check=False)
        finally:
            os.close(w)
        seen.append((proc.returncode, proc.stderr))
    assert seen[1] == seen[0] == (-13, b"")
