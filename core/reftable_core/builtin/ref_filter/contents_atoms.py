"""Atoms of a commit's or a tag's message (ref-filter.c find_subpos, grab_sub_body_contents).

Contract: CONTENTS_ATOMS maps each name (without "*") to its AtomParser (atom.py); a
parser raises Die with git's words for an argument git refuses. A value reads only
`obj`; an object other than a commit or tag gives "" (0 for contents:size).
  subject [:sanitize], body, contents [:subject | :body | :signature | :size |
      :lines=N | :trailers[:opts]], trailers [:opts]  find_subpos's split of a commit
      or tag message; the trailer options and block are trailers.py's.
Messages are C strings to git: the contents atoms stop at the first NUL byte.
"""
from __future__ import annotations

from typing import Any

from ..gitlike import Die
from .atom import AtomContext, AtomParser, AtomValue, GitObject
from .object_atoms import ObjectAtom, cstr
from .ref_atoms import err_bad_arg, err_no_arg, strtoul_ui
from .trailers import TrailerOptions, format_trailers_from_commit, parse_trailer_options

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
        buf = cstr(data)
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


class ContentsAtom(ObjectAtom):
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


CONTENTS_ATOMS: dict[str, AtomParser] = {
    "subject": parse_subject,
    "body": parse_body,
    "trailers": parse_trailers,
    "contents": parse_contents,
}
