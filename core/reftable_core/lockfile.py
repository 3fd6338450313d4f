"""The one lock + write + rename helper (git's lockfile.c / tempfile.c).

Contract: LockFile(path, timeout_ms=0, perms=None) creates <path>.lock with
O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC and mode 0666 (the umask applies, as in git);
perms (core.sharedRepository's mode, when the caller has one) is then set with
chmod. When the lock exists it retries with git's jittered exponential backoff
until timeout_ms has passed (0: one attempt). Failure raises LockError with
git's unable_to_lock_message text: "Unable to create '<path>.lock': File
exists." plus git's advice, or the OS reason for any other error.
write() writes everything, fsync() flushes to disk, commit() closes the fd and
renames the lock over path, rollback() closes it and removes the lock (a no-op
once committed or rolled back). commit() leaves the lock in place when the
rename fails, so the caller can fix the target and retry, or roll back; used
as a context manager the lock is rolled back on exit unless committed.
write_locked(path, data) is the whole cycle: lock, write, optional fsync,
rename over path, the lock removed on any failure.
shared_perm(mode, shared) is git's calc_shared_perm: the mode a new file gets
under core.sharedRepository (shared as git_config_perm gives it: PERM_UMASK,
PERM_GROUP, PERM_EVERYBODY, or -0xxx for an explicit mode); umask_file_mode()
is 0666 & ~umask, what O_CREAT with 0666 creates.
fsync_fd(fd) is git's fsync_component_or_die path for every fsync the core
makes (LockFile.fsync, new reftable tables): skipped when $GIT_TEST_FSYNC is
false (as git's test suite sets it), otherwise os.fsync counted in
FSYNC_COUNTS["hardware-flush"] (git's trace2 fsync counter, reported by the lab
under GIT_TRACE2_EVENT).
"""
from __future__ import annotations

import os
import time

from .errors import LockError

LOCK_SUFFIX = ".lock"

FSYNC_COUNTS: dict[str, int] = {"writeout-only": 0, "hardware-flush": 0}
_FALSE = ("0", "false", "no", "off")


def fsync_fd(fd: int) -> None:
    """fsync fd unless $GIT_TEST_FSYNC is false; counted (see the module contract)."""
    if os.environ.get("GIT_TEST_FSYNC", "1").strip().lower() in _FALSE:
        return
    FSYNC_COUNTS["hardware-flush"] += 1
    os.fsync(fd)

EXISTS_ADVICE = (
    "Another git process seems to be running in this repository, e.g.\n"
    "an editor opened by 'git commit'. Please make sure all processes\n"
    "are terminated then try again. If it still fails, a git process\n"
    "may have crashed in this repository earlier:\n"
    "remove the file manually to continue.")

PERM_UMASK = 0
PERM_GROUP = 0o660
PERM_EVERYBODY = 0o664

_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC


def umask_file_mode() -> int:
    """0666 & ~umask (read the way git reads it: set and restore)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def shared_perm(mode: int, shared: int) -> int:
    """git's calc_shared_perm(mode) for core.sharedRepository = shared."""
    tweak = -shared if shared < 0 else shared
    if not mode & 0o200:
        tweak &= ~0o222
    if mode & 0o100:
        tweak |= (tweak & 0o444) >> 2
    if shared < 0:
        return (mode & ~0o777) | tweak
    return mode | tweak


def unable_to_lock_message(lock_path: str, err: OSError) -> str:
    """git's unable_to_lock_message for a lock file that could not be created."""
    if isinstance(err, FileExistsError):
        return f"Unable to create '{lock_path}': File exists.\n\n{EXISTS_ADVICE}"
    return f"Unable to create '{lock_path}': {err.strerror or err}"


def create_lock_fd(lock_path: str, timeout_ms: int = 0) -> int:
    """Create lock_path exclusively, retrying for timeout_ms; its open fd, or LockError."""
    import random           # here: only a contended lock waits (random backoff, as git's)
    deadline = time.monotonic() + max(timeout_ms, 0) / 1000.0
    delay_ms = 1.0
    rng: random.Random | None = None
    while True:
        try:
            return os.open(lock_path, _OPEN_FLAGS, 0o666)
        except FileExistsError as e:
            err = e
        except OSError as other:
            raise LockError(unable_to_lock_message(lock_path, other)) from None
        now = time.monotonic()
        if now >= deadline:
            raise LockError(unable_to_lock_message(lock_path, err)) from None
        if rng is None:
            rng = random.Random()
        wait = min(delay_ms * (0.75 + 0.5 * rng.random()), (deadline - now) * 1000.0)
        time.sleep(max(wait, 0.0) / 1000.0)
        delay_ms = min(delay_ms * 2, 1000.0)


def write_all(fd: int, data: bytes) -> None:
    """Write all of data to fd (os.write may write less than asked)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)         # bound first: compiled, view[os.write(...):] writes twice
        view = view[n:]


class LockFile:
    """<path>.lock, held until commit() (renamed over path) or rollback() (removed)."""

    __slots__ = ("fd", "lock_path", "path")

    def __init__(self, path: str, timeout_ms: int = 0, perms: int | None = None) -> None:
        self.path = path
        self.lock_path = path + LOCK_SUFFIX
        self.fd = create_lock_fd(self.lock_path, timeout_ms)
        if perms is not None:
            try:
                os.chmod(self.lock_path, perms)
            except BaseException:
                self.rollback()
                raise

    @property
    def is_locked(self) -> bool:
        """True until commit() or rollback() released the lock."""
        return self.fd != -2

    def write(self, data: bytes) -> None:
        """Append all of data to the lock file."""
        write_all(self.fd, data)

    def fsync(self) -> None:
        fsync_fd(self.fd)

    def close_fd(self) -> None:
        """Close the file but keep the lock (git's close_lock_file_gently)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def reopen(self) -> None:
        """Open the held lock file again for writing, truncated (git's reopen_lock_file)."""
        if self.fd == -1:
            self.fd = os.open(self.lock_path, os.O_WRONLY | os.O_TRUNC | os.O_CLOEXEC)

    def commit(self) -> None:
        """Close and rename the lock over path; on failure the lock stays held."""
        self.close_fd()
        os.replace(self.lock_path, self.path)
        self.fd = -2

    def rollback(self) -> None:
        """Close and remove the lock; nothing to do once released."""
        if self.fd == -2:
            return
        self.close_fd()
        self.fd = -2
        try:
            os.unlink(self.lock_path)
        except FileNotFoundError:
            pass

    def __enter__(self) -> LockFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.rollback()


def write_locked(path: str, data: bytes, fsync: bool = False, timeout_ms: int = 0,
                 perms: int | None = None) -> None:
    """Replace path with data through <path>.lock (removed again on any failure)."""
    with LockFile(path, timeout_ms, perms) as lk:
        lk.write(data)
        if fsync:
            lk.fsync()
        lk.commit()
