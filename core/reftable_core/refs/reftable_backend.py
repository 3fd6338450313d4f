"""RefStore and Transaction over a reftable stack (git's refs/reftable-backend.c).

Contract: ReftableRefStore(gitdir, flags, object_format, config, objects)
implements reftable_core.refs.api.RefStore for $GIT_DIR/reftable. Every read
goes through the normal read path: stack.reload() (the up-to-date check picked
by flags.stat_cache) then a merged iterator, sought and read as git's
reftable_backend_read_ref does (seek(name), one record, its name compared).
Two flags pick how:
  tombstone_suppression (upstream 146a946321, 2026-07-10) off: the readers' merged
      iterators consume deletions in their own loop (suppress_deletions), so a
      seek into a range of tombstones scans them all before the reader sees its
      bound; on: they return deletions and every reader here (read_record, the
      D/F check of a transaction, prefix iteration, log iteration, reflog_exists)
      skips them, stopping at its own bound (each counted in WORK.deletions_returned).
      seek_ref_records (show-ref's loop reads it raw) keeps suppressing.
  iterator_reuse (upstream 7cf65e2660, 2024-11-26) off: each read of one ref
      builds a merged ref iterator (WORK.ref_iterators_built); on: one is kept and
      re-sought, dropped when the stack reloads (Stack's on_reload).
  initial_transaction_check (upstream e4929cdf79, 2024-11-20) off: the refname
      check of an initial transaction (transaction(initial=True): refs migrate
      into an empty store) reads the store like any other (a read per leading
      directory, an iterator sought under refname/; WORK.refname_store_checks);
      on: it checks only the transaction's own names.
transaction(initial) queues RefUpdates ("skip-create-reflog" and
"skip-oid-verification" in their flags: git's REF_SKIP_CREATE_REFLOG and
REF_SKIP_OID_VERIFICATION);
prepare() locks tables.list (reloading when outdated), then for each update
reads the ref (again through the normal read path), checks the old value and
refname conflicts with git's messages, splits symref updates (HEAD -> branch)
and adds the log-only HEAD update when HEAD points at an updated branch;
commit() writes one table: ref records (value_type 2 with the peeled id for
annotated tags), reflog records (committer ident from GIT_COMMITTER_NAME /
EMAIL / DATE or user.* config, message normalized as git does, tombstones for
every reflog entry of a deleted ref), then auto-compacts. The
reference-transaction hook runs as in git: "prepared" after prepare (a refusal
aborts: HookAbortedError), "committed" after commit, "aborted" from abort();
release() drops the lock without the hook. A tables.list.lock held by
another process is git's "cannot lock references". Errors raise
TransactionError (a ReftableError) whose text is git's message.
Reads never write: a repository without $GIT_DIR/reftable reads as empty and
nothing is created (a write then fails at tables.list.lock). New tables and
tables.list get git's modes: 0666 & ~umask, adjusted for core.sharedRepository
(shared_repository, git's git_config_perm; lockfile.shared_perm).
"""
from __future__ import annotations

import bisect
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

from ..config import config_bool, config_int, parse_bool
from ..counters import WORK
from ..errors import (ConfigError, EntryTooBigError, LockError, NameConflictError,
                      ReftableError, TransactionError, TransactionLockError)
from ..flags import Flags
from ..lockfile import (LOCK_SUFFIX, PERM_EVERYBODY, PERM_GROUP, PERM_UMASK, shared_perm,
                        umask_file_mode)
from ..reftable.merged import MergedIter
from ..reftable.record import REF_DELETION, REF_SYMREF, REF_VAL1, LogRecord, RefRecord
from ..reftable.stack import Stack, StackOptions
from .api import (HASH_SIZES, SCAN_RECORDS, LogEntry, Ref, RefStoreBase, RefUpdate,
                  ref_from_record)
from .refname import iterated_refname_ok
from .reflog import (committer_ident, hhmm_to_minutes, log_mode, minutes_to_hhmm,
                     normalize_reflog_message, should_autocreate_reflog)
from .transaction import (HookAbortedError, QueuedUpdate, check_new_object, check_old_regular,
                          check_old_target, check_old_value, deref_symref, ensure_prepared,
                          fsync_references, head_log_update, hooks_dir, peeled_value,
                          reject_duplicates, run_transaction_hook, unresolvable)

AUTOCOMPACTION_ENV = "GIT_TEST_REFTABLE_AUTOCOMPACTION"


def shared_repository(config: dict[str, str]) -> int:
    """git's git_config_perm of core.sharedRepository (PERM_UMASK when unset)."""
    value = config.get("core.sharedrepository")
    if value is None or value == "umask":
        return PERM_UMASK
    if value == "group":
        return PERM_GROUP
    if value in ("all", "world", "everybody"):
        return PERM_EVERYBODY
    if not re.fullmatch(r"[0-7]*", value):
        b = parse_bool(value)
        if b is None:
            raise ConfigError(f"bad boolean config value '{value}' for "
                              "'core.sharedrepository'")
        return PERM_GROUP if b else PERM_UMASK
    i = int(value or "0", 8)
    if i in (0, 1, 2):
        return (PERM_UMASK, PERM_GROUP, PERM_EVERYBODY)[i]
    if i & 0o600 != 0o600:
        raise ConfigError(f"problem with core.sharedRepository filemode value (0{i:03o}).\n"
                          "The owner of files must always have read and write permissions.")
    return -(i & 0o666)


def stack_options_from_config(config: dict[str, str], object_format: str) -> StackOptions:
    """git's reftable.* settings (blockSize, restartInterval, indexObjects,
    autoCompaction, geometricFactor, lockTimeout) and core.fsync for refs;
    $GIT_TEST_REFTABLE_AUTOCOMPACTION=false disables auto-compaction as in git;
    default_permissions from core.sharedRepository (None under the umask: the
    files are created 0666 & ~umask anyway)."""
    auto = config_bool(config, "reftable.autocompaction", True)
    env = os.environ.get(AUTOCOMPACTION_ENV)
    if env is not None:                      # git_env_bool(name, 1)
        env_auto = parse_bool(env)
        if env_auto is None:
            raise ConfigError(f"bad boolean config value '{env}' for '{AUTOCOMPACTION_ENV}'")
        auto = auto and env_auto
    shared = shared_repository(config)
    perms = None if shared == PERM_UMASK else shared_perm(umask_file_mode(), shared)
    return StackOptions(
        hash_id=object_format,
        block_size=config_int(config, "reftable.blocksize", 4096),
        restart_interval=config_int(config, "reftable.restartinterval", 16),
        index_objects=config_bool(config, "reftable.indexobjects", True),
        auto_compact=auto,
        compaction_factor=config_int(config, "reftable.geometricfactor", 2),
        lock_timeout_ms=config_int(config, "reftable.locktimeout", 100),
        fsync=fsync_references(config),
        default_permissions=perms,
    )


# -- the store ------------------------------------------------------------------

class ReftableRefStore(RefStoreBase):
    """RefStore over $GIT_DIR/reftable. It holds no broken refs (include_broken
    changes nothing; is_broken and ref_exists are RefStoreBase's); its own scan is
    the merged iterator (seek_ref_records)."""

    scan = SCAN_RECORDS
    writes_full_worktree_names = True

    def __init__(self, gitdir: str, flags: Flags | None = None, object_format: str = "sha1",
                 config: dict[str, str] | None = None,
                 objects: Callable[[], Any] | None = None,
                 options: StackOptions | None = None) -> None:
        self.gitdir = gitdir
        self.flags = flags or Flags()
        self.config = dict(config or {})
        self.object_format = object_format
        self.hash_size = HASH_SIZES[object_format]
        self.zero = bytes(self.hash_size)
        self.options = options or stack_options_from_config(self.config, object_format)
        # tombstone_suppression=off: the readers' iterators consume deletions themselves
        self._suppress = not self.flags.tombstone_suppression
        self._cached_ref_iter: MergedIter | None = None
        self._read_iter: Callable[[], MergedIter] = (
            self._reused_ref_iter if self.flags.iterator_reuse else self.fresh_ref_iter)
        self.stack = Stack(os.path.join(gitdir, "reftable"), self.flags, self.options,
                           create=False, missing_ok=True, on_reload=self._drop_ref_iter)
        self._objects = objects
        self.log_mode = log_mode(self.config)
        self.hooks = hooks_dir(gitdir, self.config)

    @property
    def objects(self) -> Any:
        """The ObjectStore, or None when unavailable."""
        if self._objects is None:
            return None
        try:
            return self._objects()
        except ReftableError:
            return None

    # -- reading ---------------------------------------------------------------
    def fresh_ref_iter(self) -> MergedIter:
        """A new merged ref iterator over the stack as loaded, for a reader here:
        it consumes deletions (tombstone_suppression=off) or returns them (on)."""
        WORK.ref_iterators_built += 1
        return self.stack.merged.refs(self._suppress)

    def live_records_under(self, start: bytes) -> Iterator[RefRecord]:
        """The live ref records whose names start with `start`, from a fresh iterator
        sought to it: a deletion (returned only under tombstone_suppression=on) is
        skipped after the bound check, so the walk stops at the first name past
        the prefix, live or not (git 146a946321's callers)."""
        it = self.fresh_ref_iter()
        it.seek(start)
        for rec in it:
            if not rec.refname.startswith(start):
                if rec.value_type == REF_DELETION:
                    WORK.deletions_returned += 1
                break
            if rec.value_type == REF_DELETION:
                WORK.deletions_returned += 1
                continue
            yield rec
        it.close()                      # git's reftable_iterator_destroy

    def _reused_ref_iter(self) -> MergedIter:
        """The ref iterator kept across reads (iterator_reuse=on; git's be->it)."""
        it = self._cached_ref_iter
        if it is None:
            it = self._cached_ref_iter = self.fresh_ref_iter()
        return it

    def _drop_ref_iter(self) -> None:
        """The stack reloaded (or closed): the kept iterator reads old tables
        (git's reftable_backend_on_reload)."""
        self._cached_ref_iter = None

    def read_record(self, name: bytes) -> Any | None:
        """The raw ref record of name via the normal read path (reload, then a
        merged iterator sought to name and read once); None when missing or deleted."""
        self.stack.reload()
        it = self._read_iter()
        it.seek(name)
        rec = next(it, None)
        if rec is None:
            return None
        if rec.value_type == REF_DELETION:             # returned only under tombstone_suppression=on:
            WORK.deletions_returned += 1    # a deletion, of name or past it, is no ref
            return None
        return rec if rec.refname == name else None

    def read_ref(self, name: bytes) -> Ref | None:
        rec = self.read_record(name)
        return None if rec is None else ref_from_record(rec)

    def iter_ref_records(self, prefix: bytes = b"",
                         include_broken: bool = False) -> Iterator[RefRecord]:
        """Live ref records under refs/ starting with prefix, in name order. With
        include_broken a record whose name fails the refname check (a table may hold
        one: git's writers skip the check under REF_SKIP_REFNAME_VERIFICATION) comes
        as the broken-ref record, its value the zero id, as git's reftable iterator
        clears the oid and sets REF_BAD_NAME; a dangerous name is fatal, as there."""
        self.stack.reload()
        start = prefix if prefix.startswith(b"refs/") else b"refs/"
        if not start.startswith(prefix) and not prefix.startswith(b"refs/"):
            return
        if not include_broken:
            yield from self.live_records_under(start)
            return
        zero = self.zero
        for rec in self.live_records_under(start):
            if iterated_refname_ok(rec.refname):
                yield rec
            else:
                yield RefRecord(rec.refname, rec.update_index, REF_VAL1, zero)

    def seek_ref_records(self, start: bytes) -> Iterator[Any]:
        """The merged ref iterator positioned at start (after the up-to-date check):
        raw records, deletions suppressed, running to the end of the stack; the
        caller stops at its prefix. The hot path of show-ref."""
        self.stack.reload()
        it = self.stack.merged.refs()
        it.seek(start)
        return iter(it)

    def ref_record_iter(self, start: bytes) -> Iterator[Any]:
        """seek_ref_records, under the name lab.stages reads (it tells a reftable
        store by it)."""
        return self.seek_ref_records(start)

    def _log_records(self, name: bytes) -> Iterator[LogRecord]:
        """The live log records of ref name, newest first (deletions skipped here
        after the name check when the iterator returns them)."""
        it = self.stack.merged.logs(self._suppress)
        for rec in it.seek_log(name):
            if rec.value_type == REF_DELETION:         # returned only under tombstone_suppression=on
                WORK.deletions_returned += 1
                if rec.refname != name:
                    break
                continue
            if rec.refname != name:
                break
            yield rec
        it.close()                      # git's reftable_iterator_destroy

    def iter_log(self, name: bytes) -> Iterator[LogEntry]:
        self.stack.reload()
        for rec in self._log_records(name):
            yield LogEntry(rec.refname, rec.update_index, rec.old_id or self.zero,
                           rec.new_id or self.zero, rec.name, rec.email, rec.time,
                           hhmm_to_minutes(rec.tz_offset), rec.message)

    def reflog_exists(self, name: bytes) -> bool:
        self.stack.reload()
        return next(self._log_records(name), None) is not None

    def should_write_log(self, name: bytes) -> bool:
        if should_autocreate_reflog(self.log_mode, name):
            return True
        return self.reflog_exists(name)

    def transaction(self, initial: bool = False) -> ReftableTransaction:
        """A transaction; initial: git's REF_TRANSACTION_FLAG_INITIAL (the store is
        empty: the refname check reads it only under initial_transaction_check=off)."""
        return ReftableTransaction(self, initial)

    def close(self) -> None:
        self.stack.close()


class ReftableTransaction:
    """git's ref transaction on the reftable backend: queue, prepare, commit/abort."""

    def __init__(self, store: ReftableRefStore, initial: bool = False) -> None:
        self.store = store
        self.initial = initial
        # e4929cdf79: an initial transaction's refname check skips the store
        self._check_store = not (initial and store.flags.initial_transaction_check)
        # where its reference-transaction hook is looked up; None: a WorktreeTransaction
        # runs the hook once for all its stores' transactions
        self.hooks: str | None = store.hooks
        self.updates: list[QueuedUpdate] = []
        self.queued: list[QueuedUpdate] = []
        self.warnings: list[str] = []         # (the files backend's; none here)
        self.state = "open"
        self._addition: Any = None
        self._types: dict[bytes, str] = {}

    def queue(self, update: RefUpdate) -> None:
        if self.state != "open":
            raise TransactionError("transaction is not open")
        self.updates.append(QueuedUpdate.of(update,
                                            normalize_reflog_message(update.message or b"")))

    def _verify_available(self, refname: bytes, affected: set[bytes],
                          affected_sorted: list[bytes]) -> None:
        """git's refs_verify_refname_available against the store and the transaction."""
        store = self.store
        check_store = self._check_store
        parts = refname.split(b"/")
        for i in range(1, len(parts)):
            dirname = b"/".join(parts[:i])
            if check_store:
                WORK.refname_store_checks += 1
                rec = store.read_record(dirname)
                if rec is not None and rec.value_type != 0:
                    raise TransactionError(f"'{dirname.decode()}' exists; "
                                           f"cannot create '{refname.decode()}'")
            if dirname in affected:
                raise TransactionError(f"cannot process '{refname.decode()}' and "
                                       f"'{dirname.decode()}' at the same time")
        sub = refname + b"/"
        if check_store:
            WORK.refname_store_checks += 1
            for rec in store.live_records_under(sub):
                raise TransactionError(f"'{rec.refname.decode()}' exists; "
                                       f"cannot create '{refname.decode()}'")
        j = bisect.bisect_left(affected_sorted, sub)
        if j < len(affected_sorted) and affected_sorted[j].startswith(sub):
            raise TransactionError(f"cannot process '{refname.decode()}' and "
                                   f"'{affected_sorted[j].decode()}' at the same time")

    def prepare(self) -> None:
        if self.state == "prepared":
            return
        if self.state != "open":
            raise TransactionError("transaction is not open")
        store = self.store
        zero = store.zero
        try:
            reject_duplicates(u.shown for u in self.updates)
        except TransactionError:
            self.state = "closed"
            raise
        try:
            self._addition = store.stack.new_addition(reload=True)
        except LockError:
            self.state = "closed"
            if os.path.exists(store.stack.list_file + LOCK_SUFFIX):   # git: EEXIST only
                raise TransactionLockError("cannot lock references") from None
            raise
        try:
            self._prepare_locked(zero)
        except BaseException:
            self.release()
            raise
        self.state = "prepared"
        if run_transaction_hook(self.hooks, "prepared", self.updates, zero):
            self.abort()
            raise HookAbortedError()

    def _prepare_locked(self, zero: bytes) -> None:
        store = self.store
        objects = store.objects
        affected = {u.shown for u in self.updates}
        affected_sorted = sorted(affected)
        head = store.stack.merged.read_ref(b"HEAD")
        head_target = head.target if head is not None and head.value_type == REF_SYMREF else None
        updates = self.updates
        i = 0
        while i < len(updates):
            u = updates[i]
            i += 1
            have_new = u.new_value is not None or u.new_target is not None
            if (u.new_value is not None and u.new_value != zero and not u.log_only):
                check_new_object(u, objects, self._types)
            if (head_target is not None and not u.log_only and not u.via_head
                    and u.refname == head_target):
                updates.append(head_log_update(u, affected))
                bisect.insort(affected_sorted, b"HEAD")
            rec = store.read_record(u.refname)      # the normal read path (up-to-date check)
            expects_existing = u.expects_existing(zero)
            if rec is None or rec.value_type == REF_DELETION:
                if not expects_existing:
                    self._verify_available(u.shown, affected, affected_sorted)
                    if u.new_target is not None or (u.new_value is not None
                                                     and u.new_value != zero):
                        u.current = zero
                        self.queued.append(u)
                    continue
                raise unresolvable(u)
            is_symref = u.is_symref = rec.value_type == REF_SYMREF
            if is_symref:
                resolved = store.resolve(u.refname)
                current = resolved.value if resolved is not None and resolved.value else zero
                old_target = u.old_target
                if not u.no_deref:
                    updates.append(deref_symref(u, rec.target, affected))
                    bisect.insort(affected_sorted, rec.target)
                if old_target is not None:          # checked on the symref even when split
                    check_old_target(u, rec.target, old_target)
                else:
                    check_old_value(u, current, zero)
            else:
                current = rec.value or zero
                check_old_regular(u, current, zero)
            u.current = current
            new_id = zero if u.new_value is None else u.new_value   # git's new_oid
            if is_symref or u.log_only or (have_new and current != new_id):
                self.queued.append(u)

    def commit(self) -> None:
        ensure_prepared(self)
        try:
            if self.queued:
                self._addition.add(self._write_table)
            self._addition.commit()
        except EntryTooBigError:        # git's reftable_error_str, as its backend words it
            raise TransactionError("reftable: transaction failure: entry too large") from None
        except NameConflictError:       # skip_name_check=off: the library's own D/F check
            raise TransactionError("reftable: transaction failure: file/directory conflict"
                                   ) from None
        except OSError:                 # a full disk, a read-only or failing file system
            raise TransactionError("reftable: transaction failure: general error") from None
        finally:
            if self._addition is not None:
                self._addition.close()
            self._addition = None
            self.state = "closed"
        if not self.initial:                  # git runs no "committed" hook for an initial one
            run_transaction_hook(self.hooks, "committed", self.updates, self.store.zero)

    def abort(self) -> None:
        """git's ref_transaction_abort: release, then the hook's "aborted"."""
        self.release()
        run_transaction_hook(self.hooks, "aborted", self.updates, self.store.zero)

    def release(self) -> None:
        """Drop the stack lock and close, no hook (git's cleanup when dying)."""
        if self._addition is not None:
            self._addition.close()
            self._addition = None
        self.state = "closed"

    # -- the table ----------------------------------------------------------------
    def _write_table(self, wr: Any) -> None:
        store = self.store
        zero = store.zero
        ts = self._addition.next_update_index
        name, email, when, tz = committer_ident(store.config)
        tz_hhmm = minutes_to_hhmm(tz)     # git stores the zone as the decimal number hhmm
        objects = store.objects
        max_msg = store.options.block_size // 2
        logs: list[LogRecord] = []
        refs: list[RefRecord] = []
        for u in sorted(self.queued, key=lambda x: x.shown):
            is_delete = u.new_target is None and u.new_value == zero
            if is_delete and not u.is_symref:       # a symref's deletion is logged instead
                for old in store.stack.merged.iter_logs(u.shown):
                    logs.append(LogRecord(u.shown, old.update_index, 0))
            elif u.new_value is not None or u.new_target is not None:
                new_id = u.new_value
                create_log = not u.skip_create_reflog   # git's REF_SKIP_CREATE_REFLOG: no log
                if create_log and u.new_target is not None:
                    resolved = store.resolve(u.new_target, as_target=True)
                    if resolved is None or not resolved.value:
                        create_log = False
                    else:
                        new_id = resolved.value
                if create_log and (u.force_reflog or store.should_write_log(u.shown)):
                    logs.append(LogRecord(u.shown, ts, 1, u.current or zero, new_id,
                                          name, email, when, tz_hhmm, u.msg[:max_msg]))
            if u.log_only:
                continue
            if u.new_target is not None:
                refs.append(RefRecord(u.shown, ts, 3, target=u.new_target))
            elif is_delete:
                refs.append(RefRecord(u.shown, ts, 0))
            elif u.new_value is not None:
                peeled = peeled_value(objects, u.new_value, self._types)
                if peeled is not None:
                    refs.append(RefRecord(u.shown, ts, 2, u.new_value, peeled))
                else:
                    refs.append(RefRecord(u.shown, ts, 1, u.new_value))
        if refs:                        # the writer's one loop (git: add_ref a record)
            wr.add_refs(refs)
        logs.sort(key=lambda r: (r.refname, -r.update_index))
        if logs:
            wr.add_logs(logs)
