"""FilesRefStore: the "files" ref backend (loose refs + packed-refs), git's refs/files-backend.c.

Contract: FilesRefStore(gitdir, hash_size, flags, config=None, objects=None)
implements reftable_core.refs.api.RefStore. config defaults to $GIT_DIR/config;
objects is a callable giving the ObjectStore for the checks git makes when
writing (object exists, commit on a branch, peeling for packed-refs); without
it those checks are skipped.
  read_ref(name)   the loose file if there is one (symref, object id; unparseable
                   contents: None), else the packed-refs record (broken names: None).
  is_broken(name)  a loose file for name holds no ref (unparseable contents).
  ref_exists(name) any loose file or packed record for name (git's raw read).
  resolve(name)    follows symrefs up to depth levels.
  iter_refs(pre)   loose refs under refs/ and packed refs merged in name order, the
                   loose one winning (for pre b"" every packed record, as git
                   lists them, names outside refs/ too); broken refs (bad
                   contents, bad names) are skipped. Symrefs come back unresolved
                   (Ref.target set), peeled ids only when packed-refs records them.
                   iter_ref_records(pre, include_broken) gives the same refs as
                   RefRecords; with include_broken also each broken ref, as a
                   value record holding the zero id (git's REF_ISBROKEN, show-ref
                   dies on it). A bad packed-refs line is raised (PackedRefsError)
                   when the walk reaches it, after the refs before it.
                   iter_ref_rows(pre, include_broken) gives them as plain
                   tuples (name, oid, peeled, target), no object per ref: the
                   rows of the packed walk pass through as it makes them.
                   seek_ref_records(start) (RefStoreBase's: iter_ref_records
                   from start on) is not its own scan: scan is SCAN_ROWS.
  iter_log(name)   logs/<name>, newest first.
  transaction()    git's semantics: prepare() takes <ref>.lock for every ref
                   (LockError text when one is held), checks old values and D/F
                   conflicts ("cannot lock ref 'R': ...", one sorted list of the
                   transaction's names and a seek per name: n log n in the batch)
                   and the object a ref is set to ("cannot update ref 'R': ...")
                   with git's messages, derefs symrefs unless no-deref,
                   adds a log-only HEAD update when HEAD points at an updated
                   branch, and takes packed-refs.lock when a packed ref is
                   deleted; commit() writes reflogs (core.logAllRefUpdates rules;
                   committer from GIT_COMMITTER_* / user.*), renames the locks
                   over the refs, rewrites packed-refs without deleted refs and
                   then removes their loose files and reflogs; abort() releases.
                   The reference-transaction hook runs as in git, for this
                   transaction and for the packed-refs one a deletion opens
                   (prepared, or aborted at once when no deleted ref is packed);
                   release() drops the locks without it.
  transaction(initial=True) git's REF_TRANSACTION_FLAG_INITIAL (refs migrate into
                   an empty store, files_transaction_finish_initial): prepare()
                   takes no lock; commit() checks each name against the
                   transaction's (and, with initial_transaction_check=off, the
                   store's: git before e4929cdf79) with git's message, writes the
                   regular refs into packed-refs at once (peeled) and the symrefs
                   and root refs through an ordinary transaction; no "committed" hook.
The packed-refs snapshot is rebuilt when the file's stat data changes; its reader
strategy, lookup and refname safety come from flags (see packed.py).
"""
from __future__ import annotations

import os
import sys
from itertools import chain
from typing import Any, Callable, Iterator

from ..config import config_bool, read_config
from ..counters import WORK
from ..errors import (BlockedRefError, LockError, ReftableError, TransactionError,
                      TransactionLockError)
from ..flags import Flags
from ..lockfile import LockFile, write_all
from ..reftable.record import REF_SYMREF, REF_VAL1, REF_VAL2, RefRecord
from .api import LogEntry, Ref, RefStoreBase, RefUpdate
from .loose import (IN_THE_WAY, LeadingDirError, LooseLock, LooseValue, delete_loose,
                    format_loose, iter_loose_names, prune_empty_tree, prune_ref_parents,
                    read_loose, ref_path)
from .packed import BrokenRow, PackedRefs, RefRow, format_packed_refs
from .reflog import (append_reflog, committer_ident, delete_reflog, format_reflog_line, log_mode,
                     normalize_reflog_message, read_reflog, reflog_exists,
                     should_autocreate_reflog)
from .refname import is_root_ref, path_safe_refname, unsafe_refname_error
from .transaction import (AffectedNames, HookAbortedError, QueuedUpdate, check_new_object,
                          check_old_regular, check_old_target, check_old_value, deref_symref,
                          ensure_prepared, fsync_references, head_log_update, hooks_dir,
                          peeled_value, refname_text, reject_duplicates, run_transaction_hook,
                          unresolvable, verify_refname_available)


class FilesRefStore(RefStoreBase):
    """RefStore over $GIT_DIR/{HEAD, refs/..., packed-refs, logs/...}."""

    def __init__(self, gitdir: str | os.PathLike[str], hash_size: int = 20,
                 flags: Flags | None = None, config: dict[str, str] | None = None,
                 objects: Callable[[], Any] | None = None) -> None:
        self.gitdir = os.fspath(gitdir)
        self.hash_size = hash_size
        self.zero = bytes(hash_size)
        self.flags = flags or Flags()
        self.config = dict(config) if config is not None else read_config(self.gitdir)
        self.packed_path = os.path.join(self.gitdir, "packed-refs")
        self._packed: PackedRefs | None = None
        self._packed_stat: tuple[int, int, int, int] | None = None
        self._objects_fn = objects
        self._objects: Any = None
        self.log_mode = log_mode(self.config)
        self.hooks = hooks_dir(self.gitdir, self.config)

    # -- objects (only for the checks git makes when writing) -------------------------
    @property
    def objects(self) -> Any:
        """The ObjectStore from the objects callable given, or None (no object checks)."""
        if self._objects is None and self._objects_fn is not None:
            try:
                self._objects = self._objects_fn()
            except ReftableError:
                return None
        return self._objects

    # -- packed-refs snapshot ---------------------------------------------------------
    def packed(self) -> PackedRefs:
        """The current packed-refs snapshot (rebuilt when the file changed)."""
        try:
            st = os.stat(self.packed_path)
            key = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        except FileNotFoundError:
            key = None
        if self._packed is None or key != self._packed_stat:
            if self._packed is not None:
                self._packed.close()
            self._packed = PackedRefs(self.packed_path, self.hash_size, self.flags)
            self._packed_stat = key
        return self._packed

    def close(self) -> None:
        if self._packed is not None:
            self._packed.close()
            self._packed = None
        self._objects = None               # owned by whoever gave the objects callable

    # -- reading ---------------------------------------------------------------------
    def read_ref(self, name: bytes) -> Ref | None:
        if not name or not path_safe_refname(name):
            return None
        lv = read_loose(self.gitdir, name, self.hash_size)
        return None if lv is not None and lv.broken else self._raw_ref(name, lv)

    def _raw_ref(self, name: bytes, lv: LooseValue | None) -> Ref | None:
        """The ref git's raw read of name gives: the loose value lv read for it (not a
        broken one), else (lv None) the packed record, if any and not broken."""
        if lv is None:
            e = self.packed().get(name)
            if e is None or e.broken:
                return None
            return Ref(name, e.oid, e.peeled, None)
        if lv.target is not None:
            return Ref(name, None, None, lv.target)
        return Ref(name, lv.oid, None, None)

    def is_broken(self, name: bytes) -> bool:
        """Is there a loose file for name whose contents are no ref (git's read
        of it fails with EINVAL rather than ENOENT)?"""
        lv = read_loose(self.gitdir, name, self.hash_size)
        return lv is not None and lv.broken

    def ref_exists(self, name: bytes) -> bool:
        """git's raw read succeeds: a loose file of any kind (symref, broken) or a
        packed record (a broken name too), as `show-ref --exists` asks."""
        if not name or not path_safe_refname(name):
            return False
        return read_loose(self.gitdir, name, self.hash_size) is not None or \
            self.packed().get(name) is not None

    def iter_ref_rows(self, prefix: bytes = b"",
                      include_broken: bool = False) -> Iterator[RefRow]:
        """The refs of iter_ref_records as rows (name, oid, peeled, target): a
        symref (name, None, None, target), a broken ref (include_broken)
        (name, zero id, None, None). Loose and packed merged in name order (git's
        merge iterator): the next packed record is parsed only after the one
        before it is given, so a bad line comes after it. Once the loose refs are
        done (at once when there are none) the packed walk's rows follow as it
        makes them. The loose refs are listed and the packed-refs snapshot taken
        when this is called."""
        if not (prefix.startswith(b"refs/") or b"refs/".startswith(prefix)):
            return iter(())
        on_broken = _broken_row(self.zero) if include_broken else _left_out
        loose = iter_loose_names(self.gitdir, prefix)
        packed = self.packed().rows(prefix, on_broken)   # from the start for b"" (git reads it all)
        first = next(loose, None)
        if first is None:
            return packed
        return chain(self._merged_rows(first, loose, packed, include_broken), packed)

    def _merged_rows(self, ln: tuple[bytes, bool] | None, loose: Iterator[tuple[bytes, bool]],
                     packed: Iterator[RefRow], include_broken: bool) -> Iterator[RefRow]:
        """iter_ref_rows' merge, from the loose ref ln on, until the loose refs are
        done (the packed rows after the last one given are packed's to give)."""
        gitdir, hash_size, zero = self.gitdir, self.hash_size, self.zero
        pe: RefRow | None = next(packed, None)
        while ln is not None:
            if pe is None or ln[0] <= pe[0]:
                name, good = ln
                if pe is not None and pe[0] == name:
                    pe = next(packed, None)                      # shadowed by the loose ref
                ln = next(loose, None)
                lv = read_loose(gitdir, name, hash_size) if good else None
                if lv is None or lv.broken:
                    if include_broken and (not good or lv is not None):
                        yield name, zero, None, None
                    continue
                yield name, lv.oid, None, lv.target
            else:
                yield pe
                pe = next(packed, None)
        if pe is not None:
            yield pe

    def iter_ref_records(self, prefix: bytes = b"",
                         include_broken: bool = False) -> Iterator[RefRecord]:
        for name, oid, peeled, target in self.iter_ref_rows(prefix, include_broken):
            if target is not None:
                yield RefRecord(name, 0, REF_SYMREF, target=target)
            elif peeled is None:
                yield RefRecord(name, 0, REF_VAL1, oid)
            else:
                yield RefRecord(name, 0, REF_VAL2, oid, peeled)

    def iter_log(self, name: bytes) -> Iterator[LogEntry]:
        return iter(read_reflog(self.gitdir, name, self.hash_size))

    def reflog_exists(self, name: bytes) -> bool:
        return reflog_exists(self.gitdir, name)

    def should_write_log(self, name: bytes) -> bool:
        return should_autocreate_reflog(self.log_mode, name) or self.reflog_exists(name)

    def transaction(self, initial: bool = False) -> "FilesTransaction":
        """A transaction; initial: git's REF_TRANSACTION_FLAG_INITIAL (see the contract)."""
        return FilesTransaction(self, initial)


def _broken_row(zero: bytes) -> BrokenRow:
    """A broken packed ref as iteration with broken refs gives it: the zero id."""
    def row(name: bytes, oid: bytes) -> RefRow:
        return name, zero, None, None
    return row


def _left_out(name: bytes, oid: bytes) -> RefRow | None:
    return None


def _deleting(u: _Upd, zero: bytes) -> bool:
    """git's REF_DELETING (a zero new id, no symref target), not a log-only update."""
    return not u.log_only and u.new_target is None and u.new_value == zero


def _check_update_name(name: bytes) -> None:
    if not path_safe_refname(name):
        raise unsafe_refname_error(name)


def _symlink_ref(gitdir: str, u: _Upd) -> bool:
    """git's create_ref_symlink (core.preferSymlinkRefs): the symref written as a symbolic
    link to its target; False, after git's word, when it cannot be."""
    assert u.new_target is not None
    path = ref_path(gitdir, u.refname)
    try:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        os.symlink(os.fsdecode(u.new_target), path)
    except OSError:
        sys.stderr.write("no symlink - falling back to symbolic ref\n")
        return False
    return True


def _lock_packed(store: FilesRefStore) -> LockFile:
    """packed-refs.lock, retried for core.packedRefsTimeout ms (git's default 1000), as
    git's packed_refs_lock; TransactionLockError in git's words."""
    timeout = int(store.config.get("core.packedrefstimeout", "1000"))
    try:
        return LockFile(store.packed_path, timeout_ms=timeout)
    except LockError as e:
        raise TransactionLockError(str(e)) from None      # git's text, no prefix


def _replace_packed(store: FilesRefStore, lock: LockFile, data: bytes) -> None:
    """git's write_with_updates under the held packed-refs.lock: the new contents go to
    packed-refs.new, created exclusively (create_tempfile: one left behind refuses the
    write), renamed over packed-refs; then the lock is released. A failure leaves
    packed-refs as it was (TransactionError in git's words)."""
    new = store.packed_path + ".new"
    try:
        fd = os.open(new, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as e:
        lock.rollback()
        raise TransactionError(f"unable to create file {new}: {e.strerror}") from None
    try:
        try:
            write_all(fd, data)
            if fsync_references(store.config):
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(new, store.packed_path)
    except OSError as e:                      # a full disk
        try:
            os.unlink(new)
        except OSError:
            pass
        lock.rollback()
        raise TransactionError(f"error writing to {new}: {e.strerror}") from None
    lock.rollback()                           # the lock itself was never written


class _Upd(QueuedUpdate):
    """A queued update plus the files backend's per-ref lock state (class-level
    defaults, no __init__ of its own: compiled by mypyc, an __init__(*args, **kw)
    passing them on to QueuedUpdate's gets the args tuple as its first argument)."""
    lock: LooseLock | None = None
    write: bool = False


class FilesTransaction:
    """git's ref transaction on the files backend: queue, prepare, commit/abort."""

    def __init__(self, store: FilesRefStore, initial: bool = False) -> None:
        self.store = store
        self.initial = initial
        # where its reference-transaction hook is looked up; None: a WorktreeTransaction
        # runs the hook once for all its stores' transactions
        self.hooks: str | None = store.hooks
        self.updates: list[_Upd] = []
        self.state = "open"
        self._locks: list[LooseLock] = []
        self._packed_lock: LockFile | None = None
        self._packed_updates: list[_Upd] = []     # the packed-refs transaction, when needed
        self._types: dict[bytes, str] = {}
        self.warnings: list[str] = []         # git's warning()s of the commit, in order

    def queue(self, update: RefUpdate) -> None:
        if self.state != "open":
            raise TransactionError("transaction is not open")
        # a verify carries no message (git passes NULL); its log-only HEAD
        # update still writes a reflog line "<old> <zero>", as git does
        msg = b"" if update.new_value is None and update.new_target is None else update.message
        self.updates.append(_Upd.of(update, normalize_reflog_message(msg or b"")))

    # -- prepare ------------------------------------------------------------------------
    def prepare(self) -> None:
        if self.state == "prepared":
            return
        if self.state != "open":
            raise TransactionError("transaction is not open")
        try:
            reject_duplicates((u.refname for u in self.updates), _check_update_name)
        except ReftableError:
            self.state = "closed"
            raise
        try:
            if not self.initial:          # git's files_transaction_prepare: nothing to lock
                self._prepare()
        except BaseException:
            self.release()
            raise
        self.state = "prepared"
        if run_transaction_hook(self.hooks, "prepared", self.updates, self.store.zero):
            self.abort()
            raise HookAbortedError()

    def _lock(self, u: _Upd, affected: AffectedNames) -> None:
        """git's lock_raw_ref: <ref>.lock; a non-directory in the way of its
        directories is a D/F conflict when a ref explains it (the missing ref's error
        when one must exist), else named as in the way."""
        try:
            u.lock = LooseLock(self.store.gitdir, u.refname)
        except LeadingDirError as blocked:
            conflict = self._conflict(u.refname, affected) if blocked.in_the_way else None
            if conflict is None:            # the path, shown as git names it
                raise BlockedRefError(f"cannot lock ref '{refname_text(u.original)}': "
                                      f"{blocked}") from None
            reason = (f"unable to resolve reference '{refname_text(u.shown)}'"
                      if u.expects_existing(self.store.zero) else conflict)
            raise TransactionError(f"cannot lock ref '{refname_text(u.original)}': "
                                   f"{reason}") from None
        except LockError as e:
            raise TransactionLockError(f"cannot lock ref '{refname_text(u.original)}': "
                                       f"{e}") from None
        self._locks.append(u.lock)

    def _read_locked(self, u: _Upd, affected: AffectedNames) -> Ref | None:
        """git's lock_raw_ref once the lock is held: one read of the ref
        (files_read_raw_ref: the loose file, else the packed record). A broken loose
        file blocks every update of it, a delete too (git 2.47 cannot delete one with
        update-ref); a directory where the file goes, with no packed record (EISDIR),
        is removed if it holds no file when the ref need not exist."""
        store = self.store
        lv = read_loose(store.gitdir, u.refname, store.hash_size, IN_THE_WAY)
        if lv is IN_THE_WAY:
            ref = store._raw_ref(u.refname, None)
            if ref is None and not u.log_only and not u.expects_existing(store.zero):
                self._clear_directory(u, affected)
            return ref
        if lv is not None and lv.broken:
            raise TransactionError(
                f"cannot lock ref '{refname_text(u.original)}': unable to "
                f"resolve reference '{refname_text(u.shown)}': reference broken")
        return store._raw_ref(u.refname, lv)

    def _exists(self, name: bytes) -> bool:
        """Does git's raw read of name succeed (a loose file that is not broken, else a
        packed record)?"""
        lv = read_loose(self.store.gitdir, name, self.store.hash_size)
        if lv is not None:
            return not lv.broken            # git's refs_read_raw_ref fails on a broken file
        return self.store.packed().get(name) is not None

    def _first_under(self, prefix: bytes) -> bytes | None:
        """The first ref (loose or packed, broken ones included) whose name starts with prefix."""
        loose = next(iter_loose_names(self.store.gitdir, prefix), None)
        packed = next(self.store.packed().iter(prefix), None)
        names = [n for n in (loose[0] if loose else None, packed.name if packed else None)
                 if n is not None]
        return min(names) if names else None

    def _conflict(self, refname: bytes, affected: AffectedNames) -> str | None:
        """git's refs_verify_refname_available over loose + packed and the transaction."""
        return verify_refname_available(refname, affected, self._exists, self._first_under)

    def _packed_conflict(self, refname: bytes, affected: AffectedNames) -> str | None:
        """lock_raw_ref's check of a missing ref: refs_verify_refname_available over the
        packed refs and the transaction only (the loose refs in the way were found when
        the lock was taken or the directory removed)."""
        packed = self.store.packed()
        return verify_refname_available(
            refname, affected, lambda name: packed.get(name) is not None,
            lambda prefix: next((e.name for e in packed.iter(prefix)), None))

    def _prepare(self) -> None:
        """git's files_transaction_prepare: lock_ref_for_update on each update in turn."""
        store = self.store
        zero = store.zero
        objects = store.objects if any(
            u.new_value is not None and u.new_value != zero for u in self.updates) else None
        affected = AffectedNames(u.refname for u in self.updates)
        head = store.read_ref(b"HEAD")
        head_target = head.target if head is not None else None
        updates = self.updates
        i = 0
        try:
            while i < len(updates):
                u = updates[i]
                i += 1
                # git's split_head_update (none for REF_SKIP_CREATE_REFLOG)
                if (head_target is not None and not u.log_only and not u.via_head
                        and not u.skip_create_reflog and u.refname == head_target):
                    updates.append(head_log_update(u, affected))
                self._lock(u, affected)
                ref = self._read_locked(u, affected)
                if ref is None:
                    if not u.expects_existing(zero):
                        # git's lock_raw_ref: any missing ref (a delete or verify of one too)
                        conflict = self._packed_conflict(u.refname, affected)
                        if conflict is not None:
                            raise TransactionError(f"cannot lock ref '{refname_text(u.original)}': "
                                                   f"{conflict}")
                        creating = u.new_target is not None or (u.new_value is not None
                                                                and u.new_value != zero)
                        u.current = zero
                        u.write = creating or u.log_only
                        if creating and not u.log_only and u.new_target is None:
                            self._check_object(u, objects)
                        continue
                    else:
                        raise unresolvable(u)
                is_symref = u.is_symref = ref.target is not None
                if is_symref:
                    assert ref.target is not None
                    resolved = store.resolve(u.refname)
                    current = resolved.value if resolved is not None and resolved.value else zero
                    if not u.no_deref:
                        updates.append(deref_symref(u, ref.target, affected))
                    elif u.old_target is not None:
                        check_old_target(u, ref.target)
                    else:
                        check_old_value(u, current, zero)
                else:
                    current = ref.value or zero
                    check_old_regular(u, current, zero)
                u.current = current
                if u.log_only:
                    u.write = True
                elif u.new_target is not None:
                    u.write = True
                elif u.new_value is not None and (u.new_value == zero or current != u.new_value
                                                  or is_symref):
                    u.write = True
                    if u.new_value != zero:
                        self._check_object(u, objects)
        except BaseException:
            # git's files_transaction_cleanup: the packed-refs transaction begun for the
            # deletions locked before the failure is aborted (its hook's "aborted")
            begun = [_Upd(u.refname, zero, None, None, b"") for u in updates[:i - 1]
                     if _deleting(u, zero)]
            if begun:
                run_transaction_hook(store.hooks, "aborted", begun, zero)
            raise
        # deletions: git's packed-refs transaction: packed-refs.lock taken (retried for
        # core.packedRefsTimeout), held until commit when a deleted ref is packed, else
        # released and the transaction aborted at once.
        dels = [_Upd(u.refname, zero, None, None, b"") for u in updates if _deleting(u, zero)]
        if dels:
            lock = _lock_packed(store)      # for any deletion, as git's files backend
            packed = store.packed()
            if not any(packed.get(d.refname) is not None for d in dels):
                lock.rollback()
                run_transaction_hook(store.hooks, "aborted", dels, zero)
                return
            self._packed_lock = lock
            self._packed_updates = dels
            if run_transaction_hook(store.hooks, "prepared", dels, zero):
                self._abort_packed()
                raise HookAbortedError()

    def _clear_directory(self, u: _Upd, affected: AffectedNames) -> None:
        """git's lock_raw_ref on a directory where the ref goes: removed if it holds no
        file; else a name conflict if one is known, or the directory named."""
        path = ref_path(self.store.gitdir, u.refname)
        if not os.path.isdir(path):
            return
        try:
            prune_empty_tree(path)
        except IsADirectoryError:
            conflict = self._conflict(u.refname, affected)
            raise BlockedRefError(
                f"cannot lock ref '{refname_text(u.original)}': " + (conflict or (
                    f"there is a non-empty directory '{path}' blocking reference "
                    f"'{refname_text(u.shown)}'"))) from None

    def _abort_packed(self) -> None:
        """git's abort of the prepared packed-refs transaction (its hook's "aborted")."""
        dels, self._packed_updates = self._packed_updates, []
        if dels:
            run_transaction_hook(self.store.hooks, "aborted", dels, self.store.zero)

    def _check_object(self, u: _Upd, objects: Any) -> None:
        """write_ref_to_lockfile's object checks, with lock_ref_for_update's prefix."""
        try:
            check_new_object(u, objects, self._types)
        except TransactionError as e:
            raise TransactionError(f"cannot update ref '{refname_text(u.shown)}': {e}") from None


    # -- commit ----------------------------------------------------------------------
    def commit(self) -> None:
        ensure_prepared(self)
        try:
            if self.initial:
                self._commit_initial()
                return                      # git runs no "committed" hook for it
            self._commit()
        finally:
            self.release()
        run_transaction_hook(self.hooks, "committed", self.updates, self.store.zero)

    def _commit_initial(self) -> None:
        """git's files_transaction_finish_initial."""
        store = self.store
        zero = store.zero
        affected = AffectedNames(u.refname for u in self.updates)
        for rec in store.iter_ref_records(b"", include_broken=True):
            if rec.refname in affected:             # git: BUG()
                raise TransactionError("initial ref transaction called with existing refs")
        # e4929cdf79: with the flag on the store (empty) is not read
        exists, first_under = ((None, None) if store.flags.initial_transaction_check
                               else (self._exists, self._first_under))
        packed: list[_Upd] = []
        loose = FilesTransaction(store)
        for u in self.updates:
            if u.old_value is not None and u.old_value != zero:       # git: BUG()
                raise TransactionError("initial ref transaction with old_sha1 set")
            conflict = verify_refname_available(u.refname, affected, exists, first_under)
            if conflict is not None:
                raise TransactionError(conflict)
            if u.new_target is not None or is_root_ref(u.refname):
                lu = _Upd(u.refname, None if u.new_target is not None else u.new_value, None,
                          u.new_target, u.msg, no_deref=u.no_deref,
                          force_reflog=u.force_reflog)
                lu.skip_create_reflog = u.skip_create_reflog
                lu.skip_oid_verification = u.skip_oid_verification
                loose.updates.append(lu)
            else:
                packed.append(u)
        self._write_initial_packed(packed)
        if loose.updates:
            loose.commit()

    def _write_initial_packed(self, updates: list[_Upd]) -> None:
        """The packed-refs transaction of an initial one: the file's records and the
        updates merged by name, each new value peeled (git's write_with_updates)."""
        store = self.store
        rows = {e.name: (e.name, e.oid, e.peeled) for e in store.packed() if not e.broken}
        objects = store.objects
        for u in updates:
            if u.new_value is None or u.new_value == store.zero:
                rows.pop(u.refname, None)
                continue
            rows[u.refname] = (u.refname, u.new_value,
                               peeled_value(objects, u.new_value, self._types))
        with _lock_packed(store) as lock:
            _replace_packed(store, lock, format_packed_refs(rows.values()))

    def _commit(self) -> None:
        store = self.store
        zero = store.zero
        gitdir = store.gitdir
        # in queue order, as git's files_transaction_finish: a symref's reflog resolves
        # its target after the updates queued before it are in place, not after those
        # named before it
        work = [u for u in self.updates if u.write]
        ident: tuple[bytes, bytes, int, int] | None = None
        # git's REF_DELETING: every delete, of a missing ref too (its reflog removed,
        # the directories made for its lock pruned)
        deletes = [u for u in self.updates if _deleting(u, zero) and not u.write]
        fsync = fsync_references(store.config)
        symlinks = config_bool(store.config, "core.prefersymlinkrefs", False)
        for u in work:
            if _deleting(u, zero):
                deletes.append(u)
                continue
            new_id = u.new_value
            if new_id is None and u.log_only and u.new_target is None:
                new_id = zero
            if u.new_target is not None:
                resolved = store.resolve(u.new_target, as_target=True)
                new_id = resolved.value if resolved is not None else None
            if u.skip_create_reflog:
                new_id = None                 # git's REF_SKIP_CREATE_REFLOG: no reflog written
            if new_id is not None and (u.log_only or u.force_reflog
                                       or store.should_write_log(u.refname)):
                if ident is None:
                    ident = committer_ident(store.config)
                name, email, when, tz = ident
                line = format_reflog_line(u.current or zero, new_id, name, email, when, tz, u.msg)
                try:
                    append_reflog(gitdir, u.refname, line,
                                  create=u.force_reflog
                                  or should_autocreate_reflog(store.log_mode, u.refname))
                except ReftableError as e:
                    raise TransactionError(f"cannot update the ref '{refname_text(u.shown)}': "
                                           f"{e}") from None
            if u.log_only:
                continue
            assert u.lock is not None
            if u.new_target is not None and symlinks and _symlink_ref(store.gitdir, u):
                u.lock.rollback()
                continue
            try:
                u.lock.write(format_loose(u.new_value, u.new_target), fsync)
            except OSError:                   # a full disk: git's write_ref_to_lockfile
                raise TransactionError(f"couldn't write '{u.lock.lock_path}'") from None
            try:
                u.lock.commit()
            except OSError:                   # a non-empty directory where the ref goes
                raise TransactionError(f"couldn't set '{refname_text(u.shown)}'") from None
            WORK.loose_refs_written += 1
        if self._packed_updates:
            self._rewrite_packed()
            dels, self._packed_updates = self._packed_updates, []
            run_transaction_hook(store.hooks, "committed", dels, zero)
        for u in deletes:
            delete_loose(gitdir, u.refname, prune=False)      # still holding its lock
            warning = delete_reflog(gitdir, u.refname)
            if warning is not None:
                self.warnings.append(warning)
            if u.lock is not None:
                u.lock.rollback()
            prune_ref_parents(gitdir, u.refname)              # as git does after unlocking

    def _rewrite_packed(self) -> None:
        store = self.store
        packed = store.packed()
        objects: Any = None
        keep = []
        deletes = {d.refname for d in self._packed_updates}
        for e in packed:
            if e.name in deletes:
                continue
            peeled = e.peeled
            if peeled is None and not e.knows_peeled and not e.broken:
                # git peels what the old file did not record, reading the object
                if objects is None:
                    objects = store.objects or False
                if objects is not False:
                    try:
                        if objects.read_header(e.oid)[0] == "tag":
                            peeled = objects.peel(e.oid)
                    except ReftableError:
                        peeled = None
            keep.append((e.name, e.oid, peeled))
        assert self._packed_lock is not None
        _replace_packed(store, self._packed_lock, format_packed_refs(keep, sort=False))
        self._packed_lock = None

    def release(self) -> None:
        """Drop every lock, no hook (git's cleanup when dying)."""
        for lk in self._locks:
            lk.rollback()                 # no-op for committed ones (the lock is gone)
        self._locks = []
        if self._packed_lock is not None:
            self._packed_lock.rollback()
            self._packed_lock = None
        self._packed_updates = []
        self.state = "closed"

    def abort(self) -> None:
        """git's ref_transaction_abort: the packed-refs transaction's abort, the
        locks released, then the hook's "aborted"."""
        self._abort_packed()
        self.release()
        run_transaction_hook(self.hooks, "aborted", self.updates, self.store.zero)
