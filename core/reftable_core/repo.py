"""Open a git directory: config, ref storage format, object format, stores.

Contract: open_repo(path, flags) accepts a git dir, a worktree (its .git dir or
"gitdir: X" file) or, with discover=True, any directory inside a worktree, and
returns a Repo with .gitdir, .config, .ref_storage ('reftable' | 'files', from
extensions.refStorage, default files), .object_format ('sha1' | 'sha256', from
extensions.objectFormat), .hash_size, .refs (a RefStore, built lazily) and
.objects (an ObjectStore, built lazily). parse_config() reads git's config
syntax well enough for these keys (sections, subsections, quotes, comments).
Linked worktrees are found but not opened (ReftableError): their per-worktree
refs are not modelled.
"""
from __future__ import annotations

import os
from typing import Any

from .errors import NotExistError, ReftableError
from .flags import Flags

HASH_SIZES = {"sha1": 20, "sha256": 32}


# -- config ---------------------------------------------------------------------

def _unquote_value(raw: str) -> str:
    out = []
    in_quote = False
    i = 0
    n = len(raw)
    while i < n:
        c = raw[i]
        if c == '"':
            in_quote = not in_quote
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(raw[i], raw[i]))
        elif c in "#;" and not in_quote:
            break
        else:
            out.append(c)
        i += 1
    return "".join(out).strip() if not in_quote else "".join(out)


def parse_config(text: str) -> dict[str, str]:
    """git config text -> {"section.key" or "section.sub.key": value} (last wins).

    Section and key names are lower-cased, subsection names kept; a key without
    "=" is a boolean true.
    """
    result: dict[str, str] = {}
    section = ""
    for line in text.splitlines():
        s = line.strip()
        if not s or s[0] in "#;":
            continue
        if s.startswith("["):
            end = s.find("]")
            if end < 0:
                continue
            head = s[1:end].strip()
            if '"' in head:
                name, _, sub = head.partition('"')
                section = name.strip().lower() + "." + sub.rsplit('"', 1)[0].replace('\\"', '"')
            else:
                parts = head.split(".", 1)
                section = parts[0].lower() + ("." + parts[1] if len(parts) > 1 else "")
            s = s[end + 1:].strip()
            if not s or s[0] in "#;":
                continue
        key, eq, raw = s.partition("=")
        key = key.strip().lower()
        value = _unquote_value(raw.strip()) if eq else "true"
        result[f"{section}.{key}" if section else key] = value
    return result


def config_bool(value: str | None, default: bool) -> bool:
    if value is None:
        return default
    v = value.strip().lower()
    if v in ("true", "yes", "on", "1", ""):
        return True
    if v in ("false", "no", "off", "0"):
        return False
    try:
        return int(v) != 0
    except ValueError:
        return default


def config_int(value: str | None, default: int) -> int:
    if value is None:
        return default
    v = value.strip().lower()
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(v[-1:], 1)
    if mult != 1:
        v = v[:-1]
    try:
        return int(v) * mult
    except ValueError:
        return default


# -- discovery -------------------------------------------------------------------

def _is_gitdir(path: str) -> bool:
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


def find_gitdir(path: str | os.PathLike[str], discover: bool = False) -> str:
    """The git dir for path (a git dir, a worktree, or inside one with discover)."""
    p = os.path.abspath(os.fspath(path))
    while True:
        if _is_gitdir(p):
            return p
        d = _dotgit(p)
        if d is not None:
            return d
        parent = os.path.dirname(p)
        if not discover or parent == p:
            break
        p = parent
    raise NotExistError(f"not a git repository (or any of the parent directories): {os.fspath(path)}")


# -- the repository ----------------------------------------------------------

class Repo:
    """An opened git directory with lazily built ref and object stores."""

    def __init__(self, gitdir: str, flags: Flags | None = None) -> None:
        if os.path.isfile(os.path.join(gitdir, "commondir")):
            raise ReftableError(f"{gitdir}: linked worktrees are not supported "
                                "(open the main repository)")
        self.gitdir = gitdir
        self.flags = flags or Flags()
        cfg_path = os.path.join(gitdir, "config")
        try:
            with open(cfg_path, "r", encoding="utf-8", errors="surrogateescape") as f:
                self.config = parse_config(f.read())
        except FileNotFoundError:
            self.config = {}
        self.ref_storage = self.config.get("extensions.refstorage", "files").lower()
        if self.ref_storage not in ("files", "reftable"):
            raise ReftableError(f"{gitdir}: unknown ref storage format {self.ref_storage!r}")
        self.object_format = self.config.get("extensions.objectformat", "sha1").lower()
        if self.object_format not in HASH_SIZES:
            raise ReftableError(f"{gitdir}: unknown object format {self.object_format!r}")
        self.hash_size = HASH_SIZES[self.object_format]
        self.is_bare = config_bool(self.config.get("core.bare"), False)
        self._refs: Any = None
        self._objects: Any = None

    @property
    def refs(self) -> Any:
        if self._refs is None:
            if self.ref_storage == "reftable":
                from .refs.reftable_backend import ReftableRefStore
                self._refs = ReftableRefStore(self.gitdir, self.flags, self.object_format,
                                              self.config, objects=lambda: self.objects)
            else:
                from .refs.files_backend import FilesRefStore
                self._refs = FilesRefStore(self.gitdir, self.hash_size, self.flags)
        return self._refs

    @property
    def objects(self) -> Any:
        """The ObjectStore, or None when the odb layer is not available."""
        if self._objects is None:
            try:
                from .odb import open_object_store
            except ImportError:
                return None
            self._objects = open_object_store(self.gitdir, self.object_format, self.flags)
        return self._objects

    def close(self) -> None:
        for store in (self._refs, self._objects):
            close = getattr(store, "close", None)
            if close is not None:
                close()
        self._refs = None
        self._objects = None


def open_repo(path: str | os.PathLike[str], flags: Flags | None = None,
              discover: bool = False) -> Repo:
    """Open the repository at path (git dir or worktree; walk up with discover)."""
    return Repo(find_gitdir(path, discover), flags)
