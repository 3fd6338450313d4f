"""Tree objects: git's tree entry format and the path lookup under <rev>:<path>.

Contract:
  split_tree(data, hash_len) -> [raw entry] in tree order: each entry's bytes
      ("<mode> <name>\0<id>"), so that two entries are the same entry exactly when
      their bytes are equal; FormatError on a malformed entry or mode, checked for
      every entry here (as git dies on any, even one a diff skips).
  decode_entry(raw) -> (sort_key, mode, oid, is_dir) of one entry split_tree gave;
      the key is the name (+ b"/" for trees), the mode canonical (canon_mode).
  parse_tree(data, hash_len) -> [decode_entry(raw) for each entry].
  canon_mode(mode) -> git's canonical mode (100644/100755, 040000, 120000, 160000).
  tree_entry(objects, tree, path) -> (oid, mode) of the entry at path below the
      tree id tree (git's get_tree_entry: "/"-separated names, one trailing "/"
      allowed after a tree, no empty name; an empty path is the tree itself), or None when a component is
      missing or not a tree. NotExistError when an object is missing.
"""
from __future__ import annotations

import re

from ..errors import FormatError
from .store import ObjectStore

S_IFMT = 0o170000
S_IFDIR = 0o040000
S_IFLNK = 0o120000
S_IFGITLINK = 0o160000


def canon_mode(mode: int) -> int:
    t = mode & S_IFMT
    if t == 0o100000:
        return 0o100755 if mode & 0o100 else 0o100644
    if t in (S_IFDIR, S_IFLNK, S_IFGITLINK):
        return t
    return S_IFGITLINK if mode == S_IFGITLINK else mode


# the modes git writes, as their text in a tree entry: (canonical mode, is a tree);
# any other text is parsed and canonicalized (the same result, by the longer path)
_KNOWN_MODES: dict[bytes, tuple[int, bool]] = {
    b"%o" % m: (canon_mode(m), m & S_IFMT == S_IFDIR)
    for m in (0o100644, 0o100755, S_IFDIR, S_IFLNK, S_IFGITLINK)}


def _mode(text: bytes, pos: int) -> tuple[int, bool]:
    try:
        mode = int(text, 8)
    except ValueError:
        raise FormatError("bad tree entry mode", offset=pos) from None
    return canon_mode(mode), mode & S_IFMT == S_IFDIR


# an entry with a mode git writes, as one match; a tree made only of those is split
# by one findall (in C), any other tree by _split_checked, entry by entry
_ENTRY_PATTERNS: dict[int, re.Pattern[bytes]] = {}


def _entry_pattern(hash_len: int) -> re.Pattern[bytes]:
    pat = _ENTRY_PATTERNS.get(hash_len)
    if pat is None:
        modes = b"|".join(_KNOWN_MODES)
        pat = _ENTRY_PATTERNS[hash_len] = re.compile(
            b"(?:%s) [^\\0]+\\0.{%d}" % (modes, hash_len), re.DOTALL)
    return pat


def split_tree(data: bytes, hash_len: int) -> list[bytes]:
    """The raw entries of a tree, in order (see the module contract)."""
    entries: list[bytes] = _entry_pattern(hash_len).findall(data)
    # the matches never overlap: together as long as data, they are its entries
    # one after the other from offset 0, as the entry-by-entry parse finds them
    if sum(map(len, entries)) != len(data):
        entries = _split_checked(data, hash_len)
    return entries


def _split_checked(data: bytes, hash_len: int) -> list[bytes]:
    """split_tree entry by entry: any mode (parsed and checked), every error."""
    out: list[bytes] = []
    append = out.append
    pos = 0
    n = len(data)
    find = data.find
    while pos < n:
        sp = find(b" ", pos)
        nul = find(b"\0", sp + 1)
        if sp < 0 or nul < 0 or nul + 1 + hash_len > n:
            raise FormatError("malformed tree entry", offset=pos)
        text = data[pos:sp]
        if text not in _KNOWN_MODES:
            _mode(text, pos)
        if nul == sp + 1:               # git's decode_tree_entry, in its words
            raise FormatError("empty filename in tree entry", offset=pos)
        end = nul + 1 + hash_len
        append(data[pos:end])
        pos = end
    return out


def decode_entry(raw: bytes) -> tuple[bytes, int, bytes, bool]:
    """(sort_key, mode, oid, is_dir) of an entry split_tree returned."""
    sp = raw.find(b" ")
    nul = raw.find(b"\0", sp + 1)
    text = raw[:sp]
    mode, isdir = _KNOWN_MODES.get(text) or _mode(text, 0)
    name = raw[sp + 1:nul]
    return (name + b"/" if isdir else name), mode, raw[nul + 1:], isdir


def parse_tree(data: bytes, hash_len: int) -> list[tuple[bytes, int, bytes, bool]]:
    """[(sort_key, mode, oid, is_dir)] in tree order; the key is name (+ b'/' for trees)."""
    return [decode_entry(raw) for raw in split_tree(data, hash_len)]


def tree_entry(objects: ObjectStore, tree: bytes, path: bytes) -> tuple[bytes, int] | None:
    """The (oid, mode) at path below tree, or None (see the module contract)."""
    oid, mode = tree, S_IFDIR
    if not path:
        return oid, mode
    names = path.split(b"/")
    must_be_dir = not names[-1]
    if must_be_dir:
        names.pop()
    for name in names:
        if not name or mode & S_IFMT != S_IFDIR:
            return None
        typ, data = objects.read(oid)
        if typ != "tree":
            raise FormatError(f"{oid.hex()} is not a tree")
        for key, m, entry, isdir in parse_tree(data, len(oid)):
            if (key[:-1] if isdir else key) == name:
                oid, mode = entry, m
                break
        else:
            return None
    if must_be_dir and mode & S_IFMT != S_IFDIR:
        return None
    return oid, mode
