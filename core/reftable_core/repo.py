"""Open a git directory: config, ref storage format, object format, stores.

Contract: open_repo(path, flags) accepts a git dir, a worktree (its .git dir or
"gitdir: X" file) or, with discover=True, any directory inside a worktree, and
returns a Repo with .gitdir, .config, .ref_storage ('reftable' | 'files', from
extensions.refStorage, default files), .object_format ('sha1' | 'sha256', from
extensions.objectFormat), .hash_size, .refs (a RefStore, built lazily) and
.objects (an ObjectStore, built lazily; the ref store gets it for git's
checks when writing). The config is read by reftable_core.config, once;
command_config (git -c's, e.g. reftable_core.config.env_config(os.environ))
overrides it. Discovery walks up from path like git's, checking <dir>/.git
before <dir> itself, and never enters a directory in ceiling (git's
GIT_CEILING_DIRECTORIES: absolute paths) or one above it.
A linked worktree's git dir (one with a "commondir" file) opens with .gitdir
the worktree's and .commondir the main repository's (.commondir is .gitdir
elsewhere): the config and the objects come from the common dir, and .refs
routes names as git does (reftable_core.refs.worktree): the worktree's own refs
(HEAD, refs/bisect/, refs/worktree/, refs/rewritten/, pseudo-refs) to its own
store ($GIT_DIR/reftable, or loose refs and logs under $GIT_DIR), shared refs
to the common dir's, "main-worktree/<ref>" to the main worktree's and
"worktrees/<w>/<ref>" to worktree w's (<commondir>/worktrees/<w>), from any
worktree, the main one included.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from .config import config_bool, read_config
from .errors import NotExistError, ReftableError
from .flags import Flags
from .odb import ObjectStore, open_object_store
from .refs.api import HASH_SIZES, RefStore
from .refs.files_backend import FilesRefStore
from .refs.reftable_backend import ReftableRefStore
from .refs.stores import open_store
from .refs.transaction import hooks_dir
from .refs.worktree import WorktreeRefStore

# -- discovery -------------------------------------------------------------------

def _valid_head(path: str) -> bool:
    """git's validate_headref: HEAD is a symlink into refs/, "ref: refs/...", or
    an object id (so a HEAD pointing at "/etc/passwd" is no repository at all)."""
    head = os.path.join(path, "HEAD")
    try:
        if os.path.islink(head):
            return os.readlink(head).startswith("refs/")
        with open(head, "rb") as f:
            data = f.read(255)
    except OSError:
        return False
    if data.startswith(b"ref:"):
        if data[4:].lstrip(b" \t\n\r\v\f").startswith(b"refs/"):
            return True
    for hexsz in (40, 64):
        h = data[:hexsz]
        if len(h) == hexsz and all(c in b"0123456789abcdefABCDEF" for c in h):
            return True
    return False


def _is_gitdir(path: str) -> bool:
    if not _valid_head(path):
        return False
    if (os.path.isfile(os.path.join(path, "HEAD"))
            and os.path.isfile(os.path.join(path, "commondir"))):
        return True                 # a linked worktree's git dir
    return (os.path.isfile(os.path.join(path, "HEAD"))
            and os.path.isdir(os.path.join(path, "objects"))
            and (os.path.isdir(os.path.join(path, "refs"))
                 or os.path.isdir(os.path.join(path, "reftable"))))


def _dotgit(path: str) -> str | None:
    dot = os.path.join(path, ".git")
    if os.path.isdir(dot) and _is_gitdir(dot):
        return dot
    if os.path.isfile(dot):
        with open(dot, "r", encoding="utf-8", errors="surrogateescape") as f:
            line = f.readline().strip()
        if line.startswith("gitdir:"):
            target = line[len("gitdir:"):].strip()
            if not os.path.isabs(target):
                target = os.path.join(path, target)
            if _is_gitdir(target):
                return os.path.normpath(target)
    return None


def _within(path: str, ceiling: str) -> bool:
    """path is ceiling or a directory above it."""
    return ceiling == path or ceiling.startswith(path.rstrip(os.sep) + os.sep)


def find_gitdir(path: str | os.PathLike[str], discover: bool = False,
                ceiling: Sequence[str] = ()) -> str:
    """The git dir for path (a git dir, a worktree, or inside one with discover)."""
    p = os.path.abspath(os.fspath(path))
    ceilings = [os.path.realpath(c) for c in ceiling if os.path.isabs(c)]
    real = os.path.realpath(p)
    while True:
        d = _dotgit(p)
        if d is not None:
            return d
        if _is_gitdir(p):
            return p
        parent = os.path.dirname(p)
        real = os.path.dirname(real)
        if not discover or parent == p or any(_within(real, c) for c in ceilings):
            break
        p = parent
    raise NotExistError(f"not a git repository (or any of the parent directories): {os.fspath(path)}")


def common_dir(gitdir: str) -> str:
    """git's get_common_dir: the directory named by <gitdir>/commondir (relative
    to gitdir), or gitdir itself."""
    try:
        with open(os.path.join(gitdir, "commondir"), "r", encoding="utf-8",
                  errors="surrogateescape") as f:
            target = f.read().rstrip("\n")
    except (FileNotFoundError, NotADirectoryError):
        return gitdir
    if not os.path.isabs(target):
        target = os.path.join(gitdir, target)
    return os.path.normpath(target)


# -- the repository ----------------------------------------------------------

class Repo:
    """An opened git directory with lazily built ref and object stores."""

    def __init__(self, gitdir: str, flags: Flags | None = None,
                 command_config: Mapping[str, str] | None = None) -> None:
        self.gitdir = gitdir
        self.commondir = common_dir(gitdir)
        self.flags = flags or Flags()
        self.config = read_config(self.commondir)
        if command_config:
            self.config.update(command_config)
        self.ref_storage = self.config.get("extensions.refstorage", "files").lower()
        if self.ref_storage not in ("files", "reftable"):
            raise ReftableError(f"{gitdir}: unknown ref storage format {self.ref_storage!r}")
        self.object_format = self.config.get("extensions.objectformat", "sha1").lower()
        if self.object_format not in HASH_SIZES:
            raise ReftableError(f"{gitdir}: unknown object format {self.object_format!r}")
        self.hash_size = HASH_SIZES[self.object_format]
        self.is_bare = config_bool(self.config, "core.bare", False)
        self._refs: RefStore | None = None
        self._objects: ObjectStore | None = None

    def _open_store(self, gitdir: str) -> ReftableRefStore | FilesRefStore:
        """The ref store of one git dir (the common dir or a worktree's); hooks
        always come from the common dir, as git's do."""
        store = open_store(gitdir, self.ref_storage, self.flags, self.object_format,
                           self.config, self._object_store)
        store.hooks = hooks_dir(self.commondir, self.config)
        return store

    def _open_worktree_store(self, name: bytes) -> ReftableRefStore | FilesRefStore:
        return self._open_store(os.path.join(self.commondir, "worktrees",
                                             os.fsdecode(name)))

    @property
    def refs(self) -> RefStore:
        """The ref store: the common dir's alone in a repository without linked
        worktrees, else a WorktreeRefStore routing names as git does."""
        if self._refs is None:
            main = self._open_store(self.commondir)
            linked = self.commondir != self.gitdir
            if linked or os.path.isdir(os.path.join(self.commondir, "worktrees")):
                self._refs = WorktreeRefStore(
                    main, self._open_store(self.gitdir) if linked else None,
                    self._open_worktree_store)
            else:
                self._refs = main
        return self._refs

    @property
    def objects(self) -> ObjectStore:
        """The ObjectStore (opened on first use)."""
        if self._objects is None:
            self._objects = open_object_store(self.commondir, self.object_format, self.flags)
        return self._objects

    @property
    def objects_opened(self) -> bool:
        """Has the object store been asked for (an object looked up)?"""
        return self._objects is not None

    def _object_store(self) -> ObjectStore:
        return self.objects

    def close(self) -> None:
        for store in (self._refs, self._objects):
            close = getattr(store, "close", None)
            if close is not None:
                close()
        self._refs = None
        self._objects = None


def open_repo(path: str | os.PathLike[str], flags: Flags | None = None,
              discover: bool = False, command_config: Mapping[str, str] | None = None,
              ceiling: Sequence[str] = ()) -> Repo:
    """Open the repository at path (git dir or worktree; walk up with discover)."""
    return Repo(find_gitdir(path, discover, ceiling), flags, command_config)
