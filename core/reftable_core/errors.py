"""Error hierarchy for reftable_core.

Contract: every failure the core reports is a ReftableError subclass, each
defined here once (both ref backends raise the same TransactionError). A corrupt
or truncated file raises FormatError naming the file (or "<bytes>") and the byte
offset; decoding code never lets IndexError/struct.error/zlib.error escape.
"""
from __future__ import annotations


class ReftableError(Exception):
    """Root of all errors raised by reftable_core."""


class FormatError(ReftableError):
    """Input is not valid for its format (corrupt, truncated, unsupported)."""

    def __init__(self, msg: str, path: str | None = None, offset: int | None = None) -> None:
        self.msg = msg
        self.path = path
        self.offset = offset
        where = path if path is not None else "<bytes>"
        if offset is not None:
            where = f"{where} at offset {offset}"
        super().__init__(f"{where}: {msg}")


class ZlibError(FormatError):
    """A zlib stream (log block, pack object) failed to inflate."""


class NotExistError(ReftableError):
    """A file or object that should exist does not."""


class LockError(ReftableError):
    """A lock file is held by someone else (or could not be taken in time)."""


class APIError(ReftableError):
    """The caller misused the API (e.g. records added out of order)."""


class RefnameError(ReftableError):
    """A refname fails git's format or safety rules."""


class EntryTooBigError(ReftableError):
    """A record does not fit into a block of the configured size."""


class NameConflictError(ReftableError):
    """A new table's ref conflicts with a ref of the stack (a D/F conflict, git's
    REFTABLE_NAME_CONFLICT, or a malformed name, REFTABLE_REFNAME_ERROR), found by the
    library's own check of an addition (skip_name_check=off)."""


class OutdatedError(ReftableError):
    """The stack changed on disk since it was loaded (a concurrent writer)."""


class ConfigError(ReftableError):
    """A git config value is malformed (git dies with the same text)."""


class TransactionError(ReftableError):
    """A ref transaction failed; str(e) is git's error text. Raised by both backends."""


class BlockedRefError(TransactionError):
    """A non-empty directory is where a loose ref goes, or a non-directory (or a name
    too long) where its directories go (git's lock_raw_ref); str(e) names the path by
    the lab's path of the git dir, which a command shows as git names it
    (builtin.gitlike.git_message)."""


class TransactionLockError(TransactionError, LockError):
    """A transaction could not take a lock (<ref>.lock, packed-refs.lock)."""


class MigrationError(ReftableError):
    """`refs migrate` failed (git's repo_migrate_ref_storage_format); str(e) is git's text."""
