"""git's wildmatch (wildmatch.c, git 2.47) with WM_PATHNAME, for ref patterns.

Contract: wildmatch(pattern, text) -> bool, both bytes: does pattern match the
whole text as git's wildmatch(pattern, text, WM_PATHNAME) does ("*" and "?" stop
at "/", "**/" spans directories, [...] classes with ranges, "!"/"^" negation and
[:name:] classes, backslash escapes). A port of dowild, line for line.
"""
from __future__ import annotations

_MATCH, _NOMATCH, _ABORT_ALL, _ABORT_TO_STARSTAR = 0, 1, -1, -2
_GLOB_SPECIAL = b"*?[\\"


def _isgraph(c: int) -> bool:
    return 33 <= c <= 126


_CLASSES = {
    b"alnum": lambda c: chr(c).isascii() and chr(c).isalnum(),
    b"alpha": lambda c: chr(c).isascii() and chr(c).isalpha(),
    b"blank": lambda c: c in (32, 9),
    b"cntrl": lambda c: c < 32 or c == 127,
    b"digit": lambda c: 48 <= c <= 57,
    b"graph": _isgraph,
    b"lower": lambda c: 97 <= c <= 122,
    b"print": lambda c: 32 <= c <= 126,
    b"punct": lambda c: _isgraph(c) and not (chr(c).isascii() and chr(c).isalnum()),
    b"space": lambda c: c in b" \t\n\r\v\f",
    b"upper": lambda c: 65 <= c <= 90,
    b"xdigit": lambda c: c in b"0123456789abcdefABCDEF",
}


def _dowild(pat: bytes, pi: int, text: bytes, ti: int) -> int:
    """dowild(p, text, WM_PATHNAME); pat and text end with a NUL byte."""
    pattern_start = pi
    while pat[pi]:
        p_ch = pat[pi]
        t_ch = text[ti]
        if t_ch == 0 and p_ch != 42:
            return _ABORT_ALL
        if p_ch == 92:                                  # "\": the next character literally
            pi += 1
            p_ch = pat[pi]
            if t_ch != p_ch:
                return _NOMATCH
        elif p_ch == 63:                                # "?": anything but "/"
            if t_ch == 47:
                return _NOMATCH
        elif p_ch == 42:                                # "*"
            pi += 1
            if pat[pi] == 42:
                prev_p = pi
                pi += 1
                while pat[pi] == 42:
                    pi += 1
                if ((prev_p - pattern_start < 2 or pat[prev_p - 2] == 47)
                        and (pat[pi] == 0 or pat[pi] == 47
                             or (pat[pi] == 92 and pat[pi + 1] == 47))):
                    if pat[pi] == 47 and _dowild(pat, pi + 1, text, ti) == _MATCH:
                        return _MATCH
                    match_slash = True
                else:
                    match_slash = False
            else:
                match_slash = False
            if pat[pi] == 0:
                if not match_slash and text.find(b"/", ti, len(text) - 1) >= 0:
                    return _ABORT_TO_STARSTAR
                return _MATCH
            if not match_slash and pat[pi] == 47:
                slash = text.find(b"/", ti, len(text) - 1)
                if slash < 0:
                    return _ABORT_ALL
                ti = slash                              # the loop consumes the slash
                ti += 1
                pi += 1
                continue
            while True:
                if t_ch == 0:
                    break
                if pat[pi] not in _GLOB_SPECIAL:
                    p_ch = pat[pi]
                    while True:
                        t_ch = text[ti]
                        if t_ch == 0 or not (match_slash or t_ch != 47):
                            break
                        if t_ch == p_ch:
                            break
                        ti += 1
                    if t_ch != p_ch:
                        return _ABORT_ALL if match_slash else _ABORT_TO_STARSTAR
                matched = _dowild(pat, pi, text, ti)
                if matched != _NOMATCH:
                    if not match_slash or matched != _ABORT_TO_STARSTAR:
                        return matched
                elif not match_slash and t_ch == 47:
                    return _ABORT_TO_STARSTAR
                ti += 1
                t_ch = text[ti]
            return _ABORT_ALL
        elif p_ch == 91:                                # "[": a character class
            pi += 1
            p_ch = pat[pi]
            if p_ch == 94:                              # "^" is "!"
                p_ch = 33
            negated = p_ch == 33
            if negated:
                pi += 1
                p_ch = pat[pi]
            prev_ch = 0
            matched = False
            while True:
                if not p_ch:
                    return _ABORT_ALL
                if p_ch == 92:
                    pi += 1
                    p_ch = pat[pi]
                    if not p_ch:
                        return _ABORT_ALL
                    if t_ch == p_ch:
                        matched = True
                elif p_ch == 45 and prev_ch and pat[pi + 1] and pat[pi + 1] != 93:
                    pi += 1
                    p_ch = pat[pi]
                    if p_ch == 92:
                        pi += 1
                        p_ch = pat[pi]
                        if not p_ch:
                            return _ABORT_ALL
                    if prev_ch <= t_ch <= p_ch:
                        matched = True
                    p_ch = 0
                elif p_ch == 91 and pat[pi + 1] == 58:   # "[:"
                    pi += 2
                    s = pi
                    while pat[pi] and pat[pi] != 93:
                        pi += 1
                    p_ch = pat[pi]
                    if not p_ch:
                        return _ABORT_ALL
                    i = pi - s - 1
                    if i < 0 or pat[pi - 1] != 58:
                        pi = s - 2                      # no ":]": a plain "["
                        p_ch = 91
                        if t_ch == p_ch:
                            matched = True
                    else:
                        test = _CLASSES.get(pat[s:s + i])
                        if test is None:
                            return _ABORT_ALL
                        if test(t_ch):
                            matched = True
                        p_ch = 0
                elif t_ch == p_ch:
                    matched = True
                prev_ch = p_ch
                pi += 1
                p_ch = pat[pi]
                if p_ch == 93:
                    break
            if matched == negated or t_ch == 47:
                return _NOMATCH
        else:
            if t_ch != p_ch:
                return _NOMATCH
        ti += 1
        pi += 1
    return _NOMATCH if text[ti] else _MATCH


def wildmatch(pattern: bytes, text: bytes) -> bool:
    """git's wildmatch(pattern, text, WM_PATHNAME) == WM_MATCH."""
    return _dowild(pattern + b"\0", 0, text + b"\0", 0) == _MATCH
