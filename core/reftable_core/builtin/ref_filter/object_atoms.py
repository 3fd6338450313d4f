"""Atoms that read an object's content (ref-filter.c grab_values and its helpers).

Contract: OBJECT_ATOMS maps each atom name (without "*") to its AtomParser (atom.py);
a parser raises Die with git's words for an argument git refuses, at parse time; an
atom's value reads only `obj` (the ref's object, or for "%(*name)" the peeled one the
framework passes) and gives "" where git leaves the field empty (e.g. %(authordate)
of a tag, %(tree) of a blob). Numeric atoms (FIELD_ULONG / FIELD_TIME) carry the number
git sorts by; a date with a format sorts as text, as grab_date makes it FIELD_STR.
  tree, parent [:short | :short=N]; numparent        of a commit
  object, type, tag                                 of a tag (its header lines)
  author, committer, tagger [name | email | date]   grab_person; <who>name takes
      mailmap, <who>email trim / localpart / mailmap (comma separated; mailmap maps
      the header lines through builtin.mailmap first); <who>date takes a date.c format (its
      unknown format dies when a value is computed, as git's grab_date does)
  creator, creatordate                              the committer of a commit, the
      tagger of a tag
  subject [:sanitize], body, contents [:subject | :body | :signature | :size |
      :lines=N | :trailers[:opts]], trailers [:opts]  find_subpos's split of a commit
      or tag message; the trailer options of pretty.c's format_set_trailers_options
      (key=, only, unfold, keyonly, valueonly, separator=, key_value_separator=) over
      trailer.c's trailer block (default separators ":", no trailer.* config).
  signature [:signer | :grade | :key | :fingerprint | :primarykeyfingerprint |
      :trustlevel]   of a commit: an unsigned commit gives git's "no signature"
      answer (grade N, trust level "undefined"); a signed one dies ("verifying
      commit signatures is not implemented"): the lab runs no gpg.
  raw [:size]       the object's bytes, any type
upstream and push come from remote_atoms (REMOTE_ATOMS, included here).
  describe [:tags[=bool] | :abbrev=N | :match=P | :exclude=P]   builtin.describe of a
      commit or of the commit a tag names; "" when describe finds nothing (git's child
      process fails quietly).
Messages are C strings to git: the contents atoms stop at the first NUL byte.
"""
from __future__ import annotations

import re
from typing import Any

from ...errors import ReftableError
from ...refs.date import DateMode, parse_date_format, show_date
from ..describe import describe
from ..gitlike import Die
from ..mailmap import Mailmap, apply_to_header, read_mailmap
from .atom import SOURCE_OBJ, AtomContext, AtomParser, AtomValue, GitObject, RefItem
from .ref_atoms import EMPTY, err_bad_arg, err_no_arg, parse_oid_option, show_oid, strtoul_ui
from .remote_atoms import REMOTE_ATOMS

_SPACE = b" \t\n\v\f\r"


def _cstr(data: bytes) -> bytes:
    nul = data.find(b"\0")
    return data if nul < 0 else data[:nul]


# -- commits and tags: header fields ------------------------------------------------
def _header_lines(data: bytes) -> list[bytes]:
    end = data.find(b"\n\n")
    head = data if end < 0 else data[:end]
    return head.split(b"\n")


def _commit_ids(data: bytes) -> tuple[bytes | None, list[bytes]]:
    tree: bytes | None = None
    parents: list[bytes] = []
    for line in _header_lines(data):
        if line.startswith(b"tree ") and tree is None:
            tree = bytes.fromhex(line[5:].decode("ascii"))
        elif line.startswith(b"parent "):
            parents.append(bytes.fromhex(line[7:].decode("ascii")))
        elif tree is not None and not line.startswith(b"parent "):
            break
    return tree, parents


def _tag_field(data: bytes, key: bytes) -> bytes | None:
    for line in _header_lines(data):
        if line.startswith(key + b" "):
            return line[len(key) + 1:]
    return None


class _Atom:
    source = SOURCE_OBJ
    numeric = False

    def value(self, ctx: AtomContext, ref: RefItem, obj: GitObject | None) -> AtomValue:
        if obj is None:
            return AtomValue(b"", 0 if self.numeric else None)
        return self.get(ctx, obj)

    def get(self, ctx: AtomContext, obj: GitObject) -> AtomValue:
        raise NotImplementedError        # every atom class defines it


class TreeAtom(_Atom):
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


class NumparentAtom(_Atom):
    numeric = True

    def get(self, ctx: AtomContext, obj: GitObject) -> AtomValue:
        if obj.type != "commit":
            return AtomValue(b"", 0)
        n = len(_commit_ids(obj.data)[1])
        return AtomValue(str(n).encode(), n)


class TagFieldAtom(_Atom):
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


# -- people and dates (grab_person, grab_date) ---------------------------------------
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


class PersonAtom(_Atom):
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
        buf = _cstr(obj.data)
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


# -- the message: subject, body, signature, trailers (find_subpos) ---------------------
_SIG_STARTS = (b"-----BEGIN PGP SIGNATURE-----", b"-----BEGIN PGP MESSAGE-----",
               b"-----BEGIN SIGNED MESSAGE-----", b"-----BEGIN SSH SIGNATURE-----")


def parse_signed_buffer(buf: bytes) -> int:
    """gpg-interface.c: the offset of the last line that starts a signature, else len."""
    match = len(buf)
    pos = 0
    while pos < len(buf):
        if buf.startswith(_SIG_STARTS, pos):
            match = pos
        eol = buf.find(b"\n", pos)
        pos = len(buf) if eol < 0 else eol + 1
    return match


class Message:
    """find_subpos: subject, body (with and without the signature), signature."""
    __slots__ = ("body", "buf", "nonsiglen", "sig", "sub", "sublen")

    def __init__(self, data: bytes) -> None:
        buf = _cstr(data)
        pos = 0
        while pos < len(buf) and buf[pos] != 10:
            eol = buf.find(b"\n", pos)
            pos = len(buf) if eol < 0 else eol + 1
        while pos < len(buf) and buf[pos] == 10:
            pos += 1
        sig = pos + parse_signed_buffer(buf[pos:])
        sub = pos
        eol = buf.find(b"\n\n", sub)
        if eol < 0:
            eol = buf.find(b"\r\n\r\n", sub)
        eol = min(eol, sig) if eol >= 0 else sig
        sublen = eol - sub
        while sublen and buf[sub + sublen - 1] in (10, 13):
            sublen -= 1
        pos = eol
        while pos < len(buf) and buf[pos] in (10, 13):
            pos += 1
        self.buf = buf
        self.sub = sub
        self.sublen = sublen
        self.body = pos
        self.nonsiglen = sig - pos
        self.sig = sig


def copy_subject(s: bytes) -> bytes:
    return s.replace(b"\r\n", b"\n").replace(b"\n", b" ")


def _istitlechar(c: int) -> bool:
    return (97 <= c <= 122) or (65 <= c <= 90) or (48 <= c <= 57) or c in (46, 95)


def format_sanitized_subject(msg: bytes) -> bytes:
    """pretty.c format_sanitized_subject (the %f of git log)."""
    out = bytearray()
    space = 2
    i = 0
    n = len(msg)
    while i < n:
        c = msg[i]
        if _istitlechar(c):
            if space == 1:
                out.append(45)
            space = 0
            out.append(c)
            if c == 46:
                while i + 1 < n and msg[i + 1] == 46:
                    i += 1
        else:
            space |= 1
        i += 1
    while out and out[-1] in (45, 46):
        out.pop()
    return bytes(out)


def append_lines(buf: bytes, lines: int) -> bytes:
    out = bytearray()
    sp = 0
    i = 0
    while i < lines and sp < len(buf):
        if i:
            out += b"\n    "
        eol = buf.find(b"\n", sp)
        out += buf[sp:eol] if eol >= 0 else buf[sp:]
        if eol < 0:
            break
        sp = eol + 1
        i += 1
    return bytes(out)


C_BARE, C_BODY, C_BODY_DEP, C_LENGTH, C_LINES, C_SIG, C_SUB, C_SUB_SANITIZE, \
    C_TRAILERS = range(9)


class ContentsAtom(_Atom):
    def __init__(self, option: int, nlines: int = 0,
                 trailers: TrailerOptions | None = None) -> None:
        self.option = option
        self.nlines = nlines
        self.trailers = trailers
        self.numeric = option == C_LENGTH

    def get(self, ctx: AtomContext, obj: GitObject) -> AtomValue:
        if obj.type not in ("commit", "tag"):
            return AtomValue(b"", 0 if self.numeric else None)
        m = Message(obj.data)
        buf = m.buf
        opt = self.option
        if opt == C_SUB:
            return AtomValue(copy_subject(buf[m.sub:m.sub + m.sublen]))
        if opt == C_SUB_SANITIZE:
            return AtomValue(format_sanitized_subject(buf[m.sub:m.sub + m.sublen]))
        if opt == C_BODY_DEP:
            return AtomValue(buf[m.body:])
        if opt == C_LENGTH:
            n = len(buf) - m.sub
            return AtomValue(str(n).encode(), n)
        if opt == C_BODY:
            return AtomValue(buf[m.body:m.body + m.nonsiglen])
        if opt == C_SIG:
            return AtomValue(buf[m.sig:])
        if opt == C_LINES:
            return AtomValue(append_lines(buf[m.sub:m.body + m.nonsiglen], self.nlines))
        if opt == C_TRAILERS:
            assert self.trailers is not None
            msg = buf[m.sub:m.sig] if m.sig < len(buf) else buf[m.sub:]
            return AtomValue(format_trailers_from_commit(self.trailers, msg))
        return AtomValue(buf[m.sub:])


# -- trailers (trailer.c, pretty.c's option parser) -----------------------------------
SEPARATORS = b":"
_CUT_LINE = b"# ------------------------ >8 ------------------------"
_GIT_GENERATED = (b"Signed-off-by: ", b"(cherry picked from commit ")


class TrailerOptions:
    __slots__ = (
        "key_only",
        "key_value_separator",
        "keys",
        "only_trailers",
        "separator",
        "unfold",
        "value_only",
    )

    def __init__(self) -> None:
        self.only_trailers = False
        self.unfold = False
        self.key_only = False
        self.value_only = False
        self.separator: bytes | None = None
        self.key_value_separator: bytes | None = None
        self.keys: list[bytes] | None = None


def _maybe_bool(v: str) -> bool | None:
    """git_parse_maybe_bool."""
    low = v.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off", ""):
        return False
    m = re.fullmatch(r"[ \t\n\v\f\r]*([+-]?[0-9]+)([kKmMgG]?)", v)
    if m is None:
        return None
    return int(m.group(1)) != 0


def _match_arg_value(s: str, cand: str) -> tuple[bool, str | None, str]:
    """match_placeholder_arg_value: (matched, value or None, rest); s ends in ")"."""
    if not s.startswith(cand):
        return False, None, s
    p = s[len(cand):]
    val: str | None = None
    if p.startswith("="):
        n = len(p) - 1
        for i, c in enumerate(p[1:]):
            if c in ",)":
                n = i
                break
        val = p[1:1 + n]
        p = p[1 + n:]
    elif not p.startswith((",", ")")):
        return False, None, s
    if p.startswith(","):
        return True, val, p[1:]
    if p.startswith(")"):
        return True, val, p
    return False, None, s


def _expand_string_arg(v: str) -> bytes:
    """expand_string_arg: %% -> %, %n -> newline, %xNN -> that byte."""
    b = v.encode("utf-8", "surrogateescape")
    out = bytearray()
    i = 0
    while i < len(b):
        c = b[i]
        if c != 37:
            out.append(c)
            i += 1
            continue
        i += 1
        if b[i:i + 1] == b"%":
            out.append(37)
            i += 1
        elif b[i:i + 1] == b"n":
            out.append(10)
            i += 1
        elif b[i:i + 1] == b"x" and re.fullmatch(rb"[0-9a-fA-F]{2}", b[i + 1:i + 3]):
            out.append(int(b[i + 1:i + 3], 16))
            i += 3
        else:
            out.append(37)
    return bytes(out)


def parse_trailer_options(arg: str | None) -> TrailerOptions:
    """trailers_atom_parser over format_set_trailers_options."""
    opts = TrailerOptions()
    if arg is None:
        return opts
    s = arg + ")"
    while not s.startswith(")"):
        ok, val, rest = _match_arg_value(s, "key")
        if ok:
            if val is None:
                raise Die("expected %(trailers:key=<value>)")
            k = val.encode("utf-8", "surrogateescape")
            if k.endswith(b":"):
                k = k[:-1]
            opts.keys = (opts.keys or []) + [k]
            opts.only_trailers = True
            s = rest
            continue
        ok, val, rest = _match_arg_value(s, "separator")
        if ok:
            opts.separator = _expand_string_arg(val) if val is not None else None
            s = rest
            continue
        ok, val, rest = _match_arg_value(s, "key_value_separator")
        if ok:
            opts.key_value_separator = _expand_string_arg(val) if val is not None else None
            s = rest
            continue
        for name in ("only", "unfold", "keyonly", "valueonly"):
            ok, val, rest = _match_arg_value(s, name)
            if ok:
                s = rest         # git's *end moves on even when the value is no bool
                b = True if val is None else _maybe_bool(val)
                if b is not None:
                    setattr(opts, {"only": "only_trailers", "keyonly": "key_only",
                                   "valueonly": "value_only"}.get(name, name), b)
                    break
        else:
            n = len(s)
            for i, c in enumerate(s):
                if c in ",)":
                    n = i
                    break
            raise Die(f"unknown %(trailers) argument: {s[:n]}")
    return opts


def _is_blank_line(buf: bytes, pos: int) -> bool:
    while pos < len(buf) and buf[pos] != 10 and buf[pos] in _SPACE:
        pos += 1
    return pos >= len(buf) or buf[pos] == 10


def _next_line(buf: bytes, pos: int) -> int:
    nl = buf.find(b"\n", pos)
    return len(buf) if nl < 0 else nl + 1


def _last_line(buf: bytes, length: int) -> int:
    if length == 0:
        return -1
    if length == 1:
        return 0
    i = buf.rfind(b"\n", 0, length - 1)
    return i + 1 if i >= 0 else 0


def find_separator(line: bytes) -> int:
    whitespace_found = False
    for i, c in enumerate(line):
        if c in SEPARATORS:
            return i
        if not whitespace_found and (chr(c).isalnum() and c < 128 or c == 45):
            continue
        if i and c in (32, 9):
            whitespace_found = True
            continue
        break
    return -1


def _ignored_log_message_bytes(buf: bytes, length: int) -> int:
    cutoff = length
    if buf.startswith(_CUT_LINE):
        cutoff = 0
    else:
        p = buf.find(b"\n" + _CUT_LINE)
        if p >= 0 and p + 1 < length:
            cutoff = p + 1
    boc = 0
    bol = 0
    in_conflicts = False
    while bol < cutoff:
        nl = buf.find(b"\n", bol, length)
        nxt = length if nl < 0 else nl + 1
        if buf.startswith(b"#", bol) and bol < cutoff or buf[bol] == 10:
            if not boc:
                boc = bol
        elif buf.startswith(b"Conflicts:\n", bol):
            in_conflicts = True
            if not boc:
                boc = bol
        elif in_conflicts and buf[bol] == 9:
            pass
        elif boc:
            boc = 0
            in_conflicts = False
        bol = nxt
    return length - boc if boc else length - cutoff


def find_trailer_block_start(buf: bytes, length: int) -> int:
    s = 0
    while s < length:
        if buf.startswith(b"#", s):
            s = _next_line(buf, s)
            continue
        if _is_blank_line(buf, s):
            break
        s = _next_line(buf, s)
    end_of_title = s
    only_spaces = True
    recognized_prefix = False
    trailer_lines = non_trailer_lines = possible_continuation = 0
    lpos = _last_line(buf, length)
    while lpos >= end_of_title:
        bol = lpos
        lpos = _last_line(buf, lpos)
        if buf.startswith(b"#", bol):
            non_trailer_lines += possible_continuation
            possible_continuation = 0
            continue
        if _is_blank_line(buf, bol):
            if only_spaces:
                continue
            non_trailer_lines += possible_continuation
            if recognized_prefix and trailer_lines * 3 >= non_trailer_lines:
                return _next_line(buf, bol)
            if trailer_lines and not non_trailer_lines:
                return _next_line(buf, bol)
            return length
        only_spaces = False
        if buf.startswith(_GIT_GENERATED, bol):
            trailer_lines += 1
            possible_continuation = 0
            recognized_prefix = True
            continue
        line = buf[bol:_next_line(buf, bol)]
        sep = find_separator(line)
        if sep >= 1 and line[0] not in _SPACE:
            trailer_lines += 1
            possible_continuation = 0
        elif line[:1] and line[0] in _SPACE:
            possible_continuation += 1
        else:
            non_trailer_lines += 1 + possible_continuation
            possible_continuation = 0
        if lpos < 0:
            break
    return length


def _unfold(val: bytes) -> bytes:
    out = bytearray()
    i = 0
    while i < len(val):
        c = val[i]
        i += 1
        if c == 10:
            while i < len(val) and val[i] in _SPACE:
                i += 1
            out.append(32)
        else:
            out.append(c)
    return bytes(out).strip(_SPACE)


def format_trailers_from_commit(opts: TrailerOptions, msg: bytes) -> bytes:
    end = len(msg) - _ignored_log_message_bytes(msg, len(msg))
    start = find_trailer_block_start(msg, end)
    if not (opts.only_trailers or opts.unfold or opts.keys is not None or opts.separator
            is not None or opts.key_only or opts.value_only
            or opts.key_value_separator is not None):
        return msg[start:end]
    lines: list[bytes] = []
    last: int | None = None
    for piece in msg[start:end].splitlines(keepends=True):
        if last is not None and piece[:1] and piece[0] in _SPACE:
            lines[last] += piece
            continue
        lines.append(piece)
        last = len(lines) - 1 if find_separator(piece) >= 1 else None
    out = bytearray()
    for t in lines:
        if t.startswith(b"#"):
            continue
        sep = find_separator(t)
        if sep >= 1:
            tok = t[:sep].strip(_SPACE)
            val = t[sep + 1:].strip(_SPACE)
            if opts.unfold:
                val = _unfold(val)
            if opts.keys is not None and not any(
                    len(k) == len(tok) and k.lower() == tok.lower() for k in opts.keys):
                continue
            if opts.separator is not None and out:
                out += opts.separator
            if not opts.value_only:
                out += tok
            if not opts.key_only and not opts.value_only:
                if opts.key_value_separator is not None:
                    out += opts.key_value_separator
                else:
                    c = tok.rstrip(_SPACE)[-1:]
                    if c and c not in SEPARATORS:
                        out += SEPARATORS[:1] + b" "
            if not opts.key_only:
                out += val
            if opts.separator is None:
                out += b"\n"
        elif not opts.only_trailers:
            if opts.separator is not None and out:
                out += opts.separator
            out += t[:-1] if t.endswith(b"\n") else t
            if opts.separator is not None:
                while out and out[-1] in _SPACE:
                    out.pop()
            else:
                out += b"\n"
    return bytes(out)


def parse_subject(ctx: Any, name: str, arg: str | None) -> ContentsAtom:
    if arg is None:
        return ContentsAtom(C_SUB)
    if arg == "sanitize":
        return ContentsAtom(C_SUB_SANITIZE)
    raise err_bad_arg("subject", arg)


def parse_body(ctx: Any, name: str, arg: str | None) -> ContentsAtom:
    if arg is not None:
        raise err_no_arg("body")
    return ContentsAtom(C_BODY_DEP)


def parse_trailers(ctx: Any, name: str, arg: str | None) -> ContentsAtom:
    return ContentsAtom(C_TRAILERS, trailers=parse_trailer_options(arg))


def parse_contents(ctx: Any, name: str, arg: str | None) -> ContentsAtom:
    simple = {None: C_BARE, "body": C_BODY, "size": C_LENGTH, "signature": C_SIG,
              "subject": C_SUB}
    if arg in simple:
        return ContentsAtom(simple[arg])
    assert arg is not None
    if arg == "trailers":
        return parse_trailers(ctx, name, None)
    if arg.startswith("trailers:"):
        return parse_trailers(ctx, name, arg[9:] or None)
    if arg.startswith("lines="):
        n = strtoul_ui(arg[6:])
        if n is None:
            raise Die(f"positive value expected contents:lines={arg[6:]}")
        return ContentsAtom(C_LINES, nlines=n)
    raise err_bad_arg("contents", arg)


# -- raw and signature --------------------------------------------------------------
class RawAtom(_Atom):
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


_SIG_OPTIONS = {None: "", "signer": "", "grade": "N", "key": "", "fingerprint": "",
                "primarykeyfingerprint": "", "trustlevel": "undefined"}


class SignatureAtom(_Atom):
    def __init__(self, option: str | None) -> None:
        self.option = option

    def get(self, ctx: AtomContext, obj: GitObject) -> AtomValue:
        if obj.type != "commit":
            return EMPTY
        for line in _header_lines(obj.data):
            if line.startswith((b"gpgsig ", b"gpgsig-sha256 ")):
                raise Die("verifying commit signatures is not implemented")
        return AtomValue(_SIG_OPTIONS[self.option].encode())


def parse_signature(ctx: Any, name: str, arg: str | None) -> SignatureAtom:
    if arg not in _SIG_OPTIONS:
        raise err_bad_arg("signature", str(arg))
    return SignatureAtom(arg)


# -- describe ------------------------------------------------------------------------
class DescribeAtom(_Atom):
    def __init__(self, tags: bool, abbrev: int | None, match: list[bytes],
                 exclude: list[bytes]) -> None:
        self.tags = tags
        self.abbrev = abbrev
        self.match = match
        self.exclude = exclude

    def get(self, ctx: AtomContext, obj: GitObject) -> AtomValue:
        if obj.type not in ("commit", "tag"):
            return EMPTY
        try:
            return AtomValue(describe(ctx.repo, obj.oid, self.tags, self.abbrev, self.match,
                                      self.exclude, ctx.abbrev))
        except (Die, ReftableError):
            return EMPTY          # git runs describe as a child; its failure prints ""


def _atom_arg_value(s: str, cand: str) -> tuple[bool, str | None, str]:
    """ref-filter.c match_atom_arg_value: (matched, value or None, rest)."""
    if not s.startswith(cand):
        return False, None, s
    p = s[len(cand):]
    if p.startswith("="):
        val, _comma, rest = p[1:].partition(",")
        return True, val, rest
    if p and not p.startswith(","):
        return False, None, s
    return True, None, p[1:]


_STRTOL = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+")


def parse_describe(ctx: Any, name: str, arg: str | None) -> DescribeAtom:
    """describe_atom_parser: tags[=bool], abbrev=N, match=P, exclude=P, comma separated."""
    tags = False
    abbrev: int | None = None
    match: list[bytes] = []
    exclude: list[bytes] = []
    s = arg or ""
    while s:
        bad = s
        ok, val, rest = _atom_arg_value(s, "tags")
        if ok:
            s = rest
            b = True if val is None else _maybe_bool(val)
            if b is not None:
                tags = b
                continue
        ok, val, rest = _atom_arg_value(s, "abbrev")
        if ok:
            if not val:
                raise Die("argument expected for describe:abbrev")
            after = s[s.index("=") + 1:]
            m = _STRTOL.match(val)
            n = int(m.group(0)) if m else 0
            if n < 0:
                raise Die(f"positive value expected describe:abbrev={after}")
            if m is None or m.end() != len(val):
                raise Die(f"cannot fully parse describe:abbrev={after}")
            abbrev = n if n == 0 or n >= 4 else 4
            s = rest
            continue
        for key, into in (("match", match), ("exclude", exclude)):
            ok, val, rest = _atom_arg_value(s, key)
            if ok:
                if not val:
                    raise Die(f"value expected describe:{key}=")
                into.append(val.encode("utf-8", "surrogateescape"))
                s = rest
                break
        else:
            raise err_bad_arg("describe", bad)
    return DescribeAtom(tags, abbrev, match, exclude)


OBJECT_ATOMS: dict[str, AtomParser] = {
    "describe": parse_describe,
    "tree": parse_tree,
    "parent": parse_parent,
    "numparent": parse_numparent,
    "object": _tag_parser(b"object"),
    "type": _tag_parser(b"type"),
    "tag": _tag_parser(b"tag"),
    "creator": _person_parser("creator", ""),
    "creatordate": _person_parser("creator", "date"),
    "subject": parse_subject,
    "body": parse_body,
    "trailers": parse_trailers,
    "contents": parse_contents,
    "signature": parse_signature,
    "raw": parse_raw,
}
for _who in ("author", "committer", "tagger"):
    OBJECT_ATOMS[_who] = _person_parser(_who, "")
    for _field in ("name", "email", "date"):
        OBJECT_ATOMS[_who + _field] = _person_parser(_who, _field)
OBJECT_ATOMS.update(REMOTE_ATOMS)
