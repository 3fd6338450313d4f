"""skip_name_check (git 4af31dc84a): with it off, the stack checks each added table's
refs against the stack as git's reftable library did (stack_check_addition,
reftable/refname.c modification_validate); with it on, it does not.

The lookups are git's: per added ref a seek to refname/ and a read per leading
directory ("refs/heads", "refs" and "" for refs/heads/x), counted in
WORK.library_name_checks; a conflict is a NameConflictError and the table is not
added (its temp file removed, tables.list unchanged).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from reftable_core.counters import WORK
from reftable_core.errors import NameConflictError
from reftable_core.flags import Flags
from reftable_core.reftable.record import RefRecord
from reftable_core.reftable.stack import Stack, StackOptions

OID = b"\x11" * 20
CHECK = Flags(skip_name_check=False)
SKIP = Flags()


def _add(st: Stack, refs: list[tuple[bytes, bool]]) -> None:
    """One table: (name, live) pairs, sorted; live False is a deletion."""
    ui = st.next_update_index()

    def write(wr) -> None:
        for name, live in sorted(refs):
            wr.add_ref(RefRecord(name, ui, 1, OID) if live else RefRecord(name, ui, 0))
    st.add(write)


def _stack(d: Path, flags: Flags) -> Stack:
    return Stack(d, flags, StackOptions(auto_compact=False))


@pytest.mark.parametrize("tombstones", ["suppressed", "returned"])
@pytest.mark.parametrize("new, old", [
    ([(b"refs/heads/a/b", True)], [(b"refs/heads/a", True)]),       # under a ref
    ([(b"refs/heads/a", True)], [(b"refs/heads/a/b", True)]),       # refs under it
    ([(b"refs/heads/a", True), (b"refs/heads/a/b", True)], []),     # within the table
    ([(b"refs//x", True)], []),                                     # an empty component
    ([(b"refs/../x", True)], []),                                   # a ".." component
])
def test_conflicts_are_refused_with_the_check_only(tmp_path: Path, new, old,
                                                   tombstones: str) -> None:
    flags = CHECK.replace(tombstone_suppression=(tombstones == "returned"))
    for f, refused in ((flags, True), (flags.replace(skip_name_check=True), False)):
        d = tmp_path / f"{refused}"
        st = _stack(d, f)
        if old:
            _add(st, old)
        names = st.names
        if refused:
            with pytest.raises(NameConflictError):
                _add(st, new)
            assert st.names == names
            assert _stack(d, f).names == names                 # tables.list unchanged
            left = sorted(n for n in os.listdir(d) if n != "tables.list")
            assert left == sorted(names)                    # no temp table, no lock left
        else:
            _add(st, new)
            assert len(st.names) == len(names) + 1


@pytest.mark.parametrize("tombstones", [False, True])
def test_a_deletion_in_the_table_or_the_stack_hides_the_conflict(tmp_path: Path,
                                                                tombstones: bool) -> None:
    flags = CHECK.replace(tombstone_suppression=tombstones)
    st = _stack(tmp_path / "a", flags)
    _add(st, [(b"refs/heads/a", True)])
    _add(st, [(b"refs/heads/a", False), (b"refs/heads/a/b", True)])   # moved in one table
    assert st.read_ref(b"refs/heads/a/b") is not None
    st = _stack(tmp_path / "b", flags)
    _add(st, [(b"refs/heads/a/b", True)])
    _add(st, [(b"refs/heads/a/b", False)])                            # deleted earlier
    _add(st, [(b"refs/heads/a", True)])
    assert st.read_ref(b"refs/heads/a") is not None


def test_lookups_per_added_ref_are_gits(tmp_path: Path) -> None:
    """refs/heads/x: the seek to refs/heads/x/, then refs/heads, refs and "" read:
    four a ref; none with the check skipped."""
    for flags, per_ref in ((CHECK, 4), (SKIP, 0)):
        st = _stack(tmp_path / str(per_ref), flags)
        _add(st, [(b"refs/heads/base", True)])
        WORK.reset()
        _add(st, [(b"refs/heads/x%d" % i, True) for i in range(5)])
        assert WORK.library_name_checks == 5 * per_ref
        assert WORK.tables_opened == (2 if per_ref else 1)    # + the new table read back
