"""for-each-ref's quoting styles (--shell, --perl, --python, --tcl): git's quote.c
sq_quote_buf, perl_quote_buf_with_len, python_quote_buf and tcl_quote_buf, as
ref-filter.c's quote_formatting applies them to one atom's value (or, inside
%(align)/%(if), to the whole output of the outermost one at its %(end)).

Contract:
  QUOTE_NONE, QUOTE_SHELL, QUOTE_PERL, QUOTE_PYTHON, QUOTE_TCL   the styles (git's bits)
  STYLE_BITS   {option dest: bit} for the command's options
  check_styles(bits) -> style   git's HAS_MULTI_BITS check: Die("more than one quoting
      style?", usage, 129) when two bits are set, else the one style (0: none)
  quote(style, text) -> bytes   text quoted in style; shell/python/tcl see a C string
      (up to the first NUL), perl the whole buffer, as git's callers pass them.
"""
from __future__ import annotations

from ..gitlike import Die

QUOTE_NONE = 0
QUOTE_SHELL = 1
QUOTE_PERL = 2
QUOTE_PYTHON = 4
QUOTE_TCL = 8

STYLE_BITS = {"shell": QUOTE_SHELL, "perl": QUOTE_PERL, "python": QUOTE_PYTHON,
              "tcl": QUOTE_TCL}

_TCL = {ord("["): b"\\[", ord("]"): b"\\]", ord("{"): b"\\{", ord("}"): b"\\}",
        ord("$"): b"\\$", ord("\\"): b"\\\\", ord('"'): b'\\"', 12: b"\\f", 13: b"\\r",
        10: b"\\n", 9: b"\\t", 11: b"\\v"}


def check_styles(bits: int, usage: str) -> int:
    """The one quoting style of bits (HAS_MULTI_BITS: git's error and usage)."""
    if bits & (bits - 1):
        raise Die(f"error: more than one quoting style?\n{usage}", 129, "usage")
    return bits


def _cstr(text: bytes) -> bytes:
    nul = text.find(b"\0")
    return text if nul < 0 else text[:nul]


def sq_quote(text: bytes) -> bytes:
    """quote.c sq_quote_buf: '...' with each ' and ! as '\\'' / '\\!'."""
    s = _cstr(text)
    return b"'" + s.replace(b"'", b"'\\''").replace(b"!", b"'\\!'") + b"'"


def perl_quote(text: bytes) -> bytes:
    """quote.c perl_quote_buf_with_len: '...' with \\ before ' and \\."""
    return b"'" + text.replace(b"\\", b"\\\\").replace(b"'", b"\\'") + b"'"


def python_quote(text: bytes) -> bytes:
    """quote.c python_quote_buf: perl's, and a newline as \\n."""
    s = _cstr(text)
    return b"'" + s.replace(b"\\", b"\\\\").replace(b"'", b"\\'").replace(b"\n", b"\\n") + b"'"


def tcl_quote(text: bytes) -> bytes:
    """quote.c tcl_quote_buf: "..." with []{}$\\" escaped and \\f\\r\\n\\t\\v named."""
    s = _cstr(text)
    out = bytearray(b'"')
    tcl = _TCL
    for c in s:
        rep = tcl.get(c)
        if rep is None:
            out.append(c)
        else:
            out += rep
    out.append(34)
    return bytes(out)


def quote(style: int, text: bytes) -> bytes:
    """ref-filter.c quote_formatting for one value."""
    if style == QUOTE_NONE:
        return text
    if style == QUOTE_SHELL:
        return sq_quote(text)
    if style == QUOTE_PERL:
        return perl_quote(text)
    if style == QUOTE_PYTHON:
        return python_quote(text)
    return tcl_quote(text)
