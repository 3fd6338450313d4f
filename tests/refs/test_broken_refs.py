"""Broken refs and bad packed-refs files: the lab's show-ref gives git 2.47's
stdout, stderr and exit status byte for byte, with every packed_lookup and
packed_reader value. Each case builds its own files repository (main, x, y)."""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from reftable_core.flags import PACKED_LOOKUPS, PACKED_READERS, Flags
from reftable_core.reftable.record import REF_SYMREF, REF_VAL1, RefRecord
from reftable_core.reftable.stack import Stack, StackOptions

from gitbin import GitRunner
from tests.helpers.labrun import run_lab

HEADER = b"# pack-refs with: peeled fully-peeled sorted \n"
FLAG_SPECS = [f"packed_lookup={lookup},packed_reader={reader}"
              for lookup, reader in itertools.product(PACKED_LOOKUPS, PACKED_READERS)]


class Repo:
    def __init__(self, git: GitRunner, root: Path) -> None:
        self.git = git
        work = root / "repo"
        git.run(["init", "-q", "--ref-format=files", "-b", "main", str(work)])
        git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=work)
        git.run(["branch", "x"], cwd=work)
        git.run(["branch", "y"], cwd=work)
        self.gitdir = work / ".git"
        self.oid = git.run(["rev-parse", "HEAD"], cwd=work).stdout.strip()
        self.packed = self.gitdir / "packed-refs"

    def pack(self, body: bytes, header: bytes = HEADER) -> None:
        """Replace every branch by packed-refs = header + body (H stands for the commit id)."""
        self.git.run(["pack-refs", "--all"], cwd=self.gitdir.parent)
        self.packed.write_bytes(header + body.replace(b"H", self.oid))

    def same_as_git(self, *args: str) -> tuple[int, bytes, bytes]:
        p = self.git.run(["--git-dir", str(self.gitdir), "show-ref", *args], check=False)
        want = (p.returncode, p.stdout, p.stderr)
        for spec in FLAG_SPECS:
            got = run_lab(["show-ref", "--git-dir", str(self.gitdir), "--flags", spec, *args])
            assert got == want, spec
        return want


@pytest.fixture()
def repo(git: GitRunner, tmp_path: Path) -> Repo:
    return Repo(git, tmp_path)


SHOW_REF_RUNS = [(), ("x",), ("m",), ("-q",), ("--branches",), ("--tags",),
                 ("--verify", "refs/heads/m"), ("--exists", "refs/heads/m"),
                 ("--verify", "refs/heads/x")]


@pytest.mark.parametrize("content", [b"garbage\n", b"", b"abc\n", b"H" + b"junk\n", b"0" * 40 + b"\n",
                                     b"1" * 40 + b"\n"])
def test_broken_loose_ref(repo: Repo, content: bytes) -> None:
    (repo.gitdir / "refs" / "heads" / "m").write_bytes(content.replace(b"H", repo.oid))
    for args in SHOW_REF_RUNS:
        repo.same_as_git(*args)
    assert repo.same_as_git()[0] == 128


def test_broken_loose_ref_dies_after_earlier_refs(repo: Repo) -> None:
    (repo.gitdir / "refs" / "heads" / "w").write_bytes(b"garbage\n")
    rc, out, err = repo.same_as_git()
    assert rc == 128 and out.endswith(b" refs/heads/main\n")
    assert err == b"fatal: git show-ref: bad ref refs/heads/w (" + b"0" * 40 + b")\n"


def test_loose_ref_with_bad_name(repo: Repo) -> None:
    (repo.gitdir / "refs" / "heads" / "a..b").write_bytes(repo.oid + b"\n")
    for args in [(), ("b",), ("--verify", "refs/heads/a..b"), ("--exists", "refs/heads/a..b")]:
        repo.same_as_git(*args)


def test_symref_to_broken_ref_is_skipped(repo: Repo) -> None:
    (repo.gitdir / "refs" / "heads" / "g").write_bytes(b"garbage\n")
    (repo.gitdir / "refs" / "heads" / "s").write_bytes(b"ref: refs/heads/g\n")
    for args in [("s",), ("--verify", "refs/heads/s"), ("--exists", "refs/heads/s")]:
        repo.same_as_git(*args)


def test_exclude_existing_counts_broken_refs(repo: Repo) -> None:
    (repo.gitdir / "refs" / "heads" / "m").write_bytes(b"garbage\n")
    p = repo.git.run(["--git-dir", str(repo.gitdir), "show-ref", "--exclude-existing"],
                     input=b"refs/heads/m\nrefs/heads/q\n", check=False)
    got = run_lab(["show-ref", "--git-dir", str(repo.gitdir), "--exclude-existing"],
                  stdin=b"refs/heads/m\nrefs/heads/q\n")
    assert got == (p.returncode, p.stdout, p.stderr) == (0, b"refs/heads/q\n", b"")


PACKED_CASES = {
    "bad name": b"H refs/heads/main\nH refs/heads/x\nH refs/heads/y\nH refs/heads/a..b\n",
    "bad name sorted in": b"H refs/heads/a..b\nH refs/heads/main\nH refs/heads/x\nH refs/heads/y\n",
    "junk mid-file": b"H refs/heads/main\nH refs/heads/x\njunk\nH refs/heads/y\n",
    "leading peel line": b"^H\nH refs/heads/main\n",
    "spaces line": b"H refs/heads/main\n          \nH refs/heads/y\n",
    "dangerous name": b"H /etc/passwd\nH refs/heads/main\n",
    "unterminated": b"H refs/heads/main\nH refs/heads/y",
    "two peel lines": b"H refs/heads/main\n^H\n^H\nH refs/heads/x\n",
    "no separator": b"H refs/heads/main\nHXrefs/heads/x\n",
    "names outside refs/": b"H FOO\nH foo/bar\nH refs/heads/main\nH zzz/q\n",
    "long junk": b"H refs/heads/main\n" + b"j" * 100 + b"\nH refs/heads/y\n",
}
PACKED_RUNS = [(), ("y",), ("--branches",), ("--verify", "refs/heads/main"),
               ("--verify", "refs/heads/x"), ("--verify", "refs/heads/y"),
               ("--verify", "refs/heads/nope"), ("--exists", "refs/heads/y"),
               ("--exists", "refs/heads/a..b"), ("--verify", "refs/heads/a..b")]


@pytest.mark.parametrize("header", [HEADER, b""], ids=["sorted", "no-header"])
@pytest.mark.parametrize("case", sorted(PACKED_CASES))
def test_bad_packed_refs(repo: Repo, case: str, header: bytes) -> None:
    repo.pack(PACKED_CASES[case], header)
    for args in PACKED_RUNS:
        repo.same_as_git(*args)


def test_junk_mid_file_lists_refs_before_it(repo: Repo) -> None:
    repo.pack(PACKED_CASES["junk mid-file"])
    rc, out, err = repo.same_as_git()
    assert (rc, out.count(b"\n")) == (128, 2) and out.endswith(b" refs/heads/x\n")
    assert err == f"fatal: unexpected line in {repo.packed}: junk\n".encode()
    assert repo.same_as_git("--verify", "refs/heads/y")[0] == 0


def test_crlf_packed_refs(repo: Repo) -> None:
    repo.git.run(["pack-refs", "--all"], cwd=repo.gitdir.parent)
    repo.packed.write_bytes(repo.packed.read_bytes().replace(b"\n", b"\r\n"))
    for args in [(), ("main",), ("--verify", "refs/heads/main"), ("--exists", "refs/heads/main")]:
        repo.same_as_git(*args)


def test_packed_refs_is_a_directory(repo: Repo) -> None:
    repo.git.run(["pack-refs", "--all"], cwd=repo.gitdir.parent)
    repo.packed.unlink()
    repo.packed.mkdir()
    for args in [(), ("--verify", "refs/heads/main"), ("--exists", "refs/heads/main")]:
        rc, _, err = repo.same_as_git(*args)
        assert (rc, err) == (128, f"fatal: couldn't read {repo.packed}: Is a directory\n".encode())


# A reftable store whose ref names a missing object. git's show-ref iterates broken refs
# too (GIT_REF_PARANOIA is on by default: no object lookup per ref in the iterator): only a
# ref that matches is looked up (show_one), and a missing object is then fatal ("bad
# ref", 128); a ref that does not match is never looked up, whatever its object.
REFTABLE_RUNS = [(), ("main",), ("x",), ("lost",), ("nomatch",), ("-q",), ("-q", "lost"),
                 ("--branches",), ("--tags",), ("--head",), ("--hash", "lost"),
                 ("--verify", "refs/tags/lost"), ("--exists", "refs/tags/lost"),
                 ("--verify", "refs/heads/x")]


@pytest.mark.parametrize("flags", ["", "mmap=off,single_subiter_bypass=off"])
def test_reftable_ref_to_missing_object(git: GitRunner, tmp_path: Path, flags: str) -> None:
    work = tmp_path / "repo"
    git.run(["init", "-q", "--ref-format=reftable", "-b", "main", str(work)])
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=work)
    git.run(["branch", "x"], cwd=work)
    blob = git.run(["hash-object", "-w", "--stdin"], cwd=work, input=b"lost\n").stdout.strip().decode()
    git.run(["update-ref", "refs/tags/lost", blob], cwd=work)
    (work / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    gitdir = work / ".git"
    statuses = set()
    for args in REFTABLE_RUNS:
        p = git.run(["--git-dir", str(gitdir), "show-ref", *args], check=False)
        got = run_lab(["show-ref", "--git-dir", str(gitdir), *(["--flags", flags] if flags else []),
                       *args])
        assert got == (p.returncode, p.stdout, p.stderr), args
        statuses.add(p.returncode)
    assert statuses == {0, 1, 128}


@pytest.mark.parametrize("target", [None, b"refs/heads/main", b"refs/heads/gone"],
                         ids=["value", "symref", "dangling-symref"])
@pytest.mark.parametrize("name", [b"refs/heads/a/../../b", b"refs/heads/a..b", b"refs/heads/b"],
                         ids=["dangerous", "bad", "good"])
def test_reftable_bad_names_as_git(git: GitRunner, tmp_path: Path, name: bytes,
                                   target: bytes | None) -> None:
    """A table holding a name that fails the refname check (written without the check,
    as t1430's test-tool does): git's reftable iterator checks every name it steps
    over, matched or not, so a dangerous name is fatal to any show-ref that iterates
    past it; a merely bad one (a symref too) is shown with a zero id when it matches
    (then fatal); a dangling symref is omitted."""
    work = tmp_path / "repo"
    git.run(["init", "-q", "--ref-format=reftable", "-b", "main", str(work)])
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=work)
    oid = git.run(["rev-parse", "HEAD"], cwd=work).stdout.strip().decode()
    gitdir = work / ".git"
    stk = Stack(gitdir / "reftable", Flags(), StackOptions(auto_compact=False))
    ui = stk.next_update_index()
    rec = (RefRecord(name, ui, REF_VAL1, bytes.fromhex(oid)) if target is None else
           RefRecord(name, ui, REF_SYMREF, target=target))
    stk.add(lambda wr: wr.add_ref(rec))
    stk.close()
    for args in [(), ("main",), ("b",), ("nomatch",), ("--branches",), ("--tags",),
                 ("--verify", "refs/heads/main")]:
        p = git.run(["--git-dir", str(gitdir), "show-ref", *args], check=False)
        got = run_lab(["show-ref", "--git-dir", str(gitdir), *args])
        assert got == (p.returncode, p.stdout, p.stderr), args
