"""The ref-filter framework (builtin/ref_filter: format, quoting, ref atoms, sort,
filters) against the provisioned git: the same stdout bytes, stderr and status on
reftable and files repositories with annotated, nested and lightweight tags, a
merge, non-ASCII names, symrefs and a version-numbered tag series; and the pure
pieces (quoting, color parsing, versioncmp, strip components) by git's rules.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.labrun import run_lab
from tests.lab.test_for_each_ref import NOCOMPACT, NOCOMPACT_ENV, _build

from reftable_core.builtin.ref_filter.quoting import perl_quote, python_quote, sq_quote, tcl_quote
from reftable_core.builtin.ref_filter.ref_atoms import (lstrip_components, parse_color,
                                                        rstrip_components)
from reftable_core.builtin.ref_filter.sort import versioncmp
from gitbin import GitRunner, find_git, hermetic_env

CASES: list[list[str]] = [
    ["--shell", "--format=%(refname) %(objectname:short)"], ["--perl", "--format=%(refname)"],
    ["--python", "--format=%(refname)%0a"], ["--tcl", "--format=%(refname) [$x]"],
    ["--shell", "--perl"], ["-s", "--no-shell", "--tcl"],
    ["--format=|%(align:20,middle)%(refname:short)%(end)|"],
    ["--format=|%(align:width=12,position=right)%(refname:lstrip=-1)%(end)|"],
    ["--shell", "--format=|%(align:30)x'%(refname:short)%(end)|"],
    ["--format=%(if)%(symref)%(then)S %(symref:short)%(else)R%(end) %(refname)"],
    ["--format=%(if:equals=commit)%(objecttype)%(then)C%(else)T%(end)"],
    ["--format=%(if:notequals=tag)%(objecttype)%(then)%(if)%(*objectname)%(then)x%(end)y%(end)"],
    ["--format=%(then)"], ["--format=%(if)x%(end)"], ["--format=%(else)"], ["--format=%(end)"],
    ["--format=%(if)%(then)%(then)%(end)"], ["--format=%(if)%(then)%(else)%(else)%(end)"],
    ["--format=%(align:5)x"], ["--format=%(align)"], ["--format=%(align:x)"],
    ["--format=%(align:position=up,3)"], ["--format=%(if:bad)"], ["--format=%(rest)"],
    ["--format=%(refname:lstrip=2) %(refname:rstrip=-2) %(refname:strip=1) %(refname:lstrip=9)"],
    ["--format=%(refname:lstrip=x)"], ["--format=%(refname:rstrip=)"],
    ["--format=%(objectsize) %(objectsize:disk) %(deltabase) %(*objectsize)"],
    ["--format=%(objectsize:bad)"], ["--format=%(deltabase:x)"], ["--format=%(HEAD:x)"],
    ["--format=%(flag) %(HEAD) %(refname)"], ["--format=%(worktreepath)|%(refname)"],
    ["--format=%(color:red)%(refname)%(color:reset)"],
    ["--color", "--format=%(color:bold red ul)%(refname)%(color:#ff0000 blue)"],
    ["--color=always", "--format=%(color:reset)x%(color:nobold)%(color:brightgreen 123)"],
    ["--color=never", "--format=%(color:green)%(refname)"], ["--color=sometimes"],
    ["--format=%(color:nocolor)"], ["--format=%(color)"],
    ["--sort=objecttype"], ["--sort=-objectsize", "--format=%(objectsize) %(refname)"],
    ["--sort=version:refname", "refs/tags"], ["--sort=-v:refname", "refs/tags"],
    ["--sort=objectname", "--sort=-objecttype"], ["--sort=*objectname"],
    ["--ignore-case", "--sort=refname", "refs/HEADS/"], ["--sort=refname:bad"],
    ["--exclude=refs/heads/b0*", "refs/heads"], ["--exclude=refs/tags/", "--exclude=refs/heads"],
    ["--points-at=HEAD~1"], ["--points-at=v1"], ["--points-at=nosuch"],
    ["--merged=HEAD~1"], ["--no-merged=HEAD~1"], ["--merged", "--no-merged=b01"],
    ["--contains=HEAD~1"], ["--no-contains", "HEAD~1"], ["--contains", "--no-contains=b00"],
    ["--merged=HEAD^{tree}"], ["--contains=HEAD^{tree}"], ["--merged=nosuch"],
    ["--include-root-refs"], ["--include-root-refs", "--format=%(refname:short)"],
    ["--format=%(ahead-behind:b01) %(refname)"], ["--format=%(ahead-behind:nosuch)"],
    ["--format=%(ahead-behind)"], ["--format=%(is-base:main) %(is-base:b01) %(refname)"],
    ["--format=%(is-base)"], ["--format=%(refname)", "--count=2", "--sort=-objectname"],
    ["--omit-empty", "--format=%(if)%(symref)%(then)%(refname)%(end)"],
    ["--shell", "--format=%(raw)"], ["--python", "--format=%(raw:size) %(raw)"],
    ["--tcl", "--format=%(refname) %(*raw)"], ["--perl", "--format=%(raw)", "refs/tags/v1"],
    ["--shell", "--sort=raw", "--format=%(raw:size)"], ["--shell", "--format=%(raw:bad)"],
    ["--python", "--format=%(foo)%(raw)"], ["--tcl", "--format=%(raw)%(foo)"],
    ["--format=%(trailers:only=0x1,unfold=010)|%(describe:tags=0x0)"],   # git_parse_maybe_bool
    # an object looked up before the refs are listed: git's files backend has filled its
    # loose ref cache (refs/replace/) without the root refs; --points-at=HEAD reads none
    ["--include-root-refs", "--merged=HEAD"], ["--include-root-refs", "--contains=HEAD~1"],
    ["--include-root-refs", "--format=%(refname) %(ahead-behind:b01)"],
    ["--include-root-refs", "--points-at=HEAD"], ["--include-root-refs", "--points-at=HEAD~1"],
    ["--include-root-refs", "--sort=is-base:b01"],
    # a sort key's ahead-behind / is-base: counted only when the format has one (git's
    # dummy format), else "" on every ref
    ["--sort=ahead-behind:b01"], ["--sort=-is-base:b01", "--format=%(refname)"],
    ["--sort=-ahead-behind:b01", "--format=%(ahead-behind:b01) %(refname)"],
    # a name more than one dwim rule resolves (refs/heads/main, refs/tags/main) is warned
    # of, once per lookup
    ["--points-at=main"], ["--merged=main"], ["--format=%(ahead-behind:main)"],
    # a symref whose chain ends at a packed ref: "symref,packed" (git's resolve flags)
    ["--include-root-refs", "--format=%(flag)|%(refname)|%(symref)"],
]


@pytest.fixture(scope="module")
def gitrun(tmp_path_factory: pytest.TempPathFactory) -> GitRunner:
    home = tmp_path_factory.mktemp("home")
    return GitRunner(find_git(), hermetic_env(home))


def _more(git: GitRunner, path: Path) -> Path:
    g = lambda *a: git.out([*NOCOMPACT, *a], cwd=path, env=NOCOMPACT_ENV)
    g("checkout", "-q", "-b", "side", "HEAD~1")
    g("commit", "-q", "--allow-empty", "-m", "side")
    g("checkout", "-q", "main")
    g("merge", "-q", "--no-ff", "-m", "merge side", "side")
    for v in ("1.2", "1.10", "1.2-rc1", "1.9", "2.0"):
        g("tag", f"v{v}")
    g("tag", "-a", "-m", "msg", "ünï-tag")
    return path


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory, gitrun: GitRunner) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("reffilter")
    out = {"reftable": _more(gitrun, _build(tmp, gitrun, "r", "reftable", "sha1")),
           "files": _more(gitrun, _build(tmp, gitrun, "f", "files", "sha1"))}
    gitrun.run(["pack-refs", "--all"], cwd=out["files"])
    gitrun.run(["update-ref", "refs/heads/loose", "HEAD"], cwd=out["files"])
    gitrun.run(["gc", "-q"], cwd=out["reftable"])            # packs: deltas, disk sizes
    return out


@pytest.mark.parametrize("shape", ["reftable", "files"])
@pytest.mark.parametrize("opts", CASES, ids=lambda o: " ".join(o))
def test_matches_git(repos: dict[str, Path], gitrun: GitRunner, shape: str,
                     opts: list[str]) -> None:
    path = repos[shape]
    g = gitrun.run(["for-each-ref", *opts], cwd=path, check=False)
    status, out, err = run_lab(["for-each-ref", *opts], cwd=path)
    assert (status, out, err) == (g.returncode, g.stdout, g.stderr)


@pytest.mark.parametrize("shape", ["reftable", "files"])
def test_stdin_patterns(repos: dict[str, Path], gitrun: GitRunner, shape: str) -> None:
    path = repos[shape]
    pats = b"refs/tags/v1*\nrefs/heads/b0\n"
    g = gitrun.run(["for-each-ref", "--stdin"], cwd=path, check=False, input=pats)
    assert run_lab(["for-each-ref", "--stdin"], cwd=path, stdin=pats) == \
        (g.returncode, g.stdout, g.stderr)
    g = gitrun.run(["for-each-ref", "--stdin", "x"], cwd=path, check=False, input=pats)
    assert run_lab(["for-each-ref", "--stdin", "x"], cwd=path, stdin=pats) == \
        (g.returncode, g.stdout, g.stderr)


def test_quoting_as_quote_c() -> None:
    assert sq_quote(b"a'b!c") == b"'a'\\''b'\\!'c'"
    assert perl_quote(b"a'b\\") == b"'a\\'b\\\\'"
    assert python_quote(b"a'\nb") == b"'a\\'\\nb'"
    assert tcl_quote(b'[a]{$}"\\\t') == b'"\\[a\\]\\{\\$\\}\\"\\\\\\t"'
    assert sq_quote(b"a\0b") == b"'a'"                    # a C string stops at NUL


def test_color_parse_as_color_c() -> None:
    assert parse_color("red") == b"\033[31m"
    assert parse_color("reset") == b"\033[m"
    assert parse_color("reset red") == b"\033[;31m"
    assert parse_color("bold red blue") == b"\033[1;31;44m"
    assert parse_color("#ff0000") == b"\033[38;2;255;0;0m"
    assert parse_color("no-bold") == b"\033[22m"
    assert parse_color("normal") == b""
    assert parse_color("red blue green") is None
    assert parse_color("nocolor") is None


def test_versioncmp_and_strip() -> None:
    assert versioncmp(b"v1.2", b"v1.10", []) < 0
    assert versioncmp(b"v1.10", b"v1.9", []) > 0
    assert versioncmp(b"v1.0-rc1", b"v1.0", [b"-rc"]) < 0
    assert versioncmp(b"a", b"a", []) == 0
    assert lstrip_components(b"refs/heads/a/b", 2) == b"a/b"
    assert lstrip_components(b"refs/heads/a/b", -1) == b"b"
    assert lstrip_components(b"refs/heads", 5) == b""
    assert rstrip_components(b"refs/heads/a/b", 1) == b"refs/heads/a"
    assert rstrip_components(b"refs/heads/a/b", -1) == b"refs"


@pytest.mark.parametrize("position", ["left", "middle", "right"])
def test_align_counts_display_width_as_git(make_repo, gitrun: GitRunner, position: str) -> None:
    """%(align) pads to git's utf8_strnwidth: a newline, a tab and other control
    characters 0, zero-width (a combining mark, U+200B, U+1160) 0, the soft hyphen 1, a
    wide character 2 (the lab counted every control character as 1)."""
    path = make_repo("w", ref_format="files")
    gitrun.run(["commit", "-q", "--allow-empty", "-m", "c"], cwd=path)
    message = "a\u200bb\te\u0301\u6f22\u00ad\u1160x\x7f!\n\nbody\twith\ttabs\n"
    gitrun.run(["tag", "-a", "-m", message, "wide"], cwd=path)
    for atom in ("contents:subject", "contents", "contents:body", "body"):
        fmt = f"--format=[%(align:24,{position})%(" + atom + ")%(end)]"
        g = gitrun.run(["for-each-ref", fmt, "refs/tags"], cwd=path, check=False)
        assert run_lab(["for-each-ref", fmt, "refs/tags"], cwd=path) == \
            (g.returncode, g.stdout, g.stderr), atom
