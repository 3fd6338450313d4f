"""The backend-neutral ref store interface (git's ref_store vtable).

Contract: both backends (reftable stack, files = loose + packed-refs) implement
RefStore; the CLI (show-ref, update-ref) and the lab only talk to this. Object
ids are raw bytes (20 for SHA-1, 32 for SHA-256); repr() prints them in hex.
Refnames are bytes. Both stores also give their refs as reftable RefRecords
(iter_ref_records), the one record shape the CLI's hot loops read;
ref_from_record turns one into a Ref.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator, Protocol, runtime_checkable

from ..reftable.record import HASH_IDS, REF_SYMREF, REF_VAL2, RefRecord, repr_hex_ids

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


@runtime_checkable
class Transaction(Protocol):
    def queue(self, update: RefUpdate) -> None: ...
    def prepare(self) -> None: ...
    def commit(self) -> None: ...
    def abort(self) -> None:
        """git's ref_transaction_abort (runs the hook's "aborted")."""
        ...

    def release(self) -> None:
        """Release locks and close without the hook (cleanup when dying)."""
        ...


@runtime_checkable
class RefStore(Protocol):
    hash_size: int

    def read_ref(self, name: bytes) -> Ref | None:
        """The ref named name (symrefs not followed), or None."""
        ...

    def resolve(self, name: bytes, depth: int = 5) -> Ref | None:
        """Follow symrefs up to depth levels; a Ref with value set, or None."""
        ...

    def iter_refs(self, prefix: bytes = b"") -> Iterator[Ref]:
        """Every live ref under refs/ starting with prefix, sorted by name."""
        ...

    def iter_ref_records(self, prefix: bytes = b"") -> Iterator[RefRecord]:
        """The refs of iter_refs(prefix) as ref records: value_type 1 (value), 2
        (value and target_value, the peeled id, when the store knows it) or 3
        (symref target, unresolved). The show-ref loop reads these directly.
        A store that can hold broken refs (files: unparseable loose contents, a
        name failing the format check) also takes include_broken=True and then
        gives each broken ref in its place as a value record whose value is the
        zero id: the broken-ref record (git's REF_ISBROKEN with a cleared oid)."""
        ...

    def iter_log(self, name: bytes) -> Iterator[LogEntry]:
        """Reflog entries of name, newest first."""
        ...

    def transaction(self) -> Transaction: ...

    def close(self) -> None: ...


def ref_from_record(rec: RefRecord) -> Ref:
    """The Ref for a live ref record (value types 1, 2 and 3)."""
    vt = rec.value_type
    if vt == REF_SYMREF:
        return Ref(rec.refname, None, None, rec.target)
    if vt == REF_VAL2:
        return Ref(rec.refname, rec.value, rec.target_value, None)
    return Ref(rec.refname, rec.value, None, None)


class RefStoreBase:
    """What both backends derive from their own read_ref and iter_ref_records:
    resolve (follow symrefs, at most depth levels, like git's
    refs_resolve_ref_unsafe) and iter_refs (the records as Refs). A symref's
    target is read with read_target when set (a linked worktree's store: its
    shared targets live in the main store, as git's worktree ref store sees
    them both), else with read_ref."""

    read_target: Callable[[bytes], Ref | None] | None = None

    def read_ref(self, name: bytes) -> Ref | None:
        raise NotImplementedError

    def iter_ref_records(self, prefix: bytes = b"") -> Iterator[RefRecord]:
        raise NotImplementedError

    def resolve(self, name: bytes, depth: int = 5) -> Ref | None:
        read: Callable[[bytes], Ref | None] = self.read_ref
        for _ in range(depth + 1):
            ref = read(name)
            if ref is None:
                return None
            if ref.target is None:
                return ref
            name = ref.target
            read = self.read_target or self.read_ref
        return None

    def iter_refs(self, prefix: bytes = b"") -> Iterator[Ref]:
        return map(ref_from_record, self.iter_ref_records(prefix))


@runtime_checkable
class SeekableRefStore(RefStore, Protocol):
    """A RefStore whose refs come from one merged, seekable record iterator (the
    reftable backend). show-ref's hot loop reads that iterator itself, as git's
    show-ref reads the merged iterator; the files backend has no such iterator
    (loose and packed refs are merged by name) and is read through iter_ref_records."""

    def ref_record_iter(self, start: bytes) -> Iterator[RefRecord]:
        """Raw ref records from start to the end of the refs, deletions suppressed;
        the caller stops at its own bound."""
        ...
