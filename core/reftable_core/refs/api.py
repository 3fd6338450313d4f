"""The backend-neutral ref store interface (git's ref_store vtable).

Contract: both backends (reftable stack, files = loose + packed-refs) implement
RefStore; the CLI (show-ref, update-ref) and the lab only talk to this. Object
ids are raw bytes (20 for SHA-1, 32 for SHA-256). Refnames are bytes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class Ref:
    name: bytes
    value: bytes | None = None        # object id of a direct ref
    peeled: bytes | None = None       # peeled object id when the store knows it (annotated tag)
    target: bytes | None = None       # symref target refname (value is None then)

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


@dataclass(slots=True)
class RefUpdate:
    """One queued change of a transaction (git's ref_update)."""
    refname: bytes
    new_value: bytes | None = None    # None: leave value alone (verify); zero id: delete
    old_value: bytes | None = None    # None: no check; zero id: must not exist
    new_target: bytes | None = None   # symref update
    message: bytes = b""
    flags: set[str] = field(default_factory=set)   # {"create", "update", "delete", "verify"}


@runtime_checkable
class Transaction(Protocol):
    def queue(self, update: RefUpdate) -> None: ...
    def prepare(self) -> None: ...
    def commit(self) -> None: ...
    def abort(self) -> None: ...


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

    def iter_log(self, name: bytes) -> Iterator[LogEntry]:
        """Reflog entries of name, newest first."""
        ...

    def transaction(self) -> Transaction: ...


def old_value_mismatch(refname: bytes, current: bytes, expected: bytes, zero: bytes) -> str:
    """git's message when a queued update's old value does not match the ref."""
    name = refname.decode()
    if expected == zero:
        return f"cannot lock ref '{name}': reference already exists"
    if current == zero:
        return f"cannot lock ref '{name}': reference is missing but expected {expected.hex()}"
    return f"cannot lock ref '{name}': is at {current.hex()} but expected {expected.hex()}"


class QueuedUpdate:
    """A RefUpdate as a transaction works on it (git's ref_update after queueing):
    the symref it came through, whether it only writes a log, the value read at
    prepare time. Shared by both backends' transactions."""
    __slots__ = ("current", "log_only", "msg", "new_target", "new_value", "no_deref",
                 "old_value", "original", "refname", "via_head")

    def __init__(self, refname: bytes, new_value: bytes | None, old_value: bytes | None,
                 new_target: bytes | None, msg: bytes, no_deref: bool = False,
                 log_only: bool = False, via_head: bool = False,
                 original: bytes | None = None) -> None:
        self.refname = refname
        self.new_value = new_value
        self.old_value = old_value
        self.new_target = new_target
        self.msg = msg
        self.no_deref = no_deref
        self.log_only = log_only
        self.via_head = via_head
        self.current = b""
        self.original = original or refname
