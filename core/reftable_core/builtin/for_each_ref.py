"""`reftable-lab for-each-ref`, behaving like git's builtin/for-each-ref.c (git 2.47).

Contract: for_each_ref(argv, flags, out) runs `git for-each-ref argv` on a
reftable or files repository and writes the same stdout bytes to out, the same
stderr lines, and returns the same exit status (die: "fatal: ..." and 128;
usage errors: 129). This module is the command: git's options, parsed as git's
parse-options does (plus the lab's --git-dir, --flags SPEC and --baseline), and
the run in git's order (filter_and_format_refs); the ref-filter itself is the
package ref_filter (format and atoms, quoting, filters, sort).

The run: the object options (--points-at, --merged/--no-merged, --contains/
--no-contains) are resolved as git's option callbacks do; --count < 0 and two
quoting styles are usage errors; the format is parsed (verify_ref_format), then
the --sort keys (default refname; the last one given sorts first; --no-sort: none,
each ref is then formatted as it is iterated, as git's filter_and_format_one);
the refs under the longest literal prefixes of the patterns (or --stdin's lines)
are iterated through the RefStore API (so under packed_lookup=bsearch a prefix is
a binary search in packed-refs), filtered, reach-filtered, sorted (every ref
populated, a failure dying with the first ref git's merge sort reaches), cut to
--count and formatted (--omit-empty drops empty lines).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from typing import Any

from reftable_core.errors import ReftableError
from reftable_core.flags import Flags
from reftable_core.odb.revision import resolve_revision
from reftable_core.repo import Repo

from .gitlike import (Die, add_git_command, ambiguity_warning, git_message, open_git_repo,
                      ref_resolver, replace_refs_enabled, write_err)
from .parseopt import OptSpec, parse_git_options, split_lab_options
from .ref_filter.atom import AtomValue
from .ref_filter.filters import (
    RefFilter,
    collect,
    commit_of,
    longest_prefixes,
    match_name_as_path,
    reach,
    reach_filter,
)
from .ref_filter.format import Context, RefFormat
from .ref_filter.quoting import STYLE_BITS, check_styles
from .ref_filter.sort import first_failing, parse_sort_keys, sort_refs

__all__ = ["GIT_COMMAND", "for_each_ref", "longest_prefixes", "match_name_as_path"]

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
    OptSpec("merged", None, "lastarg", "merged", negatable=False),
    OptSpec("no-merged", None, "lastarg", "no_merged", negatable=False),
    OptSpec("contains", None, "lastarg", "contains", negatable=False),
    OptSpec("no-contains", None, "lastarg", "no_contains", negatable=False),
    OptSpec("ignore-case", None, "bool", "ignore_case"),
    OptSpec("stdin", None, "bool", "stdin"),
    OptSpec("include-root-refs", None, "bool", "include_root_refs"),
]
_STRTOL = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")

def register(sub: argparse._SubParsersAction, add_flag_options: Callable) -> None:
    add_git_command(sub, *GIT_COMMAND)


def for_each_ref(argv: list[str], flags: Flags, out: Any) -> int:
    argv, gitdir, flags = split_lab_options(argv, flags)
    o: dict[str, Any] = {"format": DEFAULT_FORMAT, "count": 0, "sort": ["refname"],
                         "omit_empty": False, "quote": 0, "color": -1, "exclude": [],
                         "ignore_case": False, "stdin": False, "include_root_refs": False,
                         "revs": []}

    def handle(spec: OptSpec, val: str | None, negated: bool) -> None:
        d = spec.dest
        if d in STYLE_BITS:
            bit = STYLE_BITS[d]
            o["quote"] = o["quote"] & ~bit if negated else o["quote"] | bit
        elif d in ("omit_empty", "ignore_case", "stdin", "include_root_refs"):
            o[d] = not negated
        elif d == "sort":
            o["sort"] = [] if negated else [*o["sort"], val]
        elif d == "exclude":
            o["exclude"] = [] if negated else [*o["exclude"], val]
        elif d == "count":
            o["count"] = 0 if negated else _integer(val or "", "count")
        elif d == "format":
            o["format"] = DEFAULT_FORMAT if negated else val
        elif d == "color":
            o["color"] = _colorbool("never" if negated else (val or "always"))
        else:                               # points_at, merged, contains and their no-
            o["revs"].append((d, val, negated))

    patterns = parse_git_options(argv, SPECS, handle, USAGE, out)
    repo = open_git_repo(gitdir, flags)
    try:
        return _run(repo, o, patterns, out)
    except ReftableError as e:       # a bad packed-refs line, a dangerous name: git dies
        raise Die(git_message(e)) from None
    finally:
        repo.close()


def _colorbool(val: str) -> int:
    """parse_opt_color_flag_cb: never 0, always 1, auto 2."""
    v = {"never": 0, "always": 1, "auto": 2}.get(val.lower())
    if v is None:
        raise Die("option `color' expects \"always\", \"auto\", or \"never\"", 129, "error: ")
    return v


def want_color(value: int, out: Any) -> bool:
    """color.c want_color for stdout: auto (and unset: color.ui is not read by
    for-each-ref) is on only on a terminal whose TERM is not "dumb"."""
    if value == 0 or value == 1:
        return bool(value)
    try:
        tty = os.isatty(out.fileno())
    except (AttributeError, OSError, ValueError):
        tty = False
    term = os.environ.get("TERM")
    return tty and term is not None and term != "dumb"


def _integer(val: str, name: str) -> int:
    """OPT_INTEGER's value: C's strtol(val, 10) with nothing left over (git 2.47),
    truncated to an int as git stores it."""
    m = _STRTOL.fullmatch(val)
    if not val or m is None:
        raise Die(f"option `{name}' expects a numerical value", 129, "error: ")
    v = max(min(int(m.group(1)), 2 ** 63 - 1), -2 ** 63)           # strtol clamps to long
    v &= 0xFFFFFFFF                                                  # (int) of that long
    return v - 2 ** 32 if v >= 2 ** 31 else v


def _resolve(repo: Repo, text: str) -> bytes | None:
    try:
        return resolve_revision(text.encode("utf-8", "surrogateescape"), ref_resolver(repo.refs),
                                lambda: repo.objects, repo.hash_size,
                                ambiguity_warning(repo.config))
    except ReftableError:
        return None


def _filter_options(repo: Repo, revs: list[tuple[str, str | None, bool]]) -> RefFilter:
    """The object options, resolved in the order given as git's callbacks do."""
    filt = RefFilter()
    for dest, val, negated in revs:
        if dest == "points_at":
            if negated:
                filt.points_at = []
                continue
            oid = _resolve(repo, val or "")
            if oid is None:
                raise Die(f"malformed object name '{val}'", 129, "error: ")
            filt.points_at.append(oid)
            continue
        if reach is None:
            raise Die(f"reftable-lab for-each-ref does not support --{dest.replace('_', '-')}")
        rev = val if val is not None else "HEAD"
        oid = _resolve(repo, rev)
        if dest in ("merged", "no_merged"):
            if oid is None:
                raise Die(f"malformed object name {rev}")
            c = commit_of(repo.objects, oid)
            if c is None:
                typ = repo.objects.read_header(repo.objects.peel(oid))[0]
                write_err("error: ", f"object {oid.hex()} is a {typ}, not a commit")
                name = dest.replace("_", "-")
                raise Die(f"option `{name}' must point to a commit", 129, "error: ")
        else:
            if oid is None:
                raise Die(f"malformed object name {rev}", 129, "error: ")
            c = commit_of(repo.objects, oid)
            if c is None:
                typ = repo.objects.read_header(oid)[0]
                raise Die(f"object {oid.hex()} is a {typ}, not a commit\n"
                          f"error: no such commit {rev}", 129, "error: ")
        getattr(filt, dest).append(c)
    return filt


def _run(repo: Repo, o: dict[str, Any], patterns: list[str], out: Any) -> int:
    filt = _filter_options(repo, o["revs"])
    if o["count"] < 0:
        raise Die(f"error: invalid --count argument: `{o['count']}'\n{USAGE}", 129, "usage")
    style = check_styles(o["quote"], USAGE)
    ctx = Context(repo, want_color(o["color"], out))
    fmt = RefFormat(ctx, o["format"].encode("utf-8", "surrogateescape"), style, USAGE)
    icase = o["ignore_case"]
    keys = parse_sort_keys(fmt, o["sort"], icase)
    if o["stdin"]:
        if patterns:
            raise Die("unknown arguments supplied with --stdin")
        data = sys.stdin.buffer.read()
        pats = [ln[:-1] if ln.endswith(b"\r") else ln for ln in data.split(b"\n")]
        if pats and pats[-1] == b"" and data.endswith(b"\n") or data == b"":
            pats = pats[:-1]
    else:
        pats = [p.encode("utf-8", "surrogateescape") for p in patterns]
    filt.patterns = pats
    filt.excludes = [p.encode("utf-8", "surrogateescape") for p in o["exclude"]]
    filt.ignore_case = icase
    filt.include_root_refs = o["include_root_refs"]
    filt.roots_cached_away = repo.objects_opened and replace_refs_enabled(repo)
    store = repo.refs
    objects = repo.objects if (filt.points_at or filt.needs_commit()) else None
    items = collect(store, pats, filt, objects)
    count = o["count"]
    omit = o["omit_empty"]
    batch = any(getattr(u.atom, "prepare", None) is not None for u in fmt.used)
    if not keys and not filt.merged and not filt.no_merged and not batch:
        # git's filter_and_format_one: each ref formatted as it is iterated
        for it in items[:count] if count else items:
            line = fmt.render(fmt.populate(it))
            if line or not omit:
                out.write(line + b"\n")
        return 0
    if filt.merged:
        items = reach_filter(repo.objects, items, filt.merged, True)
    if filt.no_merged:
        items = reach_filter(repo.objects, items, filt.no_merged, False)
    fmt.prepare(items)
    suffixes = _suffixes(repo)
    values: list[list[AtomValue] | None] = []
    failed: dict[int, Die] = {}
    order = list(range(len(items)))
    if keys:
        # git sorts (populating each ref's values, reading its object, as compared): a
        # failure dies with the first failing ref in the order git's merge sort reaches
        for i, it in enumerate(items):
            try:
                values.append(fmt.populate(it))
            except Die as d:
                failed[i] = d
                values.append(None)
        if failed and len(items) > 1:
            raise failed[first_failing(keys, suffixes, items, values, failed.keys())]
        if not failed:
            order = sort_refs(keys, suffixes, items, [v for v in values if v is not None])
    if count:
        order = order[:count]
    for i in order:
        v = values[i] if values else None
        if v is None:
            if i in failed:
                raise failed[i]
            v = fmt.populate(items[i])
        line = fmt.render(v)
        if line or not omit:
            out.write(line + b"\n")
    return 0


def _suffixes(repo: Repo) -> list[bytes]:
    """versionsort.suffix (else versionsort.prereleasesuffix), as the lab's config
    holds it: one value, the last one set."""
    cfg = repo.config
    val = cfg.get("versionsort.suffix", cfg.get("versionsort.prereleasesuffix"))
    return [val.encode("utf-8", "surrogateescape")] if val else []


# the command, as lab.cli runs it (without argparse) and register() registers it
GIT_COMMAND = ("for-each-ref", "list references like git for-each-ref", for_each_ref)
