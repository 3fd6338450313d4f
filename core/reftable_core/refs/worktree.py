"""Refs across linked worktrees: git's parse_worktree_ref and a routing RefStore.

Contract:
  parse_worktree_ref(name) -> (kind, worktree, bare name), git's refs.c:
      "worktrees/<w>/<ref>" with <ref> a current-worktree name -> ("other", w, ref);
      "main-worktree/<ref>" likewise -> ("main", None, ref); a current-worktree
      name (root-ref syntax: only A-Z, "-", "_"; or refs/worktree/, refs/bisect/,
      refs/rewritten/) -> ("current", None, name); anything else -> ("shared",
      None, name). "worktrees/<w>" with no "/" after it is ("other", w, b"").
  is_current_worktree_ref(name) -> bool, git's is_current_worktree_ref.
  WorktreeRefStore(main, current, open_other) is a RefStore over several stores:
      main holds the shared refs and the main worktree's own (the common dir's
      store), current the current linked worktree's own refs (None in the main
      worktree: main holds them), open_other(w) opens worktree w's store (cached).
      read_ref, resolve, iter_log, reflog_exists, should_write_log go to the store
      git's routing picks, under the bare name; iter_ref_records merges the main
      store's shared refs with the current worktree's own (git's
      merge_ref_iterator over both stacks); transaction() queues each update in
      its store's transaction, prepares them all, then commits them all (one
      table, or one set of loose refs, per store) and runs the reference-transaction
      hook once for them all, as git's one transaction does: every update under
      the name it was queued as, in the order queued, then the ones the
      routing split off (a symref's target, the current HEAD's log), then any a
      store's own prepare added. Each store reads the bare name (git's
      backend_for) and names the ref in messages as queued (RefUpdate.shown); a
      reftable store also writes its records under that name (git's reftable
      backend writes u->refname, "worktrees/<w>/<ref>" as given), so a symref read
      there is followed here too, its log-only update keeping the full name. What git
      does in one store is spread here over two: a symref whose target lives
      in another store is followed before queueing (the target gets the update,
      the symref a log-only one in its own store: its reflog entry), and a
      shared ref updated in a linked worktree adds no log to the main
      worktree's HEAD but, when the current worktree's HEAD points at it, a
      log-only update of that HEAD (git's split_head_update, whose HEAD is the
      current worktree's). The worktrees' stores read their symrefs' targets
      through this routing (RefStoreBase.read_target), so an old value in
      their reflogs is the shared ref's. prepare() first makes git's checks on
      the names as queued: duplicates, then a name such a split adds that is
      queued already (git's messages); a followed update's messages name the
      symref (RefUpdate.original).
"""
from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from ..errors import TransactionError
from ..reftable.record import RefRecord
from .api import LogEntry, Ref, RefStoreBase, RefUpdate
from .refname import REFNAME_ALLOW_ONELEVEL, check_refname_format, refname_is_safe
from .transaction import (HookAbortedError, reject_duplicates, run_transaction_hook,
                          via_referent_conflict, via_symref_conflict)

_ROOT_SYNTAX = re.compile(rb"[A-Z_-]*")
PER_WORKTREE_PREFIXES = (b"refs/worktree/", b"refs/bisect/", b"refs/rewritten/")


def is_current_worktree_ref(name: bytes) -> bool:
    """git's is_current_worktree_ref: root-ref syntax or a per-worktree prefix."""
    return _ROOT_SYNTAX.fullmatch(name) is not None or name.startswith(PER_WORKTREE_PREFIXES)


def parse_worktree_ref(name: bytes) -> tuple[str, bytes | None, bytes]:
    """(kind, worktree name or None, bare refname); see the module contract."""
    if name.startswith(b"worktrees/"):
        rest = name[len(b"worktrees/"):]
        wt, slash, bare = rest.partition(b"/")
        if not slash:
            return "other", wt, b""
        if is_current_worktree_ref(bare):
            return "other", wt, bare
    if name.startswith(b"main-worktree/"):
        bare = name[len(b"main-worktree/"):]
        if is_current_worktree_ref(bare):
            return "main", None, bare
    if is_current_worktree_ref(name):
        return "current", None, name
    return "shared", None, name


class WorktreeRefStore(RefStoreBase):
    """A RefStore routing each name to the main, current or another worktree's store."""

    def __init__(self, main: Any, current: Any | None,
                 open_other: Callable[[bytes], Any]) -> None:
        self.main = main
        self.current = current
        self._open_other = open_other
        self._others: dict[bytes, Any] = {}
        self.hash_size: int = main.hash_size
        if current is not None:
            current.read_target = self._target_reader(current)

    def _target_reader(self, store: Any) -> Callable[[bytes], Ref | None]:
        """How a worktree's store reads its symrefs' targets: its own names in
        itself, the others through the routing."""
        def read(name: bytes) -> Ref | None:
            return store.read_ref(name) if is_current_worktree_ref(name) else self.read_ref(name)
        return read

    def store_for(self, name: bytes) -> tuple[Any, bytes]:
        """(the store holding name, its name there), git's backend_for."""
        kind, wt, bare = parse_worktree_ref(name)
        if kind == "other" and wt is not None:
            store = self._others.get(wt)
            if store is None:
                store = self._others[wt] = self._open_other(wt)
                store.read_target = self._target_reader(store)
            return store, bare
        if kind == "current" and self.current is not None:
            return self.current, bare
        return self.main, bare

    def read_ref(self, name: bytes) -> Ref | None:
        store, bare = self.store_for(name)
        ref = store.read_ref(bare) if bare else None
        return None if ref is None else replace(ref, name=name)

    def iter_ref_records(self, prefix: bytes = b"",
                         include_broken: bool = False) -> Iterator[RefRecord]:
        """The merged records of the stores, broken ones included or not as asked
        (a store holding none ignores include_broken). Its rows, its seek, and
        ref_exists and is_broken (read_ref finds it; never: names are not
        routed to a store's raw read) are RefStoreBase's."""
        main = self.main.iter_ref_records(prefix, include_broken)
        if self.current is None:
            return main
        shared = (r for r in main if not is_current_worktree_ref(r.refname))
        own = (r for r in self.current.iter_ref_records(prefix, include_broken)
               if is_current_worktree_ref(r.refname))
        return heapq.merge(shared, own, key=lambda r: r.refname)

    def iter_log(self, name: bytes) -> Iterator[LogEntry]:
        store, bare = self.store_for(name)
        return store.iter_log(bare)

    def reflog_exists(self, name: bytes) -> bool:
        store, bare = self.store_for(name)
        return bool(store.reflog_exists(bare))

    def should_write_log(self, name: bytes) -> bool:
        store, bare = self.store_for(name)
        return bool(store.should_write_log(bare))

    def transaction(self) -> WorktreeTransaction:
        return WorktreeTransaction(self)

    def close(self) -> None:
        for store in (self.main, self.current, *self._others.values()):
            if store is not None:
                store.close()
        self._others.clear()


class WorktreeTransaction:
    """One transaction per store an update routes to, prepared and committed together."""

    def __init__(self, store: WorktreeRefStore) -> None:
        self.store = store
        self.parts: dict[int, Any] = {}       # Transactions (with .updates and .hooks)
        self.prepared = False
        self.names: list[bytes] = []          # the names queued, as given
        # the names the splits add: (name, the update's name, via a symref?)
        self.splits: list[tuple[bytes, bytes, bool]] = []
        # the hook's lines: (a store's queued update, the name it shows), the queued
        # ones in order, then the split ones
        self.shown: list[tuple[Any, bytes]] = []
        self.shown_splits: list[tuple[Any, bytes]] = []

    @property
    def warnings(self) -> list[str]:
        """Its stores' transactions' warnings, in commit order."""
        return [w for part in self.parts.values() for w in part.warnings]

    def queue(self, update: RefUpdate) -> None:
        """git's ref_transaction_update checks the name as given before any backend
        sees it: check_refname_format when a new id is set, else refname_is_safe. So a
        delete, verify or symref update of main-worktree/... or worktrees/<w>/... is
        refused (the lab routed it: `delete main-worktree/HEAD` removed the main HEAD)."""
        name = update.refname
        new = update.new_value
        if not (check_refname_format(name, REFNAME_ALLOW_ONELEVEL)
                if new is not None and any(new) else refname_is_safe(name)):
            raise TransactionError(f"refusing to update ref with bad name "
                                   f"'{name.decode('utf-8', 'replace')}'")
        self.names.append(name)
        self._route(update)

    def _route(self, update: RefUpdate, split: bool = False) -> None:
        """Queue update in its store's transaction. A symref (HEAD) whose target
        lives in another store is followed here, the update going to the
        target's store (the backends follow symrefs within one store only).
        Each store gets the bare name and the name as given (shown: its messages; a
        store that writes full worktree names, writes_full_worktree_names, the
        reftable store as git's reftable backend, writes its records under it)."""
        store, bare = self.store.store_for(update.refname)
        if not bare:
            raise TransactionError(f"refusing to update ref with bad name "
                                   f"'{update.refname.decode('utf-8', 'replace')}'")
        flags = update.flags
        if "no-deref" not in flags and "log-only" not in flags:
            ref = store.read_ref(bare)
            if ref is not None and ref.target is not None:
                target_store, _ = self.store.store_for(ref.target)
                # a reftable store reads the bare name and writes the full one:
                # git splits the update there too, the log under the full name
                written_as = store.writes_full_worktree_names and bare != update.refname
                if target_store is not store or written_as:
                    self.splits.append((ref.target, update.refname, True))
                    self._route(replace(update, refname=ref.target,
                                        original=update.original or update.refname,
                                        flags=flags | {"via-head"}), split=True)
                    self._queue_in(store, bare, replace(
                        update, old_value=None, old_target=None,
                        flags=flags | {"log-only", "no-deref"}), split)
                    return
        current = self.store.current
        if (current is not None and store is self.store.main and "log-only" not in flags
                and "via-head" not in flags):
            head = current.read_ref(b"HEAD")
            update = replace(update, flags=flags | {"via-head"})   # not the main HEAD's log
            if head is not None and head.target == update.refname:
                self.splits.append((b"HEAD", update.refname, False))
                self._queue_in(current, b"HEAD", replace(
                    update, refname=b"HEAD", new_target=None, old_target=None,
                    flags=flags | {"log-only", "no-deref"}), True)
        self._queue_in(store, bare, update, split)

    def _queue_in(self, store: Any, bare: bytes, update: RefUpdate, split: bool) -> None:
        """update in store's transaction (opened on first use, its own hook off),
        under its name there; the hook shows it under the name given (split: after
        the queued ones)."""
        part = self.parts.get(id(store))
        if part is None:
            part = self.parts[id(store)] = store.transaction()
            part.hooks = None
        # the store reads the bare name; its messages (and a reftable store's records,
        # as git's reftable backend writes u->refname) give the name as queued
        part.queue(replace(update, refname=bare, shown=update.shown or update.refname))
        (self.shown_splits if split else self.shown).append((part.updates[-1], update.refname))

    def _hook(self, state: str) -> int:
        """The reference-transaction hook, once for every store's updates (the main
        store's hooks: the common dir's, or core.hooksPath)."""
        lines = self.shown + self.shown_splits
        seen = {id(u) for u, _ in lines}
        lines += [(u, u.refname) for part in self.parts.values() for u in part.updates
                  if id(u) not in seen]
        main = self.store.main
        return run_transaction_hook(main.hooks, state, [u for u, _ in lines], main.zero,
                                    [name for _, name in lines])

    def prepare(self) -> None:
        if self.prepared:
            return
        try:
            self._check_names()
            for part in self.parts.values():
                part.prepare()
        except BaseException:
            self.release()
            raise
        self.prepared = True
        if self._hook("prepared"):
            self.abort()
            raise HookAbortedError()

    def _check_names(self) -> None:
        """git's checks before any ref is locked: duplicate names, then a name a
        split adds (a symref's target, the current HEAD) that is queued too."""
        reject_duplicates(self.names)
        affected = set(self.names)
        for name, via, symref in self.splits:
            if name in affected:
                raise via_symref_conflict(name, via) if symref else via_referent_conflict(via)
            affected.add(name)

    def commit(self) -> None:
        self.prepare()
        for part in self.parts.values():
            part.commit()
        self._hook("committed")

    def abort(self) -> None:
        for part in self.parts.values():
            part.abort()
        self._hook("aborted")

    def release(self) -> None:
        for part in self.parts.values():
            part.release()

