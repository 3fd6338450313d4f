"""reftable-core: git's ref and object storage layers in pure Python (stdlib only)."""
from .errors import (APIError, ConfigError, EntryTooBigError, FormatError, LockError,
                     NotExistError, OutdatedError, RefnameError, ReftableError,
                     TransactionError, TransactionLockError, ZlibError)
from .flags import Flags, baseline

__all__ = [
    "APIError", "ConfigError", "EntryTooBigError", "FormatError", "LockError",
    "NotExistError", "OutdatedError", "RefnameError", "ReftableError", "TransactionError",
    "TransactionLockError", "ZlibError", "Flags", "baseline",
]
__version__ = "0.1.0"
