"""Revision names -> object ids: the part of git's object-name.c the lab uses.

Contract:
  resolve_revision(text, resolve_ref, objects, hash_size) -> oid or None
      git's repo_get_oid for: a full hex id; a ref name by git's dwim rules
      (DWIM_RULES, first hit wins); a unique abbreviated hex id (4 or more
      digits, looked up in the object store); any of these followed by revision
      suffixes (see apply_suffixes). None when nothing matches or a suffix
      cannot be applied. objects is a getter of the ObjectStore (or None), called
      only when the revision needs objects (suffixes, abbreviated ids): naming a
      ref or a full id opens no object store.
  apply_suffixes(objects, oid, suffix) -> oid
      ~N (N first parents), ^N (the Nth parent, ^0 the commit itself), ^{} (peel
      tags), ^{commit} (peel, must be a commit), ^{tree} (the commit's tree);
      raises ReftableError when one does not apply.
  parse_commit(data) -> (tree id, [parent ids]) from a commit's header.

resolve_ref (a RefResolver) maps a full ref name to the id it points at
(symrefs followed) or None; the caller builds it from its ref store, so this
module knows nothing of ref storage (odb sits below refs and repo).
"""
from __future__ import annotations

import re
from collections.abc import Callable

from ..errors import FormatError, ReftableError
from .store import ObjectStore

RefResolver = Callable[[bytes], bytes | None]
ObjectsGetter = Callable[[], ObjectStore | None]

# git's ref_rev_parse_rules, in order
DWIM_RULES = (b"%s", b"refs/%s", b"refs/tags/%s", b"refs/heads/%s", b"refs/remotes/%s",
              b"refs/remotes/%s/HEAD")

MIN_ABBREV = 4

_REV_SUFFIX = re.compile(rb"(?:~\d*|\^\d*|\^\{[a-z]*\})+$")
_REV_STEP = re.compile(rb"~(\d*)|\^\{([a-z]*)\}|\^(\d*)")


def parse_commit(data: bytes) -> tuple[bytes, list[bytes]]:
    """(tree id, [parent ids]) from a commit object's header."""
    tree = None
    parents = []
    pos = 0
    while True:
        nl = data.find(b"\n", pos)
        if nl < 0 or nl == pos:
            break
        line = data[pos:nl]
        if line.startswith(b"tree "):
            tree = bytes.fromhex(line[5:].decode("ascii"))
        elif line.startswith(b"parent "):
            parents.append(bytes.fromhex(line[7:].decode("ascii")))
        elif tree is not None:
            break
        pos = nl + 1
    if tree is None:
        raise FormatError("commit without a tree line")
    return tree, parents


def _commit(objects: ObjectStore, oid: bytes) -> tuple[bytes, list[bytes]]:
    typ, data = objects.read(oid)
    if typ != "commit":
        raise ReftableError(f"{oid.hex()} is a {typ}, not a commit")
    return parse_commit(data)


def apply_suffixes(objects: ObjectStore | None, oid: bytes, suffix: bytes) -> bytes:
    """git's revision suffixes on oid: ~N, ^N, ^{}, ^{commit}, ^{tree}."""
    if objects is None:
        raise ReftableError("no object store")
    for m in _REV_STEP.finditer(suffix):
        tilde, peel, caret = m.group(1), m.group(2), m.group(3)
        if peel is not None:
            oid = objects.peel(oid)
            if peel == b"tree":
                oid = _commit(objects, oid)[0]
            elif peel not in (b"", b"commit"):
                raise ReftableError(f"unsupported peel ^{{{peel.decode()}}}")
            elif peel == b"commit" and objects.read_header(oid)[0] != "commit":
                raise ReftableError("not a commit")
            continue
        if tilde is not None:
            for _ in range(int(tilde) if tilde else 1):
                parents = _commit(objects, objects.peel(oid))[1]
                if not parents:
                    raise ReftableError("no parent")
                oid = parents[0]
            continue
        n = int(caret) if caret else 1
        commit = objects.peel(oid)
        if n == 0:
            oid = commit
            continue
        parents = _commit(objects, commit)[1]
        if len(parents) < n:
            raise ReftableError("no such parent")
        oid = parents[n - 1]
    return oid


def _resolve_basic(text: bytes, resolve_ref: RefResolver, objects: ObjectsGetter,
                   hash_size: int) -> bytes | None:
    """A full hex id, a dwim'd ref name, or a unique abbreviated id (in that order)."""
    hexsz = hash_size * 2
    if len(text) == hexsz:
        try:
            return bytes.fromhex(text.decode("ascii"))
        except (ValueError, UnicodeDecodeError):
            pass
    for rule in DWIM_RULES:
        oid = resolve_ref(rule % text)
        if oid:
            return oid
    if MIN_ABBREV <= len(text) < hexsz:
        try:
            int(text, 16)
        except ValueError:
            return None
        store = objects()
        if store is None:
            return None
        t = text.decode().lower()
        hits = [o for o in store.iter_oids() if o.hex().startswith(t)]
        if len(hits) == 1:
            return hits[0]
    return None


def resolve_revision(text: bytes, resolve_ref: RefResolver, objects: ObjectsGetter,
                     hash_size: int) -> bytes | None:
    """The object id text names (see the module contract), or None."""
    m = _REV_SUFFIX.search(text)
    if m is not None and m.start() > 0:
        base = _resolve_basic(text[:m.start()], resolve_ref, objects, hash_size)
        if base is None:
            return None
        try:
            return apply_suffixes(objects(), base, text[m.start():])
        except ReftableError:
            return None
    return _resolve_basic(text, resolve_ref, objects, hash_size)
