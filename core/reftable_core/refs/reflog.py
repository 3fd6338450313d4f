"""Reflogs: what both ref backends share about them (git's ident.c, refs.c, files-backend.c).

Contract:
  committer_ident(config, environ) -> (name, email, epoch seconds, tz minutes) as
      git_committer_info() gives them: GIT_COMMITTER_NAME / _EMAIL / _DATE, then
      user.name / user.email (and $EMAIL), then the login name and host;
      GIT_COMMITTER_DATE is read by date.parse_date (git's parse_date_basic).
  normalize_reflog_message(msg): git's copy_reflog_msg (whitespace squeezed).
  log_mode(config) -> "none" | "normal" | "always" from core.logAllRefUpdates
      (unset: "none" in a bare repository, else "normal"); should_autocreate_reflog
      (mode, refname) is git's rule for creating a reflog that does not exist yet.
  minutes_to_hhmm / hhmm_to_minutes: the zone as the int16 hhmm git keeps in a
      reftable log record, to and from minutes east of UTC.
  Reflog files (the files backend): logs/<name>, lines
      "<old> <new> <name> <<email>> <time> <tz>\\t<msg>\\n" (no tab when the
      message is empty). format_reflog_line / append_reflog / read_reflog
      (newest first, malformed lines skipped) / reflog_exists / delete_reflog.
"""
from __future__ import annotations

import binascii
import os
import time
from typing import Mapping

from ..config import config_bool
from ..errors import ReftableError
from .api import LogEntry
from .date import parse_date
from .loose import keep_dir, prune_empty_parents, prune_empty_tree

# -- committer identity (git's ident.c, the parts update-ref needs) --------------

def _local_tz_minutes() -> int:
    lt = time.localtime()
    return (lt.tm_gmtoff or 0) // 60


def committer_ident(config: Mapping[str, str],
                    environ: Mapping[str, str] | None = None) -> tuple[bytes, bytes, int, int]:
    """(name, email, time, tz minutes) as git_committer_info() would give them."""
    env = os.environ if environ is None else environ
    name = env.get("GIT_COMMITTER_NAME") or config.get("user.name")
    email = env.get("GIT_COMMITTER_EMAIL") or config.get("user.email") or env.get("EMAIL")
    if not name or not email:
        import getpass      # here: most commands take the identity from config or env
        import socket
    if not name:
        try:
            name = getpass.getuser()
        except (OSError, KeyError):
            name = "unknown"
    if not email:
        try:
            user = getpass.getuser()
        except (OSError, KeyError):
            user = "unknown"
        email = f"{user}@{socket.gethostname()}"
    date = env.get("GIT_COMMITTER_DATE")
    if date:
        ts, tz = parse_date(date)
    else:
        ts, tz = int(time.time()), _local_tz_minutes()
    return (name.encode("utf-8", "surrogateescape"), email.encode("utf-8", "surrogateescape"),
            ts, tz)


def minutes_to_hhmm(minutes: int) -> int:
    """-150 (minutes east of UTC) -> -230, the int16 git keeps in a reftable log."""
    sign = -1 if minutes < 0 else 1
    m = abs(minutes)
    return sign * ((m // 60) * 100 + m % 60)


def hhmm_to_minutes(hhmm: int) -> int:
    sign = -1 if hhmm < 0 else 1
    v = abs(hhmm)
    return sign * ((v // 100) * 60 + v % 100)


# -- messages and creation rules ---------------------------------------------------

def normalize_reflog_message(msg: bytes) -> bytes:
    """git's copy_reflog_msg: drop leading space, squeeze whitespace runs, rtrim."""
    if not msg:
        return b""
    out = bytearray()
    was_space = True
    for c in msg:
        sp = c in b" \t\n\r\v\f"
        if was_space and sp:
            continue
        was_space = sp
        out.append(0x20 if sp else c)
    while out and out[-1] == 0x20:
        out.pop()
    return bytes(out)


def log_mode(config: Mapping[str, str]) -> str:
    """git's log_all_ref_updates: "always", "normal" or "none"."""
    lau = config.get("core.logallrefupdates")
    if lau is None:
        return "none" if config_bool(config, "core.bare", False) else "normal"
    if lau.strip().lower() == "always":
        return "always"
    return "normal" if config_bool(config, "core.logallrefupdates", False) else "none"


def should_autocreate_reflog(mode: str, refname: bytes) -> bool:
    """git's should_autocreate_reflog for a log_mode() value."""
    if mode == "always":
        return True
    return mode == "normal" and (refname == b"HEAD" or refname.startswith(
        (b"refs/heads/", b"refs/remotes/", b"refs/notes/")))


# -- reflog files (the files backend) -----------------------------------------------

def reflog_path(gitdir: str, name: bytes) -> str:
    return os.path.join(gitdir, "logs", os.fsdecode(name))


def format_tz(tz_minutes: int) -> bytes:
    sign = b"-" if tz_minutes < 0 else b"+"
    m = abs(tz_minutes)
    return sign + b"%02d%02d" % (m // 60, m % 60)


def format_reflog_line(old: bytes, new: bytes, name: bytes, email: bytes, time: int,
                       tz_minutes: int, message: bytes) -> bytes:
    line = (binascii.hexlify(old) + b" " + binascii.hexlify(new) + b" " + name + b" <" + email
            + b"> " + b"%d " % time + format_tz(tz_minutes))
    if message:
        line += b"\t" + message
    return line + b"\n"


def append_reflog(gitdir: str, name: bytes, line: bytes, create: bool) -> bool:
    """Append line to logs/<name>; create the file only if create. True if written.
    git's log_ref_setup: without create a missing file (or a directory) means no log;
    otherwise errors are ReftableError with git's text."""
    path = reflog_path(gitdir, name)
    flags = os.O_WRONLY | os.O_APPEND
    if create:
        flags |= os.O_CREAT
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
        except OSError as e:
            raise ReftableError(f"unable to create directory for '{path}': "
                                f"{e.strerror}") from None
    try:
        try:
            fd = os.open(path, flags, 0o666)
        except (FileNotFoundError, IsADirectoryError):
            if not create:
                return False
            try:
                prune_empty_tree(path)            # an empty directory in the way goes
            except OSError:
                raise ReftableError(f"there are still logs under '{path}'") from None
            fd = os.open(path, flags, 0o666)
    except OSError as e:
        raise ReftableError(f"unable to append to '{path}': {e.strerror}") from None
    try:
        os.write(fd, line)
    except OSError as e:                          # a full disk: git's log_ref_write_fd
        raise ReftableError(f"unable to append to '{path}': {e.strerror}") from None
    finally:
        os.close(fd)
    return True


def reflog_exists(gitdir: str, name: bytes) -> bool:
    return os.path.isfile(reflog_path(gitdir, name))


def delete_reflog(gitdir: str, name: bytes) -> str | None:
    """Remove name's reflog and its empty parents; None, or git's unlink_or_warn text
    when the file was there to remove but could not be (a file or a directory in the
    way: ENOTDIR, EISDIR), the caller's warning."""
    path = reflog_path(gitdir, name)
    try:
        os.unlink(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"unable to unlink '{path}': {os.strerror(e.errno or 0)}"
    prune_empty_parents(os.path.dirname(path), keep_dir(os.path.join(gitdir, "logs"), name))
    return None


def parse_reflog_line(refname: bytes, line: bytes, hash_size: int, index: int) -> LogEntry | None:
    """One reflog line (without its LF) as a LogEntry; None if it is malformed (git skips those)."""
    hexsz = 2 * hash_size
    if len(line) < 2 * hexsz + 2 or line[hexsz] != 0x20 or line[2 * hexsz + 1] != 0x20:
        return None
    try:
        old = binascii.unhexlify(line[:hexsz])
        new = binascii.unhexlify(line[hexsz + 1:2 * hexsz + 1])
    except binascii.Error:
        return None
    rest = line[2 * hexsz + 2:]
    ident, tab, msg = rest.partition(b"\t")
    lt = ident.find(b"<")
    gt = ident.rfind(b">")
    if lt < 0 or gt < lt:
        return None
    name = ident[:lt].rstrip(b" ")
    email = ident[lt + 1:gt]
    tail = ident[gt + 1:].split()
    try:
        when = int(tail[0]) if tail else 0
        tzs = tail[1] if len(tail) > 1 else b"+0000"
        tzv = int(tzs)
    except ValueError:
        return None
    tz = (abs(tzv) // 100 * 60 + abs(tzv) % 100) * (-1 if tzs.startswith(b"-") else 1)
    return LogEntry(refname, index, old, new, name, email, when, tz, msg)


def read_reflog(gitdir: str, name: bytes, hash_size: int = 20) -> list[LogEntry]:
    """Entries of logs/<name>, newest first (update_index = line number, 1-based)."""
    try:
        with open(reflog_path(gitdir, name), "rb") as f:
            data = f.read()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return []
    out = []
    for i, line in enumerate(data.split(b"\n"), 1):
        if not line:
            continue
        e = parse_reflog_line(name, line, hash_size, i)
        if e is not None:
            out.append(e)
    out.reverse()
    return out


