"""A message's trailers (trailer.c: the trailer block, its lines and separators;
pretty.c's format_set_trailers_options for the %(trailers:...) arguments).

Contract: parse_trailer_options(arg) -> TrailerOptions (Die with git's words on a bad
argument): key=, only, unfold, keyonly, valueonly, separator=, key_value_separator=.
format_trailers_from_commit(opts, msg) gives the trailer block of msg (the message from
its subject, without the signature) as git formats it, with trailer.c's default
separators ":" and no trailer.* config. find_trailer_block_start and find_separator are
trailer.c's.
"""
from __future__ import annotations

import re

from ...config import parse_bool
from ..gitlike import Die

SPACE = b" \t\n\v\f\r"
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
                b = True if val is None else parse_bool(val)
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
    while pos < len(buf) and buf[pos] != 10 and buf[pos] in SPACE:
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
        if sep >= 1 and line[0] not in SPACE:
            trailer_lines += 1
            possible_continuation = 0
        elif line[:1] and line[0] in SPACE:
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
            while i < len(val) and val[i] in SPACE:
                i += 1
            out.append(32)
        else:
            out.append(c)
    return bytes(out).strip(SPACE)


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
        if last is not None and piece[:1] and piece[0] in SPACE:
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
            tok = t[:sep].strip(SPACE)
            val = t[sep + 1:].strip(SPACE)
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
                    c = tok.rstrip(SPACE)[-1:]
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
                while out and out[-1] in SPACE:
                    out.pop()
            else:
                out += b"\n"
    return bytes(out)
