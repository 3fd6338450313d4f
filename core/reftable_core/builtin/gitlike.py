"""What the commands that mimic git share: dying like git, opening the repository
the way git finds it, and a ref resolver for reftable_core.odb.revision.

Contract:
  Die(msg, status=128, prefix="fatal: ")   raised to end a command; run_git_command
      prints prefix + msg (prefix "usage": msg printed as is) and returns status.
  write_err(prefix, msg)   one stderr line, after flushing stdout (git's order).
  report_die(d) -> d.status   prints a Die as run_git_command does.
  apply_global_options(argv) -> argv   git's options before the command name, as
      git applies them: -C DIR (chdir), -c name[=value] (appended to
      $GIT_CONFIG_PARAMETERS), --git-dir[=]DIR ($GIT_DIR), --work-tree[=]DIR
      ($GIT_WORK_TREE), --no-pager/-P; returns the rest. Die with git's text.
  open_git_repo(gitdir, flags)   --git-dir, else $GIT_DIR, else discovery from the
      current directory (bounded by $GIT_CEILING_DIRECTORIES); Die with git's "not
      a git repository" message otherwise. The config from the environment (git
      -c, reftable_core.config.env_config) overrides the repository's.
  ref_resolver(refs)   name -> oid or None through a RefStore's resolve().
  add_git_command(sub, name, helptext, command)   the subcommand `name`, whose
      arguments all reach command(argv, flags, out) (it parses them as git does,
      reftable_core.builtin.parseopt), run by run_git_command.
  write_trace2_counters()   under $GIT_TRACE2_EVENT, git's trace2 "counter"
      events for the fsyncs the command made (reftable_core.lockfile.FSYNC_COUNTS,
      the non-zero ones, category "fsync"), in git's JSON event format; only these
      events, none of git's others (version, start, exit...). The target as git
      takes it: an absolute file path (appended), an existing directory (a file
      named by the session id), 1 or "true" (stderr) or a file descriptor 2-9.
      run_git_command writes them when the command ends.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

from reftable_core.config import config_bool, env_config, parse_bool, push_config_parameter
from reftable_core.errors import BlockedRefError, ConfigError, ReftableError
from reftable_core.flags import Flags
from reftable_core.lockfile import FSYNC_COUNTS
from reftable_core.odb.revision import RefResolver
from reftable_core.refs.api import RefStore
from reftable_core.refs.packed_format import PackedRefsError
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


# The git dir as git names it (open_git_repo sets it): git's packed-refs store names its
# file after the git dir it set up, ".git" when it discovered a worktree's (it works
# from the top of the worktree), --git-dir / GIT_DIR as given; so a packed-refs error
# names .git/packed-refs where the lab knows /abs/path/.git/packed-refs. (A lock's
# message names the absolute path, as git's unable_to_lock_message does.)
_SHOWN_GITDIR: tuple[str, str] | None = None       # (the lab's git dir, git's name of it)


def shown_gitdir(given: str | None, gitdir: str, bare: bool) -> str:
    """The git dir as git names it: as given (--git-dir, GIT_DIR), ".git" for a discovered
    worktree's own, "." for a discovered bare repository; else the lab's path."""
    if given is not None:
        return given.rstrip("/") or "/"
    if os.path.realpath(gitdir) == os.path.realpath(os.getcwd()):
        return "."                  # discovered from inside the git dir
    if bare:
        return "."
    return ".git" if os.path.basename(gitdir) == ".git" else gitdir


def git_message(e: ReftableError) -> str:
    """e's text as git prints it: a packed-refs error, a directory blocking a ref name the
    file after the git dir as git names it (see _SHOWN_GITDIR)."""
    msg = str(e)
    if not isinstance(e, PackedRefsError | BlockedRefError):
        return msg
    return git_paths(msg)


def git_paths(msg: str) -> str:
    """msg with the paths in the git dir named as git names them (see _SHOWN_GITDIR)."""
    if _SHOWN_GITDIR is None:
        return msg
    lab, git = _SHOWN_GITDIR
    return msg.replace(lab + os.sep, git + os.sep)


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


def report_die(d: Die) -> int:
    """Print d as git would; its exit status."""
    if d.prefix == "usage":
        sys.stderr.write(d.msg)
    else:
        write_err(d.prefix, d.msg)
    return d.status


def add_git_command(sub: argparse._SubParsersAction, name: str, helptext: str,
                    command: Callable[[list[str], Flags, Any], int]) -> None:
    """Register `name`: argparse passes every argument through (no prefix character,
    no --help of its own), the command parses them as git does."""
    p = sub.add_parser(name, help=helptext, prefix_chars="\x01", add_help=False,
                       description=f"{helptext}; also takes --git-dir DIR, --flags SPEC, "
                                   "--baseline")
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=lambda args, flags: run_git_command(command, list(args.rest), flags))


def run_git_command(command: Callable[[list[str], Flags, Any], int], argv: list[str],
                    flags: Flags) -> int:
    """command(argv, flags, binary stdout) with git's exit on Die; stdout flushed last.
    A BrokenPipeError (stdout's reader gone) is raised to the caller: git dies of the
    SIGPIPE there (lab.cli's program does too)."""
    out = sys.stdout.buffer
    try:
        return command(argv, flags, out)
    except Die as d:
        out.flush()
        return report_die(d)
    except BrokenPipeError:
        raise
    except OSError as e:        # a full disk, an unreadable file: git's one line, never a trace
        out.flush()
        where = f"'{os.fsdecode(e.filename)}': " if e.filename is not None else ""
        return report_die(Die(f"{where}{e.strerror or e}"))
    finally:
        try:
            out.flush()
        finally:
            write_trace2_counters()


def _trace2_sid(now: float) -> str:
    """git's tr2_sid_compute: <UTC time>-H<hostname hash>-P<pid>."""
    import hashlib  # here: only a trace2 run needs these
    import socket
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z"
    host = hashlib.sha1(socket.gethostname().encode()).hexdigest()[:8]
    return f"{stamp}-H{host}-P{os.getpid():08x}"


def write_trace2_counters() -> None:
    """The fsync counter events under $GIT_TRACE2_EVENT (see the module contract)."""
    target = os.environ.get("GIT_TRACE2_EVENT", "")
    counts = [(name, n) for name, n in FSYNC_COUNTS.items() if n]
    if not target or target.lower() in ("0", "false") or not counts:
        return
    import json
    now = time.time()
    sid = _trace2_sid(now)
    when = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z"
    lines = "".join(json.dumps({
        "event": "counter", "sid": sid, "thread": "main", "time": when,
        "file": "trace2/tr2_tgt_event.c", "line": 675, "category": "fsync", "name": name,
        "count": n}, separators=(",", ":")) + "\n" for name, n in counts).encode()
    try:
        if target.lower() in ("1", "true"):
            fd = 2
        elif target.isdigit() and 2 <= int(target) <= 9:
            fd = int(target)
        elif os.path.isabs(target):
            path = os.path.join(target, sid) if os.path.isdir(target) else target
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            try:
                os.write(fd, lines)
            finally:
                os.close(fd)
            return
        else:
            return
        os.write(fd, lines)
    except OSError:
        pass


_DIR_OPTIONS = {"--git-dir": "GIT_DIR", "--work-tree": "GIT_WORK_TREE"}
_GIT_USAGE = (
    "usage: git [-v | --version] [-h | --help] [-C <path>] [-c <name>=<value>]\n"
    "           [--exec-path[=<path>]] [--html-path] [--man-path] [--info-path]\n"
    "           [-p | --paginate | -P | --no-pager] [--no-replace-objects] [--no-lazy-fetch]\n"
    "           [--no-optional-locks] [--no-advice] [--bare] [--git-dir=<path>]\n"
    "           [--work-tree=<path>] [--namespace=<name>] [--config-env=<name>=<envvar>]\n"
    "           <command> [<args>]\n")


def apply_global_options(argv: list[str]) -> list[str]:
    """Apply git's global options at the front of argv; return the rest."""
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-C", "-c") or a in _DIR_OPTIONS:
            if i + 1 >= len(argv):
                what = {"-C": "no directory given for '-C' option",
                        "-c": "-c expects a configuration string"}.get(
                            a, f"no directory given for '{a}' option")
                raise Die(f"{what}\n{_GIT_USAGE}", 129, "usage")
            value = argv[i + 1]
            i += 2
            if a == "-C":
                if value:
                    try:
                        os.chdir(value)
                    except OSError as e:
                        raise Die(f"cannot change to '{value}': {e.strerror}") from None
            elif a == "-c":
                key, eq, val = value.partition("=")
                push_config_parameter(os.environ, key, val if eq else None)
            else:
                os.environ[_DIR_OPTIONS[a]] = value
            continue
        opt, eq, value = a.partition("=")
        if eq and opt in _DIR_OPTIONS:
            os.environ[_DIR_OPTIONS[opt]] = value
        elif a == "--no-replace-objects":
            os.environ["GIT_NO_REPLACE_OBJECTS"] = "1"      # as git sets it
        elif a not in ("--no-pager", "-P"):
            break
        i += 1
    return argv[i:]


# object-name.c get_oid_basic's object_name_msg, after its warning (advice.objectNameWarning)
OBJECT_NAME_ADVICE = (
    "Git normally never creates a ref that ends with 40 hex characters\n"
    "because it will be ignored when you just specify 40-hex. These refs\n"
    "may be created by mistake. For example,\n"
    "\n"
    "  git switch -c $br $(git rev-parse ...)\n"
    "\n"
    "where \"$br\" is somehow empty and a 40-hex ref is created. Please\n"
    "examine these refs and maybe delete them. Turn this message off by\n"
    "running \"git config advice.objectNameWarning false\"")


def ambiguity_warning(config: Mapping[str, str]) -> Callable[[bytes], None] | None:
    """get_oid_basic's warning of an ambiguous name (odb.revision.Ambiguous), when
    core.warnAmbiguousRefs (default true) is on, else None; after a full hex id's, the
    advice unless advice.objectNameWarning is false or GIT_ADVICE is (advice_enabled)."""
    if not config_bool(config, "core.warnambiguousrefs", True):
        return None
    advise = (config_bool(config, "advice.objectnamewarning", True)
              and parse_bool(os.environ.get("GIT_ADVICE", "1")) is not False)

    def warn(name: bytes) -> None:
        write_err("warning: ", f"refname '{name.decode('utf-8', 'surrogateescape')}' is "
                               "ambiguous.")
        if advise and len(name) in (40, 64) and all(c in b"0123456789abcdefABCDEF"
                                                    for c in name):
            write_err("", OBJECT_NAME_ADVICE)
    return warn


def replace_refs_enabled(repo: Repo) -> bool:
    """git's replace_refs_enabled: no $GIT_NO_REPLACE_OBJECTS (--no-replace-objects) and
    core.useReplaceRefs true (the default)."""
    return ("GIT_NO_REPLACE_OBJECTS" not in os.environ
            and config_bool(repo.config, "core.usereplacerefs", True))


def open_git_repo(gitdir: str | None, flags: Flags) -> Repo:
    if gitdir is None:
        gitdir = os.environ.get("GIT_DIR")
    try:
        command_config = env_config(os.environ)
    except ConfigError as e:
        raise Die(str(e)) from None
    ceiling = [c for c in os.environ.get("GIT_CEILING_DIRECTORIES", "").split(":") if c]
    global _SHOWN_GITDIR
    try:
        if gitdir is not None:
            repo = open_repo(gitdir, flags, command_config=command_config)
        else:
            repo = open_repo(os.getcwd(), flags, discover=True, command_config=command_config,
                             ceiling=ceiling)
    except ReftableError:
        if gitdir is not None:      # git names the path it was given
            raise Die(f"not a git repository: '{gitdir}'") from None
        raise Die("not a git repository (or any of the parent directories): .git") from None
    if repo.gitdir == repo.commondir:       # a linked worktree's is named whole
        _SHOWN_GITDIR = (os.path.abspath(repo.gitdir).rstrip(os.sep),
                         shown_gitdir(gitdir, repo.gitdir, repo.is_bare))
    return repo


def ref_resolver(refs: RefStore) -> RefResolver:
    """The RefResolver odb.revision takes: a ref's id with symrefs followed, or None."""
    def resolve(name: bytes) -> bytes | None:
        ref = refs.resolve(name, allow_bad_name=False)
        return ref.value if ref is not None and ref.value else None
    return resolve
