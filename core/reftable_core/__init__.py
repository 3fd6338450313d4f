"""reftable-core: git's ref and object storage layers in pure Python (stdlib only)."""
from .errors import (APIError, EntryTooBigError, FormatError, LockError, NotExistError,
                     OutdatedError, RefnameError, ReftableError, ZlibError)
from .flags import Flags, baseline

__all__ = [
    "APIError", "EntryTooBigError", "FormatError", "LockError", "NotExistError",
    "OutdatedError", "RefnameError", "ReftableError", "ZlibError", "Flags", "baseline",
]
__version__ = "0.1.0"
