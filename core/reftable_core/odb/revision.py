"""Revision names -> object ids: the part of git's object-name.c the lab uses.

Contract:
  resolve_revision(text, resolve_ref, objects, hash_size, ambiguous=None) -> oid or None
      git's repo_get_oid for: a full hex id (with ambiguous given, git's
      warn_ambiguous_refs on: every DWIM_RULES candidate of the hex is read, as
      get_oid_basic's repo_dwim_ref reads them, and ambiguous(hex) is called when
      one resolves; the id is returned either way); a ref name by git's dwim rules
      (DWIM_RULES, first hit wins); a unique abbreviated hex id (4 or more
      digits, looked up in the object store); any of these followed by revision
      suffixes (see apply_suffixes); "<rev>:<path>", the entry at path in the
      tree of rev (git's get_tree_entry; "<rev>:" is the tree itself; the colon
      is the first one outside "{...}"). None when nothing matches, a suffix
      cannot be applied or the path is not in the tree; index names (":path",
      ":N:path", ":/text") name nothing here. objects is a getter of the ObjectStore (or None), called
      only when the revision needs objects (suffixes, abbreviated ids): naming a
      ref or a full id opens no object store.
  apply_suffixes(objects, oid, suffix) -> oid
      ~N (N first parents), ^N (the Nth parent, ^0 the commit itself), ^{} (peel
      tags), ^{commit} (peel, must be a commit), ^{tree} (the commit's tree);
      raises ReftableError when one does not apply.
  parse_commit(data) -> (tree id, [parent ids]) from a commit's header
      (FormatError on a missing tree line or an id that is not hex).
  commit_date(data) -> the committer timestamp (0 if none).
  resolve_range(args, resolve_ref, objects, hash_size) -> (include, exclude)
      git log's revision arguments: A..B, ^A, several starting revisions.

resolve_ref (a RefResolver) maps a full ref name to the id it points at
(symrefs followed) or None; the caller builds it from its ref store, so this
module knows nothing of ref storage (odb sits below refs and repo).
"""
from __future__ import annotations

import binascii
import re
from collections.abc import Callable

from ..errors import FormatError, NotExistError, ReftableError
from .store import ObjectStore
from .tree import tree_entry

RefResolver = Callable[[bytes], bytes | None]
ObjectsGetter = Callable[[], ObjectStore | None]
# told a name git's get_oid_basic warns of (core.warnAmbiguousRefs): a full hex id that
# also names a ref, or a ref name that more than one dwim rule resolves or that is also a
# unique abbreviated object id
Ambiguous = Callable[[bytes], None]

# git's ref_rev_parse_rules, in order
DWIM_RULES = (b"%s", b"refs/%s", b"refs/tags/%s", b"refs/heads/%s", b"refs/remotes/%s",
              b"refs/remotes/%s/HEAD")

MIN_ABBREV = 4

_REV_STEP = re.compile(rb"~(\d*)|\^\{([a-z]*)\}|\^(\d*)")


_HEX_DIGITS = b"0123456789abcdefABCDEF"


def _is_hex(text: bytes) -> bool:
    """Every byte of text a hex digit (git's get_oid_hex's test, byte by byte): what is
    left once bytes.translate has deleted the hex digits, in one C pass (a frozenset's
    issuperset hashes an int object a byte)."""
    return not text.translate(None, _HEX_DIGITS)


def _header_id(value: bytes, what: str) -> bytes:
    """A commit header's hex id: 40 or 64 hex digits (git's get_oid_hex)."""
    if len(value) not in (40, 64) or not _is_hex(value):
        raise FormatError(f"bad {what} pointer in commit")
    return bytes.fromhex(value.decode("ascii"))


def parse_commit(data: bytes) -> tuple[bytes, list[bytes]]:
    """(tree id, [parent ids]) from a commit object's header; FormatError when
    the tree line is missing or an id is not hex (git's "bad tree pointer")."""
    tree = None
    parents = []
    pos = 0
    while True:
        nl = data.find(b"\n", pos)
        if nl < 0 or nl == pos:
            break
        line = data[pos:nl]
        if line.startswith(b"tree "):
            tree = _header_id(line[5:], "tree")
        elif line.startswith(b"parent "):
            parents.append(_header_id(line[7:], "parent"))
        elif tree is not None:
            break
        pos = nl + 1
    if tree is None:
        raise FormatError("commit without a tree line")
    return tree, parents


def commit_date(data: bytes) -> int:
    """The committer timestamp of a commit object (git's parse_commit_date; 0 when
    there is none or it does not parse)."""
    pos = data.find(b"\ncommitter ")
    if pos < 0:
        return 0
    end = data.find(b"\n", pos + 1)
    line = data[pos + 11:end if end >= 0 else len(data)]
    gt = line.rfind(b">")
    fields = line[gt + 1:].split()
    try:
        return int(fields[0]) if gt >= 0 and fields else 0
    except ValueError:
        return 0


def resolve_range(args: list[bytes], resolve_ref: RefResolver, objects: ObjectsGetter,
                  hash_size: int) -> tuple[list[bytes], list[bytes]]:
    """git log's revision arguments -> (included ids, excluded ids), in argument
    order: "A..B" excludes A and includes B (an empty side is HEAD), "^A" excludes
    A, anything else is included; no argument means HEAD. NotExistError names the
    first argument that does not resolve (git's "unknown revision")."""
    include: list[bytes] = []
    exclude: list[bytes] = []

    def one(text: bytes, arg: bytes, into: list[bytes]) -> None:
        oid = resolve_revision(text or b"HEAD", resolve_ref, objects, hash_size)
        if oid is None:
            raise NotExistError(f"ambiguous argument '{arg.decode('utf-8', 'replace')}': "
                                "unknown revision or path not in the working tree.")
        into.append(oid)

    for arg in args or [b"HEAD"]:
        a, dots, b = arg.partition(b"..")
        if dots and not b.startswith(b".") and (a or b):
            one(a, arg, exclude)
            one(b, arg, include)
        elif arg.startswith(b"^") and len(arg) > 1:
            one(arg[1:], arg, exclude)
        else:
            one(arg, arg, include)
    return include, exclude


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


def dwim_ref_count(text: bytes, resolve_ref: RefResolver) -> int:
    """git's repo_dwim_ref (expand_ref) with warn_ambiguous_refs on: every rule's
    candidate is read (expand_ref stops early only when the option is off), the
    number of them that resolve."""
    return sum(1 for rule in DWIM_RULES if resolve_ref(rule % text))


def _resolve_basic(text: bytes, resolve_ref: RefResolver, objects: ObjectsGetter,
                   hash_size: int, ambiguous: Ambiguous | None = None) -> bytes | None:
    """A full hex id (ambiguous: told when a ref has that name, git's get_oid_basic),
    a dwim'd ref name ("@" alone is HEAD: git's interpret_empty_at), or a unique
    abbreviated id (in that order). With ambiguous (git's warn_ambiguous_refs) every
    dwim rule is read, as git's expand_ref reads them, and a name more than one
    resolves, or one that is also a unique abbreviated id, is told; else the first
    rule that resolves wins."""
    if text == b"@":
        text = b"HEAD"
    hexsz = hash_size * 2
    if len(text) == hexsz and _is_hex(text):
        if ambiguous is not None and dwim_ref_count(text, resolve_ref):
            ambiguous(text)
        return binascii.unhexlify(text)
    found = None
    count = 0
    for rule in DWIM_RULES:
        oid = resolve_ref(rule % text)
        if oid:
            if ambiguous is None:
                return oid
            count += 1
            found = found or oid
    if found is not None:
        assert ambiguous is not None
        if count > 1 or _unique_abbrev(text, objects, hexsz) is not None:
            ambiguous(text)
        return found
    return _unique_abbrev(text, objects, hexsz)


def _unique_abbrev(text: bytes, objects: ObjectsGetter, hexsz: int) -> bytes | None:
    """The one object whose id starts with the hex text (at least MIN_ABBREV digits),
    or None."""
    if not MIN_ABBREV <= len(text) < hexsz or not _is_hex(text):
        return None
    store = objects()
    if store is None:
        return None
    t = text.decode().lower()
    hits = [o for o in store.iter_oids() if o.hex().startswith(t)]
    return hits[0] if len(hits) == 1 else None


def _tree_colon(text: bytes) -> int:
    """The index of the first ":" outside "{...}" (git's get_oid_with_context), or -1."""
    if b":" not in text:                    # (memchr) no colon at all: none outside
        return -1
    depth = 0
    for m in _BRACE_OR_COLON.finditer(text):   # only these bytes, found in C
        c = text[m.start()]
        if c == 0x7B:                       # {
            depth += 1
        elif depth and c == 0x7D:           # }
            depth -= 1
        elif not depth and c == 0x3A:       # :
            return m.start()
    return -1


_BRACE_OR_COLON = re.compile(rb"[{}:]")


def _resolve_path(rev: bytes, path: bytes, resolve_ref: RefResolver, objects: ObjectsGetter,
                  hash_size: int, ambiguous: Ambiguous | None = None) -> bytes | None:
    """The id of path in the tree rev names (commits and tags peeled), or None."""
    base = resolve_revision(rev, resolve_ref, objects, hash_size, ambiguous)
    store = objects() if base is not None else None
    if store is None or base is None:
        return None
    try:
        oid = store.peel(base)
        typ = store.read_header(oid)[0]
        if typ == "commit":
            oid = _commit(store, oid)[0]
        elif typ != "tree":
            return None
        hit = tree_entry(store, oid, path)
    except ReftableError:
        return None
    return hit[0] if hit is not None else None


def _suffix_start(text: bytes) -> int:
    """Where the run of revision suffixes (~N, ^N, ^{type}) that ends text starts
    (len(text): none), found from its end as git's get_oid_1 finds its last suffix: a
    closing brace back to its "^{" (peel_onion), else the digits back to a "~" or "^"."""
    end = len(text)
    if b"^" not in text and b"~" not in text:            # (memchr) no suffix can end it
        return end
    while end:
        if text[end - 1] == 0x7D:                         # "}"
            at = text.rfind(b"^{", 0, end - 1)
            if at < 0:
                break
            kind = text[at + 2:end - 1]                   # [a-z]*, maybe empty
            if kind and not (kind.isalpha() and kind.islower()):
                break
            end = at
            continue
        at = end
        while at and 0x30 <= text[at - 1] <= 0x39:       # digits
            at -= 1
        if not at or text[at - 1] not in (0x7E, 0x5E):     # "~", "^"
            break
        end = at - 1
    return end


def resolve_revision(text: bytes, resolve_ref: RefResolver, objects: ObjectsGetter,
                     hash_size: int, ambiguous: Ambiguous | None = None) -> bytes | None:
    """The object id text names (see the module contract), or None."""
    colon = _tree_colon(text)
    if colon == 0:
        return None                         # the index: not modelled
    if colon > 0:
        return _resolve_path(text[:colon], text[colon + 1:], resolve_ref, objects, hash_size,
                             ambiguous)
    start = _suffix_start(text)
    if 0 < start < len(text):
        base = _resolve_basic(text[:start], resolve_ref, objects, hash_size, ambiguous)
        if base is None:
            return None
        try:
            return apply_suffixes(objects(), base, text[start:])
        except ReftableError:
            return None
    return _resolve_basic(text, resolve_ref, objects, hash_size, ambiguous)
