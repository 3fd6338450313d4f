"""Which refs for-each-ref lists (ref-filter.c filter_refs, apply_ref_filter,
match_name_as_path, match_points_at, reach_filter) and the two atoms computed over
the whole list: %(ahead-behind:REF) and %(is-base:REF).

Contract:
  longest_prefixes(patterns)   find_longest_prefixes: the literal prefixes to iterate.
  match_name_as_path(patterns, name, icase=False)   ref-filter.c's rule: equal, a
      prefix ending at "/" (or ending in "/"), or wildmatch WM_PATHNAME (casefold
      with --ignore-case).
  ref_kind(name)   ref_kind_from_refname: KIND_BRANCH/REMOTE/TAG/DETACHED_HEAD/
      PSEUDOREF/ROOT_REF/OTHER.
  RefFilter   the options: patterns, excludes, ignore_case, include_root_refs,
      points_at (ids), merged / no_merged / contains / no_contains (commit ids).
  collect(store, patterns, filt=None, objects=None) -> list[RefItem]   the refs in
      iteration (name) order: refs under the longest literal prefixes of the patterns
      (all refs with --ignore-case or --include-root-refs, HEAD and root refs then
      too), broken ones warned about and skipped, dangling symrefs skipped, each
      matched by pattern, --exclude, --points-at (the id itself or any tag on its
      peel chain; "malformed object at '<ref>'" when the chain breaks), and, with
      reach options, pointing at a commit (--contains/--no-contains by
      reach.contains). reach_filter(objects, refs, commits, include) keeps the refs
      whose commit is (include) or is not reachable from one of commits.
  FILTER_ATOMS   the parsers of ahead-behind and is-base: their argument is resolved
      when parsed ("failed to find '<rev>'"), their values computed once for every
      listed ref by prepare (reach.ahead_behind, reach.branch_base_for_tip).
The reach functions come from odb.reach.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ...errors import ReftableError
from ...odb import reach
from ...odb.revision import resolve_revision
from ...odb.store import ObjectStore
from ...refs.api import RefStore
from ...refs.refname import REFNAME_ALLOW_ONELEVEL, check_refname_format, is_root_ref
from ...reftable.record import REF_SYMREF
from ..gitlike import Die, ref_resolver, write_err
from ..wildmatch import wildmatch
from .atom import (
    FLAG_SYMREF,
    KIND_BRANCH,
    KIND_DETACHED_HEAD,
    KIND_OTHER,
    KIND_PSEUDOREF,
    KIND_REMOTE,
    KIND_ROOT_REF,
    KIND_TAG,
    SOURCE_OTHER,
    AtomContext,
    AtomParser,
    AtomValue,
    GitObject,
    RefItem,
)

_PSEUDO_REFS = (b"FETCH_HEAD", b"MERGE_HEAD")
EMPTY = AtomValue(b"")


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


def match_name_as_path(patterns: list[bytes], name: bytes, icase: bool = False) -> bool:
    """ref-filter.c match_name_as_path."""
    n = len(name)
    lname = name.lower() if icase else name
    for p in patterns:
        lp = len(p)
        if lp <= n and name.startswith(p) and (lp == n or name[lp] == 47 or p[lp - 1] == 47):
            return True                      # strncmp: case-sensitive even with icase
        if wildmatch(p.lower() if icase else p, lname):
            return True
    return False


def ref_kind(name: bytes) -> int:
    """ref-filter.c ref_kind_from_refname."""
    if name == b"HEAD":
        return KIND_DETACHED_HEAD
    if name.startswith(b"refs/heads/"):
        return KIND_BRANCH
    if name.startswith(b"refs/remotes/"):
        return KIND_REMOTE
    if name.startswith(b"refs/tags/"):
        return KIND_TAG
    if name in _PSEUDO_REFS:
        return KIND_PSEUDOREF
    if is_root_ref(name):
        return KIND_ROOT_REF
    return KIND_OTHER


@dataclass
class RefFilter:
    """for-each-ref's filter options (struct ref_filter)."""
    patterns: list[bytes] = field(default_factory=list)
    excludes: list[bytes] = field(default_factory=list)
    ignore_case: bool = False
    include_root_refs: bool = False
    # git 2.47's files backend fills its loose ref cache once, with the root refs only
    # if the first iteration asked for them: an object looked up before the refs are
    # listed (--merged, --contains, %(ahead-behind:...), ...) iterates refs/replace/
    # first, and --include-root-refs then lists no root ref (HEAD included)
    roots_cached_away: bool = False
    points_at: list[bytes] = field(default_factory=list)
    merged: list[bytes] = field(default_factory=list)
    no_merged: list[bytes] = field(default_factory=list)
    contains: list[bytes] = field(default_factory=list)
    no_contains: list[bytes] = field(default_factory=list)

    def needs_commit(self) -> bool:
        return bool(self.merged or self.no_merged or self.contains or self.no_contains)


def _root_records(store: RefStore) -> list[tuple[bytes, bytes | None, bytes | None]]:
    """(name, value, symref target) of HEAD and the root refs (refs_for_each_include_
    root_refs' extra names): files: regular files in the git dir named as root
    refs; reftable: the table's records outside refs/."""
    out: list[tuple[bytes, bytes | None, bytes | None]] = []
    gitdir = getattr(store, "gitdir", None)
    if getattr(store, "stack", None) is None and isinstance(gitdir, str):
        try:
            names = sorted(e.name for e in os.scandir(os.fsencode(gitdir))
                           if e.is_file(follow_symlinks=False) and is_root_ref(e.name))
        except OSError:
            names = []
        for name in names:
            try:
                ref = store.read_ref(name)
            except ReftableError:
                continue
            if ref is not None:
                out.append((name, ref.value, ref.target))
        return out
    for rec in store.seek_ref_records(b""):
        if rec.refname.startswith(b"refs/"):
            break
        if is_root_ref(rec.refname):
            out.append((rec.refname, rec.value, rec.target if rec.value_type == REF_SYMREF
                        else None))
    if not out:
        try:
            head = store.read_ref(b"HEAD")
        except ReftableError:
            head = None
        if head is not None:
            out.append((b"HEAD", head.value, head.target))
    return out


def points_at(objects: ObjectStore | None, wanted: set[bytes], oid: bytes, name: bytes) -> bool:
    """ref-filter.c match_points_at."""
    if oid in wanted:
        return True
    if objects is None:
        return False
    cur = oid
    seen: set[bytes] = set()
    while True:
        try:
            typ, data = objects.read(cur)
        except ReftableError:
            raise Die(f"malformed object at '{name.decode('utf-8', 'surrogateescape')}'") \
                from None
        if typ != "tag" or cur in seen:
            return False
        seen.add(cur)
        end = data.find(b"\n")
        if not data.startswith(b"object "):
            raise Die(f"malformed object at '{name.decode('utf-8', 'surrogateescape')}'")
        try:
            cur = bytes.fromhex(data[7:end].decode("ascii"))
        except (ValueError, UnicodeDecodeError):
            raise Die(f"malformed object at '{name.decode('utf-8', 'surrogateescape')}'") \
                from None
        if cur in wanted:
            return True


def commit_of(objects: ObjectStore | None, oid: bytes) -> bytes | None:
    """lookup_commit_reference_gently: the commit oid peels to, or None."""
    if objects is None:
        return None
    try:
        peeled = objects.peel(oid)
        typ, _ = objects.read_header(peeled)
    except ReftableError:
        return None
    return peeled if typ == "commit" else None


def collect(store: RefStore, patterns: list[bytes], filt: RefFilter | None = None,
            objects: ObjectStore | None = None) -> list[RefItem]:
    """The refs git's filter_refs keeps, in iteration (name) order, broken ones
    warned about as git's apply_ref_filter does. The symref value type is bound to
    a local once."""
    icase = filt is not None and filt.ignore_case
    roots = filt is not None and filt.include_root_refs
    prefixes = longest_prefixes(patterns) if patterns and not icase and not roots else [b""]
    zero = bytes(store.hash_size)
    symref = REF_SYMREF
    items: list[RefItem] = []
    oid: Any                                 # bytes in a value record (a broken one: zero)
    excludes = filt.excludes if filt is not None else []
    wanted = set(filt.points_at) if filt is not None and filt.points_at else None
    commits = filt is not None and filt.needs_commit()
    rows: list[tuple[bytes, Any, bytes | None]] = []
    if roots and filt is not None and not (filt.roots_cached_away
                                           and getattr(store, "stack", None) is None):
        rows = [r for r in _root_records(store)]
    for prefix in prefixes:
        recs = store.iter_ref_records(prefix, True)
        if roots:
            merged = rows + [(r.refname, r.value, r.target if r.value_type == symref else None)
                             for r in recs]
            merged.sort(key=lambda t: t[0])
            rows = merged
            break
        for rec in recs:
            name = rec.refname
            target = None
            if rec.value_type == symref:
                ref = store.resolve(name, allow_bad_name=False)
                if ref is None or not ref.value:
                    continue                       # dangling symref: omitted (paranoia)
                oid, target = ref.value, rec.target
            else:
                oid = rec.value
            it = _keep(store, name, oid, target, zero, patterns, filt, icase, excludes,
                       wanted, objects, commits, False)
            if it is not None:
                items.append(it)
    if roots:
        _roots(store, rows, items, zero, patterns, filt, icase, excludes, wanted, objects,
               commits)
    if commits and filt is not None and objects is not None:
        items = contains_filter(objects, items, filt)
    return items


def contains_filter(objects: ObjectStore, items: list[RefItem], filt: RefFilter) -> list[RefItem]:
    """--contains / --no-contains (commit_contains) over the listed refs at once, one
    commit walk shared (git's contains_cache)."""
    info = reach.CommitInfo(objects)
    tips = [commit_of(objects, it.oid) or it.oid for it in items]
    keep = [True] * len(items)
    if filt.contains:
        for i, yes in enumerate(reach.contains(objects, tips, filt.contains, info)):
            keep[i] = keep[i] and yes
    if filt.no_contains:
        for i, yes in enumerate(reach.contains(objects, tips, filt.no_contains, info)):
            keep[i] = keep[i] and not yes
    return [it for it, k in zip(items, keep) if k]


def _roots(store: RefStore, rows: list[tuple[bytes, Any, bytes | None]], items: list[RefItem],
           zero: bytes, patterns: list[bytes], filt: RefFilter | None, icase: bool,
           excludes: list[bytes], wanted: set[bytes] | None, objects: ObjectStore | None,
           commits: bool) -> None:
    """The --include-root-refs walk: every ref and root ref, in name order."""
    for name, value, tgt in rows:
        oid = value
        if tgt is not None:
            ref = store.resolve(name, allow_bad_name=False)
            if ref is None or not ref.value:
                continue
            oid = ref.value
        if oid is None:
            continue
        it = _keep(store, name, oid, tgt, zero, patterns, filt, icase, excludes,
                   wanted, objects, commits, True)
        if it is not None:
            items.append(it)


def _keep(store: RefStore, name: bytes, oid: bytes, target: bytes | None, zero: bytes,
          patterns: list[bytes], filt: RefFilter | None, icase: bool, excludes: list[bytes],
          wanted: set[bytes] | None, objects: ObjectStore | None, commits: bool,
          roots: bool) -> RefItem | None:
    """apply_ref_filter for one iterated ref: the RefItem, or None."""
    if oid == zero:
        text = name.decode("utf-8", "surrogateescape")
        if not check_refname_format(name, REFNAME_ALLOW_ONELEVEL):
            write_err("warning: ", f"ignoring ref with broken name {text}")
        else:
            write_err("warning: ", f"ignoring broken ref {text}")
        return None
    kind = ref_kind(name)
    if roots and kind == KIND_DETACHED_HEAD:
        kind = KIND_ROOT_REF
    elif kind in (KIND_DETACHED_HEAD, KIND_PSEUDOREF) or (kind == KIND_ROOT_REF and not roots):
        return None
    if patterns and not match_name_as_path(patterns, name, icase):
        return None
    if excludes and match_name_as_path(excludes, name, icase):
        return None
    if wanted is not None and not points_at(objects, wanted, oid, name):
        return None
    if commits and filt is not None:
        c = commit_of(objects, oid)
        if c is None:
            return None
    return RefItem(name, oid, target, kind, FLAG_SYMREF if target is not None else 0)


def reach_filter(objects: ObjectStore, refs: list[RefItem], bases: list[bytes],
                 include: bool) -> list[RefItem]:
    """reach_filter: keep the refs whose commit is reachable from one of bases
    (include) or is not (not include)."""
    if not bases:
        return refs
    info = reach.CommitInfo(objects)
    tips = [commit_of(objects, it.oid) or it.oid for it in refs]
    merged = [False] * len(refs)
    for b in bases:
        for i, yes in enumerate(reach.merged_filter(objects, b, tips, info)):
            merged[i] = merged[i] or yes
    return [it for it, m in zip(refs, merged) if m == include]


# -- ahead-behind and is-base -------------------------------------------------------

def commit_by_name(ctx: Any, rev: str, quiet: bool = True) -> bytes | None:
    """lookup_commit_reference_by_name(_gently): the commit rev names, or None."""
    repo = ctx.repo
    try:
        oid = resolve_revision(rev.encode("utf-8", "surrogateescape"), ref_resolver(repo.refs),
                               lambda: repo.objects, repo.hash_size, ctx.ambiguous)
    except ReftableError:
        return None
    if oid is None:
        return None
    return ctx.commit(oid, quiet)


class AheadBehindAtom:
    """%(ahead-behind:REF): "<ahead> <behind>" of the ref's commit against REF.
    counted False: a --sort key's atom that no format atom of its kind shares (git
    parses it into a dummy format, so nothing counts it: "" on every ref)."""
    __slots__ = ("base", "counted", "counts", "source")

    def __init__(self, base: bytes) -> None:
        self.source = SOURCE_OTHER
        self.base = base
        self.counts: dict[bytes, AtomValue] = {}
        self.counted = True

    def prepare(self, ctx: AtomContext, refs: list[RefItem]) -> None:
        if not self.counted:
            return
        tips: list[bytes] = []
        names: list[bytes] = []
        for it in refs:
            c = commit_by_name(ctx, it.name.decode("utf-8", "surrogateescape"), False)
            if c is not None:
                tips.append(c)
                names.append(it.name)
        if not tips:
            return
        for name, (ahead, behind) in zip(names, reach.ahead_behind(ctx.repo.objects, self.base,
                                                                   tips)):
            self.counts[name] = AtomValue(f"{ahead} {behind}".encode())

    def value(self, ctx: AtomContext, ref: RefItem, obj: GitObject | None) -> AtomValue:
        return self.counts.get(ref.name, EMPTY)


def parse_ahead_behind(ctx: Any, name: str, arg: str | None) -> AheadBehindAtom:
    if arg is None:
        raise Die("expected format: %(ahead-behind:<committish>)")
    c = commit_by_name(ctx, arg, False)
    if c is None:
        raise Die(f"failed to find '{arg}'")
    return AheadBehindAtom(c)


class IsBaseAtom:
    """%(is-base:REF): "(REF)" on the one listed ref git's get_branch_base_for_tip
    picks as REF's base, "" on the others."""
    __slots__ = ("counted", "source", "text", "tip", "winner")

    def __init__(self, tip: bytes, text: str) -> None:
        self.source = SOURCE_OTHER
        self.tip = tip
        self.text = AtomValue(f"({text})".encode("utf-8", "surrogateescape"))
        self.winner: bytes | None = None
        self.counted = True                 # as AheadBehindAtom's

    def prepare(self, ctx: AtomContext, refs: list[RefItem]) -> None:
        if not self.counted:
            return
        bases: list[bytes] = []
        names: list[bytes] = []
        for it in refs:
            c = commit_by_name(ctx, it.name.decode("utf-8", "surrogateescape"))
            if c is not None:
                bases.append(c)
                names.append(it.name)
        if not bases:
            return
        i = reach.branch_base_for_tip(ctx.repo.objects, self.tip, bases)
        if i >= 0:
            self.winner = names[i]

    def value(self, ctx: AtomContext, ref: RefItem, obj: GitObject | None) -> AtomValue:
        return self.text if self.winner is not None and ref.name == self.winner else EMPTY


def parse_is_base(ctx: Any, name: str, arg: str | None) -> IsBaseAtom:
    if arg is None:
        raise Die("expected format: %(is-base:<committish>)")
    c = commit_by_name(ctx, arg)
    if c is None:
        raise Die(f"failed to find '{arg}'")
    return IsBaseAtom(c, arg)


FILTER_ATOMS: dict[str, AtomParser] = {
    "ahead-behind": parse_ahead_behind,
    "is-base": parse_is_base,
}
