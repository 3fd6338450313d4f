"""git's .mailmap (mailmap.c read_mailmap, map_user; ident.c apply_mailmap_to_header).

Contract:
  read_mailmap(repo) -> Mailmap   the entries git reads, in its order: <worktree>/.mailmap
      (not in a bare repository), the blob mailmap.blob names (HEAD:.mailmap by default
      in a bare repository), the file mailmap.file names; a missing source is skipped.
  Mailmap.add_line(line)          read_mailmap_line: "Proper <proper@x>", "<proper@x>
      <commit@x>", "Proper <proper@x> Commit <commit@x>"...; "#" lines are comments.
  Mailmap.map_user(name, email) -> (name, email) or None   map_user: the email, then
      the name, matched case-insensitively; None when nothing changes.
  apply_to_header(buf, mailmap, headers) -> bytes   the object with each "author ",
      "committer ", "tagger " header line's "name <email>" rewritten.
"""
from __future__ import annotations

import os
from typing import Any

from ..errors import ReftableError
from ..odb.revision import resolve_revision
from .gitlike import ref_resolver

_SPACE = b" \t\n\v\f\r"
HEADERS = (b"author ", b"committer ", b"tagger ")


class _Entry:
    __slots__ = ("email", "name", "names")

    def __init__(self) -> None:
        self.name: bytes | None = None
        self.email: bytes | None = None
        self.names: dict[bytes, tuple[bytes | None, bytes | None]] = {}


def _name_and_email(buf: bytes, allow_empty: bool
                    ) -> tuple[bytes | None, bytes | None, bytes | None]:
    """parse_name_and_email: (name, email, rest after ">" or None)."""
    left = buf.find(b"<")
    if left < 0:
        return None, None, None
    right = buf.find(b">", left + 1)
    if right < 0 or (not allow_empty and right == left + 1):
        return None, None, None
    name = buf[:left].strip(_SPACE)
    rest = buf[right + 1:]
    return (name or None), buf[left + 1:right], (rest if rest else None)


class Mailmap:
    def __init__(self) -> None:
        self.entries: dict[bytes, _Entry] = {}

    def add_line(self, line: bytes) -> None:
        if line.startswith(b"#"):
            return
        name1, email1, rest = _name_and_email(line, False)
        name2 = email2 = None
        if rest is not None:
            name2, email2, _ = _name_and_email(rest, True)
        if email1 is not None:
            self._add(name1, email1, name2, email2)

    def _add(self, new_name: bytes | None, new_email: bytes | None, old_name: bytes | None,
             old_email: bytes | None) -> None:
        if old_email is None:
            old_email, new_email = new_email, None
        assert old_email is not None
        me = self.entries.setdefault(old_email.lower(), _Entry())
        if old_name is None:
            if new_name is not None:
                me.name = new_name
            if new_email is not None:
                me.email = new_email
        else:
            me.names[old_name.lower()] = (new_name, new_email)

    def read_text(self, text: bytes) -> None:
        for line in text.split(b"\n"):
            self.add_line(line)

    def map_user(self, name: bytes, email: bytes) -> tuple[bytes, bytes] | None:
        me = self.entries.get(email.lower())
        if me is None:
            return None
        new_name, new_email = me.name, me.email
        if me.names:
            sub = me.names.get(name.lower())
            if sub is not None:
                new_name, new_email = sub
        if new_name is None and new_email is None:
            return None
        return (new_name if new_name is not None else name,
                new_email if new_email is not None else email)


def _worktree(repo: Any) -> str | None:
    if repo.is_bare:
        return None
    wt = repo.config.get("core.worktree")
    if wt:
        return str(os.path.join(repo.gitdir, wt))
    gd = os.path.join(repo.gitdir, "gitdir")
    if repo.gitdir != repo.commondir and os.path.isfile(gd):
        with open(gd, "rb") as f:
            return os.path.dirname(f.read().strip().decode("utf-8", "surrogateescape"))
    return str(os.path.dirname(os.path.abspath(repo.gitdir)))


def read_mailmap(repo: Any) -> Mailmap:
    mm = Mailmap()
    top = _worktree(repo)
    if top is not None:
        try:
            with open(os.path.join(top, ".mailmap"), "rb") as f:
                mm.read_text(f.read())
        except OSError:
            pass
    blob = repo.config.get("mailmap.blob")
    if blob is None and repo.is_bare:
        blob = "HEAD:.mailmap"
    if blob:
        try:
            oid = resolve_revision(blob.encode("utf-8", "surrogateescape"),
                                   ref_resolver(repo.refs), lambda: repo.objects,
                                   repo.hash_size)
            if oid is not None:
                typ, data = repo.objects.read(oid)
                if typ == "blob":
                    mm.read_text(data)
        except ReftableError:
            pass
    path = repo.config.get("mailmap.file")
    if path:
        try:
            with open(os.path.expanduser(path), "rb") as f:
                mm.read_text(f.read())
        except OSError:
            pass
    return mm


def _rewrite(person: bytes, mailmap: Mailmap) -> bytes:
    """rewrite_ident_line over one header's value (split_ident_line's name and mail)."""
    lt = person.find(b"<")
    if lt < 0:
        return person
    gt = person.find(b">", lt + 1)
    if gt < 0:
        return person
    begin = len(person[:lt]) - len(person[:lt].lstrip(_SPACE))
    name = person[begin:lt].rstrip(_SPACE)
    mapped = mailmap.map_user(name, person[lt + 1:gt])
    if mapped is None:
        return person
    return person[:begin] + mapped[0] + b" <" + mapped[1] + b">" + person[gt + 1:]


def apply_to_header(buf: bytes, mailmap: Mailmap, headers: tuple[bytes, ...] = HEADERS
                    ) -> bytes:
    out = bytearray()
    pos = 0
    while pos < len(buf) and buf[pos] != 10:
        eol = buf.find(b"\n", pos)
        end = len(buf) if eol < 0 else eol
        line = buf[pos:end]
        for h in headers:
            if line.startswith(h):
                line = h + _rewrite(line[len(h):], mailmap)
                break
        out += line
        if eol < 0:
            return bytes(out)
        out += b"\n"
        pos = eol + 1
    return bytes(out) + buf[pos:]
