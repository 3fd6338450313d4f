"""Reftable records: ref, log, obj and index (sans-IO).

Contract: each record type is a slotted dataclass with key() building its sort
key; encode_x(rec, prev_key, ...) -> bytes writes the prefix-compressed key
(varint prefix_len, varint (suffix_len << 3) | value_type, suffix) followed by
the value; decode_x(buf, off, last_key, ...) -> (record, key, new_off) reads one
back. Decoders raise FormatError (offset relative to buf) on bad input, never
IndexError/ValueError. repr() of a record prints its object ids in hex, as git
does (repr_hex_ids, also used by refs.api). The field-wise comparisons that order
records as their keys do without building them live where they are used: pq.make_less
and the merge loops of loops.py.
The hot iteration loops live in block.py; these functions are the reference
implementation used by the writer, by tests and by cold paths.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from .basics import MAX_U64, Buf, get_varint, put_varint
from ..errors import FormatError

BLOCK_TYPE_REF = ord("r")
BLOCK_TYPE_LOG = ord("g")
BLOCK_TYPE_OBJ = ord("o")
BLOCK_TYPE_INDEX = ord("i")
BLOCK_TYPES = (BLOCK_TYPE_REF, BLOCK_TYPE_LOG, BLOCK_TYPE_OBJ, BLOCK_TYPE_INDEX)

# ref value types
REF_DELETION = 0
REF_VAL1 = 1
REF_VAL2 = 2
REF_SYMREF = 3

# log value types
LOG_DELETION = 0
LOG_UPDATE = 1

# hash ids: name -> (4-byte format id, hash size)
HASH_IDS: dict[str, tuple[bytes, int]] = {"sha1": (b"sha1", 20), "sha256": (b"s256", 32)}
FORMAT_IDS: dict[bytes, str] = {v[0]: k for k, v in HASH_IDS.items()}



def hash_size(hash_id: str) -> int:
    return HASH_IDS[hash_id][1]


def repr_hex_ids(obj: Any, *ids: str) -> str:
    """The dataclass's repr, Type(field=value, ...), with the fields named in `ids` (object
    ids) in hex, as git prints them; every other field as repr() gives it."""
    def value(name: str) -> str:
        v = getattr(obj, name)
        return bytes(v).hex() if name in ids and v is not None else repr(v)
    names = (f.name for f in fields(obj))
    return f"{type(obj).__name__}({', '.join(f'{n}={value(n)}' for n in names)})"


@dataclass(slots=True)
class RefRecord:
    refname: bytes
    update_index: int = 0
    value_type: int = REF_DELETION
    value: bytes | None = None          # object id (types 1, 2)
    target_value: bytes | None = None   # peeled object id (type 2)
    target: bytes | None = None         # symref target (type 3)

    def __repr__(self) -> str:
        return repr_hex_ids(self, "value", "target_value")

    def key(self) -> bytes:
        return bytes(self.refname)


@dataclass(slots=True)
class LogRecord:
    refname: bytes
    update_index: int = 0
    value_type: int = LOG_UPDATE
    old_id: bytes | None = None
    new_id: bytes | None = None
    name: bytes = b""
    email: bytes = b""
    time: int = 0
    # Signed 16-bit zone offset exactly as stored. The spec says "minutes", but
    # git writes and reads the decimal number hhmm (-0800 -> -800, +0530 -> 530);
    # use git_tz_offset()/format_git_tz() to stay interoperable with git.
    tz_offset: int = 0
    message: bytes = b""

    def __repr__(self) -> str:
        return repr_hex_ids(self, "old_id", "new_id")

    def key(self) -> bytes:
        return log_key(self.refname, self.update_index)


@dataclass(slots=True)
class ObjRecord:
    hash_prefix: bytes
    offsets: list[int] = field(default_factory=list)

    def __repr__(self) -> str:
        return repr_hex_ids(self, "hash_prefix")

    def key(self) -> bytes:
        return bytes(self.hash_prefix)


@dataclass(slots=True)
class IndexRecord:
    last_key: bytes
    offset: int = 0

    def key(self) -> bytes:
        return bytes(self.last_key)


Record = RefRecord | LogRecord | ObjRecord | IndexRecord


def git_tz_offset(text: str | bytes) -> int:
    """"+0530" -> 530, "-0800" -> -800 (git's encoding of tz_offset)."""
    t = text.decode() if isinstance(text, bytes) else text
    return int(t)


def format_git_tz(stored: int) -> str:
    return f"{'-' if stored < 0 else '+'}{abs(stored):04d}"


def log_key(refname: bytes, update_index: int = MAX_U64) -> bytes:
    """refname NUL reverse_int64(update_index): newest entry first."""
    return bytes(refname) + b"\0" + (MAX_U64 - update_index).to_bytes(8, "big")


def split_log_key(key: bytes) -> tuple[bytes, int]:
    if len(key) <= 9 or key[-9] != 0:
        raise FormatError("malformed log key")
    return key[:-9], MAX_U64 - int.from_bytes(key[-8:], "big")


def record_type(rec: Record) -> int:
    return _TYPE_OF[type(rec)]


_TYPE_OF: dict[type, int] = {RefRecord: BLOCK_TYPE_REF, LogRecord: BLOCK_TYPE_LOG,
                             ObjRecord: BLOCK_TYPE_OBJ, IndexRecord: BLOCK_TYPE_INDEX}


# ---------------------------------------------------------------- layout, as code
# A record's bytes, written once as the statements that read them. A record is varint
# prefix_len, varint (suffix_len << 3 | value_type), the key suffix, then the value; a
# ref value is varint (update_index - min_update_index), then, by value type,
# REF_VALUE_IDS[value_type] object ids of hash_size bytes each, or (None) a varint
# length and that many bytes. scripts/gen_loops.py renders them, straight-line (no
# call per record), into loops.py: the record loops, the seek's restart_scan_start and
# record_extent (block.seek_in_block) and walk_ref_records (lab.stages' walk). Each
# reads data at the index named {at}, sets {v} and leaves {at} just past what it read.
# Single bytes are read from buf, slices and get_varint's from data: the same object
# (buf = data) except in the Cython build, where buf is a typed memoryview of it
# (a C byte per read, no int object).
VARINT = """\
{v} = buf[{at}]
if {v} < 0x80:
    {at} += 1
else:
    {v}, {at} = get_varint(data, {at})"""
# the suffix length: a restart record's key is whole (often 16 bytes or more), so its
# two-byte varint is read inline too
SUFFIX_VARINT = """\
{v} = buf[{at}]
if {v} < 0x80:
    {at} += 1
elif buf[{at} + 1] < 0x80:       # two-byte varint (restart points), inline
    {v} = ((({v} & 0x7F) + 1) << 7) | buf[{at} + 1]
    {at} += 2
else:
    {v}, {at} = get_varint(data, {at})"""
# a varint stepped over, its value unread
SKIP_VARINT = """\
while buf[{at}] >= 0x80:
    {at} += 1
{at} += 1"""
REF_VALUE_IDS: dict[int, int | None] = {REF_DELETION: 0, REF_VAL1: 1, REF_VAL2: 2,
                                        REF_SYMREF: None}


# ---------------------------------------------------------------- keys
def common_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n           # binary search the first differing byte
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def encode_key(prev_key: bytes, key: bytes, extra: int) -> tuple[bytes, bool]:
    """Prefix-compressed key; returns (bytes, is_restart = prefix_len == 0)."""
    p = common_prefix(prev_key, key) if prev_key else 0
    return put_varint(p) + put_varint(((len(key) - p) << 3) | extra) + key[p:], p == 0


def decode_key(buf: Buf, off: int, last_key: bytes) -> tuple[bytes, int, int]:
    """Return (key, extra (value type), new_off)."""
    p, off = get_varint(buf, off)
    s, off = get_varint(buf, off)
    extra = s & 7
    s >>= 3
    if p > len(last_key):
        raise FormatError(f"prefix length {p} exceeds previous key length {len(last_key)}",
                          offset=off)
    end = off + s
    if end > len(buf):
        raise FormatError("key suffix runs past the block", offset=off)
    key = bytes(last_key[:p]) + bytes(buf[off:end])
    if not key:
        raise FormatError("empty record key", offset=off)
    return key, extra, end


def _string(buf: Buf, off: int, what: str) -> tuple[bytes, int]:
    n, off = get_varint(buf, off)
    end = off + n
    if end > len(buf):
        raise FormatError(f"{what} runs past the block", offset=off)
    return bytes(buf[off:end]), end


def _need(buf: Buf, off: int, n: int, what: str) -> None:
    if off + n > len(buf):
        raise FormatError(f"truncated {what}", offset=off)


# ---------------------------------------------------------------- ref
def encode_ref_value(rec: RefRecord, hash_size: int, min_update_index: int = 0) -> bytes:
    ui = rec.update_index - min_update_index
    vt = rec.value_type
    if vt == REF_VAL1:
        _check_id(rec.value, hash_size, "value")
        return put_varint(ui) + rec.value  # type: ignore[operator]
    if vt == REF_VAL2:
        _check_id(rec.value, hash_size, "value")
        _check_id(rec.target_value, hash_size, "target_value")
        return put_varint(ui) + rec.value + rec.target_value  # type: ignore[operator]
    if vt == REF_SYMREF:
        if rec.target is None:
            raise ValueError("symref without target")
        return put_varint(ui) + put_varint(len(rec.target)) + rec.target
    if vt == REF_DELETION:
        return put_varint(ui)
    raise ValueError(f"bad ref value type {vt}")


def _check_id(v: bytes | None, hash_size: int, what: str) -> None:
    if v is None or len(v) != hash_size:
        raise ValueError(f"ref {what} must be {hash_size} bytes")


def encode_ref(rec: RefRecord, prev_key: bytes, hash_size: int,
               min_update_index: int = 0) -> bytes:
    k, _ = encode_key(prev_key, rec.refname, rec.value_type)
    return k + encode_ref_value(rec, hash_size, min_update_index)


def decode_ref_value(buf: Buf, off: int, key: bytes, vt: int, hash_size: int,
                     min_update_index: int = 0) -> tuple[RefRecord, int]:
    ui, off = get_varint(buf, off)
    rec = RefRecord(key, ui + min_update_index, vt)
    if vt == REF_VAL1:
        _need(buf, off, hash_size, "ref value")
        rec.value = bytes(buf[off:off + hash_size])
        off += hash_size
    elif vt == REF_VAL2:
        _need(buf, off, 2 * hash_size, "ref values")
        rec.value = bytes(buf[off:off + hash_size])
        rec.target_value = bytes(buf[off + hash_size:off + 2 * hash_size])
        off += 2 * hash_size
    elif vt == REF_SYMREF:
        rec.target, off = _string(buf, off, "symref target")
    elif vt != REF_DELETION:
        raise FormatError(f"unknown ref value type {vt}", offset=off)
    return rec, off


def decode_ref(buf: Buf, off: int, last_key: bytes, hash_size: int,
               min_update_index: int = 0) -> tuple[RefRecord, bytes, int]:
    key, vt, off = decode_key(buf, off, last_key)
    rec, off = decode_ref_value(buf, off, key, vt, hash_size, min_update_index)
    return rec, key, off


# ---------------------------------------------------------------- log
def encode_log_value(rec: LogRecord, hash_size: int) -> bytes:
    if rec.value_type == LOG_DELETION:
        return b""
    if rec.value_type != LOG_UPDATE:
        raise ValueError(f"bad log value type {rec.value_type}")
    zero = bytes(hash_size)
    old = rec.old_id if rec.old_id is not None else zero
    new = rec.new_id if rec.new_id is not None else zero
    if len(old) != hash_size or len(new) != hash_size:
        raise ValueError(f"log ids must be {hash_size} bytes")
    if not -32768 <= rec.tz_offset <= 32767:
        raise ValueError(f"tz_offset out of range: {rec.tz_offset}")
    return b"".join((
        old, new,
        put_varint(len(rec.name)), rec.name,
        put_varint(len(rec.email)), rec.email,
        put_varint(rec.time),
        (rec.tz_offset & 0xFFFF).to_bytes(2, "big"),
        put_varint(len(rec.message)), rec.message,
    ))


def encode_log(rec: LogRecord, prev_key: bytes, hash_size: int) -> bytes:
    k, _ = encode_key(prev_key, rec.key(), rec.value_type)
    return k + encode_log_value(rec, hash_size)


def decode_log_value(buf: Buf, off: int, key: bytes, vt: int,
                     hash_size: int) -> tuple[LogRecord, int]:
    refname, ui = split_log_key(key)
    rec = LogRecord(refname, ui, vt)
    if vt == LOG_DELETION:
        return rec, off
    if vt != LOG_UPDATE:
        raise FormatError(f"unknown log value type {vt}", offset=off)
    _need(buf, off, 2 * hash_size, "log ids")
    rec.old_id = bytes(buf[off:off + hash_size])
    rec.new_id = bytes(buf[off + hash_size:off + 2 * hash_size])
    off += 2 * hash_size
    rec.name, off = _string(buf, off, "log name")
    rec.email, off = _string(buf, off, "log email")
    rec.time, off = get_varint(buf, off)
    _need(buf, off, 2, "log tz offset")
    tz = (buf[off] << 8) | buf[off + 1]
    rec.tz_offset = tz - 0x10000 if tz & 0x8000 else tz
    off += 2
    rec.message, off = _string(buf, off, "log message")
    return rec, off


def decode_log(buf: Buf, off: int, last_key: bytes,
               hash_size: int) -> tuple[LogRecord, bytes, int]:
    start = off
    key, vt, off = decode_key(buf, off, last_key)
    try:
        rec, off = decode_log_value(buf, off, key, vt, hash_size)
    except FormatError as e:
        if e.offset is None:
            raise FormatError(e.msg, offset=start) from None
        raise
    return rec, key, off


# ---------------------------------------------------------------- obj
def obj_value_type(rec: ObjRecord) -> int:
    n = len(rec.offsets)
    return n if 0 < n < 8 else 0


def encode_obj_value(rec: ObjRecord) -> bytes:
    offs = rec.offsets
    n = len(offs)
    parts = []
    if n == 0 or n >= 8:
        parts.append(put_varint(n))
    if n:
        parts.append(put_varint(offs[0]))
        last = offs[0]
        for o in offs[1:]:
            if o < last:
                raise ValueError("obj offsets must be ascending")
            parts.append(put_varint(o - last))
            last = o
    return b"".join(parts)


def encode_obj(rec: ObjRecord, prev_key: bytes, hash_size: int = 0) -> bytes:
    k, _ = encode_key(prev_key, rec.hash_prefix, obj_value_type(rec))
    return k + encode_obj_value(rec)


def decode_obj_value(buf: Buf, off: int, key: bytes, vt: int) -> tuple[ObjRecord, int]:
    count = vt
    if vt == 0:
        count, off = get_varint(buf, off)
    if count > len(buf):      # every delta takes at least one byte
        raise FormatError(f"obj record claims {count} offsets", offset=off)
    offsets: list[int] = []
    if count:
        last, off = get_varint(buf, off)
        offsets.append(last)
        for _ in range(count - 1):
            d, off = get_varint(buf, off)
            last += d
            offsets.append(last)
    return ObjRecord(key, offsets), off


def decode_obj(buf: Buf, off: int, last_key: bytes,
               hash_size: int = 0) -> tuple[ObjRecord, bytes, int]:
    key, vt, off = decode_key(buf, off, last_key)
    rec, off = decode_obj_value(buf, off, key, vt)
    return rec, key, off


# ---------------------------------------------------------------- index
def encode_index(rec: IndexRecord, prev_key: bytes, hash_size: int = 0) -> bytes:
    k, _ = encode_key(prev_key, rec.last_key, 0)
    return k + put_varint(rec.offset)


def decode_index(buf: Buf, off: int, last_key: bytes,
                 hash_size: int = 0) -> tuple[IndexRecord, bytes, int]:
    key, vt, off = decode_key(buf, off, last_key)
    pos, off = get_varint(buf, off)
    return IndexRecord(key, pos), key, off


# ---------------------------------------------------------------- generic
def encode_record(rec: Record, prev_key: bytes, hash_size: int,
                  min_update_index: int = 0) -> bytes:
    if type(rec) is RefRecord:
        return encode_ref(rec, prev_key, hash_size, min_update_index)
    if type(rec) is LogRecord:
        return encode_log(rec, prev_key, hash_size)
    if type(rec) is ObjRecord:
        return encode_obj(rec, prev_key)
    if type(rec) is IndexRecord:
        return encode_index(rec, prev_key)
    raise TypeError(f"not a reftable record: {rec!r}")


def decode_record(typ: int, buf: Buf, off: int, last_key: bytes, hash_size: int,
                  min_update_index: int = 0) -> tuple[Record, bytes, int]:
    """Decode one record of block type typ; returns (record, key, new_off)."""
    try:
        if typ == BLOCK_TYPE_REF:
            return decode_ref(buf, off, last_key, hash_size, min_update_index)
        if typ == BLOCK_TYPE_LOG:
            return decode_log(buf, off, last_key, hash_size)
        if typ == BLOCK_TYPE_OBJ:
            return decode_obj(buf, off, last_key)
        if typ == BLOCK_TYPE_INDEX:
            return decode_index(buf, off, last_key)
    except (IndexError, ValueError, OverflowError) as e:   # defensive: never leak these
        raise FormatError(f"corrupt record: {e}", offset=off) from None
    raise FormatError(f"unknown block type {typ!r}", offset=off)


def realloc_refname(refname: bytes | None, key: bytearray) -> bytes:
    """reftable_realloc(r->refname, key.len + 1) and the memcpy of the key into it, as
    reftable_ref_record_decode named a record before seed 000 6/7 (the ref loops'
    ref_name_alloc=off; on, they make the bytes themselves: reftable_malloc). realloc is
    one more call, which tests its pointer first; NULL (None: the name was released just
    before, as it always is there) makes it malloc's work, the same new bytes holding the
    key. A bytes cannot grow in place, so a name given is let go, as realloc's move frees
    the old block."""
    if refname is not None:
        del refname
    return bytes(key)


def skip_value(typ: int, buf: Buf, off: int, vt: int, hash_size: int) -> int:
    """Offset just past a record's value (used by seeks that only need keys)."""
    if typ == BLOCK_TYPE_REF:
        _, off = get_varint(buf, off)
        ids = REF_VALUE_IDS.get(vt, -1)
        if ids is None:
            n, off = get_varint(buf, off)
            return off + n
        if ids < 0:
            raise FormatError(f"unknown ref value type {vt}", offset=off)
        return off + ids * hash_size
    if typ == BLOCK_TYPE_INDEX:
        return get_varint(buf, off)[1]
    if typ == BLOCK_TYPE_LOG:
        if vt == LOG_DELETION:
            return off
        off += 2 * hash_size
        n, off = get_varint(buf, off)
        off += n
        n, off = get_varint(buf, off)
        off += n
        _, off = get_varint(buf, off)
        off += 2
        n, off = get_varint(buf, off)
        return off + n
    if typ == BLOCK_TYPE_OBJ:
        count = vt
        if vt == 0:
            count, off = get_varint(buf, off)
        if count > len(buf):
            raise FormatError(f"obj record claims {count} offsets", offset=off)
        for _ in range(count):
            _, off = get_varint(buf, off)
        return off
    raise FormatError(f"unknown block type {typ!r}", offset=off)
