"""A full hex id that is also a ref's name, in `reftable-lab update-ref` (git's get_oid_basic).

git 2.47's update-ref resolves each <new-oid>/<old-oid> by repo_get_oid; a full
40-hex id goes to get_oid_basic, which, with core.warnAmbiguousRefs on (the
default), reads every ref_rev_parse_rules candidate of the hex (repo_dwim_ref ->
expand_ref: "%s", refs/%s, refs/tags/%s, refs/heads/%s, refs/remotes/%s,
refs/remotes/%s/HEAD; all six, expand_ref stops early only when the option is off)
and warns "refname '<hex>' is ambiguous." plus advice.objectNameWarning's text when
one exists. The lab prints what git prints, and reads those candidates only when
the option is on. A name (not a full hex id) is warned of the same way, without the
advice, when more than one candidate resolves or it is also a unique abbreviated id.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from reftable_core.refs.files_backend import FilesRefStore
from reftable_core.refs.reftable_backend import ReftableRefStore

from gitbin import GitRunner
from tests.helpers.labrun import run_lab

FORMATS = ["files", "reftable"]
CONFIGS = [[], ["-c", "core.warnAmbiguousRefs=false"], ["-c", "advice.objectNameWarning=false"]]


@pytest.fixture(autouse=True)
def _own_config_parameters(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lab run in-process puts a -c into os.environ (GIT_CONFIG_PARAMETERS, for the
    processes it runs, as git does): restored after each test, so no test's -c leaks
    into the next one's in-process run."""
    monkeypatch.delenv("GIT_CONFIG_PARAMETERS", raising=False)


@pytest.fixture(params=FORMATS)
def repo(request: pytest.FixtureRequest, make_repo, git: GitRunner) -> Path:
    path = make_repo("r", ref_format=request.param)
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=path)
    return path


def _tip(git: GitRunner, repo: Path) -> str:
    return git.out(["rev-parse", "HEAD"], cwd=repo).decode().strip()


def _same(git: GitRunner, repo: Path, args: list[str], stdin: bytes = b"") -> bytes:
    """args run by the lab in repo and by git in a copy: same status, stdout, stderr,
    refs; the stderr."""
    twin = repo.with_name(repo.name + "-git")
    shutil.rmtree(twin, ignore_errors=True)
    shutil.copytree(repo, twin, symlinks=True)
    got = run_lab(args, cwd=repo, stdin=stdin)
    p = git.run(args, cwd=twin, input=stdin, check=False)
    assert got == (p.returncode, p.stdout, p.stderr), args
    refs = ["for-each-ref"]
    assert git.out(refs, cwd=repo) == git.out(refs, cwd=twin), args
    return p.stderr


@pytest.mark.parametrize("config", CONFIGS, ids=["default", "warn-off", "advice-off"])
@pytest.mark.parametrize("candidate", ["refs/heads/%s", "refs/tags/%s", "refs/remotes/%s/HEAD"])
def test_the_warning_is_gits(git: GitRunner, repo: Path, config: list[str],
                             candidate: str) -> None:
    tip = _tip(git, repo)
    git.run(["update-ref", candidate % tip, "HEAD"], cwd=repo)
    warning = f"warning: refname '{tip}' is ambiguous.\n".encode()
    err = _same(git, repo, [*config, "update-ref", "--stdin"],
                f"create refs/heads/a {tip}\ncreate refs/heads/b {tip}\n".encode())
    assert err.count(warning) == (0 if config == CONFIGS[1] else 2)
    assert (b"advice.objectNameWarning" in err) == (config == [])
    err = _same(git, repo, [*config, "update-ref", "refs/heads/c", tip, "0" * 40])
    assert err.count(warning) == (0 if config == CONFIGS[1] else 1)   # the new value; 0s are no ref


def test_no_warning_without_such_a_ref(git: GitRunner, repo: Path) -> None:
    tip = _tip(git, repo)
    assert _same(git, repo, ["update-ref", "--stdin"], f"create refs/heads/a {tip}\n".encode()) \
        == b""


@pytest.mark.parametrize("config", [[], ["-c", "core.warnAmbiguousRefs=false"]],
                         ids=["on", "off"])
def test_creating_refs_reads_the_candidates(monkeypatch: pytest.MonkeyPatch, git: GitRunner,
                                            repo: Path, config: list[str]) -> None:
    """Each create line's hex is read under all six names when the option is on (once
    per line: git repeats the check for each), under none when it is off."""
    tip = _tip(git, repo)
    names: list[bytes] = []
    for store in (FilesRefStore, ReftableRefStore):
        def read(self, name: bytes, _orig=store.read_ref):  # type: ignore[no-untyped-def]
            names.append(name)
            return _orig(self, name)
        monkeypatch.setattr(store, "read_ref", read)
    script = "".join(f"create refs/heads/n{i} {tip}\n" for i in range(3)).encode()
    assert run_lab([*config, "update-ref", "--stdin"], cwd=repo, stdin=script)[0] == 0
    candidates = [r % tip.encode() for r in (b"%s", b"refs/%s", b"refs/tags/%s",
                                             b"refs/heads/%s", b"refs/remotes/%s",
                                             b"refs/remotes/%s/HEAD")]
    read = [n for n in names if tip.encode() in n]
    assert read == (candidates * 3 if not config else [])


@pytest.mark.parametrize("config", CONFIGS, ids=["default", "quiet", "no-advice"])
@pytest.mark.parametrize("value", ["main", "v1", "v1~0", "dead"])
def test_an_ambiguous_name_is_warned_of(repo: Path, git: GitRunner, config: list[str],
                                        value: str) -> None:
    """A name more than one dwim rule resolves (refs/heads/main and refs/tags/main; a
    tag and a branch v1), or one that is also a unique abbreviated id: git's
    get_oid_basic warns "refname '<name>' is ambiguous." (no advice: that is the full hex
    id's), once per name resolved; core.warnAmbiguousRefs=false is quiet."""
    oid = _tip(git, repo)
    for ref in ("refs/heads/main", "refs/tags/main", "refs/tags/v1", "refs/heads/v1",
                f"refs/heads/{oid[:4]}"):             # a branch named as its own abbreviation
        git.run(["update-ref", ref, oid], cwd=repo)
    name = oid[:4] if value == "dead" else value
    stdin = f"update refs/heads/new {name}\ncreate refs/heads/new2 {name}\n".encode()
    err = _same(git, repo, [*config, "update-ref", "--stdin"], stdin)
    assert (b"is ambiguous" in err) == (config != ["-c", "core.warnAmbiguousRefs=false"])
    assert b"Git normally never creates" not in err
