"""The reftable library's own D/F check of an added table (git's reftable/refname.c).

Contract: check_addition(merged, table) raises NameConflictError when a ref the new
table adds conflicts with the stack merged (oldest first, as loaded under the
addition's lock) or with another ref of the table: a ref under refname/ exists, or a
leading directory of refname is a ref; or when a name has an empty, "." or ".."
component (git's validate_refname: REFTABLE_REFNAME_ERROR). Deletions in the table
hide the stack's refs of their names. Git ran it in reftable_addition_add
(stack_check_addition) on every added table until 4af31dc84a set skip_name_check
in its ref store (the skip_name_check flag: Stack calls this only when it is off);
each lookup of the stack is one WORK.library_name_checks.

The lookups are git's: modification_has_ref_with_prefix seeks a merged ref
iterator to refname + "/" and takes its first record not deleted by the table;
modification_has_ref reads one ref (reftable_table_read_ref) after looking in the
table's own additions and deletions (binary searches over the sorted names).
"""
from __future__ import annotations

from bisect import bisect_left
from typing import Any

from ..counters import WORK
from ..errors import NameConflictError

REF_DELETION = 0


def _has(names: list[bytes], name: bytes) -> bool:
    i = bisect_left(names, name)
    return i < len(names) and names[i] == name


def _has_prefix(names: list[bytes], prefix: bytes) -> bool:
    i = bisect_left(names, prefix)
    return i < len(names) and names[i].startswith(prefix)


def _valid_refname(name: bytes) -> bool:
    """git's validate_refname: no empty name, no empty, "." or ".." component
    before the last."""
    parts = name.split(b"/")
    if not parts[-1]:
        return False
    return all(p not in (b"", b".", b"..") for p in parts[:-1])


def _stack_has_prefix(merged: Any, prefix: bytes, dels: list[bytes]) -> bool:
    """modification_has_ref_with_prefix after the additions' search: the first ref
    at or after prefix that the table does not delete starts with prefix."""
    WORK.library_name_checks += 1
    it = merged.refs().seek(prefix)
    try:
        for rec in it:
            if rec.value_type == REF_DELETION:       # returned, not consumed: skipped
                if not rec.refname.startswith(prefix):
                    return False
                continue
            if dels and _has(dels, rec.refname):
                continue
            return rec.refname.startswith(prefix)
        return False
    finally:
        it.close()


def _stack_has_ref(merged: Any, name: bytes) -> bool:
    WORK.library_name_checks += 1
    rec = merged.read_ref(name)
    return rec is not None and rec.value_type != REF_DELETION


def check_addition(merged: Any, table: Any) -> None:
    """git's stack_check_addition over the new table (a TableReader) and the stack."""
    adds: list[bytes] = []
    dels: list[bytes] = []
    it = table.refs().seek(b"")
    try:
        for rec in it:
            (dels if rec.value_type == REF_DELETION else adds).append(rec.refname)
    finally:
        it.close()
    for name in adds:
        if not _valid_refname(name):
            raise NameConflictError(f"invalid refname {name!r} in the added table")
        slashed = name + b"/"
        if _has_prefix(adds, slashed) or _stack_has_prefix(merged, slashed, dels):
            raise NameConflictError(f"file/directory conflict: {name!r} has refs under it")
        cut = name
        while cut:
            i = cut.rfind(b"/")
            cut = cut[:i] if i >= 0 else b""
            if _has(adds, cut):
                conflict = True
            elif _has(dels, cut):
                conflict = False
            else:
                conflict = _stack_has_ref(merged, cut)
            if conflict:
                raise NameConflictError(f"file/directory conflict: {name!r} is under the "
                                        f"ref {cut!r}")
