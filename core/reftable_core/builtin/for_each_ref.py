"""`reftable-lab for-each-ref`, behaving like git's builtin/for-each-ref.c (git 2.47).

Contract: for_each_ref(argv, flags, out) runs `git for-each-ref argv` on a
reftable or files repository and writes the same stdout bytes to out, the same
stderr lines, and returns the same exit status (die: "fatal: ..." and 128;
usage errors: 129). Reads through the RefStore API (both backends) and the
object store (types, peeling), nothing else. Options: --format=FMT, --count=N,
--sort=KEY (refname or -refname; the last one given sorts first, as in git),
--omit-empty, [--] <pattern>...; plus the lab's --git-dir, --flags SPEC and
--baseline. git's other options are recognised (so abbreviations and errors
parse as in git) and refused with a "not supported" fatal line.

What git does, in its order: the refs under the longest literal prefixes of the
patterns are iterated (refs_for_each_fullref_in_prefixes, so under
packed_lookup=bsearch a prefix is a binary search in packed-refs); broken refs
are warned about and skipped, dangling symrefs skipped; a pattern matches a ref
when it equals the name, is a prefix of it ending at a "/" boundary (or ending
in "/"), or matches it by wildmatch with WM_PATHNAME (ref-filter.c
match_name_as_path). The matches are sorted, cut to --count, then each is
formatted; a missing object dies there ("missing object <id> for <ref>").
Format atoms: %(refname), %(symref) (each also :short), %(objectname) (:short,
:short=N), %(objecttype), each of them with "*" (the peeled tag's values);
literal "%%" and "%xx" hex escapes. Another git atom is refused; an unknown one
dies with git's "unknown field name: X".
"""
from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reftable_core.errors import ReftableError
from reftable_core.flags import Flags
from reftable_core.refs.api import RefStore
from reftable_core.refs.refname import REFNAME_ALLOW_ONELEVEL, check_refname_format
from reftable_core.reftable.record import REF_SYMREF
from reftable_core.repo import Repo

from .gitlike import Die, add_git_command, git_message, open_git_repo, write_err
from .parseopt import OptSpec, parse_git_options, split_lab_options
from .show_ref import Objects
from .wildmatch import wildmatch

DEFAULT_FORMAT = "%(objectname) %(objecttype)\t%(refname)"

USAGE = (
    "usage: git for-each-ref [<options>] [<pattern>]\n"
    "   or: git for-each-ref [--points-at <object>]\n"
    "   or: git for-each-ref [--merged [<commit>]] [--no-merged [<commit>]]\n"
    "   or: git for-each-ref [--contains [<commit>]] [--no-contains [<commit>]]\n"
    "\n"
    "    -s, --[no-]shell      quote placeholders suitably for shells\n"
    "    -p, --[no-]perl       quote placeholders suitably for perl\n"
    "    --[no-]python         quote placeholders suitably for python\n"
    "    --[no-]tcl            quote placeholders suitably for Tcl\n"
    "    --[no-]omit-empty     do not output a newline after empty formatted refs\n"
    "\n"
    "    --[no-]count <n>      show only <n> matched refs\n"
    "    --[no-]format <format>\n"
    "                          format to use for the output\n"
    "    --[no-]color[=<when>] respect format colors\n"
    "    --[no-]exclude <pattern>\n"
    "                          exclude refs which match pattern\n"
    "    --[no-]sort <key>     field name to sort on\n"
    "    --[no-]points-at <object>\n"
    "                          print only refs which points at the given object\n"
    "    --merged <commit>     print only refs that are merged\n"
    "    --no-merged <commit>  print only refs that are not merged\n"
    "    --contains <commit>   print only refs which contain the commit\n"
    "    --no-contains <commit>\n"
    "                          print only refs which don't contain the commit\n"
    "    --[no-]ignore-case    sorting and filtering are case insensitive\n"
    "    --[no-]stdin          read reference patterns from stdin\n"
    "    --[no-]include-root-refs\n"
    "                          also include HEAD ref and pseudorefs\n"
    "\n")

# ref-filter.c valid_atom[], in its order: a name here but not in _ATOMS is git's
# and refused by the lab; anything else is git's "unknown field name"
GIT_ATOMS = (
    "refname", "objecttype", "objectsize", "objectname", "deltabase", "tree", "parent",
    "numparent", "object", "type", "tag", "author", "authorname", "authoremail",
    "authordate", "committer", "committername", "committeremail", "committerdate",
    "tagger", "taggername", "taggeremail", "taggerdate", "creator", "creatordate",
    "describe", "subject", "body", "trailers", "contents", "signature", "raw", "upstream",
    "push", "symref", "flag", "HEAD", "color", "worktreepath", "align", "end", "if", "then",
    "else", "rest", "ahead-behind", "is-base")
_ATOMS = ("refname", "symref", "objectname", "objecttype")

SPECS = [
    OptSpec("shell", "s", "bool", "shell"),
    OptSpec("perl", "p", "bool", "perl"),
    OptSpec("python", None, "bool", "python"),
    OptSpec("tcl", None, "bool", "tcl"),
    OptSpec("omit-empty", None, "bool", "omit_empty"),
    OptSpec("count", None, "string", "count"),
    OptSpec("format", None, "string", "format"),
    OptSpec("color", None, "optarg", "color"),
    OptSpec("exclude", None, "string", "exclude"),
    OptSpec("sort", None, "string", "sort"),
    OptSpec("points-at", None, "string", "points_at"),
    OptSpec("merged", None, "optarg", "merged"),
    OptSpec("no-merged", None, "optarg", "no_merged", negatable=False),
    OptSpec("contains", None, "optarg", "contains"),
    OptSpec("no-contains", None, "optarg", "no_contains", negatable=False),
    OptSpec("ignore-case", None, "bool", "ignore_case"),
    OptSpec("stdin", None, "bool", "stdin"),
    OptSpec("include-root-refs", None, "bool", "include_root_refs"),
]
_SUPPORTED = {"omit_empty", "count", "format", "sort"}
_STRTOL = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")

# ref_rev_parse_rules (refs.c), as (prefix, suffix) around the short name
_REV_PARSE_RULES = ((b"", b""), (b"refs/", b""), (b"refs/tags/", b""), (b"refs/heads/", b""),
                    (b"refs/remotes/", b""), (b"refs/remotes/", b"/HEAD"))
_PSEUDO_REFS = (b"FETCH_HEAD", b"MERGE_HEAD")
_IRREGULAR_ROOT_REFS = (b"HEAD", b"AUTO_MERGE", b"BISECT_EXPECTED_REV", b"NOTES_MERGE_PARTIAL",
                        b"NOTES_MERGE_REF", b"MERGE_AUTOSTASH")


def register(sub: argparse._SubParsersAction, add_flag_options: Callable) -> None:
    add_git_command(sub, *GIT_COMMAND)


# -- the format ------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Atom:
    """One %(...) of the format: its name, whether it is "*" (of the peeled tag),
    and its option: "" (full), "short", or an abbreviation length (objectname)."""
    name: str
    deref: bool
    option: str | int


Part = bytes | Atom


def _hex2chr(s: bytes, i: int) -> int:
    """git's hex2chr on s[i:i+2], or -1."""
    try:
        pair = s[i:i + 2]
        return int(pair, 16) if len(pair) == 2 and pair.isalnum() and b"_" not in pair else -1
    except ValueError:
        return -1


def _literal(s: bytes) -> bytes:
    """git's append_literal: "%%" is "%", "%xx" a byte, any other "%" itself."""
    if b"%" not in s:
        return s
    out = bytearray()
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == 37:
            if s[i + 1:i + 2] == b"%":
                i += 1
            else:
                ch = _hex2chr(s, i + 1)
                if ch >= 0:
                    out.append(ch)
                    i += 3
                    continue
        out.append(s[i])
        i += 1
    return bytes(out)


def _find_next(s: bytes, i: int) -> int:
    """git's find_next: the index of the next "%(", skipping "%%", or -1."""
    n = len(s)
    while i < n:
        if s[i] == 37:
            if s[i + 1:i + 2] == b"(":
                return i
            if s[i + 1:i + 2] == b"%":
                i += 1
        i += 1
    return -1


def parse_atom(text: str) -> Atom:
    """git's parse_ref_filter_atom for the text between "%(" and ")" (Die with
    git's message when git refuses it; a git atom the lab lacks is refused too)."""
    body = text[1:] if text.startswith("*") else text
    if not body:
        raise Die(f"malformed field name: {text}")
    name, colon, arg = body.partition(":")
    if name not in GIT_ATOMS:
        raise Die(f"unknown field name: {text}")
    if name not in _ATOMS:
        raise Die(f"reftable-lab for-each-ref does not support %({name})")
    deref = text.startswith("*")
    option: str | int = ""
    if not colon or not arg:
        return Atom(name, deref, "")
    if name in ("refname", "symref"):
        if arg == "short":
            return Atom(name, deref, "short")
        if arg.startswith(("lstrip=", "strip=", "rstrip=")):
            raise Die(f"reftable-lab for-each-ref does not support %({name}:{arg})")
        raise Die(f"unrecognized %({name}) argument: {arg}")
    if name == "objecttype":
        raise Die("%(objecttype) does not take arguments")
    # objectname
    if arg == "short":
        return Atom(name, deref, "short")
    if arg.startswith("short="):
        v = arg[6:]
        if not v.isdigit() or not v.isascii() or int(v) == 0:
            raise Die(f"positive value expected '{v}' in %({text})")
        option = max(int(v), 4)
        return Atom(name, deref, option)
    raise Die(f"unrecognized %({text.split(':', 1)[0]}) argument: {arg}")


def parse_format(fmt: bytes) -> list[Part]:
    """git's verify_ref_format: literal runs (escapes resolved) and atoms. A "%("
    without ")" is git's usage error; a bad atom its fatal line."""
    parts: list[Part] = []
    i = 0
    while i < len(fmt):
        sp = _find_next(fmt, i)
        if sp < 0:
            break
        ep = fmt.find(b")", sp)
        if ep < 0:
            shown = fmt[sp:].decode("utf-8", "surrogateescape")
            raise Die(f"error: malformed format string {shown}\n{USAGE}", 129, "usage")
        if sp > i:
            parts.append(_literal(fmt[i:sp]))
        parts.append(parse_atom(fmt[sp + 2:ep].decode("utf-8", "surrogateescape")))
        i = ep + 1
    if i < len(fmt):
        parts.append(_literal(fmt[i:]))
    return parts


# -- refs ------------------------------------------------------------------------------

def longest_prefixes(patterns: list[bytes]) -> list[bytes]:
    """git's find_longest_prefixes: the literal prefixes to iterate, none a prefix of
    another, sorted (a pattern's prefix ends before its first glob character)."""
    out: list[bytes] = []

    def walk(prefix: bytes, pats: list[bytes]) -> None:
        n = len(prefix)
        for p in pats:
            if len(p) == n or p[n] in b"*?[\\":
                out.append(prefix)
                return
        i = 0
        while i < len(pats):
            c = pats[i][n]
            end = i + 1
            while end < len(pats) and pats[end][n] == c:
                end += 1
            walk(prefix + bytes((c,)), pats[i:end])
            i = end

    if patterns:
        walk(b"", sorted(patterns))
    return out


def match_name_as_path(patterns: list[bytes], name: bytes) -> bool:
    """ref-filter.c match_name_as_path (no --ignore-case)."""
    n = len(name)
    for p in patterns:
        lp = len(p)
        if lp <= n and name.startswith(p) and (lp == n or name[lp] == 47 or p[lp - 1] == 47):
            return True
        if wildmatch(p, name):
            return True
    return False


def _listed_kind(name: bytes) -> bool:
    """Is name of a kind FILTER_REFS_REGULAR lists (ref_kind_from_refname): not HEAD,
    a pseudoref or a root ref."""
    if name.startswith(b"refs/"):
        return True
    if name in _PSEUDO_REFS:
        return False
    if all(c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ-_" for c in name):
        if name.endswith(b"_HEAD") or name in _IRREGULAR_ROOT_REFS:
            return False
    return True


@dataclass(slots=True)
class Item:
    """A listed ref: its name, its object id, its symref target (one level) or None."""
    name: bytes
    oid: bytes
    target: bytes | None


def collect(store: RefStore, patterns: list[bytes]) -> list[Item]:
    """The refs git's filter_refs keeps, in iteration (name) order, broken ones
    included (git's paranoid iteration), warning about them as git's
    apply_ref_filter does. The symref value type is bound to a local once."""
    prefixes = longest_prefixes(patterns) if patterns else [b""]
    zero = bytes(store.hash_size)
    symref = REF_SYMREF
    items: list[Item] = []
    oid: Any                                 # bytes in a value record (a broken one: zero)
    for prefix in prefixes:
        for rec in store.iter_ref_records(prefix, True):
            name = rec.refname
            target = None
            if rec.value_type == symref:
                ref = store.resolve(name)
                if ref is None or not ref.value:
                    continue                       # dangling symref: omitted (paranoia)
                oid, target = ref.value, rec.target
            else:
                oid = rec.value
            if oid == zero:
                text = name.decode("utf-8", "surrogateescape")
                if not check_refname_format(name, REFNAME_ALLOW_ONELEVEL):
                    write_err("warning: ", f"ignoring ref with broken name {text}")
                else:
                    write_err("warning: ", f"ignoring broken ref {text}")
                continue
            if not _listed_kind(name):
                continue
            if patterns and not match_name_as_path(patterns, name):
                continue
            items.append(Item(name, oid, target))
    return items


def shorten(store: RefStore, name: bytes) -> bytes:
    """refs.c refs_shorten_unambiguous_ref in strict mode (core.warnAmbiguousRefs):
    the shortest form no other rev-parse rule resolves to an existing ref."""
    rules = _REV_PARSE_RULES
    for i in range(len(rules) - 1, 0, -1):
        pre, suf = rules[i]
        if not (name.startswith(pre) and name.endswith(suf)) or len(name) < len(pre) + len(suf):
            continue
        short = name[len(pre):len(name) - len(suf)]
        for j, (p2, s2) in enumerate(rules):
            if j != i and _ref_exists(store, p2 + short + s2):
                break
        else:
            return short
    return name


def _ref_exists(store: RefStore, name: bytes) -> bool:
    """refs_ref_exists: name resolves (RESOLVE_REF_READING) to an object id."""
    if not check_refname_format(name, REFNAME_ALLOW_ONELEVEL):
        return False
    try:
        ref = store.resolve(name)
    except ReftableError:
        return False
    return ref is not None and bool(ref.value)


# -- the command -----------------------------------------------------------------------

def for_each_ref(argv: list[str], flags: Flags, out: Any) -> int:
    argv, gitdir, flags = split_lab_options(argv, flags)
    o: dict[str, Any] = {"format": DEFAULT_FORMAT, "count": 0, "sort": ["refname"],
                         "omit_empty": False}

    def handle(spec: OptSpec, val: str | None, negated: bool) -> None:
        if spec.dest not in _SUPPORTED:
            raise Die(f"reftable-lab for-each-ref does not support --{spec.long}")
        if spec.dest == "omit_empty":
            o["omit_empty"] = not negated
        elif spec.dest == "sort":
            o["sort"] = [] if negated else [*o["sort"], val]
        elif spec.dest == "count":
            if negated:
                o["count"] = 0
            else:
                o["count"] = _integer(val or "", "count")
        elif spec.dest == "format":
            o["format"] = DEFAULT_FORMAT if negated else val

    patterns = parse_git_options(argv, SPECS, handle, USAGE, out)
    repo = open_git_repo(gitdir, flags)
    try:
        return _run(repo, o, patterns, out)
    except ReftableError as e:       # a bad packed-refs line, a dangerous name: git dies
        raise Die(git_message(e)) from None
    finally:
        repo.close()


def _integer(val: str, name: str) -> int:
    """OPT_INTEGER's value: C's strtol(val, 10) with nothing left over (git 2.47),
    truncated to an int as git stores it."""
    m = _STRTOL.fullmatch(val)
    if not val or m is None:
        raise Die(f"option `{name}' expects a numerical value", 129, "error: ")
    v = max(min(int(m.group(1)), 2 ** 63 - 1), -2 ** 63)           # strtol clamps to long
    v &= 0xFFFFFFFF                                                  # (int) of that long
    return v - 2 ** 32 if v >= 2 ** 31 else v


def _run(repo: Repo, o: dict[str, Any], patterns: list[str], out: Any) -> int:
    if o["count"] < 0:
        raise Die(f"error: invalid --count argument: `{o['count']}'\n{USAGE}", 129, "usage")
    parts = parse_format(o["format"].encode("utf-8", "surrogateescape"))
    reverse = False
    for key in o["sort"]:                   # the last key sorts first: it decides
        desc = key.startswith("-")
        atom = parse_atom(key[1:] if desc else key)
        if atom != Atom("refname", False, ""):
            raise Die(f"reftable-lab for-each-ref sorts by refname only, not {key}")
        reverse = desc
    store = repo.refs
    pats = [p.encode("utf-8", "surrogateescape") for p in patterns]
    items = collect(store, pats)
    fmt = Formatter(repo, parts)
    # git sorts (populating each ref's values, reading its object, as compared), then
    # prints the first --count: every ref is populated either way; a failure dies with
    # the first failing ref in the order git's merge sort reaches them
    lines: list[bytes] = []
    failed: dict[int, Die] = {}
    for i, it in enumerate(items):
        try:
            lines.append(fmt.line(it))
        except Die as d:
            failed[i] = d
            lines.append(b"")
    if failed:
        raise failed[first_touched(items, reverse, failed.keys())]
    order = sorted(range(len(items)), key=lambda i: items[i].name, reverse=reverse)
    if o["count"]:
        order = order[:o["count"]]
    omit = o["omit_empty"]
    for i in order:
        if lines[i] or not omit:
            out.write(lines[i] + b"\n")
    return 0


class _Found(Exception):
    def __init__(self, index: int) -> None:
        self.index = index


def first_touched(items: list[Item], reverse: bool, wanted: Any) -> int:
    """The first index of wanted that git's sort populates: git_qsort_s
    (compat/qsort_s.c, a merge sort) over items in iteration order, compare_refs
    populating a, then b; a single ref is populated when printed."""
    wanted = set(wanted)
    if len(items) < 2:
        return min(wanted)
    names = [it.name for it in items]

    def cmp(a: int, b: int) -> int:
        for i in (a, b):
            if i in wanted:
                raise _Found(i)
        c = (names[a] > names[b]) - (names[a] < names[b])
        return -c if reverse else c

    def msort(b: list[int]) -> list[int]:
        if len(b) <= 1:
            return b
        n1 = len(b) // 2
        b1, b2 = msort(b[:n1]), msort(b[n1:])
        out: list[int] = []
        i = j = 0
        while i < len(b1) and j < len(b2):
            if cmp(b1[i], b2[j]) <= 0:
                out.append(b1[i])
                i += 1
            else:
                out.append(b2[j])
                j += 1
        return out + b1[i:] + b2[j:]

    try:
        msort(list(range(len(items))))
    except _Found as f:
        return f.index
    raise AssertionError("every ref is compared at least once")


class Formatter:
    """format_ref_array_item for the lab's atoms: object data read only when an
    atom needs it (objecttype, or any "*" atom), as populate_value does."""

    def __init__(self, repo: Repo, parts: list[Part]) -> None:
        self.store = repo.refs
        self.parts = parts
        self.objects = Objects(repo)
        atoms = [p for p in parts if isinstance(p, Atom)]
        self.need_tagged = any(a.deref for a in atoms)
        self.need_type = self.need_tagged or any(a.name == "objecttype" for a in atoms)
        self._short: dict[bytes, bytes] = {}

    def _read_type(self, oid: bytes, name: bytes) -> str:
        store = self.objects.store
        try:
            if store is None:
                raise ReftableError("no object store")
            return store.read_header(oid)[0]
        except ReftableError:
            raise Die(f"missing object {oid.hex()} for {name.decode('utf-8', 'surrogateescape')}") \
                from None

    def line(self, it: Item) -> bytes:
        """populate_value + format_ref_array_item for it (Die as git dies)."""
        typ = peeled = ptyp = None
        if self.need_type:
            typ = self._read_type(it.oid, it.name)
            if self.need_tagged and typ == "tag":
                try:
                    peeled = self.objects.store.peel(it.oid)
                except ReftableError:
                    raise Die("bad tag") from None
                ptyp = self._read_type(peeled, it.name)
        out = []
        for p in self.parts:
            if isinstance(p, bytes):
                out.append(p)
                continue
            name = p.name
            if name == "refname" or name == "symref":
                ref = it.name if name == "refname" else (it.target or b"")
                if ref and p.option == "short":
                    ref = self._shorten(ref)
                out.append(ref + b"^{}" if p.deref else ref)
            elif p.deref:
                if peeled is not None:
                    out.append(self._oid(peeled, p.option) if name == "objectname"
                               else (ptyp or "").encode())
            elif name == "objectname":
                out.append(self._oid(it.oid, p.option))
            else:
                out.append((typ or "").encode())
        return b"".join(out)

    def _oid(self, oid: bytes, option: str | int) -> bytes:
        if option == "":
            return oid.hex().encode()
        return self.objects.abbrev(oid, -1 if option == "short" else int(option)).encode()

    def _shorten(self, name: bytes) -> bytes:
        s = self._short.get(name)
        if s is None:
            s = self._short[name] = shorten(self.store, name)
        return s


# the command, as lab.cli runs it (without argparse) and register() registers it
GIT_COMMAND = ("for-each-ref", "list references like git for-each-ref", for_each_ref)
