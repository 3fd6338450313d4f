"""git's refname rules: the format check and the "does not escape refs/" safety check.

Contract: check_refname_format(name, flags) -> bool is git's check_refname_format
(refs.c) with REFNAME_ALLOW_ONELEVEL / REFNAME_REFSPEC_PATTERN; refname_is_safe(name)
is git's refname_is_safe: a name under refs/ must be non-empty after "refs/", must
not start or end with "/" and must already be normalized (no empty, "." or ".."
components, so it can never climb out of refs/); any other name must be all
upper-case letters and "_" (HEAD, FETCH_HEAD, ...). path_safe_refname(name) is
the test a name passes before it becomes a path (either check, no NUL byte);
unsafe_refname_error(name) is git's refusal of one. is_root_ref(name) is git's
is_root_ref (HEAD, *_HEAD but FETCH_HEAD and MERGE_HEAD, and a few irregular names).

The safety check exists in the three shapes of seed 001 (flag refname_safety);
make_name_checker(flags) picks one when a reader is built and returns
check(name) -> bool (True: good name; False: bad but safe, i.e. a broken ref;
raises RefnameError when the name is dangerous):

  normalize    format check, then the safety check through an allocated
               normalized copy of the path (git before 6/6: normalize_path_copy).
  escape_scan  format check, then the safety check by scanning components and
               counting depth, allocating nothing (6/6: check_path_escape).
  skip_sane    format check; the safety check only for names that FAIL it
               (v2 8/9: a well-formed name is always safe, so skip the work).

names_well_formed(names) is the format check of a batch of names read from lines
(packed-refs): the same verdict as check_refname_format on each, in a few C-level
passes over them joined by LF; make_names_checker(flags) gives the flag's batch
check (True: every name good; False: check each one with the per-name checker).

Bytes in, no I/O. Names are bytes; a NUL byte counts as a control character.
"""
from __future__ import annotations

import re
from typing import Callable, Sequence

from ..counters import WORK
from ..errors import RefnameError
from ..flags import Flags

REFNAME_ALLOW_ONELEVEL = 1
REFNAME_REFSPEC_PATTERN = 2

# The characters git never allows (disposition 4: control chars, SP, DEL, ":",
# "?", "[", "\\", "^", "~") plus "*" (only in a refspec pattern): one C-level
# character-class search; the remaining rules are substring tests, also in C
# (a Python loop per character would cost more than the rest of a packed-refs line).
_BAD_CHAR = re.compile(rb"[\x00-\x20\x7f:?\[\\^~*]")
_BAD_CHAR_NO_STAR = re.compile(rb"[\x00-\x20\x7f:?\[\\^~]")
_UPPER_ONLY = re.compile(rb"[A-Z_]+\Z")


# The common case in one C-level match: components of plain characters (no
# ".", "@", "{", "*" or forbidden ones) joined by single "/". Such a name can
# break no rule; anything else takes the rule-by-rule path below.
_PLAIN = rb"[^\x00-\x20\x7f:?\[\\^~*./@{]+"
_SIMPLE_NAME = re.compile(rb"(?:" + _PLAIN + rb"/)*" + _PLAIN)


def check_refname_format(name: bytes, flags: int = 0) -> bool:
    """True when name is a valid refname for git (check_refname_format() == 0)."""
    if _SIMPLE_NAME.fullmatch(name) is None:
        if (not name or b".." in name or b"@{" in name or b"//" in name or b"/." in name
                or name[0] == 0x2F or name[0] == 0x2E                 # leading "/" or "."
                or name[-1] == 0x2F or name[-1] == 0x2E               # trailing "/" or "."
                or name.endswith(b".lock") or b".lock/" in name or name == b"@"):
            return False
        if _BAD_CHAR.search(name) is not None:
            if (not flags & REFNAME_REFSPEC_PATTERN or name.count(b"*") != 1
                    or _BAD_CHAR_NO_STAR.search(name) is not None):
                return False
    if not flags & REFNAME_ALLOW_ONELEVEL and b"/" not in name:
        return False
    return True


# check_refname_format's rules over many names at once (names_well_formed), in one
# translate: every byte git never allows in a name (control characters but LF,
# SP, DEL, ":?[\\^~*") becomes NUL, and ".", "/" and LF (which separates the
# names there) all become "/"; every other byte stays itself.
_FORBIDDEN = frozenset(range(0x00, 0x21)) - {0x0A} | {0x7F} | set(b":?[\\^~*")
_RULE_BYTES = bytes(0 if c in _FORBIDDEN else 0x2F if c in b"./\n" else c for c in range(256))


def names_well_formed(names: Sequence[bytes]) -> bool:
    """True when every name passes check_refname_format(name, REFNAME_ALLOW_ONELEVEL).

    The names are read from lines (none holds a LF). They are checked joined, as
    LF + name + LF + name ... + LF, translated by _RULE_BYTES: a NUL is a
    forbidden character; two of ".", "/", LF side by side are "..", "/.", "//",
    a leading or trailing "." or "/", or an empty name, except "./" (a component
    ending in "." before another: allowed, so this one is a false alarm); then
    ".lock" and "@" are looked at where they occur. False says only that some
    name may fail: the caller then checks each one."""
    if not names:
        return True
    text = b"\n" + b"\n".join(names) + b"\n"
    rules = text.translate(_RULE_BYTES)
    if b"\0" in rules or b"//" in rules:
        return False
    if b".lock" in text and (b".lock/" in text or b".lock\n" in text):
        return False                     # a component ending in ".lock"
    if b"@" in text and (b"@{" in text or b"\n@\n" in text):
        return False                     # "@{", the name "@"
    return True


def check_refname_format_slow(name: bytes, flags: int = 0) -> bool:
    """A character-by-character transcription of git's rules (test oracle)."""
    if name == b"@":
        return False
    bad = set(range(0, 32)) | {32, 127} | set(b":?[\\^~")
    comps = name.split(b"/")
    pattern = bool(flags & REFNAME_REFSPEC_PATTERN)
    for comp in comps:
        if not comp or comp[:1] == b"." or comp.endswith(b".lock"):
            return False
        last = 0
        for ch in comp:
            if ch in bad:
                return False
            if ch == 0x2E and last == 0x2E:
                return False
            if ch == 0x7B and last == 0x40:
                return False
            if ch == 0x2A:
                if not pattern:
                    return False
                pattern = False
            last = ch
    if name.endswith(b"."):
        return False
    if not flags & REFNAME_ALLOW_ONELEVEL and len(comps) < 2:
        return False
    return True


# -- the safety check, three ways ----------------------------------------------

def _upper_only(name: bytes) -> bool:
    return _UPPER_ONLY.match(name) is not None


def normalize_path_copy(path: bytes) -> bytes | None:
    """git's normalize_path_copy for a relative path: a NEW normalized copy, or
    None when ".." climbs above the start. Allocates a list and its pieces."""
    WORK.refname_normalized += 1
    out: list[bytes] = []
    parts = path.split(b"/")
    for i, comp in enumerate(parts):
        last = i == len(parts) - 1
        if comp == b"" and not last:
            continue                     # "//" collapses
        if comp == b".":
            continue
        if comp == b"..":
            if not out:
                return None
            out.pop()
            continue
        out.append(comp if last else comp + b"/")
    if parts and parts[-1] in (b".", b"..") and out and not out[-1].endswith(b"/"):
        out[-1] += b"/"
    return b"".join(out)


def refname_is_safe_normalize(name: bytes) -> bool:
    """refname_is_safe through an allocated normalized copy (the old way)."""
    if name.startswith(b"refs/"):
        rest = name[5:]
        if not rest or rest[:1] == b"/" or rest[-1:] == b"/":
            return False
        return normalize_path_copy(rest) == rest
    return _upper_only(name)


def refname_is_safe_scan(name: bytes) -> bool:
    """refname_is_safe by walking components and counting depth; no copies.

    A component that is empty, "." or ".." means the name is not in normal
    form (git requires normalize(rest) == rest), so it is unsafe; the depth
    count is kept as in check_path_escape for the reader's benefit.
    """
    WORK.refname_escape_scans += 1
    if not name.startswith(b"refs/"):
        return _upper_only(name)
    end = len(name)
    i = 5
    if i == end:
        return False
    depth = 0
    find = name.find
    while True:
        j = find(b"/", i)
        if j < 0:
            j = end
        n = j - i
        if n == 0:
            return False                 # empty component: "//", leading or trailing "/"
        if name[i] == 0x2E and (n == 1 or (n == 2 and name[i + 1] == 0x2E)):
            if n == 2:
                depth -= 1
                if depth < 0:
                    return False         # climbs out of refs/
            return False                 # "." or ".." component: not normalized
        depth += 1
        if j == end:
            return True
        i = j + 1


def refname_is_safe(name: bytes) -> bool:
    return refname_is_safe_scan(name)


def path_safe_refname(name: bytes) -> bool:
    """May name become a path below $GIT_DIR? Well formed, or safe (git's
    check_refname_format || refname_is_safe), and never with a NUL byte."""
    return ((check_refname_format(name, REFNAME_ALLOW_ONELEVEL) or refname_is_safe(name))
            and b"\0" not in name)


def iterated_refname_ok(name: bytes) -> bool:
    """git's reftable iterator's check of each name it steps over, matched or not
    (refs/reftable-backend.c): True when well formed; False when bad but safe (git's
    REF_BAD_NAME: the ref is listed with its id cleared); a dangerous name is fatal
    (RefnameError "refname is dangerous")."""
    if check_refname_format(name, REFNAME_ALLOW_ONELEVEL):
        return True
    if not refname_is_safe(name):
        raise RefnameError("refname is dangerous: " + name.decode("utf-8", "surrogateescape"))
    return False


def unsafe_refname_error(name: bytes) -> RefnameError:
    """git's refusal of a name that fails both checks (refs.c, ref_transaction_update)."""
    return RefnameError(f"refusing to update ref with bad name "
                        f"'{name.decode('utf-8', 'replace')}'")


NameCheck = Callable[[bytes], bool]


def _dangerous(name: bytes) -> RefnameError:
    return RefnameError(f"packed refname is dangerous: {name.decode('utf-8', 'replace')}")


# Before v2 8/9 the safety check ran for every name, in addition to the format
# check. Its verdict only changes the outcome for names that fail the format
# check (git today dies on those when unsafe), so every value of the flag gives
# the same results; only the work differs.

def _check_normalize(name: bytes) -> bool:
    ok = check_refname_format(name, REFNAME_ALLOW_ONELEVEL)
    safe = refname_is_safe_normalize(name)
    if not ok and not safe:
        raise _dangerous(name)
    return ok


def _check_escape_scan(name: bytes) -> bool:
    ok = check_refname_format(name, REFNAME_ALLOW_ONELEVEL)
    safe = refname_is_safe_scan(name)
    if not ok and not safe:
        raise _dangerous(name)
    return ok


def _check_skip_sane(name: bytes) -> bool:
    if check_refname_format(name, REFNAME_ALLOW_ONELEVEL):
        return True
    if not refname_is_safe_scan(name):
        raise _dangerous(name)
    return False


NAME_CHECKERS: dict[str, NameCheck] = {
    "normalize": _check_normalize,
    "escape_scan": _check_escape_scan,
    "skip_sane": _check_skip_sane,
}


def make_name_checker(flags: Flags) -> NameCheck:
    """The per-refname check of a ref reader: True good, False broken (bad name,
    kept as git keeps it, flagged), raises RefnameError if dangerous."""
    return NAME_CHECKERS[flags.refname_safety]


NamesCheck = Callable[[Sequence[bytes]], bool]


def _batch_check(safety: Callable[[bytes], bool] | None) -> NamesCheck:
    """A batch check: the format check in bulk, then (normalize, escape_scan) the
    safety check the variant runs on every name, a well-formed one included."""
    def check(names: Sequence[bytes]) -> bool:
        if not names_well_formed(names):
            return False
        if safety is not None:
            for name in names:
                safety(name)             # its verdict is not needed: the name is well formed
        return True
    return check


NAMES_CHECKERS: dict[str, NamesCheck] = {
    "normalize": _batch_check(refname_is_safe_normalize),
    "escape_scan": _batch_check(refname_is_safe_scan),
    "skip_sane": _batch_check(None),
}


def make_names_checker(flags: Flags) -> NamesCheck:
    """The batch form of make_name_checker(flags): True when every name is good,
    with the same work per name as the flag's variant beyond the format check;
    False when some name may not be (then check each with make_name_checker's)."""
    return NAMES_CHECKERS[flags.refname_safety]


_PSEUDO_REFS = (b"FETCH_HEAD", b"MERGE_HEAD")
_IRREGULAR_ROOT_REFS = (b"HEAD", b"AUTO_MERGE", b"BISECT_EXPECTED_REV", b"NOTES_MERGE_PARTIAL",
                        b"NOTES_MERGE_REF", b"MERGE_AUTOSTASH")
_ROOT_SYNTAX = re.compile(rb"[A-Z_-]*\Z")


def is_root_ref(name: bytes) -> bool:
    """git's is_root_ref: a name of upper-case letters, "-" and "_" that is no
    pseudoref (FETCH_HEAD, MERGE_HEAD) and ends in "_HEAD" or is one of git's
    irregular root refs (HEAD, AUTO_MERGE, ...)."""
    if not _ROOT_SYNTAX.match(name) or name in _PSEUDO_REFS:
        return False
    return name.endswith(b"_HEAD") or name in _IRREGULAR_ROOT_REFS
