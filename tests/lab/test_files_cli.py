"""`reftable-lab show-ref` / `update-ref --stdin` on files-backend repositories vs git."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("reftable_core.builtin.show_ref")


def lab(git, args: list[str], input: bytes | None = None, flags: str | None = None
        ) -> subprocess.CompletedProcess[bytes]:
    env = dict(git.env)
    env.pop("REFTABLE_LAB_FLAGS", None)
    if flags:
        env["REFTABLE_LAB_FLAGS"] = flags
    return subprocess.run([sys.executable, "-m", "lab.cli", *args], input=input, env=env,
                          capture_output=True, cwd=ROOT)


def build_files_repo(git, path: Path) -> Path:
    """Packed refs (annotated tags -> ^ lines), loose refs shadowing packed ones,
    a deleted packed ref, a symref, loose-only refs."""
    git.run(["init", "-q", "--ref-format=files", "-b", "main", str(path)])
    run = lambda *a: git.run(list(a), cwd=path)            # noqa: E731
    run("commit", "-q", "--allow-empty", "-m", "one")
    run("commit", "-q", "--allow-empty", "-m", "two")
    for i in range(12):
        run("branch", f"topic/t{i:02d}", "HEAD~1" if i % 3 else "HEAD")
    run("tag", "-a", "-m", "first", "v1.0", "HEAD~1")
    run("tag", "-a", "-m", "second", "v2.0")
    run("tag", "light", "HEAD~1")
    run("tag", "-a", "-m", "tag of tag", "v2.0-outer", "v2.0")
    run("pack-refs", "--all")
    run("commit", "-q", "--allow-empty", "-m", "three")
    run("branch", "-f", "topic/t01", "HEAD")                  # loose shadows packed
    run("branch", "loose-only")
    run("tag", "-a", "-m", "loose tag", "v3.0")                 # loose annotated tag
    run("update-ref", "-d", "refs/heads/topic/t02")            # deleted packed ref
    run("symbolic-ref", "refs/remotes/origin/HEAD", "refs/heads/main")
    run("update-ref", "refs/remotes/origin/main", "HEAD~2")
    return path


@pytest.fixture(scope="module")
def template_repo(git_path: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    from gitbin import GitRunner, hermetic_env
    base = tmp_path_factory.mktemp("files_cli")
    (base / "home").mkdir()
    runner = GitRunner(git_path, hermetic_env(base / "home"))
    return build_files_repo(runner, base / "template"), runner


@pytest.fixture()
def files_repo(template_repo: tuple[Path, object], tmp_path: Path) -> Path:
    """A fresh copy of the template repository (tests may modify it)."""
    repo = tmp_path / "files"
    shutil.copytree(template_repo[0], repo, symlinks=True)
    return repo


SHOW_REF_CASES = [
    [],
    ["-d"],
    ["--head"],
    ["--head", "-d"],
    ["--tags"],
    ["--branches"],
    ["--tags", "-d"],
    ["main"],
    ["t01"],
    ["topic/t01", "v2.0"],
    ["v2.0-outer", "-d"],
    ["does-not-exist"],
    ["--verify", "refs/heads/main"],
    ["--verify", "refs/heads/topic/t01"],
    ["--verify", "refs/heads/topic/t02"],
    ["--verify", "refs/heads/does-not-exist"],
    ["--verify", "-d", "refs/tags/v1.0"],
    ["--verify", "-d", "refs/tags/v3.0"],
    ["--verify", "HEAD"],
    ["--verify", "main"],
    ["--verify", "-q", "refs/heads/does-not-exist"],
    ["--exists", "refs/heads/main"],
    ["--exists", "refs/heads/topic/t02"],
    ["-s", "--tags"],
    ["--hash=12", "main"],
    ["--abbrev", "-d", "--tags"],
    ["refs/remotes/origin/HEAD"],
]


@pytest.mark.parametrize("args", SHOW_REF_CASES, ids=[" ".join(a) or "(none)" for a in SHOW_REF_CASES])
def test_show_ref_matches_git(git, template_repo, args: list[str]) -> None:
    files_repo = template_repo[0]
    gitdir = str(files_repo / ".git")
    theirs = git.run(["show-ref", *args], cwd=files_repo, check=False)
    ours = lab(git, ["show-ref", "--git-dir", gitdir, *args])
    assert (ours.stdout, ours.returncode) == (theirs.stdout, theirs.returncode), ours.stderr


@pytest.mark.parametrize("flags", ["packed_lookup=parse_all,packed_reader=fgetc,refname_safety=normalize",
                                   "packed_lookup=parse_all,packed_reader=getc_unlocked",
                                   "packed_lookup=parse_all,packed_reader=getdelim",
                                   "packed_lookup=bsearch,packed_reader=mmap"])
def test_show_ref_every_reader(git, template_repo, flags: str) -> None:
    files_repo = template_repo[0]
    gitdir = str(files_repo / ".git")
    for args in (["-d"], ["--verify", "refs/tags/v1.0"], ["--verify", "refs/heads/nope"]):
        theirs = git.run(["show-ref", *args], cwd=files_repo, check=False)
        ours = lab(git, ["show-ref", "--git-dir", gitdir, *args], flags=flags)
        assert (ours.stdout, ours.returncode) == (theirs.stdout, theirs.returncode)


def _state(git, repo: Path) -> dict[str, bytes]:
    """Every ref, every reflog file, packed-refs presence of each ref."""
    out = {"show-ref": git.run(["show-ref", "--head", "-d"], cwd=repo, check=False).stdout,
           "for-each-ref": git.out(["for-each-ref", "--format=%(refname) %(objectname) %(symref)"],
                                   cwd=repo)}
    out["dirs"] = "\n".join(sorted(str(p.relative_to(repo)) for p in (repo / ".git").rglob("*")
                                   if p.is_dir() and "objects" not in p.parts)).encode()
    logs = repo / ".git" / "logs"
    if logs.exists():
        for p in sorted(logs.rglob("*")):
            if p.is_file():
                out["log:" + str(p.relative_to(logs))] = p.read_bytes()
    return out


def _oids(git, repo: Path) -> dict[str, str]:
    rp = lambda r: git.out(["rev-parse", r], cwd=repo).decode().strip()  # noqa: E731
    return {"head": rp("HEAD"), "one": rp("HEAD~2"), "two": rp("HEAD~1"),
            "tag": rp("refs/tags/v2.0"), "blob": git.out(["hash-object", "-w", "--stdin"],
                                                          cwd=repo, input=b"x\n").decode().strip()}


def _update_beside_git(git, files_repo: Path, tmp_path: Path, script: str) -> None:
    """The update-ref --stdin script by git in files_repo and by the lab in a copy of it:
    the same status, stderr and refs, reflogs and directories after."""
    mine = tmp_path / "mine"
    shutil.copytree(files_repo, mine, symlinks=True)
    text = script.format(**_oids(git, files_repo)).encode()
    theirs = git.run(["update-ref", "--stdin"], cwd=files_repo, input=text, check=False)
    ours = lab(git, ["update-ref", "--git-dir", str(mine / ".git"), "--stdin"], input=text)
    assert (ours.returncode, ours.stderr) == (theirs.returncode, theirs.stderr)
    assert _state(git, mine) == _state(git, files_repo)


UPDATE_SCRIPTS = [
    "update refs/heads/new {head}\n",
    "create refs/heads/new2 {one}\n",
    "update refs/heads/main {one} {head}\n",                       # HEAD's branch: HEAD log too
    "update HEAD {one}\n",                                          # through the symref
    "update refs/heads/topic/t01 {two}\n",                          # loose over packed
    "update refs/heads/topic/t03 {head} {two}\n",                   # packed only, old matches
    "update refs/heads/topic/t03 {head} {head}\n",                  # old mismatch
    "delete refs/heads/topic/t04\n",                                # packed only: rewrite packed-refs
    "delete refs/heads/topic/t01\n",                                # loose and packed
    "delete refs/heads/loose-only {head}\n",
    "delete refs/heads/loose-only {one}\n",                         # wrong old
    "delete refs/tags/v1.0\n",                                      # packed with ^ line
    "create refs/heads/main {one}\n",                               # already exists
    "verify refs/heads/main {head}\n",
    "verify refs/heads/main {one}\n",
    "verify HEAD {head}\n",
    "update refs/heads/main {head} {head}\n",                     # no change: nothing written
    "verify refs/heads/nope 0000000000000000000000000000000000000000\n",
    "create refs/heads/topic {head}\n",                             # D/F: refs/heads/topic/... exist
    "create refs/heads/main/sub {head}\n",                          # D/F: refs/heads/main exists
    "update refs/tags/new {tag}\n",
    "update refs/heads/blobby {blob}\n",                            # non-commit on a branch
    "update refs/heads/a {head}\nupdate refs/heads/b {one}\ndelete refs/heads/topic/t05\n",
    "start\nupdate refs/heads/x {head}\nprepare\ncommit\n",
    "start\nupdate refs/heads/x {head}\nabort\n",
    "update refs/heads/dup {head}\nupdate refs/heads/dup {one}\n",
    "delete refs/heads/does-not-exist\n",
    "delete refs/heads/main\n",                                    # HEAD's branch: HEAD log entry
    "update refs/heads/deep/er/ref {head}\ndelete refs/heads/topic/t00\n",
    "update refs/notes/commits {head}\n",
]


# the first ones run by default, the rest with -m slow (each case costs ~1 s of processes)
CORE_SCRIPTS = 12


@pytest.mark.parametrize("script", [
    pytest.param(s, marks=() if i < CORE_SCRIPTS else pytest.mark.slow,
                 id=s.strip().replace("\n", " | ")[:60]) for i, s in enumerate(UPDATE_SCRIPTS)])
def test_update_ref_stdin_matches_git(git, files_repo: Path, tmp_path: Path, script: str) -> None:
    mine = tmp_path / "mine"
    shutil.copytree(files_repo, mine, symlinks=True)
    text = script.format(**_oids(git, files_repo)).encode()
    theirs = git.run(["update-ref", "-m", "test  message", "--stdin"], cwd=files_repo,
                     input=text, check=False)
    ours = lab(git, ["update-ref", "--git-dir", str(mine / ".git"), "-m", "test  message",
                     "--stdin"], input=text)
    assert ours.returncode == theirs.returncode, (ours.stderr, theirs.stderr)
    assert ours.stdout == theirs.stdout
    assert _state(git, mine) == _state(git, files_repo)
    assert not list((mine / ".git").rglob("*.lock"))
    fsck = [git.run(["fsck", "--strict", "--no-dangling"], cwd=r, check=False) for r in (mine, files_repo)]
    assert (fsck[0].returncode, fsck[0].stdout) == (fsck[1].returncode, fsck[1].stdout)
    assert fsck[0].returncode == 0 or b"HEAD" in fsck[0].stderr       # unborn HEAD after deleting main


@pytest.mark.parametrize("script", [
    "delete refs/heads/topic/t03/sub\n",                           # under a packed-only ref
    "verify refs/tags/v1.0/sub 0000000000000000000000000000000000000000\n",
    "verify refs/tags/v1.0/sub\n",
    "delete refs/heads/main/sub\nupdate refs/heads/ok {head}\n",    # the loose one: ENOTDIR
])
def test_missing_ref_in_the_way_of_a_packed_one(git, files_repo: Path, tmp_path: Path,
                                                script: str) -> None:
    """git's lock_raw_ref checks every missing ref that need not exist (a delete or a
    verify of one too, not only a create) against the packed refs: a packed ref in its
    way is a name conflict, git's message and exit status (the lab deleted nothing and
    exited 0)."""
    mine = tmp_path / "mine"
    shutil.copytree(files_repo, mine, symlinks=True)
    text = script.format(**_oids(git, files_repo)).encode()
    theirs = git.run(["update-ref", "--stdin"], cwd=files_repo, input=text, check=False)
    ours = lab(git, ["update-ref", "--git-dir", str(mine / ".git"), "--stdin"], input=text)
    assert theirs.returncode == 128 and b"exists; cannot create" in theirs.stderr
    assert (ours.returncode, ours.stderr) == (theirs.returncode, theirs.stderr)
    assert _state(git, mine) == _state(git, files_repo)


@pytest.mark.parametrize("junk", [False, True], ids=["empty", "non-empty"])
@pytest.mark.parametrize("script", ["update refs/heads/topic/t03 {head}\n",
                                    "delete refs/heads/topic/t03\n"])
def test_a_directory_in_the_way_of_a_packed_ref(git, files_repo: Path, tmp_path: Path,
                                                script: str, junk: bool) -> None:
    """git's lock_raw_ref reads the ref once: a directory where the loose file goes is
    EISDIR only when no packed ref has the name. With one, the ref is the packed one
    and the directory stays until the commit, whose rename fails on a non-empty one
    ("couldn't set"); the lab had removed or refused the directory before reading,
    and named a conflict with a file in it."""
    sub = files_repo / ".git" / "refs" / "heads" / "topic" / "t03" / "sub"
    sub.mkdir(parents=True)
    if junk:
        (sub / "junk").write_bytes(b"not a ref\n")
    _update_beside_git(git, files_repo, tmp_path, script)


@pytest.mark.parametrize("script", [
    "verify refs/heads/nope/x 0000000000000000000000000000000000000000\n",
    "delete refs/heads/nope/x\n",
    "start\nupdate refs/heads/deep/x {head}\nprepare\nabort\n",
    "update refs/heads/deep/x {head}\nupdate refs/heads/deep2/y {head} {one}\n",
    "create refs/heads/a/b/c {head}\ncreate refs/heads/a/b {head}\n",
    "delete refs/heads/gone/x\n",                 # a reflog without its ref: removed
])
def test_lock_directories_and_dangling_reflogs_as_git(git, files_repo: Path, tmp_path: Path,
                                                      script: str) -> None:
    """The directories made for a lock stay when it is rolled back (git's
    safe_create_leading_directories; the lab removed them); a delete, of a missing ref
    too, removes the ref's reflog and prunes the empty parents (git's REF_DELETING)."""
    logs = files_repo / ".git" / "logs" / "refs" / "heads" / "gone"
    logs.mkdir(parents=True)
    (logs / "x").write_bytes((files_repo / ".git" / "logs" / "HEAD").read_bytes())
    _update_beside_git(git, files_repo, tmp_path, script)


@pytest.mark.parametrize("script", [
    "update refs/tags/zz {one}\nsymref-update refs/heads/main refs/tags/zz\n",
    "symref-update refs/heads/main refs/tags/zz\nupdate refs/tags/zz {one}\n",
])
def test_symref_reflog_sees_the_updates_queued_before_it(git, files_repo: Path,
                                                         tmp_path: Path, script: str) -> None:
    """git's files_transaction_finish writes reflogs and commits refs in queue order: a
    symref's reflog entry resolves its target after the updates queued before it are in
    place (the lab went by name, so refs/heads/main's entry missed refs/tags/zz)."""
    mine = tmp_path / "mine"
    shutil.copytree(files_repo, mine, symlinks=True)
    text = script.format(**_oids(git, files_repo)).encode()
    theirs = git.run(["update-ref", "-m", "msg", "--stdin"], cwd=files_repo, input=text,
                     check=False)
    ours = lab(git, ["update-ref", "--git-dir", str(mine / ".git"), "-m", "msg", "--stdin"],
               input=text)
    assert (ours.returncode, ours.stderr) == (theirs.returncode, theirs.stderr) == (0, b"")
    assert _state(git, mine) == _state(git, files_repo)


@pytest.mark.parametrize("script", ["delete refs/heads/blocked/x\n",
                                    "delete refs/heads/nope/x\n",
                                    "delete refs/heads/blocked/x\ncreate refs/heads/main {one}\n"])
def test_a_reflog_that_cannot_be_removed_is_warned_of(git, files_repo: Path, tmp_path: Path,
                                                      script: str) -> None:
    """A delete (of a missing ref too) whose reflog path runs through a file: git's
    unlink_or_warn prints "warning: unable to unlink '...': Not a directory" and goes on
    (the lab was silent)."""
    git.run(["update-ref", "refs/heads/blocked/x", "HEAD"], cwd=files_repo)
    logs = files_repo / ".git" / "logs" / "refs" / "heads"
    shutil.rmtree(logs / "blocked", ignore_errors=True)
    (logs / "blocked").write_text("in the way\n")
    (logs / "nope").write_text("in the way\n")
    mine = tmp_path / "mine"
    shutil.copytree(files_repo, mine, symlinks=True)
    text = script.format(**_oids(git, files_repo)).encode()
    theirs = git.run(["update-ref", "--stdin"], cwd=files_repo, input=text, check=False)
    env = {k: v for k, v in git.env.items() if k != "REFTABLE_LAB_FLAGS"}
    ours = subprocess.run([sys.executable, "-m", "lab.cli", "update-ref", "--stdin"], cwd=mine,
                          input=text, env=env, capture_output=True)
    assert (ours.returncode, ours.stderr) == (theirs.returncode, theirs.stderr)
    assert b"warning: unable to unlink" in theirs.stderr or theirs.returncode
    assert _state(git, mine) == _state(git, files_repo)


def test_update_ref_stale_lock(git, files_repo: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    shutil.copytree(files_repo, mine, symlinks=True)
    o = _oids(git, files_repo)
    for repo in (files_repo, mine):
        (repo / ".git" / "refs" / "heads" / "main.lock").write_bytes(b"stale")
    text = f"update refs/heads/main {o['one']}\n".encode()
    theirs = git.run(["update-ref", "--stdin"], cwd=files_repo, input=text, check=False)
    ours = lab(git, ["update-ref", "--git-dir", str(mine / ".git"), "--stdin"], input=text)
    assert ours.returncode == theirs.returncode != 0
    assert b"main.lock" in ours.stderr
    assert _state(git, mine) == _state(git, files_repo)
    assert (mine / ".git" / "refs" / "heads" / "main.lock").read_bytes() == b"stale"


def test_update_ref_stale_packed_refs_lock(git, files_repo: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    shutil.copytree(files_repo, mine, symlinks=True)
    for repo in (files_repo, mine):
        (repo / ".git" / "packed-refs.lock").write_bytes(b"stale")
    text = b"delete refs/heads/topic/t04\n"
    theirs = git.run(["update-ref", "--stdin"], cwd=files_repo, input=text, check=False)
    ours = lab(git, ["update-ref", "--git-dir", str(mine / ".git"), "--stdin"], input=text)
    assert ours.returncode == theirs.returncode != 0
    assert _state(git, mine) == _state(git, files_repo)
    assert (mine / ".git" / "packed-refs.lock").read_bytes() == b"stale"
