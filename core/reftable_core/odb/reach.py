"""Commit reachability: the part of git's commit-reach.c that ref-filter uses.

Contract (ids are raw object ids; a tag is peeled to its commit first, as git's
lookup_commit_reference does):
  CommitInfo(store)          parsed commits by id: parents, committer date, and the
                             generation number git computes when there is no commit
                             graph (ensure_generations_valid, generation version 2:
                             corrected commit date, max(date, max(parent gens) + 1)).
                             Pass one to several calls to share the parsing.
  is_ancestor(store, ancestor, oid) -> bool   git's repo_in_merge_bases: ancestor is
                             reachable from oid (a commit is its own ancestor).
  merged_filter(store, base, tips) -> [bool]  for each tip, whether it is reachable from
                             base (ref-filter's --merged through reach_filter); a tip
                             that is no commit (after peeling) is False.
  contains(store, tips, wanted) -> [bool]     for each tip, whether any of wanted is
                             reachable from it (commit_contains: --contains); a tip that
                             is no commit is False.
  ahead_behind(store, base, tips) -> [(ahead, behind)]   git's ahead_behind(): the
                             commits reachable from the tip and not from base, and the
                             commits reachable from base and not from the tip.
  branch_base_for_tip(store, tip, bases) -> index or -1   git's get_branch_base_for_tip
                             (%(is-base:<tip>)): the base whose first-parent history
                             reaches the tip's first-parent history soonest, ties to the
                             lowest index.
  merge_bases(store, a, b) -> [ids]           the best common ancestors of a and b
                             (git merge-base --all), newest first.
A commit that does not parse raises FormatError "bad object <id>"; an id that is not a
commit where one is required raises FormatError "<id> is a <type>, not a commit".
Walks are iterative (no recursion limit) and ordered by generation, newest first, so a
commit's flags are final when it is popped (git's paint_down_to_common ordering).
"""
from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence

from ..errors import FormatError
from .revision import commit_date, parse_commit
from .store import ObjectStore

_TIP = 1
_BASE = 2
_BOTH = 3


class CommitInfo:
    """Parents, dates and generations of the commits a reach query reads."""

    def __init__(self, store: ObjectStore) -> None:
        self.store = store
        self.parents: dict[bytes, list[bytes]] = {}
        self.dates: dict[bytes, int] = {}
        self.gens: dict[bytes, int] = {}

    def commit(self, oid: bytes) -> bytes | None:
        """The commit a ref's id names (tags peeled), or None if it names no commit."""
        if oid in self.parents:
            return oid
        peeled = self.store.peel(oid)
        typ, data = self.store.read_raw(peeled)
        if typ != 1:
            return None
        self._parse(peeled, data)
        return peeled

    def require(self, oid: bytes) -> bytes:
        c = self.commit(oid)
        if c is None:
            typ, _ = self.store.read(self.store.peel(oid))
            raise FormatError(f"{oid.hex()} is a {typ}, not a commit")
        return c

    def _parse(self, oid: bytes, data: bytes) -> None:
        try:
            _, parents = parse_commit(data)
        except FormatError:
            raise FormatError(f"bad object {oid.hex()}") from None
        self.parents[oid] = parents
        self.dates[oid] = commit_date(data)

    def parents_of(self, oid: bytes) -> list[bytes]:
        ps = self.parents.get(oid)
        if ps is None:
            typ, data = self.store.read_raw(oid)
            if typ != 1:
                raise FormatError(f"bad object {oid.hex()}")
            self._parse(oid, data)
            ps = self.parents[oid]
        return ps

    def date(self, oid: bytes) -> int:
        self.parents_of(oid)
        return self.dates[oid]

    def generation(self, oid: bytes) -> int:
        """compute_reachable_generation_numbers, version 2, without recursion."""
        g = self.gens.get(oid)
        if g is not None:
            return g
        gens = self.gens
        stack = [oid]
        while stack:
            cur = stack[-1]
            if cur in gens:
                stack.pop()
                continue
            max_gen = 0
            ready = True
            for p in self.parents_of(cur):
                pg = gens.get(p)
                if pg is None:
                    ready = False
                    stack.append(p)
                    break
                max_gen = max(max_gen, pg)
            if ready:
                stack.pop()
                d = self.dates[cur]
                if d and d > max_gen:
                    max_gen = d - 1
                gens[cur] = max_gen + 1
        return gens[oid]


def _info(store: ObjectStore, info: CommitInfo | None) -> CommitInfo:
    return info if info is not None else CommitInfo(store)


def _reachable(info: CommitInfo, start: bytes, min_gen: int) -> set[bytes]:
    """Every commit reachable from start whose generation is at least min_gen."""
    seen = {start}
    todo = [start]
    while todo:
        c = todo.pop()
        for p in info.parents_of(c):
            if p not in seen and info.generation(p) >= min_gen:
                seen.add(p)
                todo.append(p)
    return seen


def is_ancestor(store: ObjectStore, ancestor: bytes, oid: bytes,
                info: CommitInfo | None = None) -> bool:
    info = _info(store, info)
    a = info.require(ancestor)
    c = info.require(oid)
    if a == c:
        return True
    ga = info.generation(a)
    if ga > info.generation(c):
        return False
    return a in _reachable(info, c, ga)


def merged_filter(store: ObjectStore, base: bytes, tips: Sequence[bytes],
                  info: CommitInfo | None = None) -> list[bool]:
    info = _info(store, info)
    b = info.require(base)
    commits = [info.commit(t) for t in tips]
    gens = [info.generation(c) for c in commits if c is not None]
    if not gens:
        return [False] * len(tips)
    reach = _reachable(info, b, min(gens))
    return [c is not None and c in reach for c in commits]


def contains(store: ObjectStore, tips: Sequence[bytes], wanted: Sequence[bytes],
             info: CommitInfo | None = None) -> list[bool]:
    """git's contains_tag_algo: a memo of each commit's answer, a generation cutoff
    below the oldest wanted commit."""
    info = _info(store, info)
    want = {info.require(w) for w in wanted}
    if not want:
        return [False] * len(tips)
    cutoff = min(info.generation(w) for w in want)
    memo: dict[bytes, bool] = {}
    out = []
    for t in tips:
        c = info.commit(t)
        if c is None:
            out.append(False)
            continue
        stack = [c]
        while stack:
            cur = stack[-1]
            if cur in memo:
                stack.pop()
                continue
            if cur in want:
                memo[cur] = True
                stack.pop()
                continue
            if info.generation(cur) < cutoff:
                memo[cur] = False
                stack.pop()
                continue
            pending = False
            result = False
            for p in info.parents_of(cur):
                r = memo.get(p)
                if r is None:
                    stack.append(p)
                    pending = True
                    break
                if r:
                    result = True
                    break
            if result:
                memo[cur] = True
                stack.pop()
            elif not pending:
                memo[cur] = False
                stack.pop()
        out.append(memo[c])
    return out


def _paint(info: CommitInfo, tip: bytes, base: bytes) -> tuple[int, int]:
    """(commits only tip reaches, commits only base reaches): both painted down in
    generation order; a commit both reach is stale, and the walk stops when only
    stale commits are left in the queue."""
    flags: dict[bytes, int] = {tip: _TIP}
    flags[base] = flags.get(base, 0) | _BASE
    queue: list[tuple[int, int, bytes]] = []
    count = 0
    for c in (tip, base) if tip != base else (tip,):
        heapq.heappush(queue, (-info.generation(c), count, c))
        count += 1
    active = sum(1 for _, _, c in queue if flags[c] != _BOTH)
    ahead = behind = 0
    while queue and active:
        c = heapq.heappop(queue)[2]
        f = flags[c]
        if f != _BOTH:
            active -= 1
        if f == _TIP:
            ahead += 1
        elif f == _BASE:
            behind += 1
        for p in info.parents_of(c):
            pf = flags.get(p)
            if pf is None:
                flags[p] = f
                heapq.heappush(queue, (-info.generation(p), count, p))
                count += 1
                if f != _BOTH:
                    active += 1
            elif pf | f != pf:
                flags[p] = pf | f
                if pf | f == _BOTH:
                    active -= 1
    return ahead, behind


def ahead_behind(store: ObjectStore, base: bytes, tips: Sequence[bytes],
                 info: CommitInfo | None = None) -> list[tuple[int, int]]:
    info = _info(store, info)
    b = info.require(base)
    return [_paint(info, info.require(t), b) for t in tips]


def branch_base_for_tip(store: ObjectStore, tip: bytes, bases: Sequence[bytes],
                        info: CommitInfo | None = None) -> int:
    """get_branch_base_for_tip: bases are commits (the caller drops refs that name
    none); a queue by generation then date, newest first, ties in queue order."""
    if not bases:
        return -1
    info = _info(store, info)
    t = info.require(tip)
    cs = [info.require(b) for b in bases]
    best: dict[bytes, int] = {t: -1}
    queue: list[tuple[int, int, int, bytes]] = []
    order = itertools.count()

    def put(c: bytes) -> None:
        heapq.heappush(queue, (-info.generation(c), -info.date(c), next(order), c))

    put(t)
    for i, c in enumerate(cs):
        b = best.get(c, 0)
        if b:
            if b == -1:
                return i
            continue
        best[c] = i + 1
        put(c)
    best_index = -1
    branch_point: bytes | None = None
    while queue:
        c = heapq.heappop(queue)[3]
        best_for_c = best[c]
        if c == branch_point:
            break
        ps = info.parents_of(c)
        if not ps:
            continue
        parent = ps[0]
        best_for_p = best.get(parent, 0)
        if not best_for_p:
            best[parent] = best_for_c
            put(parent)
            continue
        if best_for_p > 0 and best_for_c > 0:
            if best_for_c < best_for_p:
                best[parent] = best_for_c
            continue
        positive = best_for_p if best_for_c < 0 else best_for_c
        if best_index < 0 or positive < best_index:
            best_index = positive
        best[parent] = -1
        branch_point = parent
    return best_index - 1 if best_index > 0 else -1


def merge_bases(store: ObjectStore, a: bytes, b: bytes,
                info: CommitInfo | None = None) -> list[bytes]:
    """The common ancestors of a and b that no other common ancestor reaches."""
    info = _info(store, info)
    ca, cb = info.require(a), info.require(b)
    common = _reachable(info, ca, 0) & _reachable(info, cb, 0)
    below: set[bytes] = set()
    todo = [p for c in common for p in info.parents_of(c)]
    while todo:
        c = todo.pop()
        if c not in below:
            below.add(c)
            todo.extend(info.parents_of(c))
    out = [c for c in common if c not in below]
    out.sort(key=lambda c: (-info.generation(c), -info.date(c)))
    return out
