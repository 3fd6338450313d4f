"""The atom protocol of the lab's ref-filter (git's ref-filter.c valid_atom[], its
per-atom parsers and populate_value).

Contract:
  RefItem       a listed ref: full name, object id (raw bytes), symref target (one
                level) or None, and its kind (FILTER_REFS_* as ref-filter.c names them).
  RefItem.flag  git's ref flags (FLAG_SYMREF, FLAG_PACKED) for %(flag).
  GitObject     an object as ref-filter reads it: id, type, inflated content; size is
                the object's size (for a SOURCE_OTHER read, data is b"" and only
                type and size are filled, as git's oid_object_info without contentp).
  AtomValue     what an atom gives for one ref: the bytes printed and, for atoms git
                sorts as numbers (FIELD_ULONG / FIELD_TIME), the number.
  AtomContext   what an atom may read: the repository (refs, objects, config) and a
                cached object loader (object(oid, refname) dies as git does when the
                object is missing: "missing object <hex> for <refname>").
  Atom          one parsed %(name:arg). `source` says what populate_value must fetch
                first: SOURCE_NONE (the ref alone), SOURCE_OTHER (the object's type and
                size only: git's oid_object_info), SOURCE_OBJ (the object's content).
                value(ctx, ref, obj) -> AtomValue, where obj is None for SOURCE_NONE
                atoms and, for "%(*name)", the peeled object (the framework peels).
  AtomParser    parse(ctx_or_none, name, arg) -> Atom: name as written without "*"
                (e.g. "authordate"), arg the text after ":" or None when there is no
                ":" (git treats "%(name:)" as "%(name)": the framework passes None
                for an empty arg too); raises Die with git's message and status when git refuses the
                argument (at format-parse time, before any ref is read, as git does).

Optional on an Atom: prepare(ctx, refs) -> None, called once with every listed ref
before any is formatted (git's filter_ahead_behind / filter_is_base batch steps).
AtomContext also gives use_color (want_color of --color), info(oid, refname) ->
GitObject with type and size (cached), abbrev(oid, n) (n < 0: core.abbrev's default)
shorten(refname) (refs_shorten_unambiguous_ref, cached) and content_read(obj) (was
obj read whole: git's deltabase is then the zero id).

A parse error is gitlike.Die (git's "fatal: ..." and 128); nothing here prints.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

SOURCE_NONE = 0
SOURCE_OBJ = 1
SOURCE_OTHER = 2

# git's ref flags (refs.h REF_ISSYMREF, REF_ISPACKED) as %(flag) shows them
FLAG_SYMREF = 0x01
FLAG_PACKED = 0x02

# ref-filter.c's FILTER_REFS_* kinds of a listed ref
KIND_BRANCH = 0x4
KIND_REMOTE = 0x8
KIND_TAG = 0x2
KIND_OTHER = 0x10
KIND_DETACHED_HEAD = 0x20
KIND_PSEUDOREF = 0x40
KIND_ROOT_REF = 0x80


@dataclass(slots=True)
class RefItem:
    """A listed ref (ref_array_item): its name, object id, symref target or None, kind."""
    name: bytes
    oid: bytes
    target: bytes | None
    kind: int = KIND_OTHER
    flag: int = 0


@dataclass(slots=True)
class GitObject:
    """An object as ref-filter reads it (get_object): id, type name, inflated content."""
    oid: bytes
    type: str
    data: bytes
    size: int = -1


@dataclass(frozen=True, slots=True)
class AtomValue:
    """An atom's value for one ref: the printed bytes and, for a numeric atom, the
    number git sorts by (None: git compares the bytes)."""
    text: bytes
    number: int | None = None


class AtomContext(Protocol):
    repo: Any                     # reftable_core.repo.Repo: .refs, .objects, .config

    use_color: bool

    def object(self, oid: bytes, refname: bytes) -> GitObject: ...

    def info(self, oid: bytes, refname: bytes) -> GitObject: ...

    def abbrev(self, oid: bytes, length: int) -> bytes: ...

    def shorten(self, refname: bytes) -> bytes: ...

    def content_read(self, obj: GitObject) -> bool: ...


class Atom(Protocol):
    source: int

    def value(self, ctx: AtomContext, ref: RefItem, obj: GitObject | None) -> AtomValue: ...


AtomParser = Callable[[Any, str, "str | None"], Atom]
