"""`reftable-lab show-ref`, behaving like git's builtin/show-ref.c.

Contract: show_ref(argv, flags, out) runs `git show-ref argv` on a reftable or
files repository (reftable_core.repo) and writes the same stdout bytes to out
(binary), the same stderr messages and returns the same exit status (die =
"fatal: ..." and 128, usage errors 129; see gitlike.Die). argv is parsed by
git's parse-options rules (parseopt), plus the lab's --git-dir, --flags SPEC and
--baseline. Modes: patterns (--head, --branches/--heads, --tags, --dereference,
--hash[=N], --abbrev[=N], --quiet), --verify, --exists, --exclude-existing[=P].
The pattern loop is picked once by the store's scan (RefStore.scan, the
registry PATTERN_LOOPS), never by its type: over the merged seekable records
(SCAN_RECORDS, a reftable store: _show_records, the hot path of seed 000) or
over the rows of refs merged by name, broken ones included (SCAN_ROWS, a files
store's loose + packed refs, a store of linked worktrees: _show_rows).
"""
from __future__ import annotations

import argparse
import bisect
import sys
from collections.abc import Callable
from typing import Any

from reftable_core.errors import ReftableError
from reftable_core.flags import Flags
from reftable_core.refs.api import SCAN_RECORDS, SCAN_ROWS, RefStore
from reftable_core.refs.loose import LooseValue, read_loose
from reftable_core.refs.refname import (REFNAME_ALLOW_ONELEVEL, check_refname_format,
                                        iterated_refname_ok, refname_is_safe)
from reftable_core.reftable.record import REF_VAL1, REF_VAL2
from reftable_core.repo import Repo

from ..cython_shim import cython
from .gitlike import Die, add_git_command, git_message, open_git_repo, write_err
from .parseopt import OptSpec, parse_git_options, split_lab_options

MINIMUM_ABBREV = 4
FALLBACK_DEFAULT_ABBREV = 7


def register(sub: argparse._SubParsersAction, add_flag_options: Callable) -> None:
    add_git_command(sub, *GIT_COMMAND)


class Objects:
    """Object checks for show-ref: existence (cached), peeling, unique abbreviation."""

    def __init__(self, repo: Repo) -> None:
        self.store = repo.objects
        self.hexsz = repo.hash_size * 2
        self.good: set[bytes] = set()
        self._sorted: list[str] | None = None

    def has(self, oid: bytes) -> bool:
        if oid in self.good:
            return True
        if self.store is None or self.store.has(oid):
            self.good.add(oid)
            return True
        return False

    def peel(self, oid: bytes) -> bytes | None:
        """The peeled id when oid is a tag, else None (git's peel_object)."""
        if self.store is None:
            return None
        try:
            if self.store.read_header(oid)[0] != "tag":
                return None
            return self.store.peel(oid)
        except ReftableError:
            return None

    def abbrev(self, oid: bytes, length: int) -> str:
        hx = oid.hex()
        if length == 0 or length >= self.hexsz:
            return hx
        if self.store is None:
            return hx[:max(length, FALLBACK_DEFAULT_ABBREV)]
        if self._sorted is None:
            self._sorted = sorted(o.hex() for o in self.store.iter_oids())
        names = self._sorted
        if length < 0:
            length = default_abbrev(sum(len(p.idx) for p in self.store.packs))
            if length >= self.hexsz:
                return hx
        need = 0
        pos = bisect.bisect_left(names, hx)
        for j in (pos - 1, pos, pos + 1):
            if 0 <= j < len(names) and names[j] != hx:
                other = names[j]
                k = 0
                while k < len(hx) and hx[k] == other[k]:
                    k += 1
                need = max(need, k + 1)
        return hx[:min(max(length, need), self.hexsz)]



def default_abbrev(approx_objects: int) -> int:
    """git's automatic abbreviation length (core.abbrev unset or "auto"): expect a
    collision among 2^b objects at 2^(b/2), 4 bits per hex digit, so
    ceil(bit_length(count) / 2) digits, at least 7. git's count is
    repo_approximate_object_count: the objects of every pack, loose ones not counted."""
    return max((approx_objects.bit_length() + 1) // 2, FALLBACK_DEFAULT_ABBREV)


def _abbrev_value(val: str, hexsz: int, name: str) -> int:
    try:
        v = int(val, 10)
    except ValueError:
        raise Die(f"option `{name}' expects a numerical value", 129, "error: ")
    if v and v < MINIMUM_ABBREV:
        v = MINIMUM_ABBREV
    elif v > hexsz:
        v = hexsz
    return v

# git 2.47's show-ref usage text (`git show-ref -h`); --help-all adds the hidden options
_USAGE_HEAD = (
    'usage: git show-ref [--head] [-d | --dereference]\n'
    '                    [-s | --hash[=<n>]] [--abbrev[=<n>]] [--branches] [--tags]\n'
    '                    [--] [<pattern>...]\n'
    '   or: git show-ref --verify [-q | --quiet] [-d | --dereference]\n'
    '                    [-s | --hash[=<n>]] [--abbrev[=<n>]]\n'
    '                    [--] [<ref>...]\n'
    '   or: git show-ref --exclude-existing[=<pattern>]\n'
    '   or: git show-ref --exists <ref>\n'
    '\n'
    '    --[no-]tags           only show tags (can be combined with --branches)\n'
    '    --[no-]branches       only show branches (can be combined with --tags)\n'
)
_USAGE_MID = (
    '    --[no-]exists         check for reference existence without resolving\n'
    '    --[no-]verify         stricter reference checking, requires exact ref path\n'
)
_USAGE_TAIL = (
    '    --[no-]head           show the HEAD reference, even if it would be filtered out\n'
    '    -d, --[no-]dereference\n'
    '                          dereference tags into object IDs\n'
    '    -s, --[no-]hash[=<n>] only show SHA1 hash using <n> digits\n'
    '    --[no-]abbrev[=<n>]   use <n> digits to display object names\n'
    '    -q, --[no-]quiet      do not print results to stdout (useful with --verify)\n'
    '    --exclude-existing[=<pattern>]\n'
    "                          show refs from stdin that aren't in local repository\n"
    '\n'
)
USAGE_SHOW_REF = _USAGE_HEAD + _USAGE_MID + _USAGE_TAIL
USAGE_SHOW_REF_ALL = (
    _USAGE_HEAD
    + '    --[no-]heads          deprecated synonym for --branches\n'
    + _USAGE_MID
    + '    -h                    show the HEAD reference, even if it would be filtered out\n'
    + _USAGE_TAIL)


SHOW_REF_SPECS = [
    OptSpec("tags", None, "bool", "tags"),
    OptSpec("branches", None, "bool", "branches"),
    OptSpec("heads", None, "bool", "branches"),
    OptSpec("exists", None, "bool", "exists"),
    OptSpec("verify", None, "bool", "verify"),
    OptSpec(None, "h", "bool", "head"),
    OptSpec("head", None, "bool", "head"),
    OptSpec("dereference", "d", "bool", "deref"),
    OptSpec("hash", "s", "optarg", "hash"),
    OptSpec("abbrev", None, "optarg", "abbrev"),
    OptSpec("quiet", "q", "bool", "quiet"),
    OptSpec("exclude-existing", None, "optarg", "exclude_existing", negatable=False),
]


def show_ref(argv: list[str], flags: Flags, out: Any) -> int:
    argv, gitdir, flags = split_lab_options(argv, flags)
    o: dict[str, Any] = {"tags": False, "branches": False, "exists": False, "verify": False,
                         "head": False, "deref": False, "hash": False, "abbrev": 0,
                         "quiet": False, "exclude_existing": None, "ee": False}
    pending: list[tuple[str, str | None, bool]] = []

    def handle(spec: OptSpec, val: str | None, negated: bool) -> None:
        if spec.kind == "bool":
            o[spec.dest] = not negated
        else:
            pending.append((spec.dest, val, negated))

    patterns = parse_git_options(argv, SHOW_REF_SPECS, handle, USAGE_SHOW_REF, out,
                                 USAGE_SHOW_REF_ALL)
    repo = open_git_repo(gitdir, flags)
    try:
        return _show_ref_in(repo, o, pending, patterns, out)
    except ReftableError as e:       # a bad packed-refs line, a dangerous name: git dies
        raise Die(git_message(e)) from None
    finally:
        repo.close()


def _show_ref_in(repo: Repo, o: dict[str, Any], pending: list[tuple[str, str | None, bool]],
                 patterns: list[str], out: Any) -> int:
    hexsz = repo.hash_size * 2
    for dest, val, negated in pending:
        if dest == "hash":
            o["hash"] = not negated
            if negated:
                o["abbrev"] = 0
            elif val is not None:
                o["abbrev"] = _abbrev_value(val, hexsz, "hash")
        elif dest == "abbrev":
            if negated:
                o["abbrev"] = 0
            elif val is None:
                o["abbrev"] = -1
            else:
                o["abbrev"] = _abbrev_value(val, hexsz, "abbrev")
        elif dest == "exclude_existing":
            o["ee"] = True
            o["exclude_existing"] = val
    chosen = [n for n, on in (("--exclude-existing", o["ee"]), ("--verify", o["verify"]),
                              ("--exists", o["exists"])) if on]
    if len(chosen) == 2:
        raise Die(f"options '{chosen[0]}' and '{chosen[1]}' cannot be used together")
    if len(chosen) == 3:
        raise Die(f"options '{chosen[0]}', '{chosen[1]}', and '{chosen[2]}' cannot be used together")
    store = repo.refs
    objs = Objects(repo)
    if o["ee"]:
        return _exclude_existing(store, o["exclude_existing"], out)
    if o["verify"]:
        return _show_verify(store, objs, o, patterns, out)
    if o["exists"]:
        return _show_exists(repo, store, patterns)
    return _show_patterns(store, objs, o, patterns, out)


def _show_one(objs: Objects, o: dict[str, Any], name: bytes, oid: bytes,
              peeled: bytes | None, out: Any) -> None:
    if not objs.has(oid):
        raise Die(f"git show-ref: bad ref {name.decode('utf-8', 'replace')} ({oid.hex()})")
    if o["quiet"]:
        return
    abbrev = o["abbrev"]
    hx = objs.abbrev(oid, abbrev).encode()
    if o["hash"]:
        out.write(hx + b"\n")
    else:
        out.write(hx + b" " + name + b"\n")
    if not o["deref"]:
        return
    if peeled is None:
        peeled = objs.peel(oid)
    if peeled is not None:
        out.write(objs.abbrev(peeled, abbrev).encode() + b" " + name + b"^{}\n")


def _resolve_oid(store: RefStore, name: bytes) -> tuple[bytes, bytes | None] | None:
    ref = store.resolve(name, allow_bad_name=False)
    if ref is None or not ref.value:
        return None
    return ref.value, ref.peeled


class _Tails:
    """git show-ref's pattern rule: a name matches when it equals a pattern or
    ends with "/" + a pattern (show_ref's tail match). The loops test it in C-level
    steps, cheapest first: the name's last byte against the patterns' last bytes
    (lasts; "/" for an empty pattern), then `name.endswith(tails) or name in
    exact`; an empty name matches only an empty pattern (empty_ok)."""
    __slots__ = ("empty_ok", "exact", "lasts", "tails")

    def __init__(self, patterns: list[str]) -> None:
        pats = [p.encode("utf-8", "surrogateescape") for p in patterns]
        self.exact = frozenset(pats)
        self.tails = tuple(b"/" + p for p in pats)
        self.lasts = frozenset(p[-1] if p else 47 for p in pats)
        self.empty_ok = b"" in self.exact


def _show_patterns(store: RefStore, objs: Objects, o: dict[str, Any], patterns: list[str],
                   out: Any) -> int:
    found = 0
    show_head = o["head"]
    if show_head:
        r = _resolve_oid(store, b"HEAD")
        if r is not None:
            found += 1
            _show_one(objs, o, b"HEAD", r[0], r[1], out)
    prefixes: list[bytes] = []
    if o["branches"] or o["tags"]:
        if o["branches"]:
            prefixes.append(b"refs/heads/")
        if o["tags"]:
            prefixes.append(b"refs/tags/")
    else:
        prefixes.append(b"")
    match = _Tails(patterns) if patterns else None
    return PATTERN_LOOPS[store.scan](store, objs, o, match, prefixes, found, out)


@cython.locals(name="bytes", found="Py_ssize_t", exact="frozenset", tails="tuple",
               lasts="frozenset")    # the Cython build: the name's tests in C
def _show_rows(store: RefStore, objs: Objects, o: dict[str, Any], match: _Tails | None,
               prefixes: list[bytes], found: int, out: Any) -> int:
    """show-ref's loop over the store's refs as rows (name, oid, peeled, target;
    a files store's loose and packed merged, broken ones included: git's
    show-ref iterates so, GIT_REF_PARANOIA being on by default): a dangling
    symref is skipped silently; a broken ref (zero id) or a missing object makes
    _show_one die with git's "bad ref", once the pattern matched."""
    m = match or _Tails([])
    exact, tails, lasts, empty_ok = m.exact, m.tails, m.lasts, m.empty_ok
    oid: Any                                 # bytes in a value row (a broken one: zero)
    peeled: Any
    for prefix in prefixes:
        for name, oid, peeled, target in store.iter_ref_rows(prefix, True):
            if target is not None:
                r = _resolve_oid(store, name)
                if r is None:
                    continue                 # dangling symref: skipped silently
                oid, peeled = r
            if match is not None and not ((name[-1] in lasts and (
                    name.endswith(tails) or name in exact)) if name else empty_ok):
                continue
            found += 1
            _show_one(objs, o, name, oid, peeled, out)
    return 0 if found else 1


def _prefix_end(prefix: bytes) -> bytes:
    """The smallest name greater than every name starting with prefix (which
    must not end in 0xff bytes only: show-ref's prefixes all end in "/")."""
    p = prefix.rstrip(b"\xff")
    if not p:
        raise ValueError(f"no name bound after prefix {prefix!r}")
    return p[:-1] + bytes((p[-1] + 1,))


@cython.locals(rec="RefRecord")     # the Cython build: its fields read from its C struct
def _show_records(store: RefStore, objs: Objects, o: dict[str, Any], match: _Tails | None,
                  prefixes: list[bytes], found: int, out: Any) -> int:
    """show-ref's loop straight over the store's seekable records (a reftable
    store's merged iterator; no per-ref wrapper objects). The iterator yields
    names in order from the prefix on, so "still under the prefix" is one
    comparison with the first name past it. No object is looked up before the
    match (git's iterator includes broken refs, GIT_REF_PARANOIA being on by
    default): a matching ref whose object is missing makes _show_one die with git's
    "bad ref". Every name is checked as git's reftable iterator checks the names it
    steps over, matched or not (refs/reftable-backend.c): a dangerous one is fatal, a
    bad one clears the id (REF_BAD_NAME; a symref so named is not read), and a
    dangling symref is omitted (DO_FOR_EACH_OMIT_DANGLING_SYMREFS). The value types are bound to locals
    once (read in the loop as cheaply as literals)."""
    val1, val2 = REF_VAL1, REF_VAL2
    m = match or _Tails([])
    exact, tails, lasts, empty_ok = m.exact, m.tails, m.lasts, m.empty_ok
    oid: Any                                 # bytes in a value record
    peeled: Any
    zero = bytes(objs.hexsz // 2)
    for prefix in prefixes:
        start = prefix or b"refs/"
        stop = _prefix_end(start)
        for rec in store.seek_ref_records(start):
            name = rec.refname
            if name >= stop:
                break
            vt = rec.value_type
            dangling = False
            if vt == val1:
                oid = rec.value
                peeled = None
            elif vt == val2:
                oid = rec.value
                peeled = rec.target_value
            else:
                r = _resolve_oid(store, name)
                if r is None:
                    dangling = True          # a symref that resolves to no object
                    oid = peeled = None
                else:
                    oid, peeled = r
            if not iterated_refname_ok(name):
                oid = zero                   # a table's bad name: git's REF_BAD_NAME, oid cleared
                peeled = None                # (a symref too: not read, so not omitted)
            elif dangling:
                continue                     # dangling symref: omitted silently
            if match is not None and not ((name[-1] in lasts and (
                    name.endswith(tails) or name in exact)) if name else empty_ok):
                continue
            found += 1
            _show_one(objs, o, name, oid, peeled, out)
    return 0 if found else 1


def _show_verify(store: RefStore, objs: Objects, o: dict[str, Any], refs: list[str], out: Any) -> int:
    if not refs:
        raise Die("--verify requires a reference")
    for r in refs:
        name = r.encode("utf-8", "surrogateescape")
        res = None
        if ((name.startswith(b"refs/") or refname_is_safe(name))
                and check_refname_format(name, REFNAME_ALLOW_ONELEVEL)):
            res = _resolve_oid(store, name)        # git's read_ref refuses a bad name
        if res is not None:
            _show_one(objs, o, name, res[0], None if res[1] is None else res[1], out)
        elif not o["quiet"]:
            raise Die(f"'{r}' - not a valid ref")
        else:
            return 1
    return 0


# git's is_pseudo_ref: read from their file in the git dir whatever the ref format
PSEUDO_REFS = (b"FETCH_HEAD", b"MERGE_HEAD")


def _show_exists(repo: Repo, store: RefStore, refs: list[str]) -> int:
    if not refs:
        raise Die("--exists requires a reference")
    if len(refs) > 1:
        raise Die("--exists requires exactly one reference")
    name = refs[0].encode("utf-8", "surrogateescape")
    if name in PSEUDO_REFS:                         # a file in the git dir, either backend
        value = read_loose(repo.gitdir, name, repo.hash_size)
        if isinstance(value, LooseValue) and value.broken:
            write_err("error: ", "failed to look up reference: Invalid argument")   # EINVAL
            return 1
        found = value is not None
    elif store.is_broken(name):                    # git's raw read: no format check
        write_err("error: ", "failed to look up reference: Invalid argument")   # EINVAL
        return 1
    else:
        found = store.ref_exists(name)
    if not found:
        write_err("error: ", "reference does not exist")
        return 2
    return 0


def _exclude_existing(store: RefStore, pattern: str | None, out: Any) -> int:
    existing = {rec.refname for rec in store.iter_ref_records(b"", True)}   # broken ones too
    pat = pattern.encode() if pattern is not None else None
    for raw in sys.stdin.buffer:
        line = raw[:-1] if raw.endswith(b"\n") else raw
        if line.endswith(b"^{}"):
            line = line[:-3]
        k = len(line)
        while k > 0 and not line[k - 1:k].isspace():
            k -= 1
        ref = line[k:]
        if pat is not None and not ref.startswith(pat):
            continue
        if not check_refname_format(ref, 0):
            write_err("warning: ", f"ref '{ref.decode('utf-8', 'replace')}' ignored")
            continue
        if ref not in existing:
            out.write(line + b"\n")
    return 0


# show-ref's pattern loop for each RefStore.scan
PatternLoop = Callable[[RefStore, Objects, dict[str, Any], _Tails | None, list[bytes], int, Any],
                       int]
PATTERN_LOOPS: dict[str, PatternLoop] = {SCAN_RECORDS: _show_records, SCAN_ROWS: _show_rows}


# the command, as lab.cli runs it (without argparse) and register() registers it
GIT_COMMAND = ("show-ref", "list references like git show-ref", show_ref)
