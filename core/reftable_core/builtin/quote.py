"""Text helpers for the git-mimicking commands: git's C-style quoting rules.

Contract:
  unquote_c(s, start) -> (value, end) | None   git's unquote_c_style on s[start:]
      (s[start] is '"'); end is the index after the closing quote; None when the
      quoting is bad.
  cstr(b) -> str   what C's printf("%s") shows of a buffer in a message: up to the
      first NUL, and no more than a message can hold (git's vreportf cuts every
      message at 4095 bytes, gitlike.write_err too), so a 200 MB input line costs
      no 200 MB of text.
"""
from __future__ import annotations

_ESCAPES = {ord("a"): 7, ord("b"): 8, ord("f"): 12, ord("n"): 10, ord("r"): 13,
            ord("t"): 9, ord("v"): 11, ord("\\"): 92, ord('"'): 34}


def unquote_c(s: bytes, start: int) -> tuple[bytes, int] | None:
    out = bytearray()
    i = start + 1
    esc = _ESCAPES
    while i < len(s):
        c = s[i]
        if c == 34:
            return bytes(out), i + 1
        if c == 92:
            i += 1
            if i >= len(s):
                return None
            c = s[i]
            if c in esc:
                out.append(esc[c])
                i += 1
                continue
            if 48 <= c <= 51 and i + 2 < len(s):
                try:
                    out.append(int(s[i:i + 3], 8))
                except ValueError:
                    return None
                i += 3
                continue
            return None
        out.append(c)
        i += 1
    return None


MESSAGE_MAX = 4096      # more than vreportf's 4095 bytes; a character cut at the end
                        # decodes to U+FFFD past the message's cut, never inside it


def cstr(b: bytes) -> str:
    return b[:MESSAGE_MAX].split(b"\0", 1)[0].decode("utf-8", "replace")
