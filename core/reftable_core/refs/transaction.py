"""What both backends' ref transactions share (git's refs.c transaction helpers).

Contract: QueuedUpdate is a RefUpdate as a transaction works on it. The checks
raise TransactionError with git's text:
  reject_duplicates(names, check)  "multiple updates for ref '%s' not allowed",
      walking the names in sorted order and calling check(name) on each first
      seen name (the files backend's refname check);
  AffectedNames(names)  git's affected_refnames: a set plus one sorted list,
      built once and kept sorted by add() (splits add HEAD / symref targets);
  verify_refname_available(refname, affected, exists, first_under) git's
      refs_verify_refname_available: for each leading directory of refname, a
      ref of that name (exists) or one in the transaction, then the first ref
      under refname/ (first_under, one seek) or in the transaction (one bisect);
      the message ("'A' exists; cannot create 'B'", "cannot process 'A' and 'B'
      at the same time") or None. O(depth * lookup + log n) per name; each read of
      the store counted in WORK.refname_store_checks; exists and first_under None:
      the store is not read (git's initial_transaction, e4929cdf79), the
      transaction's own names still are;
  head_log_update(u, affected)     the log-only HEAD update git adds when HEAD
      points at u's ref (via_referent_conflict, "multiple updates for 'HEAD' ...",
      when HEAD is updated too);
  deref_symref(u, target, affected) the update of the symref's target, u turned
      into a log-only update of the symref (via_symref_conflict, "multiple
      updates for '%s' (including one via symref '%s') ...");
  check_old_value(u, current, zero) old_value_mismatch's text when u.old_value is
      set and differs; check_old_target(u, referent) git's "verifying symref
      target: ..." when u.old_target is set and the symref points elsewhere;
      check_old_regular(u, current, zero) the checks on a regular ref ("expected
      symref with target ..." when u.old_target is set); unresolvable(u) the
      error for a missing ref that was expected to exist;
  check_new_object(u, objects, types) "trying to write ref ... with nonexistent
      object" / "... non-commit object ... to branch" (git's is_branch: HEAD or
      refs/heads/; object types cached in types).
The reference-transaction hook: hooks_dir(gitdir, config) where it lives
(core.hooksPath); run_transaction_hook(dir, state, updates, zero) runs it with
git's input lines (hook_line); a refusal in "prepared" is HookAbortedError
("ref updates aborted by hook").
Names in messages go through refname_text (never a decode error on hostile bytes).
New updates are built with type(u), so a backend's QueuedUpdate subclass carries over.
"""
from __future__ import annotations

import bisect
import os
import sys
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

from ..counters import WORK
from ..errors import ReftableError, TransactionError
from .api import RefUpdate


def refname_text(name: bytes) -> str:
    """A refname in a message: undecodable bytes kept as surrogates (os.fsdecode's
    rule), so a caller writing with surrogateescape gets git's bytes back."""
    return name.decode("utf-8", "surrogateescape")


U = TypeVar("U", bound="QueuedUpdate")


class QueuedUpdate:
    """A RefUpdate as a transaction works on it (git's ref_update after queueing):
    the symref it came through, whether it only writes a log, the value read at
    prepare time. Shared by both backends' transactions. The constructor takes the
    values and the modes most updates set; via_head, original (default: refname),
    shown (the ref's name in messages; default: refname) and old_target are set on the
    update made, where one is given."""
    __slots__ = ("current", "force_reflog", "is_symref", "log_only", "msg", "new_target",
                 "new_value", "no_deref", "old_target", "old_value", "original", "refname",
                 "shown", "skip_create_reflog", "skip_oid_verification", "via_head")

    def __init__(self, refname: bytes, new_value: bytes | None, old_value: bytes | None,
                 new_target: bytes | None, msg: bytes, no_deref: bool = False,
                 log_only: bool = False, force_reflog: bool = False) -> None:
        self.refname = refname
        self.new_value = new_value
        self.old_value = old_value
        self.new_target = new_target
        self.old_target: bytes | None = None
        self.msg = msg
        self.no_deref = no_deref
        self.log_only = log_only
        self.via_head = False
        self.force_reflog = force_reflog
        self.skip_create_reflog = False   # git's REF_SKIP_CREATE_REFLOG (refs migrate)
        self.skip_oid_verification = False  # git's REF_SKIP_OID_VERIFICATION (refs migrate)
        self.is_symref = False            # what prepare found (git's REF_ISSYMREF in type)
        self.current = b""
        self.original = refname
        self.shown = refname

    @classmethod
    def of(cls: type[U], update: RefUpdate, msg: bytes) -> U:
        """The queued form of a RefUpdate, its message already normalized."""
        flags = update.flags
        u = cls(update.refname, update.new_value, update.old_value, update.new_target,
                msg, no_deref="no-deref" in flags, log_only="log-only" in flags,
                force_reflog="create-reflog" in flags)
        u.via_head = "via-head" in flags
        u.shown = update.shown or update.refname
        u.original = update.original or u.shown
        u.old_target = update.old_target
        u.skip_create_reflog = "skip-create-reflog" in flags
        u.skip_oid_verification = "skip-oid-verification" in flags
        return u

    def expects_existing(self, zero: bytes) -> bool:
        """git's ref_update_expects_existing_old_ref: a non-null old id or an old target."""
        return self.old_target is not None or (self.old_value is not None
                                               and self.old_value != zero)


def old_value_mismatch(refname: bytes, current: bytes, expected: bytes, zero: bytes) -> str:
    """git's message when a queued update's old value does not match the ref."""
    name = refname_text(refname)
    if expected == zero:
        return f"cannot lock ref '{name}': reference already exists"
    if current == zero:
        return f"cannot lock ref '{name}': reference is missing but expected {expected.hex()}"
    return f"cannot lock ref '{name}': is at {current.hex()} but expected {expected.hex()}"


class AffectedNames:
    """The refnames a transaction touches: membership in a set, the names under a
    directory with one bisect on a list sorted once (git's sorted string_list)."""
    __slots__ = ("names", "ordered")

    def __init__(self, names: Iterable[bytes]) -> None:
        self.names = set(names)
        self.ordered = sorted(self.names)

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def add(self, name: bytes) -> None:
        if name not in self.names:
            self.names.add(name)
            bisect.insort(self.ordered, name)

    def first_under(self, prefix: bytes) -> bytes | None:
        """The smallest name starting with prefix, or None."""
        ordered = self.ordered
        j = bisect.bisect_left(ordered, prefix)
        if j < len(ordered) and ordered[j].startswith(prefix):
            return ordered[j]
        return None


NameSet = set[bytes] | AffectedNames


def verify_refname_available(refname: bytes, affected: AffectedNames,
                             exists: Callable[[bytes], bool] | None,
                             first_under: Callable[[bytes], bytes | None] | None
                             ) -> str | None:
    """git's refs_verify_refname_available: the D/F conflict's message, or None
    (exists and first_under None: an initial transaction's, the store not read)."""
    slash = refname.find(b"/")
    while slash >= 0:
        dirname = refname[:slash]
        if exists is not None:
            WORK.refname_store_checks += 1
            if exists(dirname):
                return f"'{refname_text(dirname)}' exists; cannot create '{refname_text(refname)}'"
        if dirname in affected:
            return (f"cannot process '{refname_text(refname)}' and '{refname_text(dirname)}' "
                    f"at the same time")
        slash = refname.find(b"/", slash + 1)
    sub = refname + b"/"
    if first_under is not None:
        WORK.refname_store_checks += 1
        name = first_under(sub)
        if name is not None:
            return f"'{refname_text(name)}' exists; cannot create '{refname_text(refname)}'"
    name = affected.first_under(sub)
    if name is not None:
        return (f"cannot process '{refname_text(refname)}' and '{refname_text(name)}' "
                f"at the same time")
    return None


def reject_duplicates(names: Iterable[bytes],
                      check: Callable[[bytes], None] | None = None) -> None:
    seen: set[bytes] = set()
    for n in sorted(names):
        if n in seen:
            raise TransactionError(f"multiple updates for ref '{refname_text(n)}' not allowed")
        seen.add(n)
        if check is not None:
            check(n)



def check_old_target(u: QueuedUpdate, referent: bytes,
                     expected: bytes | None = None) -> None:
    """git's ref_update_check_old_target for a symref pointing at referent
    (expected: u.old_target, or the one it had before deref_symref cleared it)."""
    want_b = u.old_target if expected is None else expected
    if want_b is None or referent == want_b:
        return
    name, want = refname_text(u.original), refname_text(want_b)
    if not referent:
        raise TransactionError(f"verifying symref target: '{name}': reference is missing "
                               f"but expected {want}")
    raise TransactionError(f"verifying symref target: '{name}': is at "
                           f"{refname_text(referent)} but expected {want}")


def check_old_regular(u: QueuedUpdate, current: bytes, zero: bytes) -> None:
    """The old-value checks on a regular ref: an old target cannot match, else
    check_old_value."""
    if u.old_target is not None:
        raise TransactionError(f"cannot lock ref '{refname_text(u.original)}': expected "
                               f"symref with target '{refname_text(u.old_target)}': "
                               "but is a regular ref")
    check_old_value(u, current, zero)


def via_referent_conflict(referent: bytes) -> TransactionError:
    """git's split_head_update refusal: HEAD is in the transaction already."""
    return TransactionError(f"multiple updates for 'HEAD' (including one via its referent "
                            f"'{refname_text(referent)}') are not allowed")


def via_symref_conflict(target: bytes, symref: bytes) -> TransactionError:
    """git's split_symref_update refusal: the symref's target is in the transaction already."""
    return TransactionError(f"multiple updates for '{refname_text(target)}' (including one "
                            f"via symref '{refname_text(symref)}') are not allowed")


def head_log_update(u: U, affected: NameSet) -> U:
    if b"HEAD" in affected:
        raise via_referent_conflict(u.refname)
    affected.add(b"HEAD")
    head = type(u)(b"HEAD", u.new_value, u.old_value, None, u.msg, no_deref=True,
                   log_only=True, force_reflog=u.force_reflog)
    head.skip_create_reflog = u.skip_create_reflog     # git: u->flags | REF_LOG_ONLY | ...
    return head


def deref_symref(u: U, target: bytes, affected: NameSet) -> U:
    if target in affected:
        raise via_symref_conflict(target, u.refname)
    affected.add(target)
    new = type(u)(target, u.new_value, u.old_value, u.new_target, u.msg,
                  force_reflog=u.force_reflog)
    new.via_head = u.refname == b"HEAD" or u.via_head
    new.original = u.original or target
    new.old_target = u.old_target
    u.log_only = True
    u.no_deref = True
    u.old_value = None              # git clears REF_HAVE_OLD (the hook shows no old value)
    u.old_target = None
    return new


def check_old_value(u: QueuedUpdate, current: bytes, zero: bytes) -> None:
    if u.old_value is not None and current != u.old_value:
        raise TransactionError(old_value_mismatch(u.original, current, u.old_value, zero))


def unresolvable(u: QueuedUpdate) -> TransactionError:
    return TransactionError(f"cannot lock ref '{refname_text(u.original)}': unable to "
                            f"resolve reference '{refname_text(u.shown)}'")


def object_type(objects: Any, oid: bytes, types: dict[bytes, str]) -> str:
    """The object's type name, cached in types; a ReftableError if it cannot be read."""
    typ = types.get(oid)
    if typ is None:
        typ = objects.read_header(oid)[0]
        types[oid] = typ
    return typ


def peeled_value(objects: Any, oid: bytes, types: dict[bytes, str]) -> bytes | None:
    """The id oid peels to when it names a tag (what packed-refs and reftable records
    store beside it), else None; None too without objects or when it cannot be read."""
    if objects is None:
        return None
    try:
        if object_type(objects, oid, types) == "tag":
            return objects.peel(oid)
    except ReftableError:
        pass
    return None


def check_new_object(u: QueuedUpdate, objects: Any, types: dict[bytes, str]) -> None:
    """git's checks on the object a ref is set to (nothing to check without objects)."""
    oid = u.new_value
    if objects is None or oid is None or u.skip_oid_verification:
        return
    try:
        typ = object_type(objects, oid, types)
    except ReftableError:
        raise TransactionError(f"trying to write ref '{refname_text(u.shown)}' with "
                               f"nonexistent object {oid.hex()}") from None
    # git's is_branch on the name as queued: worktrees/<w>/HEAD is none
    if typ != "commit" and (u.shown == b"HEAD" or u.shown.startswith(b"refs/heads/")):
        raise TransactionError(f"trying to write non-commit object {oid.hex()} "
                               f"to branch '{refname_text(u.shown)}'")


# -- the reference-transaction hook ------------------------------------------------

class HookAbortedError(TransactionError):
    """The reference-transaction hook refused a prepared transaction (git dies)."""

    def __init__(self) -> None:
        super().__init__("ref updates aborted by hook")


def fsync_references(config: Mapping[str, str]) -> bool:
    """core.fsync names the references (component "reference", or "all"): both
    backends then fsync what they write for refs, as git's fsync_component does."""
    value = config.get("core.fsync", "")
    return "reference" in value or "all" in value


def hooks_dir(gitdir: str, config: Mapping[str, str]) -> str:
    """Where git looks for hooks: core.hooksPath (~ expanded), else <gitdir>/hooks."""
    configured = config.get("core.hookspath")
    if configured:
        return os.path.expanduser(configured)
    return os.path.join(gitdir, "hooks")


def hook_line(u: QueuedUpdate, zero: bytes, name: bytes | None = None) -> bytes:
    """One line of the hook's input: "<old> <new> <refname>" (name: the refname to
    show, if not u's), a symref's side as "ref:<target>", the zero id for a side the
    update does not name."""
    if u.old_target is not None:
        old = b"ref:" + u.old_target
    else:
        old = (zero if u.old_value is None else u.old_value).hex().encode()
    if u.new_target is not None:
        new = b"ref:" + u.new_target
    else:
        new = (zero if u.new_value is None else u.new_value).hex().encode()
    return b"%s %s %s\n" % (old, new, u.refname if name is None else name)


def ensure_prepared(txn: Any) -> None:
    """git's ref_transaction_commit: an open transaction is prepared first; a commit in
    any state other than prepared is an error."""
    if txn.state == "open":
        txn.prepare()
    if txn.state != "prepared":
        raise TransactionError("transaction is not prepared")


def run_transaction_hook(directory: str | None, state: str, updates: Iterable[QueuedUpdate],
                         zero: bytes, names: Sequence[bytes] | None = None) -> int:
    """git's run_transaction_hook: <directory>/reference-transaction <state> when it
    is executable, one hook_line per update on its stdin (names: the refname each
    shows, if not its own; a hook that stops reading is no error), its stdout sent
    to stderr; the hook's exit status (0 without a hook, or directory None: the
    hook is run by the caller)."""
    if directory is None:
        return 0
    path = os.path.join(directory, "reference-transaction")
    if not os.access(path, os.X_OK):
        return 0
    import subprocess       # here: only a repository with the hook starts a process
    data = b"".join(hook_line(u, zero) for u in updates) if names is None else \
        b"".join(hook_line(u, zero, name) for u, name in zip(updates, names))
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    try:
        proc = subprocess.Popen([path, state], stdin=subprocess.PIPE, stdout=2)
    except OSError:
        return -1
    assert proc.stdin is not None
    try:
        proc.stdin.write(data)
    except BrokenPipeError:
        pass
    try:
        proc.stdin.close()
    except BrokenPipeError:
        pass
    return proc.wait()
