"""What the commands that mimic git share: dying like git, opening the repository
the way git finds it, and a ref resolver for reftable_core.odb.revision.

Contract:
  Die(msg, status=128, prefix="fatal: ")   raised to end a command; run_git_command
      prints prefix + msg (prefix "usage": msg printed as is) and returns status.
  write_err(prefix, msg)   one stderr line, after flushing stdout (git's order).
  open_git_repo(gitdir, flags)   --git-dir, else $GIT_DIR, else discovery from the
      current directory; Die with git's "not a git repository" message otherwise.
  ref_resolver(refs)   name -> oid or None through a RefStore's resolve().
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from reftable_core.errors import ReftableError
from reftable_core.flags import Flags
from reftable_core.odb.revision import RefResolver
from reftable_core.refs.api import RefStore
from reftable_core.repo import Repo, open_repo


class Die(Exception):
    def __init__(self, msg: str, status: int = 128, prefix: str = "fatal: ") -> None:
        super().__init__(msg)
        self.msg = msg
        self.status = status
        self.prefix = prefix


_REPORT_MAX = 4095                   # git's vreportf: a 4096-byte buffer, NUL included
_CNTRL = bytes(c for c in range(32) if c not in (9, 10)) + b"\x7f"
_SANITIZE = bytes.maketrans(_CNTRL, b"?" * len(_CNTRL))


def write_err(prefix: str, msg: str) -> None:
    """prefix + msg + LF as git's vreportf writes it: cut to 4095 bytes, control
    characters other than TAB and LF shown as "?"."""
    sys.stdout.flush()
    line = f"{prefix}{msg}".encode("utf-8", "surrogateescape")[:_REPORT_MAX]
    line = line.translate(_SANITIZE) + b"\n"
    buf = getattr(sys.stderr, "buffer", None)
    if buf is None:
        sys.stderr.write(line.decode("utf-8", "replace"))
    else:
        sys.stderr.flush()
        buf.write(line)
        buf.flush()
    sys.stderr.flush()


def run_git_command(command: Callable[[list[str], Flags, Any], int], argv: list[str],
                    flags: Flags) -> int:
    """command(argv, flags, binary stdout) with git's exit on Die; stdout flushed last."""
    out = sys.stdout.buffer
    try:
        return command(argv, flags, out)
    except Die as d:
        out.flush()
        if d.prefix == "usage":
            sys.stderr.write(d.msg)
        else:
            write_err(d.prefix, d.msg)
        return d.status
    finally:
        try:
            out.flush()
        except BrokenPipeError:
            pass


def open_git_repo(gitdir: str | None, flags: Flags) -> Repo:
    if gitdir is None:
        gitdir = os.environ.get("GIT_DIR")
    try:
        if gitdir is not None:
            return open_repo(gitdir, flags)
        return open_repo(os.getcwd(), flags, discover=True)
    except ReftableError:
        if gitdir is not None:      # git names the path it was given
            raise Die(f"not a git repository: '{gitdir}'") from None
        raise Die("not a git repository (or any of the parent directories): .git") from None


def ref_resolver(refs: RefStore) -> RefResolver:
    """The RefResolver odb.revision takes: a ref's id with symrefs followed, or None."""
    def resolve(name: bytes) -> bytes | None:
        ref = refs.resolve(name)
        return ref.value if ref is not None and ref.value else None
    return resolve
