"""Person and date atoms (ref-filter.c grab_person, grab_date).

Contract: PERSON_ATOMS maps each name (without "*") to its AtomParser (atom.py); a
parser raises Die with git's words for an argument git refuses. A value reads only
`obj` and gives "" (0 for a date sorted as a number) where git leaves it empty
(%(authordate) of a tag). A date with a format sorts as text, as grab_date makes it
FIELD_STR.
  author, committer, tagger [name | email | date]   grab_person; <who>name takes
      mailmap, <who>email trim / localpart / mailmap (comma separated; mailmap maps
      the header lines through builtin.mailmap first); <who>date takes a date.c format (its
      unknown format dies when a value is computed, as git's grab_date does)
  creator, creatordate                              the committer of a commit, the
      tagger of a tag
"""
from __future__ import annotations

import re
from typing import Any

from ...errors import ReftableError
from ...refs.date import DateMode, parse_date_format, show_date
from ..gitlike import Die
from ..mailmap import Mailmap, apply_to_header, read_mailmap
from .atom import AtomContext, AtomParser, AtomValue, GitObject, RefItem
from .object_atoms import ObjectAtom, cstr
from .ref_atoms import EMPTY, err_bad_arg


def find_wholine(who: bytes, buf: bytes) -> bytes:
    """The rest of the object from after "<who> " on its header line, b"" if none."""
    pos = 0
    n = len(buf)
    while pos < n:
        if buf.startswith(who + b" ", pos):
            return buf[pos + len(who) + 1:]
        eol = buf.find(b"\n", pos)
        if eol < 0:
            return b""
        eol += 1
        if eol < n and buf[eol] == 10:
            return b""
        pos = eol
    return b""


def copy_line(buf: bytes) -> bytes:
    eol = buf.find(b"\n")
    return buf if eol < 0 else buf[:eol]


def copy_name(buf: bytes) -> bytes:
    line = copy_line(buf)
    i = line.find(b" <")
    return line[:i] if i >= 0 else b""


EO_RAW, EO_TRIM, EO_LOCALPART, EO_MAILMAP = 0, 1, 2, 4


def copy_email(buf: bytes, opt: int) -> bytes:
    start = buf.find(b"<")
    if start < 0:
        return b""
    if opt & (EO_LOCALPART | EO_TRIM):
        start += 1
    if opt & EO_LOCALPART:
        end = buf.find(b"@", start)
        if end < 0:
            end = buf.find(b">", start)
    elif opt & EO_TRIM:
        end = buf.find(b">", start)
    else:
        end = buf.find(b">", start)
        if end >= 0:
            end += 1
    return b"" if end < 0 else buf[start:end]


_TIME_MAX = 2 ** 64 - 1
_LONG_MAX = 2 ** 63 - 1
_NUM = re.compile(rb"[ \t\n\v\f\r]*([+-]?)([0-9]*)")


def grab_date(buf: bytes, mode: DateMode | None, fmt: str | None) -> AtomValue:
    """grab_date: the timestamp after "> " (strtoumax), its zone (strtol)."""
    eo = buf.find(b"> ")
    bad = AtomValue(b"", None if fmt is not None else 0)
    if eo < 0:
        return bad
    m = _NUM.match(buf, eo + 2)
    assert m is not None
    if m.group(2):
        ts = min(int(m.group(2)), _TIME_MAX)
        if m.group(1) == b"-" and ts:
            ts = 2 ** 64 - ts
        zone_at = m.end()
    else:
        ts, zone_at = 0, eo + 2
    if ts >= _TIME_MAX:
        return bad
    z = _NUM.match(buf, zone_at)
    assert z is not None
    tz = int(z.group(2)) if z.group(2) else 0
    if z.group(1) == b"-":
        tz = -tz
    if abs(tz) > _LONG_MAX:
        return bad
    if mode is None:
        if fmt is None:
            mode = DateMode()
        else:
            try:
                mode = parse_date_format(fmt)
            except ReftableError as err:
                raise Die(str(err)) from None
    try:
        text = show_date(ts, tz, mode)
    except (OverflowError, ValueError):
        text = show_date(0, 0, mode)
    return AtomValue(text.encode("utf-8", "surrogateescape"),
                     None if fmt is not None else ts)


_WHO_OF = {"commit": (b"author", b"committer"), "tag": (b"tagger",)}


class PersonAtom(ObjectAtom):
    """<who>, <who>name, <who>email, <who>date of grab_person; creator, creatordate."""

    def __init__(self, who: bytes, field: str, email_opt: int = EO_RAW,
                 date_fmt: str | None = None, bogus: bool = False,
                 use_mailmap: bool = False) -> None:
        self.use_mailmap = use_mailmap
        self.mailmap: Mailmap | None = None
        self.who = who
        self.field = field
        self.email_opt = email_opt
        self.date_fmt = date_fmt
        self.bogus = bogus          # "%(author:x)": git matches no field, prints ""
        self.numeric = field == "date" and date_fmt is None
        self.mode: DateMode | None = None

    def get(self, ctx: AtomContext, obj: GitObject) -> AtomValue:
        whos = _WHO_OF.get(obj.type, ())
        if self.who == b"creator":
            if not whos:
                return self.value(ctx, RefItem(b"", b"", None), None)
            who = b"committer" if obj.type == "commit" else b"tagger"
        elif self.who in whos:
            who = self.who
        else:
            return self.value(ctx, RefItem(b"", b"", None), None)
        if self.bogus:
            return EMPTY
        buf = cstr(obj.data)
        if self.use_mailmap:
            if self.mailmap is None:
                self.mailmap = read_mailmap(ctx.repo)
            buf = apply_to_header(buf, self.mailmap)
        line = find_wholine(who, buf)
        if self.field == "":
            return AtomValue(copy_line(line))
        if self.field == "name":
            return AtomValue(copy_name(line))
        if self.field == "email":
            return AtomValue(copy_email(line, self.email_opt))
        if self.mode is None and self.date_fmt is not None:
            try:
                self.mode = parse_date_format(self.date_fmt)
            except ReftableError as err:
                raise Die(str(err)) from None
        return grab_date(line, self.mode, self.date_fmt)


def _person_parser(who: str, field: str) -> AtomParser:
    def parse(ctx: Any, name: str, arg: str | None) -> PersonAtom:
        w = who.encode()
        if field == "name":
            if arg is not None and arg != "mailmap":
                raise err_bad_arg(name, arg)
            return PersonAtom(w, "name", use_mailmap=arg is not None)
        if field == "email":
            opt = _email_option(name, arg)
            return PersonAtom(w, "email", opt, use_mailmap=bool(opt & EO_MAILMAP))
        if field == "date":
            return PersonAtom(w, "date", date_fmt=arg)
        return PersonAtom(w, "", bogus=arg is not None and who != "creator")
    return parse


def _email_option(name: str, arg: str | None) -> int:
    """person_email_atom_parser: trim / localpart, comma separated."""
    opt = EO_RAW
    if arg is None:
        return opt
    rest = arg
    while True:
        bad = rest
        if rest.startswith("trim"):
            opt |= EO_TRIM
            rest = rest[4:]
        elif rest.startswith("localpart"):
            opt |= EO_LOCALPART
            rest = rest[9:]
        elif rest.startswith("mailmap"):
            opt |= EO_MAILMAP
            rest = rest[7:]
        else:
            raise err_bad_arg(name, bad)
        if not rest:
            return opt
        if rest[0] != ",":
            raise err_bad_arg(name, rest)
        rest = rest[1:]
        if not rest:
            raise err_bad_arg(name, rest)



PERSON_ATOMS: dict[str, AtomParser] = {
    "creator": _person_parser("creator", ""),
    "creatordate": _person_parser("creator", "date"),
}
for _who in ("author", "committer", "tagger"):
    PERSON_ATOMS[_who] = _person_parser(_who, "")
    for _field in ("name", "email", "date"):
        PERSON_ATOMS[_who + _field] = _person_parser(_who, _field)
