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
                   into a StrBuf that grows as git's strbuf does (alloc_nr);
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
Every combination gives git's answers on every file: a file parse_all cannot take
as clean (a bad line, a dangerous name, "sorted" but out of order) is answered
by git's snapshot (the bsearch code) instead. As in git, the header, the last
record and (without "sorted") every line's length are checked when the file is
loaded; any other bad line only when an iteration reaches it or a lookup lands
on it. Errors: PackedRefsError (a FormatError with file and byte offset) whose
text is git's ("unexpected line in <path>: <line>", "unterminated line in ...",
"couldn't read <path>: <reason>"), RefnameError "packed refname is dangerous: <name>".

A walk (PackedRefs.rows: plain tuples (name, oid, peeled, None), a broken name's
row chosen by the caller; PackedRefs.iter: PackedEntry) reads a chunk of whole
records at a time: the usual ones from the chunk's lines, split at once, their
names checked in one batch (refname.make_names_checker); any other record goes
through git's next_record, record by record: same rows, same errors, same place.

write_packed_refs(path, refs) writes exactly what `git pack-refs --all` does,
through packed-refs.lock (LockError when a stale lock exists).
"""
from __future__ import annotations

import binascii
import bisect
import mmap as _mmap
import os
from itertools import chain, islice, pairwise
from operator import itemgetter
from typing import Callable, Iterable, Iterator, NamedTuple

from ..counters import WORK
from ..cython_shim import cython     # the Cython build compiles this as `import cython`
from ..errors import RefnameError
from ..flags import Flags
from .packed_format import (
    HEADER_PREFIX,
    PACKED_REFS_HEADER,
    PEELED_FULLY,
    PEELED_NONE,
    PEELED_TAGS,
    PackedRefsError,
    _knows_peeled,
    _read_error,
    format_packed_refs,
    invalid_line,
    load_file,
    parse_traits,
    unterminated_line,
    write_packed_refs,
)
from .packed_readers import LINE_READERS
from .refname import NameCheck, NamesCheck, make_name_checker, make_names_checker

# the file's own text (its messages, traits, reading and writing) is packed_format's;
# its public names are this module's too
__all__ = ["HEADER_PREFIX", "PACKED_REFS_HEADER", "PEELED_FULLY", "PEELED_NONE", "PEELED_TAGS",
           "PackedEntry", "PackedRefs", "PackedRefsError", "format_packed_refs", "invalid_line",
           "load_file", "load_packed_refs", "parse_traits", "unterminated_line",
           "write_packed_refs"]
_SPACE = b" \t\n\r"                   # git's isspace()
FIRST_CHUNK = 4 * 1024                # bytes of records a walk splits at once, doubling up to
CHUNK = 64 * 1024                     # CHUNK (a lookup's first record costs no big split)

RefRow = tuple[bytes, bytes | None, bytes | None, bytes | None]
"""(name, oid, peeled, target): a ref as a plain tuple, in Ref's field order, what
a walk gives (no object per ref). A packed ref has no target (None); a loose
symref (files_backend) has its target and no oid."""
BrokenRow = Callable[[bytes, bytes], RefRow | None]
"""What a walk gives for a ref whose name is broken, from its name and the file's
oid: a row (git's REF_ISBROKEN ref, its oid cleared, with DO_FOR_EACH_INCLUDE_BROKEN)
or None (left out, as git's iteration without that flag does)."""
_NAME = itemgetter(0)
_PEELED = itemgetter(2)


class PackedEntry(NamedTuple):
    """One packed ref. peeled is None when there is no "^" line; knows_peeled
    says whether that absence is meaningful (trait fully-peeled, or peeled for
    refs/tags/). broken: the name fails the format check (git keeps such a ref,
    flagged, with a null oid; iteration skips it). A named tuple: immutable, and
    built per record of an iteration at the cost of one tuple."""
    name: bytes
    oid: bytes
    peeled: bytes | None
    knows_peeled: bool
    broken: bool = False


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
        if i in self.broken:
            return PackedEntry(name, self.oids[i], None, False, True)
        p = self.peeled.get(i)
        return PackedEntry(name, self.oids[i], p,
                           p is not None or _knows_peeled(self.level, name), False)


_EMPTY = _Loaded([], [], {}, set(), PEELED_NONE)


class _Parse:
    """The parse_all parse of one file: its records, in file order, so far; parse()
    takes buf[pos:] (whole lines) and may be called again with the lines after them."""
    __slots__ = ("hexsz", "check_name", "names", "oids", "peeled", "broken", "level",
                 "is_sorted", "in_order", "prev", "last_was_ref")

    def __init__(self, hash_size: int, check_name: NameCheck) -> None:
        self.hexsz = 2 * hash_size
        self.check_name = check_name
        self.names: list[bytes] = []
        self.oids: list[bytes] = []
        self.peeled: dict[int, bytes] = {}
        self.broken: set[int] = set()
        self.level = PEELED_NONE
        self.is_sorted = False
        self.in_order = True
        self.prev = b""
        self.last_was_ref = False

    def header(self, buf: bytes | _mmap.mmap, path: str) -> int:
        """Where the records of the file's first bytes buf start: after the header
        line, read into level and is_sorted, if there is one; -1 for a bad one."""
        if not buf or buf[0] != 35:                     # "#": the header line
            return 0
        eol = buf.find(b"\n")
        if eol < 0 or buf[:len(HEADER_PREFIX)] != HEADER_PREFIX:
            return -1
        self.level, self.is_sorted = parse_traits(bytes(buf[:eol + 1]), path)
        return eol + 1

    def parse(self, buf: bytes | _mmap.mmap, pos: int) -> bool:
        """Parse the records of buf[pos:], finding each LF with .find on buf (no line
        copied out); False at the first line git would refuse (RefnameError for a
        dangerous name: the caller's)."""
        hexsz = self.hexsz
        check_name = self.check_name
        size = len(buf)
        find = buf.find
        unhex = binascii.unhexlify           # raises on a non-hex digit (never skips whitespace)
        Error = binascii.Error
        names, oids, peeled, broken = self.names, self.oids, self.peeled, self.broken
        in_order, prev, last_was_ref = self.in_order, self.prev, self.last_was_ref
        while pos < size:
            nl = find(b"\n", pos)
            if nl < 0:
                return False
            if buf[pos] == 94:                         # "^": peeled value of the ref above
                if not last_was_ref or nl - pos != hexsz + 1:
                    return False
                try:
                    peeled[len(names) - 1] = unhex(buf[pos + 1:nl])
                except Error:
                    return False
                last_was_ref = False
            else:
                if nl - pos <= hexsz or buf[pos + hexsz] not in _SPACE:
                    return False
                try:
                    oid = unhex(buf[pos:pos + hexsz])
                except Error:
                    return False
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
        self.in_order, self.prev, self.last_was_ref = in_order, prev, last_was_ref
        return True

    def finish(self) -> _Loaded | None:
        """The records sorted by name when the file had them out of order (None: not
        clean, see load_lines)."""
        names, peeled = self.names, self.peeled
        WORK.packed_files_parsed += 1
        WORK.packed_lines += len(names) + len(peeled)
        WORK.refname_format_checks += len(names)
        oids, broken = self.oids, self.broken
        if not self.in_order:
            if self.is_sorted:
                return None
            order = sorted(range(len(names)), key=names.__getitem__)
            rank = {old: new for new, old in enumerate(order)}
            names = [names[i] for i in order]
            if any(a == b for a, b in pairwise(names)):
                return None
            oids = [oids[i] for i in order]
            peeled = {rank[i]: v for i, v in peeled.items()}
            broken = {rank[i] for i in broken}
        return _Loaded(names, oids, peeled, broken, self.level)


LINES_PER_PARSE = 1024      # lines a line reader's parse takes at once (joined: one copy)


def load_lines(lines: Iterable[bytes], path: str, hash_size: int,
               check_name: NameCheck) -> _Loaded | None:
    """Parse every line of a packed-refs file (the parse_all path of the line
    readers). None when the file is not clean (a line git would refuse, a dangerous
    name, a "sorted" file out of order, a name twice): git's answers on such a file
    depend on where its binary search lands, so the caller asks git's snapshot
    (_BsearchLookup). The lines are parsed LINES_PER_PARSE at a time by load_buffer's
    parser, joined into one bytes (a copy of each line, as the reader's own)."""
    st = _Parse(hash_size, check_name)
    it = iter(lines)
    chunk = b"".join(islice(it, LINES_PER_PARSE))
    pos = st.header(chunk, path)
    try:
        while chunk:
            if pos < 0 or not st.parse(chunk, pos):
                return None
            chunk = b"".join(islice(it, LINES_PER_PARSE))
            pos = 0
    except RefnameError:
        return None                             # dangerous: git dies only when it gets there
    WORK.packed_line_copies += len(st.names) + len(st.peeled)
    return st.finish()


def load_buffer(buf: bytes | _mmap.mmap, path: str, hash_size: int,
                check_name: NameCheck) -> _Loaded | None:
    """Parse every record of a whole packed-refs file held in buf (same rules and
    result as load_lines), finding each LF with .find on the buffer; no line copies."""
    st = _Parse(hash_size, check_name)
    pos = st.header(buf, path)
    try:
        if pos < 0 or not st.parse(buf, pos):
            return None
    except RefnameError:
        return None
    return st.finish()


class _ParseAllLookup:
    """packed_lookup=parse_all: load the whole file, then bisect. A file that is
    not clean (load_lines) is answered by git's snapshot of it instead (the file
    read again whole), so that every flag gives git's answers on it too."""

    def __init__(self, path: str, hash_size: int, reader: str, check_name: NameCheck,
                 check_names: NamesCheck) -> None:
        self.git: _BsearchLookup | None = None
        data: _Loaded | None
        if reader == "mmap":
            buf, m = load_file(path)
            try:
                data = load_buffer(buf, path, hash_size, check_name) if buf else _EMPTY
                if data is None:
                    self.git = _BsearchLookup(path, hash_size, check_name, check_names,
                                              (buf, m))
                    m = None                # the lookup owns the map now (no copy of it)
            finally:
                if m is not None:
                    m.close()
        else:
            try:
                lines = LINE_READERS[reader](path) if os.path.exists(path) else iter(())
                data = load_lines(lines, path, hash_size, check_name)
            except OSError as e:
                raise _read_error(path, e) from None
            if data is None:
                self.git = _BsearchLookup(path, hash_size, check_name, check_names)
        self.data = data or _EMPTY

    def get(self, name: bytes) -> PackedEntry | None:
        if self.git is not None:
            return self.git.get(name)
        names = self.data.names
        i = bisect.bisect_left(names, name)
        if i < len(names) and names[i] == name:
            return self.data.entry(i)
        return None

    @property
    def level(self) -> int:
        return self.git.level if self.git is not None else self.data.level

    def rows(self, prefix: bytes, on_broken: BrokenRow) -> Iterator[RefRow]:
        if self.git is not None:
            yield from self.git.rows(prefix, on_broken)
            return
        d = self.data
        names, oids, peeled, broken = d.names, d.oids, d.peeled, d.broken
        i = bisect.bisect_left(names, prefix) if prefix else 0
        n = len(names)
        while i < n:
            name = names[i]
            if not name.startswith(prefix):
                break
            if i in broken:
                row = on_broken(name, oids[i])
                if row is not None:
                    yield row
            else:
                yield name, oids[i], peeled.get(i), None
            i += 1

    def close(self) -> None:
        if self.git is not None:
            self.git.close()


# -- bsearch: git's snapshot, searched and walked in the file's bytes ----------------

def _lines_of(rows: list[RefRow]) -> int:
    """The lines the rows were read from: one each, and one per "^" line."""
    return 2 * len(rows) - list(map(_PEELED, rows)).count(None)


def _count_under(rows: list[RefRow], prefix: bytes) -> int:
    """How many rows, from the first, have a name starting with prefix. When the
    names are in order and the first and the last start with it, all do (they
    sort between them); else each is tested until one does not."""
    names = list(map(_NAME, rows))
    if not names or (names[0].startswith(prefix) and names[-1].startswith(prefix)
                     and names == sorted(names)):
        return len(names)
    for i, name in enumerate(names):
        if not name.startswith(prefix):
            return i
    return len(names)


class _BsearchLookup:
    """packed_lookup=bsearch: git's snapshot (refs/packed-backend.c) over the
    file's bytes. Created as git creates it (header, verify_buffer_safe, and
    sort_snapshot when the header does not say "sorted": those errors come at
    once); a lookup reads only the records its binary search visits, iteration
    checks each record when it reaches it (next_record), so a bad line is
    reported where git reports it, and only then."""

    def __init__(self, path: str, hash_size: int, check_name: NameCheck, check_names: NamesCheck,
                 contents: tuple[bytes | _mmap.mmap, _mmap.mmap | None] | None = None) -> None:
        self.path = path
        self.hash_size = hash_size
        self.hexsz = 2 * hash_size
        self.check_name = check_name
        self.check_names = check_names
        self.level = PEELED_NONE
        buf, self._map = contents if contents is not None else load_file(path)
        start, eof = 0, len(buf)
        is_sorted = False
        if eof and buf[0] == 35:                          # "#": header line
            eol = buf.find(b"\n", 0, eof)
            if eol < 0:
                raise unterminated_line(path, buf, 0, eof)
            self.level, is_sorted = parse_traits(bytes(buf[:eol]), path)
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
            raise invalid_line(self.path, buf, last, eof)

    def _sort(self) -> None:
        """git's sort_snapshot: records (line + optional "^" line), each line at
        least hexsz + 2 long; if they are out of order, copy them sorted into a
        new buffer."""
        buf, pos, eof, hexsz = self.buf, self.start, self.eof, self.hexsz
        find = buf.find
        records: list[tuple[bytes, int, int]] = []
        in_order = True
        prev = b""
        while pos < eof:
            eol = find(b"\n", pos, eof)
            if eol - pos < hexsz + 2:
                raise invalid_line(self.path, buf, pos, eof)
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
        """git's find_start_of_record: start of the record holding byte p (a "^"
        line belongs to the ref above), or lo."""
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
        """git's find_end_of_record: start of the record after the one holding
        byte p, or hi."""
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
        """git's find_reference_location: (offset of the first record whose name
        >= key, whether it equals key). A record's name is read from hexsz + 1
        bytes past its start to the next LF, as git's cmp_record_to_refname reads
        it, even when a short (bad) line puts that in the next line."""
        WORK.packed_bsearch_seeks += 1
        buf = self.buf
        find = buf.find
        skip = self.hexsz + 1
        lo, hi = self.start, self.eof
        eof = self.eof
        record_start, record_end = self._record_start, self._record_end
        while lo != hi:
            mid = lo + (hi - lo) // 2
            rec = record_start(lo, mid)
            name = buf[rec + skip:find(b"\n", rec + skip, eof)]
            if name < key:
                lo = record_end(mid, hi)
            elif name > key:
                hi = rec
            else:
                return rec, True
        return lo, False

    def get(self, name: bytes) -> PackedEntry | None:
        """git's packed_read_raw_ref: the record found by the binary search; only
        its object id is checked (a bad "^" line after it is not looked at)."""
        pos, found = self._seek(name)
        if not found:
            return None
        buf, hexsz = self.buf, self.hexsz
        try:
            oid = binascii.unhexlify(buf[pos:pos + hexsz])
        except binascii.Error:
            raise invalid_line(self.path, buf, pos, self.eof) from None
        good = self.check_name(name)
        nxt = buf.find(b"\n", pos + hexsz + 1, self.eof) + 1
        peeled = None
        knows = _knows_peeled(self.level, name)
        if good and nxt < self.eof and buf[nxt] == 94 and buf[nxt + hexsz + 1:nxt + hexsz + 2] == b"\n":
            try:
                peeled, knows = binascii.unhexlify(buf[nxt + 1:nxt + hexsz + 1]), True
            except binascii.Error:
                pass
        if not good:
            knows = False
        return PackedEntry(name, oid, peeled, knows, not good)

    def rows(self, prefix: bytes, on_broken: BrokenRow) -> Iterator[RefRow]:
        """Records from the first name >= prefix on, as git's packed iterator and
        its prefix iterator give them: a name sorting before prefix is passed over,
        the first one after it ends the walk; a broken name's row is on_broken's.

        This is git's packed_ref_iterator_begin seeking with
        find_reference_location and the prefix iterator stopping at the first
        record past the prefix; seed 001 (quick-list.c, "iterator_start": binary
        search landing mid-line, "walk back to find the start of the line", skip
        "^" peel lines; then "pos.cur && starts_with(pos.ref, prefix)") is its
        prototype: for-each-ref refs/remotes/2325298/ over a 218M packed-refs,
        1.649 s -> 0.012 s.

        Every record gets git's next_record checks when the walk reaches it, in
        bulk where that decides nothing: the walk splits a chunk of whole records
        (FIRST_CHUNK bytes, doubling to CHUNK) into lines at once, reads the usual
        records from them (_usual_rows) and checks their names in one batch
        (_named_rows); the first other record, and the rest of its chunk, goes
        through next_record itself (_next_record), which raises git's errors.
        Rows come in file order, chunk after chunk (_chunks), and an error after
        the rows before it. Work: one packed_bsearch_seeks; packed_lines counts
        the lines the walk parsed (a chunk's at once), against parse_all's every
        line."""
        return chain.from_iterable(self._chunks(prefix, on_broken))

    def _chunks(self, prefix: bytes, on_broken: BrokenRow) -> Iterator[list[RefRow]]:
        """The walk of rows(), as lists of rows (a chunk's usual records, then one
        list per record of its rest)."""
        pos = self._seek(prefix)[0] if prefix else self.start
        eof = self.eof
        size = FIRST_CHUNK
        while pos < eof:
            end = eof if pos + size >= eof else self._record_end(pos + size, eof)
            size = min(2 * size, CHUNK)
            if end - pos > 2 * CHUNK:           # a record far longer than a chunk (one huge
                usual: list[RefRow] = []        # line): next_record alone, no bulk copy
            else:
                usual, pos = self._usual_rows(pos, end, prefix)
            rows, error = self._named_rows(usual, on_broken)
            if rows:
                yield rows
            if error is not None:
                raise error
            while pos < end:                      # the chunk's rest, as git reads it
                pos, row, more = self._next_record(pos, prefix, on_broken)
                if row is not None:
                    yield [row]
                if not more:
                    return

    @cython.locals(pos="Py_ssize_t", end="Py_ssize_t", lines="list", line="bytes", rows="list",
                   hexsz="Py_ssize_t", name_off="Py_ssize_t", peeled_len="Py_ssize_t",
                   odd="bint")
    def _usual_rows(self, pos: int, end: int, prefix: bytes) -> tuple[list[RefRow], int]:
        """The rows of the records of buf[pos:end] (whole records) that leave git's
        next_record nothing to decide, up to the first other one: hex id, SP, a
        name under prefix, LF, at most one "^" + hex id + LF line. Returns them
        (names not checked yet) and where the first other record starts (end if
        none): another separator than SP, a bad id or line, a name outside prefix.
        The chunk's lines come from one split; nothing is raised here."""
        lines = self.buf[pos:end].split(b"\n")
        lines.pop()                                   # after the chunk's last LF
        hexsz = self.hexsz
        name_off = hexsz + 1
        peeled_len = hexsz + 1                        # "^" + hex (LF cut by the split)
        unhex = binascii.unhexlify
        rows: list[RefRow] = []
        append = rows.append
        odd = False
        try:
            for line in lines:
                if line[hexsz] == 32:                 # git takes any isspace: others go slow
                    append((line[name_off:], unhex(line[:hexsz]), None, None))
                elif line[0] == 94:                   # "^": the peeled id of the row before
                    name, oid, peeled, _ = rows[-1]
                    if peeled is not None or len(line) != peeled_len:
                        odd = True
                        break
                    rows[-1] = (name, oid, unhex(line[1:]), None)
                else:
                    odd = True
                    break
        except (IndexError, binascii.Error):
            odd = True
        # an odd line starts the first other record, unless it is the "^" line of
        # the last row: then that record is the first other one (its "^" decides)
        if odd and rows and rows[-1][2] is None and lines[_lines_of(rows)][:1] == b"^":
            rows.pop()
        if prefix:
            under = _count_under(rows, prefix)
            if under < len(rows):
                del rows[under:]
                odd = True
        if not odd:
            WORK.packed_lines += len(lines)
            return rows, end
        done = _lines_of(rows)
        WORK.packed_lines += done
        return rows, pos + sum(map(len, lines[:done])) + done

    def _named_rows(self, rows: list[RefRow],
                    on_broken: BrokenRow) -> tuple[list[RefRow], RefnameError | None]:
        """rows after next_record's refname check: as they are when the batch
        check passes them all; else each name checked, a broken one's row replaced
        by on_broken's, and a dangerous name ends the rows (its error returned,
        to be raised after the rows before it)."""
        if self.check_names(list(map(_NAME, rows))):
            return rows, None
        check_name = self.check_name
        out: list[RefRow] = []
        for row in rows:
            name = row[0]
            try:
                good = check_name(name)
            except RefnameError as e:
                return out, e
            if good:
                out.append(row)
            else:
                oid = row[1]
                assert oid is not None                        # a packed row has its oid
                broken = on_broken(name, oid)
                if broken is not None:
                    out.append(broken)
        return out, None

    def _next_record(self, pos: int, prefix: bytes,
                     on_broken: BrokenRow) -> tuple[int, RefRow | None, bool]:
        """git's next_record for the record at pos, then the prefix iterator's
        test: (where the next record starts, the row to give or None, whether the
        walk goes on). Raises git's errors for a bad line or a dangerous name."""
        buf, eof, hexsz, path = self.buf, self.eof, self.hexsz, self.path
        name_off = hexsz + 1
        min_len = hexsz + 2
        if eof - pos < min_len or buf[pos + hexsz] not in _SPACE:
            raise invalid_line(path, buf, pos, eof)
        try:
            oid = binascii.unhexlify(buf[pos:pos + hexsz])
        except binascii.Error:
            raise invalid_line(path, buf, pos, eof) from None
        eol = buf.find(b"\n", pos + name_off, eof)
        if eol < 0:
            raise unterminated_line(path, buf, pos, eof)
        name = buf[pos + name_off:eol]
        good = self.check_name(name)
        peeled = None
        nxt = eol + 1
        if nxt < eof and buf[nxt] == 94:              # "^": the peeled value
            pend = nxt + min_len
            if pend > eof or buf[pend - 1] != 10:
                raise invalid_line(path, buf, nxt, eof)
            try:
                peeled = binascii.unhexlify(buf[nxt + 1:pend - 1])
            except binascii.Error:
                raise invalid_line(path, buf, nxt, eof) from None
            nxt = pend
        WORK.packed_lines += 1 if peeled is None else 2
        if not name.startswith(prefix):
            return nxt, None, name < prefix           # before the prefix: passed over
        if not good:
            return nxt, on_broken(name, oid), True
        return nxt, (name, oid, peeled, None), True

    def close(self) -> None:
        self.buf = b""
        self.start = self.eof = 0
        if self._map is not None:
            self._map.close()
            self._map = None


class PackedRefs:
    """A snapshot of one packed-refs file (a missing file is an empty one)."""

    def __init__(self, path: str | os.PathLike[str], hash_size: int = 20,
                 flags: Flags | None = None) -> None:
        flags = flags or Flags()
        self.path = os.fspath(path)
        self.hash_size = hash_size
        check, check_names = make_name_checker(flags), make_names_checker(flags)
        impl: _ParseAllLookup | _BsearchLookup
        if flags.packed_lookup == "bsearch":
            impl = _BsearchLookup(self.path, hash_size, check, check_names)
        else:
            impl = _ParseAllLookup(self.path, hash_size, flags.packed_reader, check, check_names)
        self._impl = impl

    def get(self, name: bytes) -> PackedEntry | None:
        """The record named name (broken ones included), or None."""
        return self._impl.get(name)

    def rows(self, prefix: bytes, on_broken: BrokenRow) -> Iterator[RefRow]:
        """The records whose name starts with prefix, sorted by name, as rows
        (name, oid, peeled, None); a broken name's row is on_broken(name, oid)'s
        (None: left out). A bad line is raised when the walk reaches it, after the
        rows before it."""
        return self._impl.rows(prefix, on_broken)

    def iter(self, prefix: bytes = b"") -> Iterator[PackedEntry]:
        """Records whose name starts with prefix, sorted by name (broken included),
        as PackedEntry: rows() with the file's traits and broken names."""
        broken: set[bytes] = set()                  # a name's check depends on it alone

        def keep(name: bytes, oid: bytes) -> RefRow:
            broken.add(name)
            return name, oid, None, None

        level = self._impl.level
        for name, oid, peeled, _ in self._impl.rows(prefix, keep):
            assert oid is not None
            if name in broken:
                yield PackedEntry(name, oid, None, False, True)
            else:
                yield PackedEntry(name, oid, peeled,
                                  peeled is not None or _knows_peeled(level, name), False)

    def __iter__(self) -> Iterator[PackedEntry]:
        return self.iter(b"")

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
