"""Atoms that read an object's content (ref-filter.c grab_values and its helpers): the
fields of a commit's and a tag's header, the object's raw bytes, and the helpers the
other object-atom modules share (person_atoms, contents_atoms, signature_atoms,
describe_atoms).

Contract: OBJECT_ATOMS maps each atom name (without "*") to its AtomParser (atom.py);
a parser raises Die with git's words for an argument git refuses, at parse time; an
atom's value reads only `obj` (the ref's object, or for "%(*name)" the peeled one the
framework passes) and gives "" where git leaves the field empty (e.g. %(tree) of a
blob). Numeric atoms (FIELD_ULONG) carry the number git sorts by.
  tree, parent [:short | :short=N]; numparent        of a commit
  object, type, tag                                 of a tag (its header lines)
  raw [:size]       the object's bytes, any type
Shared: ObjectAtom (the base: no object gives "" or 0), cstr (a message is a C string
to git: it stops at the first NUL byte), header_lines.
"""
from __future__ import annotations

from typing import Any

from .atom import SOURCE_OBJ, AtomContext, AtomParser, AtomValue, GitObject, RefItem
from .ref_atoms import EMPTY, err_bad_arg, parse_oid_option, show_oid


def cstr(data: bytes) -> bytes:
    nul = data.find(b"\0")
    return data if nul < 0 else data[:nul]


# -- commits and tags: header fields ------------------------------------------------
def header_lines(data: bytes) -> list[bytes]:
    end = data.find(b"\n\n")
    head = data if end < 0 else data[:end]
    return head.split(b"\n")


def _commit_ids(data: bytes) -> tuple[bytes | None, list[bytes]]:
    tree: bytes | None = None
    parents: list[bytes] = []
    for line in header_lines(data):
        if line.startswith(b"tree ") and tree is None:
            tree = bytes.fromhex(line[5:].decode("ascii"))
        elif line.startswith(b"parent "):
            parents.append(bytes.fromhex(line[7:].decode("ascii")))
        elif tree is not None and not line.startswith(b"parent "):
            break
    return tree, parents


def _tag_field(data: bytes, key: bytes) -> bytes | None:
    for line in header_lines(data):
        if line.startswith(key + b" "):
            return line[len(key) + 1:]
    return None


class ObjectAtom:
    source = SOURCE_OBJ
    numeric = False

    def value(self, ctx: AtomContext, ref: RefItem, obj: GitObject | None) -> AtomValue:
        if obj is None:
            return AtomValue(b"", 0 if self.numeric else None)
        return self.get(ctx, obj)

    def get(self, ctx: AtomContext, obj: GitObject) -> AtomValue:
        raise NotImplementedError        # every atom class defines it


class TreeAtom(ObjectAtom):
    def __init__(self, length: int) -> None:
        self.length = length

    def get(self, ctx: AtomContext, obj: GitObject) -> AtomValue:
        if obj.type != "commit":
            return EMPTY
        tree, _ = _commit_ids(obj.data)
        return AtomValue(show_oid(ctx, tree, self.length)) if tree else EMPTY


class ParentAtom(TreeAtom):
    def get(self, ctx: AtomContext, obj: GitObject) -> AtomValue:
        if obj.type != "commit":
            return EMPTY
        _, parents = _commit_ids(obj.data)
        return AtomValue(b" ".join(show_oid(ctx, p, self.length) for p in parents))


class NumparentAtom(ObjectAtom):
    numeric = True

    def get(self, ctx: AtomContext, obj: GitObject) -> AtomValue:
        if obj.type != "commit":
            return AtomValue(b"", 0)
        n = len(_commit_ids(obj.data)[1])
        return AtomValue(str(n).encode(), n)


class TagFieldAtom(ObjectAtom):
    """object / type / tag of a tag object (parse_tag's lines)."""

    def __init__(self, key: bytes) -> None:
        self.key = key

    def get(self, ctx: AtomContext, obj: GitObject) -> AtomValue:
        if obj.type != "tag":
            return EMPTY
        v = _tag_field(obj.data, self.key)
        return AtomValue(v) if v is not None else EMPTY


def parse_tree(ctx: Any, name: str, arg: str | None) -> TreeAtom:
    return TreeAtom(parse_oid_option(name, arg))


def parse_parent(ctx: Any, name: str, arg: str | None) -> ParentAtom:
    return ParentAtom(parse_oid_option(name, arg))


def parse_numparent(ctx: Any, name: str, arg: str | None) -> NumparentAtom:
    return NumparentAtom()


def _tag_parser(key: bytes) -> AtomParser:
    def parse(ctx: Any, name: str, arg: str | None) -> TagFieldAtom:
        return TagFieldAtom(key)
    return parse



# -- raw ---------------------------------------------------------------------------
class RawAtom(ObjectAtom):
    def __init__(self, size: bool) -> None:
        self.size = size
        self.numeric = size

    def get(self, ctx: AtomContext, obj: GitObject) -> AtomValue:
        if self.size:
            return AtomValue(str(len(obj.data)).encode(), len(obj.data))
        return AtomValue(obj.data)


def parse_raw(ctx: Any, name: str, arg: str | None) -> RawAtom:
    if arg is None or arg == "size":
        return RawAtom(arg == "size")
    raise err_bad_arg("raw", arg)



OBJECT_ATOMS: dict[str, AtomParser] = {
    "tree": parse_tree,
    "parent": parse_parent,
    "numparent": parse_numparent,
    "object": _tag_parser(b"object"),
    "type": _tag_parser(b"type"),
    "tag": _tag_parser(b"tag"),
    "raw": parse_raw,
}
