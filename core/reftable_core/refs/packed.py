"""packed-refs: git's one-file store of many refs (read, look up, iterate, write).

Contract. File format (git's refs/packed-backend.c):

    # pack-refs with: peeled fully-peeled sorted LF      optional header, traits split on " "
    <hex oid> SP <refname> LF                             one per ref
    ^<hex oid> LF                                         peeled value of the ref above

The separator may be any of git's isspace characters; a refname runs to the LF
(so a CRLF file yields names ending in "\\r": they fail the format check and are
broken refs, and a "^" line ending in CRLF is an invalid line, as in git). The
file must end with LF (git dies otherwise). Without the `sorted` trait the
records are sorted on load (a "^" line stays with its ref). Trait `fully-peeled`
means a ref without a "^" line is known not to peel; `peeled` means that only for
refs/tags/.

PackedRefs(path, hash_size, flags) chooses once, from flags:
  packed_reader (how parse_all reads the file, seed 001 1/6..7/9 and mmap):
    fgetc          BufferedReader.read(1) per character (locked, like fgetc),
                   the line grows by a new bytes object per character;
    getc_unlocked  characters taken from a buffer this code refills itself with
                   os.read, the line still grows one character at a time;
    getdelim       readline(): a whole line per call;
    mmap           mmap the file, find newlines with .find on the map and parse
                   each record in place (no line copied out first).
  packed_lookup:
    parse_all      load every record into sorted lists, then bisect;
    bsearch        binary search on the mapped file itself (land mid-file, walk
                   back to the start of the line, step over "^" lines); prefix
                   iteration seeks the first match and walks forward. Only on a
                   file known to be sorted; otherwise the records are sorted into
                   a new buffer first (git's sort_snapshot).
  refname_safety: see refname.make_name_checker.
Every combination gives the same answers on a valid file. Errors: FormatError
(file and byte offset) for bad lines, RefnameError for a name escaping refs/.

write_packed_refs(path, refs) writes exactly what `git pack-refs --all` does,
through packed-refs.lock (LockError when a stale lock exists).
"""
from __future__ import annotations

import binascii
import bisect
import mmap as _mmap
import os
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from ..counters import WORK
from ..errors import FormatError
from ..flags import Flags
from ..lockfile import write_locked
from .refname import NameCheck, make_name_checker

HEADER_PREFIX = b"# pack-refs with:"
PACKED_REFS_HEADER = b"# pack-refs with: peeled fully-peeled sorted \n"
SMALL_FILE_SIZE = 32 * 1024           # git reads files this small instead of mapping them
_SPACE = b" \t\n\r"                   # git's isspace()
PEELED_NONE, PEELED_TAGS, PEELED_FULLY = 0, 1, 2


@dataclass(frozen=True, slots=True)
class PackedEntry:
    """One packed ref. peeled is None when there is no "^" line; knows_peeled
    says whether that absence is meaningful (trait fully-peeled, or peeled for
    refs/tags/). broken: the name fails the format check (git keeps such a ref,
    flagged, with a null oid; iteration skips it)."""
    name: bytes
    oid: bytes
    peeled: bytes | None
    knows_peeled: bool
    broken: bool = False


# -- line readers (packed_reader) -----------------------------------------------

LineReader = Callable[[str], Iterator[bytes]]


def lines_fgetc(path: str) -> Iterator[bytes]:
    """One character at a time through a buffered (locked) file object."""
    with open(path, "rb") as f:
        read = f.read
        line = b""
        while True:
            c = read(1)
            if not c:
                break
            line += c                   # a new object per character (strbuf_grow each time)
            if c == b"\n":
                yield line
                line = b""
        n = f.tell()
        WORK.packed_bytes += n
        WORK.packed_getc_locked += n + 1        # every character, then the EOF
        if line:
            yield line


def lines_getc_unlocked(path: str, bufsize: int = 65536) -> Iterator[bytes]:
    """One character at a time from a buffer this function refills itself."""
    fd = os.open(path, os.O_RDONLY)
    try:
        line = bytearray()
        append = line.append
        while True:
            buf = os.read(fd, bufsize)
            WORK.packed_buffer_reads += 1
            if not buf:
                break
            WORK.packed_bytes += len(buf)
            WORK.packed_getc_unlocked += len(buf)
            for c in buf:
                append(c)               # grows one character at a time (amortized)
                if c == 10:
                    yield bytes(line)
                    line.clear()
        if line:
            yield bytes(line)
    finally:
        os.close(fd)


def lines_getdelim(path: str) -> Iterator[bytes]:
    """A whole line per call (readline scans for LF in C)."""
    with open(path, "rb") as f:
        yield from iter(f.readline, b"")
        WORK.packed_bytes += f.tell()


def lines_mmap(path: str) -> Iterator[bytes]:
    """Map the file and find each LF with .find on the map."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return
        m = _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_READ)
    WORK.packed_maps += 1
    WORK.packed_bytes += size
    try:
        find = m.find
        pos = 0
        while pos < size:
            nl = find(b"\n", pos)
            end = size if nl < 0 else nl + 1
            yield m[pos:end]
            pos = end
    finally:
        m.close()


LINE_READERS: dict[str, LineReader] = {
    "fgetc": lines_fgetc,
    "getc_unlocked": lines_getc_unlocked,
    "getdelim": lines_getdelim,
    "mmap": lines_mmap,
}


# -- shared parsing helpers ------------------------------------------------------

def _show(line: bytes) -> str:
    text = line.rstrip(b"\n")
    if len(text) >= 80:
        text = text[:75] + b"..."
    return text.decode("utf-8", "replace")


def _bad_line(path: str, line: bytes, offset: int) -> FormatError:
    if not line.endswith(b"\n"):
        return FormatError(f"unterminated line: {_show(line)}", path, offset)
    return FormatError(f"unexpected line: {_show(line)}", path, offset)


def parse_traits(line: bytes, path: str) -> tuple[int, bool]:
    """(peeled level, sorted) from a header line (with or without its LF)."""
    if not line.startswith(HEADER_PREFIX):
        raise _bad_line(path, line, 0)
    traits = line[len(HEADER_PREFIX):].rstrip(b"\n").split(b" ")
    if b"fully-peeled" in traits:
        peeled = PEELED_FULLY
    elif b"peeled" in traits:
        peeled = PEELED_TAGS
    else:
        peeled = PEELED_NONE
    return peeled, b"sorted" in traits


def _knows_peeled(level: int, name: bytes) -> bool:
    return level == PEELED_FULLY or (level == PEELED_TAGS and name.startswith(b"refs/tags/"))


# -- parse_all: every record into sorted lists -----------------------------------

class _Loaded:
    """Every record of a file: parallel lists sorted by name, plus sparse maps."""
    __slots__ = ("names", "oids", "peeled", "broken", "level")

    def __init__(self, names: list[bytes], oids: list[bytes], peeled: dict[int, bytes],
                 broken: set[int], level: int) -> None:
        self.names = names
        self.oids = oids
        self.peeled = peeled
        self.broken = broken
        self.level = level

    def entry(self, i: int) -> PackedEntry:
        name = self.names[i]
        p = self.peeled.get(i)
        bad = i in self.broken
        knows = p is not None or _knows_peeled(self.level, name)
        if bad:
            p, knows = None, False
        return PackedEntry(name, self.oids[i], p, knows, bad)


def load_lines(lines: Iterable[bytes], path: str, hash_size: int, check_name: NameCheck) -> _Loaded:
    """Parse every line of a packed-refs file (the parse_all path)."""
    hexsz = 2 * hash_size
    peeled_len = hexsz + 2                 # "^" + hex + LF
    min_len = hexsz + 2                    # hex + SP + at least the LF
    unhex = binascii.unhexlify           # raises on a non-hex digit (never skips whitespace)
    Error = binascii.Error
    names: list[bytes] = []
    oids: list[bytes] = []
    peeled: dict[int, bytes] = {}
    broken: set[int] = set()
    level = PEELED_NONE
    in_order = True
    prev = b""
    offset = 0
    last_was_ref = False
    it = iter(lines)
    for line in it:
        if line[:1] == b"#":
            if not line.endswith(b"\n"):
                raise _bad_line(path, line, 0)
            level, _ = parse_traits(line, path)
            offset = len(line)
        else:
            it = _chain1(line, it)
        break
    for line in it:
        n = len(line)
        if line[n - 1] != 10:
            raise _bad_line(path, line, offset)
        if line[0] == 94:                   # "^": peeled value of the ref above
            if not last_was_ref or n != peeled_len:
                raise _bad_line(path, line, offset)
            try:
                oid = unhex(line[1:peeled_len - 1])
            except Error:
                raise _bad_line(path, line, offset) from None
            peeled[len(names) - 1] = oid
            last_was_ref = False
        else:
            if n < min_len or line[hexsz] not in _SPACE:
                raise _bad_line(path, line, offset)
            try:
                oid = unhex(line[:hexsz])
            except Error:
                raise _bad_line(path, line, offset) from None
            name = line[hexsz + 1:n - 1]
            if not check_name(name):
                broken.add(len(names))
            if in_order and name <= prev and names:
                in_order = False
            prev = name
            names.append(name)
            oids.append(oid)
            last_was_ref = True
        offset += n
    WORK.packed_line_copies += len(names) + len(peeled)
    return _finish(names, oids, peeled, broken, level, in_order)


def _finish(names: list[bytes], oids: list[bytes], peeled: dict[int, bytes], broken: set[int],
            level: int, in_order: bool) -> _Loaded:
    """Sort the records by name when the file had them out of order."""
    WORK.packed_files_parsed += 1
    WORK.packed_lines += len(names) + len(peeled)
    WORK.refname_format_checks += len(names)
    if not in_order:
        order = sorted(range(len(names)), key=names.__getitem__)
        rank = {old: new for new, old in enumerate(order)}
        names = [names[i] for i in order]
        oids = [oids[i] for i in order]
        peeled = {rank[i]: v for i, v in peeled.items()}
        broken = {rank[i] for i in broken}
    return _Loaded(names, oids, peeled, broken, level)


def load_mapped(path: str, hash_size: int, check_name: NameCheck) -> _Loaded:
    """packed_reader=mmap: map the file (read it when small, as git does) and parse
    every record in place, finding each LF with .find on the map; no line copies."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return _Loaded([], [], {}, set(), PEELED_NONE)
    m: _mmap.mmap | None = None
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return _Loaded([], [], {}, set(), PEELED_NONE)
        if size <= SMALL_FILE_SIZE:
            buf: bytes | _mmap.mmap = _read_all(fd, size)
        else:
            m = _mmap.mmap(fd, 0, access=_mmap.ACCESS_READ)
            buf = m
            WORK.packed_maps += 1
        WORK.packed_bytes += size
    finally:
        os.close(fd)
    try:
        return load_buffer(buf, path, hash_size, check_name)
    finally:
        if m is not None:
            m.close()


def load_buffer(buf: bytes | _mmap.mmap, path: str, hash_size: int,
                check_name: NameCheck) -> _Loaded:
    """Parse every record of a whole packed-refs file held in buf (same rules and
    errors as load_lines)."""
    hexsz = 2 * hash_size
    size = len(buf)
    find = buf.find
    unhex = binascii.unhexlify
    Error = binascii.Error
    names: list[bytes] = []
    oids: list[bytes] = []
    peeled: dict[int, bytes] = {}
    broken: set[int] = set()
    level = PEELED_NONE
    pos = 0
    if size and buf[0] == 35:                          # "#": the header line
        eol = find(b"\n")
        if eol < 0:
            raise _bad_line(path, bytes(buf[:size]), 0)
        level, _ = parse_traits(bytes(buf[:eol + 1]), path)
        pos = eol + 1
    in_order = True
    prev = b""
    last_was_ref = False
    while pos < size:
        nl = find(b"\n", pos)
        if nl < 0:
            raise _bad_line(path, bytes(buf[pos:size]), pos)
        if buf[pos] == 94:                             # "^": peeled value of the ref above
            if not last_was_ref or nl - pos != hexsz + 1:
                raise _bad_line(path, bytes(buf[pos:nl + 1]), pos)
            try:
                peeled[len(names) - 1] = unhex(buf[pos + 1:nl])
            except Error:
                raise _bad_line(path, bytes(buf[pos:nl + 1]), pos) from None
            last_was_ref = False
        else:
            if nl - pos <= hexsz or buf[pos + hexsz] not in _SPACE:
                raise _bad_line(path, bytes(buf[pos:nl + 1]), pos)
            try:
                oid = unhex(buf[pos:pos + hexsz])
            except Error:
                raise _bad_line(path, bytes(buf[pos:nl + 1]), pos) from None
            name = buf[pos + hexsz + 1:nl]
            if not check_name(name):
                broken.add(len(names))
            if in_order and name <= prev and names:
                in_order = False
            prev = name
            names.append(name)
            oids.append(oid)
            last_was_ref = True
        pos = nl + 1
    return _finish(names, oids, peeled, broken, level, in_order)


def _chain1(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


class _ParseAllLookup:
    """packed_lookup=parse_all: load the whole file, then bisect."""

    def __init__(self, path: str, hash_size: int, reader: str, check_name: NameCheck) -> None:
        if reader == "mmap":
            self.data = load_mapped(path, hash_size, check_name)
        else:
            lines = LINE_READERS[reader](path) if os.path.exists(path) else iter(())
            self.data = load_lines(lines, path, hash_size, check_name)

    def get(self, name: bytes) -> PackedEntry | None:
        names = self.data.names
        i = bisect.bisect_left(names, name)
        if i < len(names) and names[i] == name:
            return self.data.entry(i)
        return None

    def iter(self, prefix: bytes) -> Iterator[PackedEntry]:
        names = self.data.names
        entry = self.data.entry
        i = bisect.bisect_left(names, prefix) if prefix else 0
        n = len(names)
        while i < n:
            if prefix and not names[i].startswith(prefix):
                break
            yield entry(i)
            i += 1

    def close(self) -> None:
        pass


# -- bsearch: binary search on the (mapped) buffer -----------------------------

class _BsearchLookup:
    """packed_lookup=bsearch: search and walk the file's bytes directly."""

    def __init__(self, path: str, hash_size: int, check_name: NameCheck) -> None:
        self.path = path
        self.hash_size = hash_size
        self.hexsz = 2 * hash_size
        self.check_name = check_name
        self.level = PEELED_NONE
        self._map: _mmap.mmap | None = None
        buf: bytes | _mmap.mmap = b""
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            fd = -1
        if fd >= 0:
            try:
                size = os.fstat(fd).st_size
                if 0 < size <= SMALL_FILE_SIZE:
                    buf = _read_all(fd, size)
                elif size:
                    self._map = _mmap.mmap(fd, 0, access=_mmap.ACCESS_READ)
                    buf = self._map
                    WORK.packed_maps += 1
            finally:
                os.close(fd)
        start, eof = 0, len(buf)
        is_sorted = False
        if eof and buf[0] == 35:                          # "#": header line
            eol = buf.find(b"\n", 0, eof)
            if eol < 0:
                raise _bad_line(path, bytes(buf[:eof]), 0)
            self.level, is_sorted = parse_traits(bytes(buf[:eol + 1]), path)
            start = eol + 1
        self.buf = buf
        self.start = start
        self.eof = eof
        self._verify_safe()
        if not is_sorted:
            self._sort()
            self._verify_safe()

    # git's verify_buffer_safe: the last record ends with LF and is long enough,
    # so the unchecked scans below can never run off the end of the buffer.
    def _verify_safe(self) -> None:
        buf, start, eof = self.buf, self.start, self.eof
        if start == eof:
            return
        last = self._record_start(start, eof - 1)
        if buf[eof - 1] != 10 or eof - last < self.hexsz + 2:
            raise _bad_line(self.path, bytes(buf[last:eof]), last)

    def _sort(self) -> None:
        """git's sort_snapshot: records (line + optional "^" line); if they are
        out of order, copy them sorted into a new buffer."""
        buf, pos, eof, hexsz = self.buf, self.start, self.eof, self.hexsz
        find = buf.find
        records: list[tuple[bytes, int, int]] = []
        in_order = True
        prev = b""
        while pos < eof:
            eol = find(b"\n", pos, eof)
            if eol - pos < hexsz + 2:
                raise _bad_line(self.path, bytes(buf[pos:eol + 1]), pos)
            name = buf[pos + hexsz + 1:eol]
            end = eol + 1
            if end < eof and buf[end] == 94:
                end = find(b"\n", end, eof) + 1
            if records and in_order and name <= prev:
                in_order = False
            records.append((name, pos, end))
            prev = name
            pos = end
        if in_order:
            return
        records.sort(key=lambda r: r[0])
        new = b"".join([buf[s:e] for _, s, e in records])
        self.buf, self.start, self.eof = new, 0, len(new)
        if self._map is not None:
            self._map.close()
            self._map = None

    def _record_start(self, lo: int, p: int) -> int:
        """Start of the record holding byte p (a "^" line belongs to the ref above)."""
        buf = self.buf
        rfind = buf.rfind
        while True:
            s = rfind(b"\n", lo, p) + 1
            if s <= lo:
                return lo
            if buf[s] != 94:
                return s
            p = s - 1

    def _record_end(self, p: int, hi: int) -> int:
        """Start of the record after the one holding byte p (or hi)."""
        buf = self.buf
        find = buf.find
        while True:
            nl = find(b"\n", p, hi)
            if nl < 0:
                return hi
            q = nl + 1
            if q >= hi or buf[q] != 94:
                return q
            p = q

    def _seek(self, key: bytes) -> tuple[int, bool]:
        """(offset of the first record whose name >= key, whether it equals key)."""
        WORK.packed_bsearch_seeks += 1
        buf = self.buf
        find = buf.find
        skip = self.hexsz + 1
        lo, hi = self.start, self.eof
        record_start, record_end = self._record_start, self._record_end
        while lo != hi:
            mid = lo + (hi - lo) // 2
            rec = record_start(lo, mid)
            name = buf[rec + skip:find(b"\n", rec + skip, hi)]
            if name < key:
                lo = record_end(mid, hi)
            elif name > key:
                hi = rec
            else:
                return rec, True
        return lo, False

    def _parse_record(self, pos: int) -> tuple[PackedEntry, int]:
        """git's next_record: parse and check one record at pos."""
        buf, eof, hexsz = self.buf, self.eof, self.hexsz
        path = self.path
        eol = buf.find(b"\n", pos, eof)
        if eof - pos < hexsz + 2 or eol < 0 or eol - pos < hexsz + 1 or buf[pos + hexsz] not in _SPACE:
            raise _bad_line(path, bytes(buf[pos:eol + 1 if eol >= 0 else eof]), pos)
        try:
            oid = binascii.unhexlify(buf[pos:pos + hexsz])
        except binascii.Error:
            raise _bad_line(path, bytes(buf[pos:eol + 1]), pos) from None
        name = bytes(buf[pos + hexsz + 1:eol])
        good = self.check_name(name)
        nxt = eol + 1
        peeled = None
        knows = _knows_peeled(self.level, name)
        if nxt < eof and buf[nxt] == 94:
            pend = nxt + hexsz + 2
            if pend > eof or buf[pend - 1] != 10:
                end = buf.find(b"\n", nxt, eof)
                raise _bad_line(path, bytes(buf[nxt:end + 1 if end >= 0 else eof]), nxt)
            try:
                peeled = binascii.unhexlify(buf[nxt + 1:pend - 1])
            except binascii.Error:
                raise _bad_line(path, bytes(buf[nxt:pend]), nxt) from None
            knows = True
            nxt = pend
        if not good:
            peeled, knows = None, False
        return PackedEntry(name, oid, peeled, knows, not good), nxt

    def get(self, name: bytes) -> PackedEntry | None:
        pos, found = self._seek(name)
        if not found:
            return None
        return self._parse_record(pos)[0]

    def iter(self, prefix: bytes) -> Iterator[PackedEntry]:
        pos = self._seek(prefix)[0] if prefix else self.start
        eof = self.eof
        parse = self._parse_record
        while pos < eof:
            entry, pos = parse(pos)
            if prefix and not entry.name.startswith(prefix):
                break
            yield entry

    def close(self) -> None:
        self.buf = b""
        self.start = self.eof = 0
        if self._map is not None:
            self._map.close()
            self._map = None


def _read_all(fd: int, size: int) -> bytes:
    chunks = []
    while size > 0:
        b = os.read(fd, size)
        if not b:
            break
        chunks.append(b)
        size -= len(b)
    return b"".join(chunks)


class PackedRefs:
    """A snapshot of one packed-refs file (a missing file is an empty one)."""

    def __init__(self, path: str | os.PathLike[str], hash_size: int = 20,
                 flags: Flags | None = None) -> None:
        flags = flags or Flags()
        self.path = os.fspath(path)
        self.hash_size = hash_size
        check = make_name_checker(flags)
        impl: _ParseAllLookup | _BsearchLookup
        if flags.packed_lookup == "bsearch":
            impl = _BsearchLookup(self.path, hash_size, check)
        else:
            impl = _ParseAllLookup(self.path, hash_size, flags.packed_reader, check)
        self._impl = impl

    def get(self, name: bytes) -> PackedEntry | None:
        """The record named name (broken ones included), or None."""
        return self._impl.get(name)

    def iter(self, prefix: bytes = b"") -> Iterator[PackedEntry]:
        """Records whose name starts with prefix, sorted by name (broken included)."""
        return self._impl.iter(prefix)

    def __iter__(self) -> Iterator[PackedEntry]:
        return self._impl.iter(b"")

    def close(self) -> None:
        self._impl.close()

    def __enter__(self) -> "PackedRefs":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def load_packed_refs(path: str | os.PathLike[str], hash_size: int = 20,
                     flags: Flags | None = None) -> list[PackedEntry]:
    """Every record of the file, sorted (a convenience for tests and tools)."""
    with PackedRefs(path, hash_size, flags) as p:
        return list(p)


# -- writer -------------------------------------------------------------------------

RefLike = Sequence[object]


def format_packed_refs(refs: Iterable[object], peeled: Mapping[bytes, bytes] | None = None,
                       header: bytes = PACKED_REFS_HEADER, sort: bool = True) -> bytes:
    """The bytes of a packed-refs file, as `git pack-refs --all` writes them.

    refs: (name, oid) or (name, oid, peeled) tuples, or objects with .name,
    .value/.oid and .peeled (Ref, PackedEntry). Object ids are raw bytes (20/32)
    or hex (bytes or str). peeled: optional name -> peeled oid mapping.
    Sorted by name unless sort=False (the caller promises sorted input).
    """
    rows: list[tuple[bytes, bytes, bytes | None]] = []
    append = rows.append
    pmap = peeled or {}
    for r in refs:
        if isinstance(r, tuple):
            name, oid = r[0], r[1]
            p = r[2] if len(r) > 2 else None
        else:
            name = r.name                                    # type: ignore[attr-defined]
            oid = getattr(r, "value", None) or r.oid                # type: ignore[attr-defined]
            p = getattr(r, "peeled", None)
        if p is None and pmap:
            p = pmap.get(name)
        append((name, _hex(oid), None if p is None else _hex(p)))
    if sort:
        rows.sort(key=lambda t: t[0])
    out = [header]
    push = out.append
    for name, h, p in rows:
        push(h + b" " + name + b"\n")
        if p is not None:
            push(b"^" + p + b"\n")
    return b"".join(out)


def _hex(oid: object) -> bytes:
    if isinstance(oid, str):
        return oid.encode("ascii")
    if isinstance(oid, (bytes, bytearray)):
        if len(oid) in (20, 32):
            return binascii.hexlify(oid)
        return bytes(oid)
    raise TypeError(f"object id must be bytes or str, not {type(oid).__name__}")


def write_packed_refs(path: str | os.PathLike[str], refs: Iterable[object],
                      peeled: Mapping[bytes, bytes] | None = None, *, sort: bool = True,
                      fsync: bool = False) -> None:
    """Replace the packed-refs file at path, through path + ".lock"."""
    write_locked(os.fspath(path), format_packed_refs(refs, peeled, sort=sort), fsync=fsync)
