"""The backend-neutral ref store interface (git's ref_store vtable).

Contract: both backends (reftable stack, files = loose + packed-refs) implement
RefStore; the CLI (show-ref, update-ref) and the lab only talk to this. Object
ids are raw bytes (20 for SHA-1, 32 for SHA-256); repr() prints them in hex.
Refnames are bytes. Every store also gives its refs as reftable RefRecords
(iter_ref_records, seek_ref_records) and as plain rows (iter_ref_rows), with or
without the broken ones (include_broken), and says which is its own scan
(scan: SCAN_RECORDS or SCAN_ROWS), so that a command picks its loop once by
that, never by the store's type; value types are read by their names
(reftable.record's REF_VAL1, REF_VAL2, REF_SYMREF); ref_from_record turns a
record into a Ref. RefStoreBase derives what it can from a backend's read_ref
and iter_ref_records.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import dropwhile
from typing import Callable, Iterator, Protocol, runtime_checkable

from ..reftable.record import HASH_IDS, REF_SYMREF, REF_VAL2, RefRecord, repr_hex_ids
from .packed import RefRow
from .refname import REFNAME_ALLOW_ONELEVEL, check_refname_format

HASH_SIZES: dict[str, int] = {name: size for name, (_, size) in HASH_IDS.items()}


@dataclass(frozen=True, slots=True)
class Ref:
    name: bytes
    value: bytes | None = None        # object id of a direct ref
    peeled: bytes | None = None       # peeled object id when the store knows it (annotated tag)
    target: bytes | None = None       # symref target refname (value is None then)

    def __repr__(self) -> str:
        return repr_hex_ids(self, "value", "peeled")

    @property
    def is_symref(self) -> bool:
        return self.target is not None


@dataclass(frozen=True, slots=True)
class LogEntry:
    refname: bytes
    update_index: int
    old_id: bytes
    new_id: bytes
    name: bytes
    email: bytes
    time: int                         # seconds since the epoch
    tz_offset: int                    # minutes east of UTC, e.g. -420 for -0700
    message: bytes

    def __repr__(self) -> str:
        return repr_hex_ids(self, "old_id", "new_id")


@dataclass(slots=True)
class RefUpdate:
    """One queued change of a transaction (git's ref_update)."""
    refname: bytes
    new_value: bytes | None = None    # None: leave value alone (verify); zero id: delete
    old_value: bytes | None = None    # None: no check; zero id: must not exist
    new_target: bytes | None = None   # symref update
    message: bytes = b""
    flags: set[str] = field(default_factory=set)   # {"create", "update", "delete", "verify",
    #   "no-deref", "create-reflog" (git's REF_FORCE_CREATE_REFLOG), "log-only" (git's
    #   REF_LOG_ONLY: only a reflog entry is written), "via-head" (git's
    #   REF_UPDATE_VIA_HEAD: no log-only HEAD update is added for it)}
    old_target: bytes | None = None   # must be a symref to this (old_value None then)
    original: bytes | None = None     # the name queued, when this came through a symref
    #   (git's messages name it: "cannot lock ref 'HEAD': ...")
    shown: bytes | None = None        # the ref's name in git's messages, where the store
    #   works on another (a linked worktree's worktrees/<w>/<ref>, a files store's <ref>)


@runtime_checkable
class Transaction(Protocol):
    @property
    def warnings(self) -> list[str]:
        """What git warns of while committing, in order (the caller prints them)."""
        ...

    def queue(self, update: RefUpdate) -> None: ...
    def prepare(self) -> None: ...
    def commit(self) -> None: ...
    def abort(self) -> None:
        """git's ref_transaction_abort (runs the hook's "aborted")."""
        ...

    def release(self) -> None:
        """Release locks and close without the hook (cleanup when dying)."""
        ...


# How a store's refs are scanned fastest (RefStore.scan): a command picks its loop by
# it once, before iterating (show-ref's registry of pattern loops)
SCAN_RECORDS = "records"    # one merged, seekable record iterator (reftable):
#   seek_ref_records gives the raw records, the caller stops at its own bound
SCAN_ROWS = "rows"          # refs merged by name from several sources (files: loose and
#   packed-refs; a worktree's stores): iter_ref_rows gives plain tuples


@runtime_checkable
class RefStore(Protocol):
    hash_size: int
    scan: str
    """SCAN_RECORDS or SCAN_ROWS: which of seek_ref_records and iter_ref_rows is this
    store's own scan (the other is built on its records); both give the same refs."""
    writes_full_worktree_names: bool
    """A linked worktree's updates are written under their full names
    ("worktrees/<w>/<ref>", as git's reftable backend writes u->refname), not the
    bare ones (git's files backend); WorktreeRefStore routes by it."""

    def read_ref(self, name: bytes) -> Ref | None:
        """The ref named name (symrefs not followed), or None."""
        ...

    def resolve(self, name: bytes, depth: int = 5, allow_bad_name: bool = True,
                as_target: bool = False) -> Ref | None:
        """Follow symrefs up to depth levels; a Ref with value set, or None. With
        allow_bad_name False a symref whose target fails the refname check resolves to
        None, as git's refs_resolve_ref_unsafe without RESOLVE_REF_ALLOW_BAD_NAME
        (what readers use: for-each-ref and show-ref skip a symref to a broken name).
        With as_target, name is read as this store reads its symrefs' targets (a
        symref update's new target, resolved for its reflog: in a linked worktree a
        shared name is the main store's)."""
        ...

    def ref_exists(self, name: bytes) -> bool:
        """git's raw read of name succeeds (show-ref --exists): a ref of any kind,
        a broken one too where the store can hold them."""
        ...

    def is_broken(self, name: bytes) -> bool:
        """name is a ref the store holds but cannot read (files: a loose file whose
        contents are no ref; git's read fails with EINVAL rather than ENOENT);
        always False in a store that holds no broken refs (reftable)."""
        ...

    def iter_refs(self, prefix: bytes = b"") -> Iterator[Ref]:
        """Every live ref under refs/ starting with prefix, sorted by name."""
        ...

    def iter_ref_records(self, prefix: bytes = b"",
                         include_broken: bool = False) -> Iterator[RefRecord]:
        """The refs of iter_refs(prefix) as ref records: value_type REF_VAL1 (value),
        REF_VAL2 (value and target_value, the peeled id, when the store knows it) or
        REF_SYMREF (symref target, unresolved). With include_broken each broken ref
        (files: unparseable loose contents, a name failing the format check; reftable:
        a name failing the format check) comes in its place as a REF_VAL1 record whose
        value is the zero id: the broken-ref record (git's REF_ISBROKEN with a cleared
        oid; git's paranoid iteration)."""
        ...

    def iter_ref_rows(self, prefix: bytes = b"",
                      include_broken: bool = False) -> Iterator[RefRow]:
        """The refs of iter_ref_records(prefix, include_broken) as rows (name, oid,
        peeled, target): a symref (name, None, None, target), a value (name, oid,
        peeled id or None, None), a broken ref (name, zero id, None, None)."""
        ...

    def seek_ref_records(self, start: bytes) -> Iterator[RefRecord]:
        """The live ref records from the first name >= start (start under refs/)
        to the end of the refs, in name order, broken refs left out; the caller
        stops at its own bound (JGit's RefCursor seek)."""
        ...

    def iter_log(self, name: bytes) -> Iterator[LogEntry]:
        """Reflog entries of name, newest first."""
        ...

    def transaction(self) -> Transaction: ...

    def close(self) -> None: ...


def ref_from_record(rec: RefRecord) -> Ref:
    """The Ref for a live ref record (REF_VAL1, REF_VAL2 or REF_SYMREF)."""
    vt = rec.value_type
    if vt == REF_SYMREF:
        return Ref(rec.refname, None, None, rec.target)
    if vt == REF_VAL2:
        return Ref(rec.refname, rec.value, rec.target_value, None)
    return Ref(rec.refname, rec.value, None, None)


class RefStoreBase:
    """What the backends derive from their own read_ref and iter_ref_records:
    resolve (follow symrefs, at most depth levels, like git's
    refs_resolve_ref_unsafe), iter_refs (the records as Refs), iter_ref_rows (the
    records as rows) and seek_ref_records (the records from a name on), and for a
    store that holds no broken refs ref_exists (read_ref finds it) and is_broken
    (never). A backend overrides what it does natively (the files store its
    rows, the reftable store its seek) and says which in scan. A symref's target
    is read with read_target when set (a linked worktree's store: its shared
    targets live in the main store, as git's worktree ref store sees them
    both), else with read_ref."""

    scan: str = SCAN_ROWS
    writes_full_worktree_names: bool = False
    read_target: Callable[[bytes], Ref | None] | None = None

    def read_ref(self, name: bytes) -> Ref | None:
        raise NotImplementedError

    def iter_ref_records(self, prefix: bytes = b"",
                         include_broken: bool = False) -> Iterator[RefRecord]:
        raise NotImplementedError

    def resolve(self, name: bytes, depth: int = 5, allow_bad_name: bool = True,
                as_target: bool = False) -> Ref | None:
        read: Callable[[bytes], Ref | None] = self.read_ref
        if as_target and self.read_target is not None:
            read = self.read_target
        for _ in range(depth + 1):
            ref = read(name)
            if ref is None:
                return None
            if ref.target is None:
                return ref
            name = ref.target
            if not allow_bad_name and not check_refname_format(name, REFNAME_ALLOW_ONELEVEL):
                return None
            read = self.read_target or self.read_ref
        return None

    def ref_exists(self, name: bytes) -> bool:
        return self.read_ref(name) is not None

    def is_broken(self, name: bytes) -> bool:
        return False

    def iter_refs(self, prefix: bytes = b"") -> Iterator[Ref]:
        return map(ref_from_record, self.iter_ref_records(prefix))

    def iter_ref_rows(self, prefix: bytes = b"",
                      include_broken: bool = False) -> Iterator[RefRow]:
        return ((rec.refname, rec.value, rec.target_value, rec.target)
                for rec in self.iter_ref_records(prefix, include_broken))

    def seek_ref_records(self, start: bytes) -> Iterator[RefRecord]:
        return dropwhile(lambda rec: rec.refname < start, self.iter_ref_records(b"refs/"))
