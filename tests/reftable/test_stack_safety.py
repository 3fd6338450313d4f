"""The stack on hostile input: tables.list entries, odd files, permissions, descriptors.

Reference: git 2.47.3. git joins each tables.list line onto $GIT_DIR/reftable/
unchecked, so "../../outside/victim.ref" is read and then compacted away (the
victim outside the repository is deleted); we refuse any entry that is not a
plain table file name instead, naming it, and touch nothing.
"""
from __future__ import annotations

import hashlib
import os
import resource
import stat
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import pytest
from reftable_core.errors import FormatError, ReftableError
from reftable_core.flags import Flags, baseline
from reftable_core.reftable.record import LogRecord, RefRecord
from reftable_core.reftable.stack import Stack, StackOptions, read_names

from tests.helpers.labrun import REPO_ROOT, run_lab

OID = bytes(range(20))
FLAGS = [pytest.param(Flags(), id="on"), pytest.param(baseline(), id="off")]


def _tree_hash(root: Path) -> str:
    """Names, modes and contents of everything under root (symlinks not followed)."""
    h = hashlib.sha256()
    for dirpath, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(dirs + files):
            p = Path(dirpath, name)
            st = p.lstat()
            h.update(f"{p.relative_to(root)}\0{st.st_mode:o}\0".encode())
            if stat.S_ISREG(st.st_mode):
                h.update(p.read_bytes())
    return h.hexdigest()


def _listing(d: Path) -> list[tuple[str, int]]:
    return sorted((e.name, e.stat(follow_symlinks=False).st_size) for e in os.scandir(d))


def _add(st: Stack, name: bytes) -> None:
    ui = st.next_update_index()

    def write(wr) -> None:
        wr.add_ref(RefRecord(name, ui, 1, OID))
    st.add(write)


@pytest.fixture()
def repo(make_repo, git) -> Path:
    """A reftable repository with one commit, and a sibling outside/ with a victim table."""
    wt = make_repo("repo")
    git.run(["commit", "-q", "--allow-empty", "-m", "x"], cwd=wt)
    outside = wt.parent / "outside"
    outside.mkdir()
    table = next((wt / ".git" / "reftable").glob("*.ref"))
    (outside / "victim.ref").write_bytes(table.read_bytes())
    (outside / "secret.txt").write_bytes(b"do not touch\n")
    return wt


def _head(wt: Path) -> str:
    names = (wt / ".git" / "reftable" / "tables.list").read_text().split()
    st = Stack(wt / ".git" / "reftable", options=StackOptions(hash_id=None), create=False)
    try:
        return st.read_ref(b"refs/heads/main").value.hex()
    finally:
        st.close()
        assert names


def _assert_clean_error(status: int, err: bytes, *needles: str) -> None:
    text = err.decode("utf-8", "replace")
    assert status == 128, text
    assert "Traceback" not in text
    lines = text.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fatal: "), text
    for n in needles:
        assert n in lines[0], (n, text)


# -- 1: tables.list entries -----------------------------------------------------

BAD_ENTRIES = ["{outside}/victim.ref", "../../outside/victim.ref", "../../../outside/victim.ref",
               ".", "..", "sub/x.ref", "a\0b.ref", "notatable", "/etc/passwd"]


@pytest.mark.parametrize("entry", BAD_ENTRIES)
def test_bad_entry_is_a_clean_error_and_nothing_changes(repo: Path, entry: str) -> None:
    outside = repo.parent / "outside"
    entry = entry.replace("{outside}", str(outside))
    rt = repo / ".git" / "reftable"
    oid = _head(repo)
    with open(rt / "tables.list", "ab") as f:
        f.write(entry.encode() + b"\n")
    before_out, before_rt = _tree_hash(outside), _listing(rt)
    for args, stdin in [(["show-ref"], b""),
                        (["update-ref", "--stdin"], f"update refs/heads/z {oid}\n".encode())]:
        status, out, err = run_lab([*args, "--git-dir", str(repo / ".git")], stdin=stdin)
        _assert_clean_error(status, err, "tables.list", repr(entry))
        assert out == b""
        assert _tree_hash(outside) == before_out
        assert _listing(rt) == before_rt           # nothing deleted, no .lock left
    with pytest.raises(FormatError, match="bad entry"):
        Stack(rt)


def test_git_table_names_and_other_writers_names_are_accepted(tmp_path: Path) -> None:
    st = Stack(tmp_path, options=StackOptions(auto_compact=False))
    _add(st, b"refs/heads/a")
    name = st.names[0]
    st.close()
    os.rename(tmp_path / name, tmp_path / "000000000001-000000000001.ref")   # JGit's style
    (tmp_path / "tables.list").write_text("000000000001-000000000001.ref\n\n")
    with Stack(tmp_path) as st2:
        assert st2.read_ref(b"refs/heads/a").value == OID


# -- 2: read paths never write --------------------------------------------------

def test_reads_without_reftable_dir_create_nothing(repo: Path, git) -> None:
    rt = repo / ".git" / "reftable"
    oid = _head(repo)
    for p in rt.iterdir():
        p.unlink()
    rt.rmdir()
    gitdir = repo / ".git"
    before = _listing(gitdir)
    g = git.run(["show-ref"], cwd=repo, check=False)
    assert g.returncode == 1 and not rt.exists()          # git: no output, status 1
    status, out, err = run_lab(["show-ref", "--git-dir", str(gitdir)])
    assert (status, out, err) == (1, b"", b"")
    assert not rt.exists() and _listing(gitdir) == before
    # git: "fatal: reftable: transaction prepare: I/O error", 128, nothing created
    status, out, err = run_lab(["update-ref", "--stdin", "--git-dir", str(gitdir)],
                               stdin=f"update refs/heads/z {oid}\n".encode())
    _assert_clean_error(status, err, "tables.list.lock")
    assert not rt.exists() and _listing(gitdir) == before


def test_stack_missing_ok_reads_empty_without_creating(tmp_path: Path) -> None:
    d = tmp_path / "reftable"
    with Stack(d, create=False, missing_ok=True) as st:
        assert st.names == [] and st.read_ref(b"HEAD") is None and not st.reload()
    assert not d.exists()
    with pytest.raises(ReftableError):
        Stack(d, create=False)
    assert not d.exists()


# -- 3: permissions -------------------------------------------------------------

def _modes(rt: Path) -> set[tuple[str, int]]:
    return {("list" if p.name == "tables.list" else "table", stat.S_IMODE(p.stat().st_mode))
            for p in rt.iterdir()}


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_stack_files_follow_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        st = Stack(tmp_path / "rt", options=StackOptions(auto_compact=False))
        _add(st, b"refs/heads/a")
        _add(st, b"refs/heads/b")
        st.compact_all()
        st.close()
    finally:
        os.umask(old)
    assert _modes(tmp_path / "rt") == {("list", 0o666 & ~umask), ("table", 0o666 & ~umask)}


@pytest.mark.parametrize("shared", [None, "umask", "group", "all", "true", "1", "2", "0640",
                                    "0600", "0660"])
@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_modes_match_git_under_shared_repository(make_repo, git, umask: int,
                                                 shared: str | None) -> None:
    cfg = {"reftable.autoCompaction": "false"}
    if shared is not None:
        cfg["core.sharedRepository"] = shared
    old = os.umask(umask)
    try:
        ours, theirs = make_repo("ours", config=cfg), make_repo("theirs", config=cfg)
        for wt in (ours, theirs):
            git.run(["commit", "-q", "--allow-empty", "-m", "x"], cwd=wt,
                    env={"GIT_COMMITTER_DATE": "1700000000 +0000",
                         "GIT_AUTHOR_DATE": "1700000000 +0000"})
        oid = git.run(["rev-parse", "HEAD"], cwd=theirs).stdout.decode().strip()
        git.run(["update-ref", "refs/heads/b", oid], cwd=theirs)
        status, _, err = run_lab(["update-ref", "--stdin", "--git-dir", str(ours / ".git")],
                                 stdin=f"update refs/heads/b {oid}\n".encode())
    finally:
        os.umask(old)
    assert status == 0, err
    assert len(list((ours / ".git" / "reftable").glob("*.ref"))) == 2
    assert _modes(ours / ".git" / "reftable") == _modes(theirs / ".git" / "reftable")


def test_bad_shared_repository_mode_dies_like_git(make_repo, git) -> None:
    wt = make_repo("r", config={"core.sharedRepository": "0400"})
    g = git.run(["update-ref", "refs/heads/x", "HEAD"], cwd=wt, check=False)
    status, _, err = run_lab(["show-ref", "--git-dir", str(wt / ".git")])
    assert status == 128 and g.returncode == 128
    assert err.decode().splitlines()[0] == g.stderr.decode().splitlines()[0]


# -- 4: odd files, sizes, descriptors -------------------------------------------

def _one_table_stack(d: Path) -> str:
    st = Stack(d, options=StackOptions(auto_compact=False))
    _add(st, b"refs/heads/a")
    name = st.names[0]
    st.close()
    return name


def _make_odd(p: Path, kind: str) -> None:
    p.unlink()
    if kind == "devzero":
        p.symlink_to("/dev/zero")
    elif kind == "dir":
        p.mkdir()
    elif kind == "fifo":
        os.mkfifo(p)
    elif kind == "huge":
        with open(p, "wb") as f:
            f.truncate(20 << 30)           # sparse: 20 GiB of zeros


@pytest.mark.parametrize("flags", FLAGS)
@pytest.mark.parametrize("kind", ["devzero", "dir", "fifo", "huge"])
@pytest.mark.parametrize("which", ["list", "table"])
def test_odd_files_are_clean_format_errors(tmp_path: Path, flags: Flags, kind: str,
                                           which: str) -> None:
    d = tmp_path / "rt"
    name = _one_table_stack(d)
    target = d / ("tables.list" if which == "list" else name)
    _make_odd(target, kind)
    tracemalloc.start()
    try:
        with pytest.raises(FormatError) as ei:
            Stack(d, flags)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(target) in str(ei.value)
    assert peak < 8 << 20


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("flags, per_table", [(Flags(), 0), (baseline(), 1)],
                         ids=["mmap-on", "mmap-off"])
def test_descriptors_per_table(tmp_path: Path, flags: Flags, per_table: int) -> None:
    st = Stack(tmp_path, flags, StackOptions(auto_compact=False))
    for i in range(40):
        _add(st, b"refs/heads/b%03d" % i)
    st.close()
    before = _open_fds()
    st = Stack(tmp_path, flags)
    assert len(list(st.merged.refs())) == 40
    held = _open_fds() - before
    assert held <= 40 * per_table + 1          # + the tables.list fd of stat_cache
    st.close()
    assert _open_fds() == before


_MANY = textwrap.dedent("""
    import resource, sys
    from reftable_core.flags import Flags
    from reftable_core.reftable.stack import Stack
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
    st = Stack(sys.argv[1], Flags())
    print(len(st.names), len(list(st.merged.refs())))
    st.close()
""")


def test_1100_tables_under_ulimit_1024(tmp_path: Path) -> None:
    n = 1100
    st = Stack(tmp_path / "rt", options=StackOptions(auto_compact=False))
    with st.new_addition() as add:
        for i in range(n):
            def write(wr, i: int = i) -> None:
                wr.add_ref(RefRecord(b"refs/heads/b%05d" % i, add.next_update_index, 1, OID))
            add.add(write)
        add.commit()
    st.close()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_ROOT / "core"), str(REPO_ROOT)]))
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1024:
        pytest.skip("hard RLIMIT_NOFILE below 1024")
    proc = subprocess.run([sys.executable, "-c", _MANY, str(tmp_path / "rt")],
                          capture_output=True, env=env, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.split() == [b"%d" % n, b"%d" % n]


# -- 5: offsets of corrupt blocks -----------------------------------------------

@pytest.mark.parametrize("flags", FLAGS)
@pytest.mark.parametrize("where", [257, 2051])
def test_corrupt_block_offsets_are_file_relative(tmp_path: Path, flags: Flags,
                                                 where: int) -> None:
    st = Stack(tmp_path, flags, StackOptions(auto_compact=False, block_size=256))

    def write(wr) -> None:
        for i in range(200):
            wr.add_ref(RefRecord(b"refs/heads/b%04d" % i, 1, 1, OID))
        for i in range(50):
            wr.add_log(LogRecord(b"refs/heads/b%04d" % i, 1, 1, bytes(20), OID, b"n", b"e",
                                 1, 0, b"m" * 50))
    st.add(write)
    path = tmp_path / st.names[0]
    st.close()
    data = bytearray(path.read_bytes())
    data[where] ^= 0xFF
    path.write_bytes(data)
    with pytest.raises(FormatError) as ei, Stack(tmp_path, flags) as st2:
        list(st2.merged.refs())
        list(st2.merged.logs())
    e = ei.value
    assert e.path == str(path) and str(path) in str(e)
    block = where - where % 256
    assert e.offset is not None and block <= e.offset < block + 256 + 24


def test_a_nul_in_the_list_path_is_refused(tmp_path: Path) -> None:
    """A NUL in tables.list's path (a hostile gitdir file can carry one) is os's ValueError
    in every build: the Cython build's open(2) from C would read the path only up to it,
    which names another file, here one that exists."""
    (tmp_path / "tables.list").write_bytes(b"0x000000000001-0x000000000001-00000000.ref\n")
    with pytest.raises(ValueError, match="null"):
        read_names(str(tmp_path / "tables.list") + "\0.lock")
