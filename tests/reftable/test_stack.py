"""The reftable stack: tables.list, naming, locks, up-to-date checks, compaction, clean."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from reftable_core.errors import APIError, LockError, NotExistError, OutdatedError
from reftable_core.flags import Flags, baseline
from reftable_core.reftable.record import LogRecord, RefRecord
from reftable_core.reftable.compact import Segment, suggest_compaction_segment
from reftable_core.reftable.stack import Stack, StackOptions, format_name, read_names

NAME_RE = re.compile(r"^0x[0-9a-f]{12}-0x[0-9a-f]{12}-[0-9a-f]{8}\.ref$")
OID = bytes(range(20))


def _add(st: Stack, name: bytes, value: bytes | None = OID, log: bool = True) -> int:
    ui = st.next_update_index()

    def write(wr) -> None:
        if value is None:
            wr.add_ref(RefRecord(name, ui, 0))
        else:
            wr.add_ref(RefRecord(name, ui, 1, value))
        if log:
            wr.add_log(LogRecord(name, ui, 1, bytes(20), value or bytes(20), b"n", b"e@x",
                                 1700000000 + ui, 0, b"msg"))
    st.add(write)
    return ui


def _refs(st: Stack) -> list[tuple[bytes, bytes]]:
    return [(r.refname, r.value) for r in st.merged.refs()]


@pytest.mark.parametrize("flags", [Flags(), baseline()], ids=["on", "off"])
def test_add_names_and_list(tmp_path: Path, flags: Flags) -> None:
    st = Stack(tmp_path, flags, StackOptions(auto_compact=False))
    assert st.next_update_index() == 1 and st.names == []
    for i in range(5):
        assert _add(st, b"refs/heads/b%d" % i) == i + 1
    names = read_names(str(tmp_path / "tables.list"))
    assert names == st.names and len(names) == 5
    for i, n in enumerate(names):
        assert NAME_RE.match(n)
        assert n.startswith("0x%012x-0x%012x-" % (i + 1, i + 1))
    assert not (tmp_path / "tables.list.lock").exists()
    assert sorted(os.listdir(tmp_path)) == sorted(names + ["tables.list"])
    assert [r[0] for r in _refs(st)] == [b"refs/heads/b%d" % i for i in range(5)]


def test_format_name() -> None:
    assert format_name(1, 0x2a, 0xdeadbeef) == "0x000000000001-0x00000000002a-deadbeef"
    assert format_name(1, 2) != format_name(1, 2)


def test_suggest_compaction_segment_like_git() -> None:
    # git's t/unit-tests/t-reftable-stack.c cases
    assert suggest_compaction_segment([512, 64, 17, 16, 9, 9, 9, 16, 2, 16], 2) == \
        Segment(1, 10, 64 + 17 + 16 + 9 + 9 + 9 + 16 + 2 + 16)
    assert len(suggest_compaction_segment([64, 32, 16, 8, 4, 2], 2)) == 0
    assert len(suggest_compaction_segment([1], 2)) == 0
    # the examples of git's comments: the last table stays out, 3 is the last one in
    seg = suggest_compaction_segment([64, 32, 16, 8, 4, 3, 1], 2)
    assert (seg.start, seg.end) == (0, 6)
    seg = suggest_compaction_segment([128, 32, 16, 8, 4, 3, 1], 2)
    assert (seg.start, seg.end, seg.bytes) == (1, 6, 63)


def test_auto_compaction_keeps_stack_small(tmp_path: Path) -> None:
    st = Stack(tmp_path, Flags(), StackOptions(auto_compact=True))
    for i in range(64):
        _add(st, b"refs/heads/b%03d" % i)
    assert len(st.names) < 10
    assert [r[0] for r in _refs(st)] == [b"refs/heads/b%03d" % i for i in range(64)]
    sizes = st.table_sizes_for_compaction()
    assert len(suggest_compaction_segment(sizes, 2)) == 0
    # every name still in the directory is listed: compaction removed the old tables
    assert sorted(f for f in os.listdir(tmp_path) if f.endswith(".ref")) == sorted(st.names)


@pytest.mark.parametrize("flags", [Flags(), baseline()], ids=["on", "off"])
def test_compact_all_drops_deletions_and_shadowed(tmp_path: Path, flags: Flags) -> None:
    st = Stack(tmp_path, flags, StackOptions(auto_compact=False))
    _add(st, b"refs/heads/a")
    _add(st, b"refs/heads/b")
    _add(st, b"refs/heads/a", b"\x01" * 20)
    _add(st, b"refs/heads/b", None, log=False)
    before = _refs(st)
    logs_before = [(r.refname, r.update_index) for r in st.merged.logs()]
    assert st.compact_all()
    assert len(st.names) == 1 and st.names[0].startswith("0x000000000001-0x000000000004-")
    assert _refs(st) == before == [(b"refs/heads/a", b"\x01" * 20)]
    mt_all = st.merged.__class__(st.readers, flags, suppress_deletions=False)
    assert [r.value_type for r in mt_all.refs()] == [1]      # deletion dropped at the base
    assert [(r.refname, r.update_index) for r in st.merged.logs()] == logs_before


def test_partial_compaction_keeps_deletions(tmp_path: Path) -> None:
    st = Stack(tmp_path, Flags(), StackOptions(auto_compact=False))
    _add(st, b"refs/heads/a")
    _add(st, b"refs/heads/a", None, log=False)
    _add(st, b"refs/heads/c")
    assert st.compact_range(1, 2)
    assert len(st.names) == 2
    assert _refs(st) == [(b"refs/heads/c", OID)]


@pytest.mark.parametrize("stat_cache", [True, False])
def test_outdated_and_reload(tmp_path: Path, stat_cache: bool) -> None:
    flags = Flags(stat_cache=stat_cache)
    a = Stack(tmp_path, flags, StackOptions(auto_compact=False))
    b = Stack(tmp_path, flags, StackOptions(auto_compact=False))
    _add(a, b"refs/heads/x")
    assert not b.is_up_to_date()
    with pytest.raises(OutdatedError):
        _add(b, b"refs/heads/y")
    # git's stack_add reloads after OutdatedError, so the retry works
    _add(b, b"refs/heads/y")
    assert a.reload() and [r[0] for r in _refs(a)] == [b"refs/heads/x", b"refs/heads/y"]
    assert a.is_up_to_date() and not a.reload()


def test_stat_cache_avoids_rereading_list(tmp_path: Path) -> None:
    reads = {}
    for on in (True, False):
        d = tmp_path / str(on)
        st = Stack(d, Flags(stat_cache=on), StackOptions(auto_compact=False))
        _add(st, b"refs/heads/x")
        n0 = st.stats["list_reads"]
        for _ in range(50):
            st.reload()
        reads[on] = st.stats["list_reads"] - n0
    assert reads[True] == 0 and reads[False] == 50


def test_lock_timeout_names_lock_file(tmp_path: Path) -> None:
    st = Stack(tmp_path, Flags(), StackOptions(lock_timeout_ms=20))
    (tmp_path / "tables.list.lock").write_bytes(b"")
    with pytest.raises(LockError) as ei:
        _add(st, b"refs/heads/x")
    assert "tables.list.lock" in str(ei.value)
    assert st.names == []


def test_failed_write_leaves_nothing(tmp_path: Path) -> None:
    st = Stack(tmp_path, Flags(), StackOptions())

    def write(wr) -> None:
        wr.add_ref(RefRecord(b"refs/heads/b", 1, 1, OID))
        wr.add_ref(RefRecord(b"refs/heads/a", 1, 1, OID))      # out of order: APIError
    with pytest.raises(APIError):
        st.add(write)
    assert os.listdir(tmp_path) == []


def test_empty_addition_writes_no_table(tmp_path: Path) -> None:
    st = Stack(tmp_path, Flags(), StackOptions())
    st.add(lambda wr: None)
    assert st.names == [] and "tables.list" not in os.listdir(tmp_path)


def test_clean_removes_stray_tables_and_temps(tmp_path: Path) -> None:
    st = Stack(tmp_path, Flags(), StackOptions(auto_compact=False))
    _add(st, b"refs/heads/a")
    _add(st, b"refs/heads/b")
    listed = list(st.names)
    stray = tmp_path / listed[0].replace(listed[0][-12:-4], "00000000")
    stray.write_bytes((tmp_path / listed[0]).read_bytes())
    temp = tmp_path / (listed[0][:-4] + ".temp.abc123")
    temp.write_bytes(b"junk")
    future = tmp_path / "0x000000000099-0x000000000099-12345678.ref"
    future.write_bytes(b"not even a table")
    removed = st.clean(stale_temp_age_s=0)
    assert sorted(removed) == sorted([stray.name, temp.name])
    assert future.exists()            # unreadable: left alone, like git
    assert sorted(os.listdir(tmp_path)) == sorted(listed + ["tables.list", future.name])


def test_vanished_table_retries_then_fails(tmp_path: Path) -> None:
    st = Stack(tmp_path, Flags(), StackOptions(auto_compact=False, reload_deadline_s=0.05))
    _add(st, b"refs/heads/a")
    (tmp_path / "tables.list").write_text("0x000000000005-0x000000000005-deadbeef.ref\n")
    with pytest.raises(NotExistError):
        Stack(tmp_path, Flags(), StackOptions(reload_deadline_s=0.05))


def test_reader_survives_deleted_files(tmp_path: Path) -> None:
    for flags in (Flags(), baseline()):
        d = tmp_path / ("on" if flags.mmap else "off")
        w = Stack(d, flags, StackOptions(auto_compact=False))
        for i in range(6):
            _add(w, b"refs/heads/b%d" % i)
        r = Stack(d, flags, StackOptions(auto_compact=False))
        it = iter(r.merged.refs())
        first = next(it)
        w.compact_all()                      # deletes the files r has open
        assert not any(n in os.listdir(d) for n in r.names)
        rest = [x.refname for x in it]
        assert [first.refname, *rest] == [b"refs/heads/b%d" % i for i in range(6)]
        assert r.reload() and len(r.names) == 1


def test_reads_git_written_stack(make_repo, git) -> None:
    repo = make_repo("g")
    env = {"GIT_TEST_REFTABLE_AUTOCOMPACTION": "false"}
    git.run(["commit", "-q", "--allow-empty", "-m", "x"], cwd=repo, env=env)
    for i in range(8):
        git.run(["branch", f"b{i}"], cwd=repo, env=env)
    git.run(["branch", "-D", "b3"], cwd=repo, env=env)
    st = Stack(repo / ".git" / "reftable", Flags(), StackOptions())
    assert len(st.names) >= 9
    names = [r.refname for r in st.merged.refs()]
    want = git.out(["for-each-ref", "--format=%(refname)"], cwd=repo).split()
    assert [n for n in names if n.startswith(b"refs/")] == want
    assert st.merged.read_ref(b"HEAD").target == b"refs/heads/main"
    # compact with our code, git still reads it and fsck is clean
    assert st.compact_all()
    assert git.out(["for-each-ref", "--format=%(refname)"], cwd=repo).split() == want
    assert git.run(["fsck"], cwd=repo).returncode == 0
    assert b"b5@{0}" in git.out(["reflog", "show", "b5", "--format=%gd"], cwd=repo)


@pytest.mark.parametrize("stat_cache", [True, False])
def test_a_removed_tables_list_makes_the_stack_outdated(tmp_path: Path, stat_cache: bool) -> None:
    """tables.list gone under an open stack with tables: outdated under both values (the
    stat fails with ENOENT, or the list reads as empty); the Cython build's stat(2) raises
    the FileNotFoundError os.stat raises."""
    st = Stack(tmp_path, Flags(stat_cache=stat_cache), StackOptions(auto_compact=False))
    _add(st, b"refs/heads/x")
    assert st.is_up_to_date()
    (tmp_path / "tables.list").rename(tmp_path / "kept")
    assert not st.is_up_to_date()
    (tmp_path / "kept").rename(tmp_path / "tables.list")
    assert st.is_up_to_date()
