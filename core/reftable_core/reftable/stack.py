"""The reftable stack: $GIT_DIR/reftable with tables.list (git's reftable/stack.c).

Contract: Stack(reftable_dir, flags, options, create=True, missing_ok=False,
on_reload=None) loads the tables named in tables.list (oldest first) into a
MergedTable (.merged); on_reload() is called each time .merged is replaced (a
reload, close(): git's reftable_stack_options.on_reload). A missing directory is created (create), read as an empty stack
without creating anything (missing_ok: git's read path; writing then fails at
the lock), else NotExistError. tables.list must be a regular file of at most
MAX_LIST_SIZE bytes whose lines are plain table file names (git's
0x..-0x..-....ref, or any single file name ending in .ref as other writers
use; never a path, ".", "..", or a name with "/" or NUL): anything else is a
FormatError naming tables.list and the entry, and nothing is opened, locked or
deleted for it. Tables are opened through blocksource (regular files only). reload() re-reads the
list when it changed; a table that vanished under a concurrent compaction makes
the load retry until a deadline (3 s, as git). The up-to-date check is picked by
flags.stat_cache: off = read tables.list and compare names on every check (git
before 004 3/4); on = compare (dev, ino, size, mtime_ns, ctime_ns) of
tables.list with the values cached at load time (the fd stays open so the inode
cannot be recycled) and re-read only when they differ.

Writing: new_addition() takes tables.list.lock (lockfile.LockFile, retried until
options.lock_timeout_ms, else LockError naming the lock file), checks the stack
is up to date (else OutdatedError, or reloads when asked), writes each table to a
temp file in the directory through a writer.TableWriter built with the stack's flags
(writer_scratch, block_writer_scratch) (with flags.skip_name_check off, opens it again and checks
its refs against the stack: namecheck.check_addition, NameConflictError), renames it to git's name
0x<min:012x>-0x<max:012x>-<random:08x>.ref, then commit() writes the new list into
the lock file, fsyncs when options.fsync, and renames it over tables.list.
New tables are created with mode 0666 (the umask applies, as for git's lock
files) and, like tables.list.lock, chmod-ed to options.default_permissions when
set (git's core.sharedRepository mode, lockfile.shared_perm).
After a commit the stack auto-compacts with git's geometric rule (factor 2,
compact.py); compact_range() locks the tables, merges them (compact.merge_tables)
and swaps them for the new table in tables.list; compact_all() merges
everything; clean() removes tables not in the list.
Table files are read through open fds / mmaps, so a reader keeps working when a
concurrent compaction deletes the files it has open.
"""
from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

from ..counters import WORK
from ..errors import (APIError, FormatError, LockError, NotExistError, OutdatedError,
                      ReftableError)
from ..flags import Flags
from ..lockfile import LOCK_SUFFIX, LockFile, fsync_fd
from .blocksource import open_file_source
from .compact import (DEFAULT_GEOMETRIC_FACTOR, compaction_sizes, merge_tables,
                      suggest_compaction_segment)
from .merged import MergedTable
from .namecheck import check_addition
from .table import TableReader

TABLES_LIST = "tables.list"
TEMP_MARK = ".temp."
TABLE_SUFFIX = ".ref"
MAX_LIST_SIZE = 64 << 20     # ~1.5M table names; git's stacks stay far below
_TEMP_OPEN = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC


@dataclass(frozen=True)
class StackOptions:
    hash_id: str | None = "sha1"        # None: take it from the tables (read-only use)
    block_size: int = 4096
    restart_interval: int = 16
    index_objects: bool = True
    auto_compact: bool = True
    compaction_factor: int = DEFAULT_GEOMETRIC_FACTOR
    lock_timeout_ms: int = 100          # git's reftable.lockTimeout default
    fsync: bool = False
    reload_deadline_s: float = 3.0
    default_permissions: int | None = None


def format_name(min_update_index: int, max_update_index: int, rnd: int | None = None) -> str:
    """git's table base name (without .ref): 0x%012x-0x%012x-%08x."""
    if rnd is None:
        rnd = int.from_bytes(os.urandom(4), "big")
    return "0x%012x-0x%012x-%08x" % (min_update_index, max_update_index, rnd)


def is_table_name(name: str) -> bool:
    """A plain file name of a table inside the stack directory (see the contract)."""
    return (name.endswith(TABLE_SUFFIX) and "/" not in name and "\0" not in name
            and name not in (".", ".."))


def _list_file_problem(fd: int, path: str) -> FormatError | None:
    """Why fd cannot be read as a tables.list (fstat, on the rare paths only): not a
    regular file, or larger than MAX_LIST_SIZE; None when it is neither."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        return FormatError("not a regular file (a table list must be one)", path)
    if st.st_size > MAX_LIST_SIZE:
        return FormatError(f"{st.st_size} bytes, more than the {MAX_LIST_SIZE} a table "
                           "list may have", path)
    return None


def _read_names_fd(fd: int, path: str) -> list[str]:
    """tables.list's names, read as git's read_lines reads it: its size by
    lseek(SEEK_END), back to 0, one read of that size (five system calls with the
    open and the close). An lseek that fails (a FIFO), a size of 0 (an empty file, or
    a device) or past MAX_LIST_SIZE, and a read that fails (a directory) are looked
    at with fstat: anything but a regular file of at most MAX_LIST_SIZE bytes is a
    FormatError naming tables.list."""
    WORK.tables_list_reads += 1
    try:
        size = os.lseek(fd, 0, os.SEEK_END)
    except OSError as e:
        raise (_list_file_problem(fd, path) or
               ReftableError(f"{path}: cannot read table list: {e.strerror or e}")) from None
    if size <= 0 or size > MAX_LIST_SIZE:
        problem = _list_file_problem(fd, path)
        if problem is not None:
            raise problem
        if size <= 0:
            return []                               # an empty regular file
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    got = 0
    try:
        while got < size:
            b = os.read(fd, size - got)
            if not b:
                break                               # shrank since the lseek: what is there
            chunks.append(b)
            got += len(b)
    except OSError as e:
        raise (_list_file_problem(fd, path) or
               ReftableError(f"{path}: cannot read table list: {e.strerror or e}")) from None
    return _parse_names(b"".join(chunks), path)


def _parse_names(data: bytes, path: str) -> list[str]:
    names = [line.decode("utf-8", "surrogateescape") for line in data.split(b"\n") if line]
    for name in names:
        if not is_table_name(name):
            raise FormatError(f"bad entry {name!r}: not a table file name in the stack "
                              "directory", path)
    return names


def _open_list(path: str) -> int:
    """tables.list opened read-only (O_NONBLOCK: a FIFO in its place cannot block the
    open); NotExistError when there is none. Not fstat-ed: _read_names_fd checks."""
    try:
        return os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        raise NotExistError(f"{path}: no such table list") from None
    except OSError as e:
        raise ReftableError(f"{path}: cannot open table list: {e.strerror or e}") from None


def read_names(path: str) -> list[str]:
    """The table names in a tables.list file ([] when it does not exist)."""
    try:
        fd = _open_list(path)
    except NotExistError:
        return []
    try:
        return _read_names_fd(fd, path)
    finally:
        os.close(fd)


def _stat_key(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


# -- tables ---------------------------------------------------------------------

class _Table:
    """One open table of the stack: its name, reader and size for compaction."""

    __slots__ = ("file_size", "name", "reader")

    def __init__(self, name: str, reader: Any, file_size: int) -> None:
        self.name = name
        self.reader = reader
        self.file_size = file_size

    def close(self) -> None:
        close = getattr(self.reader, "close", None)
        if close is not None:
            close()


def open_table(path: str, name: str, flags: Flags) -> tuple[Any, int]:
    """Open one table file: (TableReader, file size). NotExistError when missing."""
    source = open_file_source(path, flags)
    WORK.tables_opened += 1
    try:
        reader = TableReader(source, flags, name)
    except BaseException:
        source.close()
        raise
    return reader, source.size()


class Stack:
    """A reftable stack directory: tables.list plus the tables it names."""

    def __init__(self, reftable_dir: str | os.PathLike[str], flags: Flags | None = None,
                 options: StackOptions | None = None, create: bool = True,
                 missing_ok: bool = False,
                 on_reload: Callable[[], None] | None = None) -> None:
        self.dir = os.fspath(reftable_dir)
        self.on_reload = on_reload
        self.flags = flags or Flags()
        self.opts = options or StackOptions()
        self.list_file = os.path.join(self.dir, TABLES_LIST)
        self.lock_file = self.list_file + LOCK_SUFFIX
        self.tables: list[_Table] = []
        self.merged = MergedTable([], self.flags, hash_id=self.opts.hash_id)
        self._list_fd = -1
        self._list_stat: tuple[int, int, int, int, int] | None = None
        self._is_uptodate: Callable[[], bool] = (
            self._uptodate_stat if self.flags.stat_cache else self._uptodate_names)
        # skip_name_check=off: the library checks each added table (namecheck.py)
        self._check_addition: Callable[[str], None] | None = (
            None if self.flags.skip_name_check else self._check_new_table)
        self.stats = {"reloads": 0, "list_reads": 0, "compactions": 0, "compaction_failures": 0}
        if not os.path.isdir(self.dir):
            if create:
                os.makedirs(self.dir, exist_ok=True)
            elif not missing_ok:
                raise NotExistError(f"{self.dir}: no such reftable stack directory")
        self.reload_maybe_reuse(reuse=True)

    # -- reading ---------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tables]

    @property
    def readers(self) -> list[Any]:
        return [t.reader for t in self.tables]

    def next_update_index(self) -> int:
        if self.tables:
            return self.tables[-1].reader.max_update_index + 1
        return 1

    def table_path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def _reload_once(self, names: list[str], reuse: bool) -> None:
        cur = {t.name: t for t in self.tables} if reuse else {}
        new: list[_Table] = []
        opened: list[_Table] = []
        try:
            for name in names:
                t = cur.pop(name, None)
                if t is None:
                    reader, size = open_table(self.table_path(name), name, self.flags)
                    t = _Table(name, reader, size)
                    opened.append(t)
                new.append(t)
            merged = MergedTable([t.reader for t in new], self.flags, hash_id=self.opts.hash_id)
        except BaseException:
            for t in opened:
                t.close()
            raise
        old = self.tables
        kept = {id(t) for t in new}
        self.tables = new
        self.merged = merged
        if self.on_reload is not None:
            self.on_reload()
        for t in old:
            if id(t) not in kept:
                t.close()

    def reload_maybe_reuse(self, reuse: bool = True) -> None:
        """Load tables.list, retrying while a listed table vanishes under us."""
        self.stats["reloads"] += 1
        deadline = time.monotonic() + self.opts.reload_deadline_s
        tries = 0
        delay_ms = 0.0
        rng: Any = None                 # random.Random, made on the first retry
        if self._list_fd >= 0:
            os.close(self._list_fd)
            self._list_fd = -1
            self._list_stat = None
        while True:
            tries += 1
            if tries > 3 and time.monotonic() >= deadline:
                raise NotExistError(f"{self.dir}: tables kept vanishing while reloading the stack")
            fd = -1
            try:
                fd = _open_list(self.list_file)
            except NotExistError:
                names: list[str] = []
            else:
                try:
                    names = _read_names_fd(fd, self.list_file)
                except BaseException:
                    os.close(fd)
                    raise
            self.stats["list_reads"] += 1
            try:
                self._reload_once(names, reuse)
            except NotExistError:
                if fd >= 0:
                    os.close(fd)
                after = read_names(self.list_file)
                if after == names:
                    raise
                if rng is None:
                    import random       # here: only a retry waits (git's randomized backoff)
                    rng = random.Random()
                delay_ms = delay_ms + delay_ms * rng.random() + 1
                time.sleep(delay_ms / 1000.0)
                continue
            except BaseException:
                if fd >= 0:
                    os.close(fd)
                raise
            break
        if fd >= 0:
            if self.flags.stat_cache:
                self._list_stat = _stat_key(os.fstat(fd))
                self._list_fd = fd
            else:
                os.close(fd)

    def _uptodate_names(self) -> bool:
        """git before 004 3/4: read tables.list and compare the names."""
        self.stats["list_reads"] += 1
        names = read_names(self.list_file)
        tables = self.tables
        if len(names) != len(tables):
            return False
        for t, n in zip(tables, names):
            if t.name != n:
                return False
        return True

    def _uptodate_stat(self) -> bool:
        """git after 004 3/4: compare stat info of tables.list, read it only on change."""
        if self._list_fd >= 0:
            WORK.tables_list_stats += 1
            try:
                st = os.stat(self.list_file)
            except FileNotFoundError:
                return not self.tables
            if _stat_key(st) == self._list_stat:
                return True
        return self._uptodate_names()

    def is_up_to_date(self) -> bool:
        return self._is_uptodate()

    def reload(self) -> bool:
        """Reload when tables.list changed; True when it did."""
        if self._is_uptodate():
            return False
        self.reload_maybe_reuse(reuse=True)
        return True

    def read_ref(self, name: bytes) -> Any | None:
        return self.merged.read_ref(name)

    def close(self) -> None:
        for t in self.tables:
            t.close()
        self.tables = []
        self.merged = MergedTable([], self.flags, hash_id=self.opts.hash_id)
        if self.on_reload is not None:
            self.on_reload()
        if self._list_fd >= 0:
            os.close(self._list_fd)
            self._list_fd = -1

    def __enter__(self) -> Stack:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------
    def new_addition(self, reload: bool = False) -> Addition:
        """Lock the stack for adding tables (reload when outdated if reload=True)."""
        return Addition(self, reload)

    def add(self, write: Callable[[Any], None]) -> None:
        """Add one table written by write(writer) in its own addition."""
        try:
            add = Addition(self, reload=False)
        except OutdatedError:
            try:
                self.reload()      # as git: the caller may retry on a fresh stack
            except ReftableError:
                pass
            raise
        try:
            add.add(write)
            add.commit()
        finally:
            add.close()

    def _new_writer(self, out: BinaryIO, min_ui: int, max_ui: int) -> Any:
        if self.opts.hash_id is None:
            raise APIError("a stack opened without a hash id is read-only")
        from .writer import TableWriter, WriterOptions  # here: a reading command writes none
        return TableWriter(out, WriterOptions(
            block_size=self.opts.block_size, restart_interval=self.opts.restart_interval,
            index_objects=self.opts.index_objects, hash_id=self.opts.hash_id,
            min_update_index=min_ui, max_update_index=max_ui), flags=self.flags)

    def _create_temp(self, base: str) -> tuple[int, str]:
        """A new <base>.temp.<random> in the stack dir, mode 0666 less the umask."""
        prefix = os.path.join(self.dir, base + TEMP_MARK)
        while True:
            tmp = prefix + os.urandom(4).hex()
            try:
                return os.open(tmp, _TEMP_OPEN, 0o666), tmp
            except FileExistsError:
                continue

    def write_temp_table(self, write: Callable[[Any], None], min_ui: int,
                         max_ui: int) -> str | None:
        """Write a table to a temp file in the stack dir; its path, or None if empty."""
        fd, tmp = self._create_temp(format_name(min_ui, max_ui))
        try:
            if self.opts.default_permissions is not None:
                os.chmod(tmp, self.opts.default_permissions)
            with os.fdopen(fd, "wb") as f:
                fd = -1
                wr = self._new_writer(f, min_ui, max_ui)
                write(wr)
                st = wr.close()
                if st.ref.entries + st.log.entries + st.obj.entries == 0:
                    os.unlink(tmp)
                    return None
                if self.opts.fsync:
                    f.flush()
                    fsync_fd(f.fileno())
        except BaseException:
            if fd >= 0:
                os.close(fd)
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
        return tmp

    def _check_new_table(self, path: str) -> None:
        """git's stack_check_addition: the new table at path (still a temp file)
        opened and its refs checked against the stack (NameConflictError)."""
        reader, _ = open_table(path, os.path.basename(path), self.flags)
        try:
            check_addition(self.merged, reader)
        finally:
            reader.close()

    def lock_list(self) -> LockFile:
        """Take tables.list.lock (retried for opts.lock_timeout_ms; LockError)."""
        return LockFile(self.list_file, self.opts.lock_timeout_ms, self.opts.default_permissions)

    def write_list(self, lock: LockFile, names: list[str]) -> None:
        """Write names into the held tables.list.lock and rename it over tables.list."""
        lock.write("".join(n + "\n" for n in names).encode("utf-8", "surrogateescape"))
        if self.opts.fsync:
            lock.fsync()
        lock.commit()

    # -- compaction -----------------------------------------------------------
    def table_sizes_for_compaction(self) -> list[int]:
        return compaction_sizes([t.file_size for t in self.tables], self.opts.hash_id)

    def auto_compact(self) -> bool:
        """Compact the segment git's geometric rule suggests; True if it compacted."""
        seg = suggest_compaction_segment(self.table_sizes_for_compaction(),
                                         self.opts.compaction_factor)
        if len(seg) > 0:
            return self.compact_range(seg.start, seg.end - 1, best_effort=True)
        return False

    def compact_all(self) -> bool:
        last = len(self.tables) - 1 if self.tables else 0
        return self.compact_range(0, last)

    def compact_range(self, first: int, last: int, best_effort: bool = False) -> bool:
        """Merge tables[first..last] into one table (git's stack_compact_range)."""
        if first >= last:
            return False
        self.stats["compactions"] += 1
        list_lock = self.lock_list()
        table_locks: list[LockFile] = []
        new_tmp: str | None = None
        try:
            if not self._is_uptodate():
                raise OutdatedError(f"{self.list_file} changed before compaction")
            # lock tables from last to first; with best_effort keep what we got
            for i in range(last, first - 1, -1):
                try:
                    lock = LockFile(self.table_path(self.tables[i].name))
                except LockError:
                    if best_effort and last - i >= 2:
                        first = i + 1
                        break
                    raise
                lock.close_fd()
                table_locks.append(lock)
            list_lock.rollback()

            sub = self.tables[first:last + 1]
            new_tmp = self.write_temp_table(
                merge_tables([t.reader for t in sub], self.flags, self.opts.hash_id,
                             keep_deletions=first != 0),
                sub[0].reader.min_update_index, sub[-1].reader.max_update_index)

            list_lock = self.lock_list()
            names = self.names
            first_to_replace, last_to_replace = first, last
            if not self._uptodate_names():
                names = read_names(self.list_file)
                want = [t.name for t in sub]
                try:
                    off = names.index(want[0])
                except ValueError:
                    raise OutdatedError("compacted tables vanished from tables.list") from None
                if names[off:off + len(want)] != want:
                    raise OutdatedError("compacted tables changed in tables.list")
                first_to_replace, last_to_replace = off, off + len(want) - 1
            new_names = names[:first_to_replace]
            new_path = None
            if new_tmp is not None:
                new_name = format_name(sub[0].reader.min_update_index,
                                       sub[-1].reader.max_update_index) + ".ref"
                new_path = self.table_path(new_name)
                os.rename(new_tmp, new_path)
                new_tmp = None
                new_names.append(new_name)
            new_names.extend(names[last_to_replace + 1:])
            try:
                self.write_list(list_lock, new_names)
            except BaseException:
                if new_path is not None:
                    os.unlink(new_path)
                raise
            self.reload_maybe_reuse(reuse=True)
            for lock in table_locks:
                try:
                    os.unlink(lock.path)
                except FileNotFoundError:
                    pass
            return True
        except LockError:
            self.stats["compaction_failures"] += 1
            raise
        finally:
            list_lock.rollback()
            for lock in table_locks:
                lock.rollback()
            if new_tmp is not None:
                try:
                    os.unlink(new_tmp)
                except FileNotFoundError:
                    pass

    # -- cleaning -------------------------------------------------------------
    def clean(self, stale_temp_age_s: float = 3600.0, stale_lock_age_s: float | None = None,
              all_unlisted: bool = False) -> list[str]:
        """Remove tables not in tables.list (and stale temp files); the removed names.

        Takes tables.list.lock like git and, like git, removes only unlisted
        tables whose max update index is <= the stack's (all_unlisted: any
        unlisted table). stale_lock_age_s: first break a tables.list.lock older
        than that many seconds; that lock was left by a killed writer, whose
        table is newer than the stack, so all unlisted tables go then.
        """
        if stale_lock_age_s is not None:
            try:
                st = os.stat(self.lock_file)
                if time.time() - st.st_mtime >= stale_lock_age_s:
                    os.unlink(self.lock_file)
                    all_unlisted = True
            except FileNotFoundError:
                pass
        add = Addition(self, reload=True)
        removed: list[str] = []
        try:
            self.reload()
            live = set(self.names)
            max_ui = self.merged.max_update_index
            now = time.time()
            for entry in os.scandir(self.dir):
                name = entry.name
                if TEMP_MARK in name:
                    try:
                        if now - entry.stat().st_mtime >= stale_temp_age_s:
                            os.unlink(entry.path)
                            removed.append(name)
                    except FileNotFoundError:
                        pass
                    continue
                if not is_table_name(name) or name in live:
                    continue
                try:
                    reader, _ = open_table(entry.path, name, self.flags)
                except ReftableError:
                    continue
                try:
                    stale = all_unlisted or reader.max_update_index <= max_ui
                finally:
                    close = getattr(reader, "close", None)
                    if close is not None:
                        close()
                if stale:
                    try:
                        os.unlink(entry.path)
                        removed.append(name)
                    except FileNotFoundError:
                        pass
        finally:
            add.close()
        return removed


class Addition:
    """A locked addition of tables to a stack (git's reftable_addition)."""

    def __init__(self, stack: Stack, reload: bool = False) -> None:
        self.stack = stack
        self.new_tables: list[str] = []
        self._lock = stack.lock_list()
        try:
            if not stack.is_up_to_date():
                if not reload:
                    raise OutdatedError(f"{stack.list_file} changed since the stack was loaded")
                stack.reload_maybe_reuse(reuse=True)
            self.next_update_index = stack.next_update_index()
        except BaseException:
            self.close()
            raise

    def add(self, write: Callable[[Any], None], min_update_index: int | None = None,
            max_update_index: int | None = None) -> str | None:
        """Write one new table with write(writer); its name (None if empty)."""
        if not self._lock.is_locked:
            raise APIError("addition already closed")
        lo = self.next_update_index if min_update_index is None else min_update_index
        hi = lo if max_update_index is None else max_update_index
        if lo < self.next_update_index or hi < lo:
            raise APIError(f"update index range {lo}..{hi} below next {self.next_update_index}")
        st = self.stack
        tmp = st.write_temp_table(write, lo, hi)
        if tmp is None:
            return None
        name = format_name(lo, hi) + ".ref"
        try:
            if st._check_addition is not None:
                st._check_addition(tmp)
            os.rename(tmp, st.table_path(name))
        except BaseException:
            os.unlink(tmp)
            raise
        self.new_tables.append(name)
        self.next_update_index = hi + 1
        return name

    def commit(self) -> None:
        """Publish the new tables in tables.list, reload, then auto-compact."""
        st = self.stack
        if self.new_tables:
            st.write_list(self._lock, st.names + self.new_tables)
            self.new_tables = []
            st.reload_maybe_reuse(reuse=True)
            if st.opts.auto_compact:
                try:
                    st.auto_compact()
                except (LockError, OutdatedError):
                    pass     # a concurrent writer holds parts of the stack: benign
        self.close()

    def close(self) -> None:
        """Roll back: delete uncommitted new tables and release the lock."""
        st = self.stack
        for name in self.new_tables:
            try:
                os.unlink(st.table_path(name))
            except FileNotFoundError:
                pass
        self.new_tables = []
        self._lock.rollback()

    def __enter__(self) -> Addition:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
