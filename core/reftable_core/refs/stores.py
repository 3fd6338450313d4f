"""open_store: a ref store of either format over a directory (a repository's own
store, or the new one of a migration); apart from migrate.py so that opening a
repository does not import what only a migration needs."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..flags import Flags
from .api import HASH_SIZES
from .files_backend import FilesRefStore
from .reftable_backend import ReftableRefStore

Store = FilesRefStore | ReftableRefStore


def open_store(gitdir: str, fmt: str, flags: Flags, object_format: str,
               config: dict[str, str], objects: Callable[[], Any] | None) -> Store:
    """A ref store of format fmt over gitdir (the new store of a migration)."""
    if fmt == "reftable":
        return ReftableRefStore(gitdir, flags, object_format, config, objects=objects)
    return FilesRefStore(gitdir, HASH_SIZES[object_format], flags, config, objects=objects)
