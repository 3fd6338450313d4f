"""git describe's search (builtin/describe.c describe_commit), as %(describe) runs it.

Contract: describe(repo, oid, tags=False, abbrev=None, match=(), exclude=(), abbrev_of)
-> text: the name `git describe [--tags] [--abbrev=N] [--match=P]... [--exclude=P]...
<oid>` prints (without its newline): the tag when it names the commit, else
"<tag>-<depth>-g<abbrev>" (--abbrev=0: the tag alone). Candidates are refs/tags/*
(annotated ones only without tags=True; several annotated tags of one commit: the
newest tagger date wins), filtered by the patterns (wildmatch, git's WM_PATHNAME
flavour here where describe uses none: a "*" does not match "/"); the walk keeps at
most 10 candidates (--candidates default) and counts depths as git does. The name is
the tag object's own tag name. Die with git's message when nothing describes the
commit or oid names no commit. abbrev_of(oid, n) gives the unique abbreviation
(n < 0: core.abbrev's default).
Describer(repo, match, exclude) keeps the candidate names and the parsed commits across
the commits it describes: %(describe) runs in process over every ref of one listing,
where git starts a describe child per ref, which reads the same refs and commits afresh;
the names printed are the same (the refs and objects do not change under a listing).
Describer.describe(oid, tags, abbrev, abbrev_of) is describe() for that repo and patterns.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..errors import ReftableError
from ..odb.reach import CommitInfo
from .gitlike import Die
from .wildmatch import wildmatch

MAX_CANDIDATES = 10
_SEEN = 1


class _Name:
    __slots__ = ("date", "oid", "path", "prio", "tag")

    def __init__(self, path: bytes, prio: int, oid: bytes, tag: bytes | None, date: int) -> None:
        self.path = path
        self.prio = prio
        self.oid = oid
        self.tag = tag
        self.date = date


def _tag_header(data: bytes) -> tuple[bytes | None, int]:
    """(the tag line, the tagger timestamp or 0) of a tag object."""
    name: bytes | None = None
    date = 0
    for line in data.split(b"\n\n", 1)[0].split(b"\n"):
        if line.startswith(b"tag "):
            name = line[4:]
        elif line.startswith(b"tagger "):
            gt = line.rfind(b">")
            f = line[gt + 1:].split()
            date = int(f[0]) if gt >= 0 and f and f[0].isdigit() else 0
    return name, date


def _known_names(repo: Any, match: Sequence[bytes],
                 exclude: Sequence[bytes]) -> dict[bytes, _Name]:
    names: dict[bytes, _Name] = {}
    store = repo.objects
    for ref in repo.refs.iter_refs(b"refs/tags/"):
        oid = ref.value
        if oid is None:
            continue
        path = ref.name[10:]
        if any(wildmatch(p, path) for p in exclude):
            continue
        if match and not any(wildmatch(p, path) for p in match):
            continue
        try:
            peeled = store.peel(oid)
        except ReftableError:
            peeled = oid
        prio = 2 if peeled != oid else 1
        tagname: bytes | None = None
        date = 0
        if prio == 2:
            try:
                tagname, date = _tag_header(store.read(oid)[1])
            except ReftableError:
                tagname = None
        e = names.get(peeled)
        if e is None or e.prio < prio or (e.prio == 2 and prio == 2 and e.date < date):
            names[peeled] = _Name(path, prio, oid, tagname, date)
    return names


def _insert_by_date(lst: list[bytes], c: bytes, info: CommitInfo) -> None:
    d = info.date(c)
    i = 0
    while i < len(lst) and info.date(lst[i]) >= d:
        i += 1
    lst.insert(i, c)


def _append_name(n: _Name) -> bytes:
    if n.prio == 2 and n.tag is None:
        raise Die(f"annotated tag {n.path.decode('utf-8', 'replace')} not available")
    return n.tag if n.tag is not None else n.path


def describe(repo: Any, oid: bytes, tags: bool = False, abbrev: int | None = None,
             match: Sequence[bytes] = (), exclude: Sequence[bytes] = (),
             abbrev_of: Callable[[bytes, int], bytes] | None = None) -> bytes:
    return Describer(repo, match, exclude).describe(oid, tags, abbrev, abbrev_of)


class Describer:
    """describe_commit for one repository and one set of --match/--exclude patterns."""

    def __init__(self, repo: Any, match: Sequence[bytes] = (),
                 exclude: Sequence[bytes] = ()) -> None:
        self.repo = repo
        self.match = match
        self.exclude = exclude
        self.info = CommitInfo(repo.objects)
        self._names: dict[bytes, _Name] | None = None

    def describe(self, oid: bytes, tags: bool = False, abbrev: int | None = None,
                 abbrev_of: Callable[[bytes, int], bytes] | None = None) -> bytes:
        info = self.info
        try:
            cmit = info.commit(oid)
        except ReftableError:
            cmit = None
        if cmit is None:
            raise Die(f"{oid.hex()} is not a valid 'commit' object")
        if self._names is None:
            self._names = _known_names(self.repo, self.match, self.exclude)
        return _describe_commit(cmit, self._names, info, tags, abbrev, abbrev_of)


def _describe_commit(cmit: bytes, names: dict[bytes, _Name], info: CommitInfo, tags: bool,
                     abbrev: int | None,
                     abbrev_of: Callable[[bytes, int], bytes] | None) -> bytes:
    length = -1 if abbrev is None else abbrev

    def suffix(depth: int, n: _Name) -> bytes:
        misnamed = n.tag is not None and n.tag != n.path
        if not (misnamed or length):
            return b""
        ab = abbrev_of(cmit, length) if abbrev_of is not None else cmit.hex().encode()
        return b"-%d-g%s" % (depth, ab)

    n = names.get(cmit)
    if n is not None and (tags or n.prio == 2):
        out = _append_name(n)
        if n.tag is not None and n.tag != n.path:
            out += suffix(0, n)
        return out
    flags: dict[bytes, int] = {cmit: _SEEN}
    matches: list[list[Any]] = []          # [name, depth, flag_within, found_order]
    annotated = unannotated = 0
    seen_commits = 0
    gave_up_on: bytes | None = None
    lst = [cmit]
    while lst:
        c = lst.pop(0)
        seen_commits += 1
        n = names.get(c)
        if n is not None:
            if not tags and n.prio < 2:
                unannotated += 1
            elif len(matches) < MAX_CANDIDATES:
                bit = 1 << (len(matches) + 1)
                matches.append([n, seen_commits - 1, bit, len(matches) + 1])
                flags[c] = flags.get(c, 0) | bit
                if n.prio == 2:
                    annotated += 1
            else:
                gave_up_on = c
                break
        cf = flags.get(c, 0)
        for t in matches:
            if not cf & t[2]:
                t[1] += 1
        if annotated and not lst:
            best_depth = None
            best_within = 0
            for t in matches:
                if best_depth is None or t[1] < best_depth:
                    best_depth, best_within = t[1], t[2]
                elif t[1] == best_depth:
                    best_within |= t[2]
            if cf & best_within == best_within:
                break
        for p in info.parents_of(c):
            pf = flags.get(p, 0)
            if not pf & _SEEN:
                _insert_by_date(lst, p, info)
            flags[p] = pf | cf
    if not matches:
        if unannotated:
            raise Die(f"No annotated tags can describe '{cmit.hex()}'.\n"
                      "However, there were unannotated tags: try --tags.")
        raise Die(f"No tags can describe '{cmit.hex()}'.\nTry --always, or create some tags.")
    matches.sort(key=lambda t: (t[1], t[3]))
    best = matches[0]
    if gave_up_on is not None:
        _insert_by_date(lst, gave_up_on, info)
    while lst:                              # finish_depth_computation
        c = lst.pop(0)
        cf = flags.get(c, 0)
        if cf & best[2]:
            if all(flags.get(i, 0) & best[2] for i in lst):
                break
        else:
            best[1] += 1
        for p in info.parents_of(c):
            pf = flags.get(p, 0)
            if not pf & _SEEN:
                _insert_by_date(lst, p, info)
            flags[p] = pf | cf
    return _append_name(best[0]) + suffix(best[1], best[0])
