"""`reftable-lab show-ref` and `reftable-lab update-ref --stdin`, behaving like git's.

Both work on reftable and files repositories through reftable_core.repo: the same
stdout bytes, stderr messages and exit statuses as builtin/show-ref.c and
builtin/update-ref.c (die = "fatal: ..." and 128, usage errors 129). Options are
parsed by git's parse-options rules (unique long-option prefixes, --no-X,
bundled short options, -s/--hash/--abbrev with an optional attached value), so
the argument list is taken raw.
"""
from __future__ import annotations

import argparse
import bisect
import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

from reftable_core.errors import ReftableError
from reftable_core.flags import Flags, resolve
from reftable_core.refs.api import RefUpdate
from reftable_core.repo import Repo, open_repo

MINIMUM_ABBREV = 4
FALLBACK_DEFAULT_ABBREV = 7


class Die(Exception):
    def __init__(self, msg: str, status: int = 128, prefix: str = "fatal: ") -> None:
        super().__init__(msg)
        self.msg = msg
        self.status = status
        self.prefix = prefix


def register(sub: argparse._SubParsersAction, add_flag_options: Callable) -> None:
    for name, func, helptext in (("show-ref", run_show_ref, "list references like git show-ref"),
                                 ("update-ref", run_update_ref,
                                  "update references like git update-ref --stdin")):
        p = sub.add_parser(name, help=helptext, prefix_chars="\x01", add_help=False,
                           description=f"{helptext}; also takes --git-dir DIR, --flags SPEC, "
                                       "--baseline")
        p.add_argument("rest", nargs=argparse.REMAINDER)
        p.set_defaults(func=func)


# -- common -----------------------------------------------------------------------

def _split_lab_options(argv: list[str], flags: Flags) -> tuple[list[str], str | None, Flags]:
    """Take --git-dir, --flags and --baseline out of argv (before "--")."""
    rest: list[str] = []
    gitdir = None
    spec = None
    use_baseline = False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            rest.extend(argv[i:])
            break
        if a in ("--git-dir", "--flags") and i + 1 < len(argv):
            if a == "--git-dir":
                gitdir = argv[i + 1]
            else:
                spec = argv[i + 1]
            i += 2
            continue
        if a.startswith("--git-dir="):
            gitdir = a.split("=", 1)[1]
        elif a.startswith("--flags="):
            spec = a.split("=", 1)[1]
        elif a == "--baseline":
            use_baseline = True
        else:
            rest.append(a)
        i += 1
    if spec is not None or use_baseline:
        flags = resolve(spec, use_baseline)
    return rest, gitdir, flags


def _open(gitdir: str | None, flags: Flags) -> Repo:
    if gitdir is None:
        gitdir = os.environ.get("GIT_DIR")
    try:
        if gitdir is not None:
            return open_repo(gitdir, flags)
        return open_repo(os.getcwd(), flags, discover=True)
    except ReftableError:
        if gitdir is not None:      # git names the path it was given
            raise Die(f"not a git repository: '{gitdir}'") from None
        raise Die("not a git repository (or any of the parent directories): .git") from None


def _write_err(prefix: str, msg: str) -> None:
    sys.stdout.flush()
    sys.stderr.write(f"{prefix}{msg}\n")
    sys.stderr.flush()


class _Objects:
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
            count = len(names)
            bits = count.bit_length() + 1
            length = max((bits + 1) // 2, FALLBACK_DEFAULT_ABBREV)
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


# -- git's parse-options, the part these two commands need --------------------------

class _OptSpec:
    def __init__(self, long: str | None, short: str | None, kind: str, dest: str,
                 negatable: bool = True) -> None:
        self.long = long
        self.short = short
        self.kind = kind            # "bool" | "optarg" | "string"
        self.dest = dest
        self.negatable = negatable


def _parse_git_options(argv: list[str], specs: list[_OptSpec],
                       handle: Callable[[_OptSpec, str | None, bool], None]) -> list[str]:
    """Parse argv git-style; call handle(spec, value, negated); return the non-options."""
    args: list[str] = []
    longs = {s.long: s for s in specs if s.long}
    shorts = {s.short: s for s in specs if s.short}
    i = 0
    while i < len(argv):
        a = argv[i]
        i += 1
        if a == "--":
            args.extend(argv[i:])
            break
        if a.startswith("--"):
            body, eq, val = a[2:].partition("=")
            negated = False
            cands = [s for n, s in longs.items() if n == body]
            if not cands:
                cands = [s for n, s in longs.items() if n.startswith(body)]
            if not cands and body.startswith("no-"):
                b2 = body[3:]
                cands = [s for n, s in longs.items() if n == b2] or \
                        [s for n, s in longs.items() if n.startswith(b2)]
                negated = True
            if len(cands) != 1:
                if len(cands) > 1:
                    raise Die(f"ambiguous option: {body} (could be --{cands[0].long} or "
                              f"--{cands[1].long})", 129, "error: ")
                raise Die(f"unknown option `{body}'", 129, "error: ")
            spec = cands[0]
            if negated and not spec.negatable:
                raise Die(f"unknown option `{body}'", 129, "error: ")
            if spec.kind == "bool" and eq:
                raise Die(f"option `{spec.long}' takes no value", 129, "error: ")
            if spec.kind == "string" and not eq and not negated:
                if i >= len(argv):
                    raise Die(f"option `{spec.long}' requires a value", 129, "error: ")
                val = argv[i]
                i += 1
                eq = "="
            handle(spec, val if eq else None, negated)
            continue
        if a.startswith("-") and len(a) > 1:
            j = 1
            while j < len(a):
                c = a[j]
                found = shorts.get(c)
                if found is None:
                    raise Die(f"unknown switch `{c}'", 129, "error: ")
                spec = found
                if spec.kind == "optarg":
                    rest = a[j + 1:]
                    handle(spec, rest if rest else None, False)
                    break
                if spec.kind == "string":
                    rest = a[j + 1:]
                    if not rest:
                        if i >= len(argv):
                            raise Die(f"switch `{c}' requires a value", 129, "error: ")
                        rest = argv[i]
                        i += 1
                    handle(spec, rest, False)
                    break
                handle(spec, None, False)
                j += 1
            continue
        args.append(a)
    return args


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


# -- show-ref ---------------------------------------------------------------------

SHOW_REF_SPECS = [
    _OptSpec("tags", None, "bool", "tags"),
    _OptSpec("branches", None, "bool", "branches"),
    _OptSpec("heads", None, "bool", "branches"),
    _OptSpec("exists", None, "bool", "exists"),
    _OptSpec("verify", None, "bool", "verify"),
    _OptSpec(None, "h", "bool", "head"),
    _OptSpec("head", None, "bool", "head"),
    _OptSpec("dereference", "d", "bool", "deref"),
    _OptSpec("hash", "s", "optarg", "hash"),
    _OptSpec("abbrev", None, "optarg", "abbrev"),
    _OptSpec("quiet", "q", "bool", "quiet"),
    _OptSpec("exclude-existing", None, "optarg", "exclude_existing", negatable=False),
]


def run_show_ref(args: argparse.Namespace, flags: Flags) -> int:
    out = sys.stdout.buffer
    try:
        return _show_ref(list(args.rest), flags, out)
    except Die as d:
        out.flush()
        _write_err(d.prefix, d.msg)
        return d.status
    finally:
        try:
            out.flush()
        except BrokenPipeError:
            pass


def _show_ref(argv: list[str], flags: Flags, out: Any) -> int:
    argv, gitdir, flags = _split_lab_options(argv, flags)
    o: dict[str, Any] = {"tags": False, "branches": False, "exists": False, "verify": False,
                         "head": False, "deref": False, "hash": False, "abbrev": 0,
                         "quiet": False, "exclude_existing": None, "ee": False}
    pending: list[tuple[str, str | None, bool]] = []

    def handle(spec: _OptSpec, val: str | None, negated: bool) -> None:
        if spec.kind == "bool":
            o[spec.dest] = not negated
        else:
            pending.append((spec.dest, val, negated))

    patterns = _parse_git_options(argv, SHOW_REF_SPECS, handle)
    repo = _open(gitdir, flags)
    try:
        return _show_ref_in(repo, o, pending, patterns, out)
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
    objs = _Objects(repo)
    if o["ee"]:
        return _exclude_existing(store, o["exclude_existing"], out)
    if o["verify"]:
        return _show_verify(store, objs, o, patterns, out)
    if o["exists"]:
        return _show_exists(store, patterns)
    return _show_patterns(store, objs, o, patterns, out)


def _show_one(objs: _Objects, o: dict[str, Any], name: bytes, oid: bytes,
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


def _resolve_oid(store: Any, name: bytes) -> tuple[bytes, bytes | None] | None:
    ref = store.resolve(name)
    if ref is None or not ref.value:
        return None
    return ref.value, ref.peeled


def _iter_resolved(store: Any, prefix: bytes) -> Iterator[tuple[bytes, bytes | None, bytes | None]]:
    """(name, oid or None if broken, peeled) for each ref under prefix, in order."""
    records = getattr(store, "iter_ref_records", None)
    if records is not None:
        for rec in records(prefix):
            vt = rec.value_type
            if vt == 1:
                yield rec.refname, rec.value, None
            elif vt == 2:
                yield rec.refname, rec.value, rec.target_value
            else:
                r = _resolve_oid(store, rec.refname)
                yield (rec.refname, r[0], r[1]) if r else (rec.refname, None, None)
        return
    for ref in store.iter_refs(prefix):
        if ref.target is not None:
            r = _resolve_oid(store, ref.name)
            yield (ref.name, r[0], r[1]) if r else (ref.name, None, None)
        else:
            yield ref.name, ref.value, ref.peeled


def _tail_matches(name: bytes, pats: list[tuple[bytes, int]]) -> bool:
    """git show-ref's pattern rule: the name equals a pattern or ends with "/" + it."""
    n = len(name)
    for m, lm in pats:
        if lm <= n and name.endswith(m) and (lm == n or name[n - lm - 1] == 47):
            return True
    return False


def _broken_ref(name: bytes) -> None:
    """git's complaint about a ref whose object is missing (the ref is then skipped)."""
    _write_err("error: ", f"{name.decode('utf-8', 'replace')} does not point to a valid object!")


def _show_patterns(store: Any, objs: _Objects, o: dict[str, Any], patterns: list[str],
                   out: Any) -> int:
    pats = [(p.encode("utf-8", "surrogateescape"), len(p.encode("utf-8", "surrogateescape")))
            for p in patterns]
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
    if getattr(store, "ref_record_iter", None) is not None:
        return _show_records(store, objs, o, pats, prefixes, found, out)
    has = objs.has
    good = objs.good
    for prefix in prefixes:
        for name, oid, peeled in _iter_resolved(store, prefix):
            if oid is None:
                continue                     # broken / dangling symref: skipped silently
            if oid not in good and not has(oid):
                _broken_ref(name)
                continue
            if pats and not _tail_matches(name, pats):
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


def _show_records(store: Any, objs: _Objects, o: dict[str, Any],
                  pats: list[tuple[bytes, int]], prefixes: list[bytes], found: int,
                  out: Any) -> int:
    """show-ref's loop straight over the reftable merged iterator (no per-ref
    wrapper objects): the same checks, in the same order, as _show_patterns.

    The iterator yields names in order from the prefix on, so "still under the
    prefix" is one comparison with the first name past it. A pattern matches a
    name that equals it or ends with "/" + pattern (git's tail match); with one
    pattern (the common case) that test is inlined."""
    has = objs.has
    good = objs.good
    one, one_len = pats[0] if len(pats) == 1 else (b"", 0)
    one_tail = -one_len
    one_last = one[-1] if one else -1       # last byte first: no slice for most names
    for prefix in prefixes:
        start = prefix or b"refs/"
        stop = _prefix_end(start)
        for rec in store.ref_record_iter(start):
            name = rec.refname
            if name >= stop:
                break
            vt = rec.value_type
            if vt == 1:
                oid = rec.value
                peeled = None
            elif vt == 2:
                oid = rec.value
                peeled = rec.target_value
            else:
                r = _resolve_oid(store, name)
                if r is None:
                    continue                 # dangling symref: skipped silently
                oid, peeled = r
            if oid not in good and not has(oid):
                _broken_ref(name)
                continue
            if one_len:                 # _tail_matches for one pattern, inline
                if name[-1] != one_last or name[one_tail:] != one:
                    continue
                n = len(name)
                if one_len != n and name[n - one_len - 1] != 47:
                    continue
            elif pats and not _tail_matches(name, pats):
                continue
            found += 1
            _show_one(objs, o, name, oid, peeled, out)
    return 0 if found else 1


def _refname_is_safe(name: bytes) -> bool:
    try:
        from reftable_core.refs.refname import refname_is_safe
    except ImportError:                          # pragma: no cover
        return name.startswith(b"refs/") or (name.isupper() and name.replace(b"_", b"").isalpha())
    return refname_is_safe(name)


def _show_verify(store: Any, objs: _Objects, o: dict[str, Any], refs: list[str], out: Any) -> int:
    if not refs:
        raise Die("--verify requires a reference")
    for r in refs:
        name = r.encode("utf-8", "surrogateescape")
        res = None
        if name.startswith(b"refs/") or _refname_is_safe(name):
            res = _resolve_oid(store, name)
        if res is not None:
            _show_one(objs, o, name, res[0], None if res[1] is None else res[1], out)
        elif not o["quiet"]:
            raise Die(f"'{r}' - not a valid ref")
        else:
            return 1
    return 0


def _show_exists(store: Any, refs: list[str]) -> int:
    if not refs:
        raise Die("--exists requires a reference")
    if len(refs) > 1:
        raise Die("--exists requires exactly one reference")
    if store.read_ref(refs[0].encode("utf-8", "surrogateescape")) is None:
        _write_err("error: ", "reference does not exist")
        return 2
    return 0


def _exclude_existing(store: Any, pattern: str | None, out: Any) -> int:
    from reftable_core.refs.refname import check_refname_format
    existing = {ref.name for ref in store.iter_refs(b"")}
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
            _write_err("warning: ", f"ref '{ref.decode('utf-8', 'replace')}' ignored")
            continue
        if ref not in existing:
            out.write(line + b"\n")
    return 0


# -- update-ref -------------------------------------------------------------------

UPDATE_REF_SPECS = [
    _OptSpec(None, "m", "string", "msg"),
    _OptSpec(None, "d", "bool", "delete"),
    _OptSpec("no-deref", None, "bool", "no_deref", negatable=False),
    _OptSpec(None, "z", "bool", "z"),
    _OptSpec("stdin", None, "bool", "stdin"),
    _OptSpec("create-reflog", None, "bool", "create_reflog"),
]

USAGE_UPDATE_REF = (
    "usage: git update-ref [<options>] -d <refname> [<old-oid>]\n"
    "   or: git update-ref [<options>]    <refname> <new-oid> [<old-oid>]\n"
    "   or: git update-ref [<options>] --stdin [-z]\n\n"
    "    -m <reason>           reason of the update\n"
    "    -d                    delete the reference\n"
    "    --no-deref            update <refname> not the one it points to\n"
    "    --deref               opposite of --no-deref\n"
    "    -z                    stdin has NUL-terminated arguments\n"
    "    --[no-]stdin          read updates from stdin\n"
    "    --[no-]create-reflog  create a reflog\n\n")

# name -> (number of arguments, state it moves to)
OPEN, STARTED, PREPARED, CLOSED = 0, 1, 2, 3
COMMANDS: list[tuple[str, int, int]] = [
    ("update", 3, OPEN), ("create", 2, OPEN), ("delete", 2, OPEN), ("verify", 2, OPEN),
    ("option", 1, OPEN), ("start", 0, STARTED), ("prepare", 0, PREPARED),
    ("abort", 0, CLOSED), ("commit", 0, CLOSED),
]


def run_update_ref(args: argparse.Namespace, flags: Flags) -> int:
    out = sys.stdout.buffer
    try:
        return _update_ref(list(args.rest), flags, out)
    except Die as d:
        out.flush()
        if d.status == 129 and d.prefix == "usage":
            sys.stderr.write(d.msg)
        else:
            _write_err(d.prefix, d.msg)
        return d.status
    finally:
        try:
            out.flush()
        except BrokenPipeError:
            pass


def _unquote_c(s: bytes, start: int) -> tuple[bytes, int] | None:
    """git's unquote_c_style on s[start:] (s[start] == '"'); (value, end) or None."""
    out = bytearray()
    i = start + 1
    esc = {ord("a"): 7, ord("b"): 8, ord("f"): 12, ord("n"): 10, ord("r"): 13,
           ord("t"): 9, ord("v"): 11, ord("\\"): 92, ord('"'): 34}
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


_REV_SUFFIX = re.compile(rb"(?:~\d*|\^\d*|\^\{[a-z]*\})+$")
_REV_STEP = re.compile(rb"~(\d*)|\^\{([a-z]*)\}|\^(\d*)")


def _parents_and_tree(objects: Any, oid: bytes) -> tuple[list[bytes], bytes]:
    typ, data = objects.read(oid)
    if typ != "commit":
        raise ReftableError(f"{oid.hex()} is a {typ}, not a commit")
    parents = []
    tree = b""
    for line in data.split(b"\n"):
        if not line:
            break
        if line.startswith(b"tree "):
            tree = bytes.fromhex(line[5:].decode())
        elif line.startswith(b"parent "):
            parents.append(bytes.fromhex(line[7:].decode()))
    return parents, tree


def _apply_suffixes(objects: Any, oid: bytes, suffix: bytes) -> bytes:
    """git's revision suffixes on oid: ~N, ^N, ^{}, ^{commit}, ^{tree}."""
    if objects is None:
        raise ReftableError("no object store")
    for m in _REV_STEP.finditer(suffix):
        tilde, peel, caret = m.group(1), m.group(2), m.group(3)
        if peel is not None:
            oid = objects.peel(oid)
            if peel == b"tree":
                oid = _parents_and_tree(objects, oid)[1]
            elif peel not in (b"", b"commit"):
                raise ReftableError(f"unsupported peel ^{{{peel.decode()}}}")
            elif peel == b"commit" and objects.read_header(oid)[0] != "commit":
                raise ReftableError("not a commit")
            continue
        if tilde is not None:
            for _ in range(int(tilde) if tilde else 1):
                parents, _tree = _parents_and_tree(objects, objects.peel(oid))
                if not parents:
                    raise ReftableError("no parent")
                oid = parents[0]
            continue
        n = int(caret) if caret else 1
        commit = objects.peel(oid)
        if n == 0:
            oid = commit
            continue
        parents, _tree = _parents_and_tree(objects, commit)
        if len(parents) < n:
            raise ReftableError("no such parent")
        oid = parents[n - 1]
    return oid


def _cstr(b: bytes) -> str:
    """What C's printf("%s") shows of a buffer: up to the first NUL."""
    return b.split(b"\0", 1)[0].decode("utf-8", "replace")


class _UpdateRefStdin:
    def __init__(self, repo: Repo, msg: bytes, no_deref: bool, z: bool, out: Any) -> None:
        self.repo = repo
        self.store = repo.refs
        self.msg = msg
        self.default_no_deref = no_deref
        self.no_deref = no_deref
        self.term = b"\0" if z else b"\n"
        self.z = z
        self.out = out
        self.zero = bytes(repo.hash_size)
        self.tx = self.store.transaction()

    # -- argument parsing --------------------------------------------------------
    def _parse_arg(self, buf: bytes, pos: int) -> tuple[bytes, int]:
        if pos < len(buf) and buf[pos] == 34:
            r = _unquote_c(buf, pos)
            if r is None:
                raise Die(f"badly quoted argument: {_cstr(buf[pos:])}")
            val, end = r
            if end < len(buf) and not buf[end:end + 1].isspace():
                raise Die("unexpected character after quoted argument: "
                          f"{_cstr(buf[pos:])}")
            return val, end
        end = pos
        while end < len(buf) and not buf[end:end + 1].isspace() and buf[end] != 0:
            end += 1
        return buf[pos:end], end

    def _parse_refname(self, buf: bytes, pos: int) -> tuple[bytes | None, int]:
        if self.z:
            end = buf.find(b"\0", pos)
            end = len(buf) if end < 0 else end
            ref = buf[pos:end]
            pos = end
        else:
            ref, pos = self._parse_arg(buf, pos)
        if not ref:
            return None, pos
        from reftable_core.refs.refname import REFNAME_ALLOW_ONELEVEL, check_refname_format
        if not check_refname_format(ref, REFNAME_ALLOW_ONELEVEL):
            raise Die(f"invalid ref format: {ref.decode('utf-8', 'replace')}")
        return ref, pos

    def _get_oid(self, text: bytes) -> bytes | None:
        """git's repo_get_oid for the forms update-ref inputs use: full or unique
        abbreviated hex or a refname (dwim rules), followed by any of ~N, ^N,
        ^{}, ^{commit}, ^{tree}."""
        m = _REV_SUFFIX.search(text)
        if m is not None and m.start() > 0:
            base = self._get_oid_basic(text[:m.start()])
            if base is None:
                return None
            try:
                return _apply_suffixes(self.repo.objects, base, text[m.start():])
            except ReftableError:
                return None
        return self._get_oid_basic(text)

    def _get_oid_basic(self, text: bytes) -> bytes | None:
        hexsz = self.repo.hash_size * 2
        if len(text) == hexsz:
            try:
                return bytes.fromhex(text.decode("ascii"))
            except (ValueError, UnicodeDecodeError):
                pass
        for fmt in (b"%s", b"refs/%s", b"refs/tags/%s", b"refs/heads/%s", b"refs/remotes/%s",
                    b"refs/remotes/%s/HEAD"):
            ref = self.store.resolve(fmt % text)
            if ref is not None and ref.value:
                return ref.value
        if 4 <= len(text) < hexsz:
            try:
                int(text, 16)
            except ValueError:
                return None
            objs = self.repo.objects
            if objs is None:
                return None
            t = text.decode().lower()
            hits = [o for o in objs.iter_oids() if o.hex().startswith(t)]
            if len(hits) == 1:
                return hits[0]
        return None

    def _parse_next_oid(self, buf: bytes, pos: int, end: int, command: str, refname: bytes,
                        is_old: bool, allow_empty: bool) -> tuple[bytes | None, int, bool]:
        """(oid, pos, present) following git's parse_next_oid."""
        rn = refname.decode("utf-8", "replace")
        what = "<old-oid>" if is_old else "<new-oid>"
        if pos == end:
            raise Die(f"{command} {rn}: unexpected end of input when reading {what}")
        if not self.z:
            if buf[pos:pos + 1] in (b"", b"\n"):
                return None, pos, False
            if buf[pos] != 32:
                raise Die(f"{command} {rn}: expected SP but got: "
                          f"{_cstr(buf[pos:])}")
            arg, pos = self._parse_arg(buf, pos + 1)
            if arg:
                oid = self._get_oid(arg)
                if oid is None:
                    raise Die(f"{command} {rn}: invalid {what}: {arg.decode('utf-8', 'replace')}")
                return oid, pos, True
            return self.zero, pos, True
        if buf[pos] != 0:
            raise Die(f"{command} {rn}: expected NUL but got: "
                      f"{_cstr(buf[pos:])}")
        pos += 1
        if pos == end:
            raise Die(f"{command} {rn}: unexpected end of input when reading {what}")
        e = buf.find(b"\0", pos)
        e = len(buf) if e < 0 else e
        arg = buf[pos:e]
        pos = e
        if arg:
            oid = self._get_oid(arg)
            if oid is None:
                raise Die(f"{command} {rn}: invalid {what}: {arg.decode('utf-8', 'replace')}")
            return oid, pos, True
        if allow_empty:
            _write_err("warning: ", f"{command} {rn}: missing <new-oid>, treating as zero")
            return self.zero, pos, True
        return None, pos, False

    def _queue(self, refname: bytes, new: bytes | None, old: bytes | None, kind: str) -> None:
        fl = {kind}
        if self.no_deref:
            fl.add("no-deref")
        self.tx.queue(RefUpdate(refname, new_value=new, old_value=old, message=self.msg,
                                flags=fl))
        self.no_deref = self.default_no_deref

    def _extra(self, buf: bytes, pos: int, what: str) -> None:
        if buf[pos:pos + 1] != self.term:
            raise Die(f"{what}: extra input: {_cstr(buf[pos:])}")

    # -- commands ---------------------------------------------------------------
    def cmd_update(self, buf: bytes, pos: int, end: int) -> None:
        ref, pos = self._parse_refname(buf, pos)
        if ref is None:
            raise Die("update: missing <ref>")
        rn = ref.decode("utf-8", "replace")
        new, pos, present = self._parse_next_oid(buf, pos, end, "update", ref, False, True)
        if not present:
            raise Die(f"update {rn}: missing <new-oid>")
        old, pos, have_old = self._parse_next_oid(buf, pos, end, "update", ref, True, False)
        self._extra(buf, pos, f"update {rn}")
        self._queue(ref, new, old if have_old else None, "update")

    def cmd_create(self, buf: bytes, pos: int, end: int) -> None:
        ref, pos = self._parse_refname(buf, pos)
        if ref is None:
            raise Die("create: missing <ref>")
        rn = ref.decode("utf-8", "replace")
        new, pos, present = self._parse_next_oid(buf, pos, end, "create", ref, False, False)
        if not present:
            raise Die(f"create {rn}: missing <new-oid>")
        if new == self.zero:
            raise Die(f"create {rn}: zero <new-oid>")
        self._extra(buf, pos, f"create {rn}")
        self._queue(ref, new, self.zero, "create")

    def cmd_delete(self, buf: bytes, pos: int, end: int) -> None:
        ref, pos = self._parse_refname(buf, pos)
        if ref is None:
            raise Die("delete: missing <ref>")
        rn = ref.decode("utf-8", "replace")
        old, pos, have_old = self._parse_next_oid(buf, pos, end, "delete", ref, True, False)
        if have_old and old == self.zero:
            raise Die(f"delete {rn}: zero <old-oid>")
        self._extra(buf, pos, f"delete {rn}")
        self._queue(ref, self.zero, old if have_old else None, "delete")

    def cmd_verify(self, buf: bytes, pos: int, end: int) -> None:
        ref, pos = self._parse_refname(buf, pos)
        if ref is None:
            raise Die("verify: missing <ref>")
        rn = ref.decode("utf-8", "replace")
        old, pos, have_old = self._parse_next_oid(buf, pos, end, "verify", ref, True, False)
        if not have_old:
            old = self.zero
        self._extra(buf, pos, f"verify {rn}")
        self._queue(ref, None, old, "verify")

    def cmd_option(self, buf: bytes, pos: int, end: int) -> None:
        if buf[pos:pos + 8] == b"no-deref" and buf[pos + 8:pos + 9] == self.term:
            self.no_deref = True
        else:
            raise Die(f"option unknown: {_cstr(buf[pos:])}")

    def _report(self, command: str) -> None:
        self.out.write(f"{command}: ok\n".encode())
        self.out.flush()

    def cmd_start(self, buf: bytes, pos: int, end: int) -> None:
        self._extra(buf, pos, "start")
        self._report("start")

    def cmd_prepare(self, buf: bytes, pos: int, end: int) -> None:
        self._extra(buf, pos, "prepare")
        try:
            self.tx.prepare()
        except ReftableError as e:
            raise Die(f"prepare: {e}")
        self._report("prepare")

    def cmd_abort(self, buf: bytes, pos: int, end: int) -> None:
        self._extra(buf, pos, "abort")
        self.tx.abort()
        self._report("abort")

    def cmd_commit(self, buf: bytes, pos: int, end: int) -> None:
        self._extra(buf, pos, "commit")
        try:
            self.tx.commit()
        except ReftableError as e:
            raise Die(f"commit: {e}")
        self._report("commit")

    # -- the loop ---------------------------------------------------------------
    def _records(self, data: bytes) -> Iterator[bytes]:
        term = self.term
        pos = 0
        n = len(data)
        while pos < n:
            e = data.find(term, pos)
            if e < 0:
                yield data[pos:]
                return
            yield data[pos:e + 1]
            pos = e + 1

    def run(self, data: bytes) -> int:
        state = OPEN
        recs = self._records(data)
        for line in recs:
            if line[:1] == self.term:
                raise Die("empty command in input")
            if line[:1].isspace():
                raise Die(f"whitespace before command: {_cstr(line)}")
            cmd = None
            for name, nargs, cstate in COMMANDS:
                nb = name.encode()
                if not line.startswith(nb):
                    continue
                c = b" " if nargs else self.term
                if line[len(nb):len(nb) + 1] != c:
                    continue
                cmd = (name, nargs, cstate)
                break
            if cmd is None:
                raise Die(f"unknown command: {_cstr(line)}")
            name, nargs, cstate = cmd
            if self.z:
                for _ in range(1, nargs):
                    more = next(recs, None)
                    if more is None:
                        break
                    line += more
            if state in (OPEN, STARTED):
                if state == STARTED and cstate == STARTED:
                    raise Die("cannot restart ongoing transaction")
                state = max(cstate, state)
            elif state == PREPARED:
                if cstate != CLOSED:
                    raise Die("prepared transactions can only be closed")
                state = cstate
            else:
                if cstate != STARTED:
                    raise Die("transaction is closed")
                state = cstate
                self.tx = self.store.transaction()
            start = len(name) + (1 if nargs else 0)
            getattr(self, "cmd_" + name)(line, start, len(line))
        if state == OPEN:
            try:
                self.tx.commit()
            except ReftableError as e:
                raise Die(str(e))
        elif state in (STARTED, PREPARED):
            self.tx.abort()
        return 0


def _update_ref_args(o: dict[str, Any], rest: list[str], gitdir: str | None, flags: Flags,
                     out: Any) -> int:
    """`update-ref [-m MSG] [--no-deref] (-d <ref> [<old>] | <ref> <new> [<old>])`."""
    from reftable_core.refs.refname import REFNAME_ALLOW_ONELEVEL, check_refname_format
    if o["z"]:
        raise Die(USAGE_UPDATE_REF, 129, "usage")
    if (o["delete"] and not 1 <= len(rest) <= 2) or (not o["delete"] and not 2 <= len(rest) <= 3):
        raise Die(USAGE_UPDATE_REF, 129, "usage")
    repo = _open(gitdir, flags)
    msg = (o["msg"] or "").encode("utf-8", "surrogateescape")
    runner = _UpdateRefStdin(repo, msg, o["no_deref"], False, out)
    try:
        refname = rest[0].encode("utf-8", "surrogateescape")
        new = None
        if not o["delete"]:
            new = runner._get_oid(rest[1].encode("utf-8", "surrogateescape"))
            if new is None:
                raise Die(f"{rest[1]}: not a valid SHA1")
        oldval = rest[1] if o["delete"] and len(rest) == 2 else \
            (rest[2] if not o["delete"] and len(rest) == 3 else None)
        old = None
        if oldval is not None:
            old = runner.zero if oldval == "" else runner._get_oid(oldval.encode())
            if old is None:
                raise Die(f"{oldval}: not a valid old SHA1")
        if o["delete"]:
            if old == runner.zero:
                old = None                      # NULL old id means "don't care" here
            new = runner.zero
        ok_name = (check_refname_format(refname, REFNAME_ALLOW_ONELEVEL)
                   if new != runner.zero else _refname_is_safe(refname))
        try:
            if not ok_name:
                raise ReftableError(f"refusing to update ref with bad name '{rest[0]}'")
            runner._queue(refname, new, old, "delete" if o["delete"] else "update")
            runner.tx.commit()
        except ReftableError as e:
            if o["delete"]:
                _write_err("error: ", str(e))
                return 1
            raise Die(f"update_ref failed for ref '{rest[0]}': {e}") from None
        return 0
    finally:
        runner.tx.abort()
        repo.close()


def _update_ref(argv: list[str], flags: Flags, out: Any) -> int:
    argv, gitdir, flags = _split_lab_options(argv, flags)
    o: dict[str, Any] = {"msg": None, "delete": False, "no_deref": False, "z": False,
                         "stdin": False, "create_reflog": False}

    def handle(spec: _OptSpec, val: str | None, negated: bool) -> None:
        if spec.kind == "bool":
            o[spec.dest] = not negated
        else:
            o[spec.dest] = None if negated else val

    try:
        rest = _parse_git_options(argv, UPDATE_REF_SPECS, handle)
    except Die as d:
        if d.status == 129:
            raise Die(f"{d.prefix}{d.msg}\n\n" + USAGE_UPDATE_REF, 129, "usage")
        raise
    if o["msg"] is not None and not o["msg"]:
        raise Die("Refusing to perform update with empty message.")
    if not o["stdin"]:
        return _update_ref_args(o, rest, gitdir, flags, out)
    if o["delete"] or rest:
        raise Die(USAGE_UPDATE_REF, 129, "usage")
    repo = _open(gitdir, flags)
    data = sys.stdin.buffer.read()
    msg = (o["msg"] or "").encode("utf-8", "surrogateescape")
    runner = _UpdateRefStdin(repo, msg, o["no_deref"], o["z"], out)
    try:
        return runner.run(data)
    finally:
        runner.tx.abort()          # like git's atexit lock cleanup when dying
        repo.close()
