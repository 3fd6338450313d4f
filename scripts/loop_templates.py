"""The templates of scripts/gen_loops.py: the record loops, the record layout, the scans
and the merge loops, each a text with markers (see gen_loops' docstring), and the lines
each flag's variants put at a marker. gen_loops.py expands them into loops.py.
"""
from __future__ import annotations

import sys
from pathlib import Path

try:
    from reftable_core.reftable import record
except ImportError:             # run with an interpreter that has not installed the core
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "core"))
    from reftable_core.reftable import record

# ================================================================ record loops
# The end of every record loop: on to the next block of the section.
_NEXT_BLOCK = '''\
        # on to the next block of this section (None: stop here)
        following = next_block(block) if next_block is not None else None
        if following is None:
            return
        block = following
        off = block.header_off + 4
        last = b""
'''

# The start of every record loop's pass over one block: its bytes, bounds and name.
_BLOCK_START = '''\
        data = block.data
        buf = data                      # its bytes one at a time (Cython: a pointer)
        base = block.base               # data[base + i] is byte i of the block
        off += base
        end = base + block.end
        block_off = block.off - base    # block_off + position: the file offset
        name_of_table = block.name
        last = bytearray(last)
'''


def _record_end(kind: str) -> str:
    """The end of the ref and log loops' record: its key kept, the record yielded; a
    short read anywhere in it is a truncated record (at its start); then the next block."""
    return f'''\
                KEY_STORE
                yield rec
        except (IndexError, OverflowError, FormatError) as e:
            # OverflowError: a length past 2**63 meets the Cython build's C offsets
            if isinstance(e, FormatError) and e.path is not None:
                raise
            raise FormatError("truncated {kind} record", name_of_table, block_off + off) from None
''' + _NEXT_BLOCK


REF_LOOP = '''
CYTHON_LOCALS
def FUNC(
        block: B, off: int, last: bytes | bytearray, hash_size: int, min_ui: int,
        next_block: Callable[[B], B | None] | None) -> Iterator[RefRecord]:
    """Yield RefRecords from block (at off, after key last), then from the blocks
    next_block(block) returns (VARIANT)."""
    RefRec = RefRecord
    new = RefRec.__new__        # object.__new__ (a compiled RefRecord: its own)
    h2 = 2 * hash_size
    while True:
''' + _BLOCK_START + '''        try:
            while off < end:
                start = off
                READ_PREFIX
                READ_SUFFIX
                if p > len(last):
                    raise FormatError("prefix length exceeds the previous key",
                                      name_of_table, block_off + start)
                nxt = off + (s >> 3)
                KEY_DECODE
                off = nxt
                READ_UPDATE_INDEX
                NAME
                vt = s & 7
                if vt == 1:
                    # the common records are built slot by slot: __new__ plus
                    # six slot stores cost about half of a call to the dataclass __init__
                    # (the annotation: compiled, the stores are native, not setattr calls;
                    # the Cython build calls the cdef class's tp_new: cython_rewrites.py)
                    VALUE_END_1
                    rec: RefRecord = new(RefRec)
                    rec.refname = name
                    rec.update_index = u + min_ui
                    rec.value_type = 1
                    rec.value = data[off:nxt]
                    rec.target_value = None
                    rec.target = None
                elif vt == 2:
                    VALUE_END_2
                    rec = new(RefRec)
                    rec.refname = name
                    rec.update_index = u + min_ui
                    rec.value_type = 2
                    rec.value = data[off:off + hash_size]
                    rec.target_value = data[off + hash_size:nxt]
                    rec.target = None
                elif vt == 3:
                    VALUE_END_3
                    rec = RefRec(name, u + min_ui, 3, None, None, data[off:nxt])
                elif vt == 0:
                    VALUE_END_0
                    rec = RefRec(name, u + min_ui, 0, None, None, None)
                else:
                    raise FormatError(f"unknown ref value type {vt}", name_of_table,
                                      block_off + start)
                if nxt > end:       # offsets only grow: this also covers the key suffix
                    raise FormatError("ref record runs past the block",
                                      name_of_table, block_off + start)
                off = nxt
''' + _record_end("ref")

LOG_LOOP = '''
CYTHON_LOCALS
def FUNC(
        block: B, off: int, last: bytes | bytearray, hash_size: int, min_ui: int,
        next_block: Callable[[B], B | None] | None) -> Iterator[LogRecord]:
    """Yield LogRecords like the ref loops do RefRecords (VARIANT)."""
    LogRec = LogRecord
    h2 = 2 * hash_size
    while True:
''' + _BLOCK_START + '''        try:
            while off < end:
                start = off
                READ_PREFIX
                s, off = get_varint(data, off)
                nxt = off + (s >> 3)
                if nxt > end or p > len(last):
                    raise FormatError("record key runs past the block or bad prefix length",
                                      name_of_table, block_off + start)
                KEY_DECODE
                off = nxt
                kl = len(key)
                if kl <= 9 or key[kl - 9] != 0:
                    raise FormatError("malformed log key", name_of_table, block_off + start)
                refname = bytes(key[:kl - 9])
                ui = MAX_U64 - int.from_bytes(key[kl - 8:], "big")
                vt = s & 7
                if vt == 1:
                    old = data[off:off + hash_size]
                    new = data[off + hash_size:off + h2]
                    off += h2
                    n, off = get_varint(data, off)
                    nm = data[off:off + n]
                    off += n
                    n, off = get_varint(data, off)
                    em = data[off:off + n]
                    off += n
                    t, off = get_varint(data, off)
                    tz = (buf[off] << 8) | buf[off + 1]
                    if tz & 0x8000:
                        tz -= 0x10000
                    off += 2
                    n, off = get_varint(data, off)
                    msg = data[off:off + n]
                    off += n
                    rec = LogRec(refname, ui, 1, old, new, nm, em, t, tz, msg)
                elif vt == 0:
                    rec = LogRec(refname, ui, 0, None, None, b"", b"", 0, 0, b"")
                else:
                    raise FormatError(f"unknown log value type {vt}", name_of_table,
                                      block_off + start)
                if off > end:
                    raise FormatError("log record runs past the block", name_of_table,
                                      block_off + start)
''' + _record_end("log")

GENERIC_LOOP = '''
def FUNC(
        block: B, off: int, last: bytes | bytearray, hash_size: int, min_ui: int,
        next_block: Callable[[B], B | None] | None) -> Iterator[Record]:
    """Yield the records of TYPE blocks through record.decode_record (cold path;
    VARIANT)."""
    typ = TYPE
    while True:
''' + _BLOCK_START + '''        while off < end:
            start = off
            try:
                rec, key, off = decode_record(typ, data, off, bytes(last), hash_size, min_ui)
            except FormatError as e:
                raise FormatError(e.msg, name_of_table, block_off + start) from None
            if off > end:
                raise FormatError("record runs past the block", name_of_table, block_off + start)
            KEY_STORE
            yield rec
''' + _NEXT_BLOCK

# The C types of the loops' locals for the Cython build (CYTHON_LOCALS, the line before
# each ref, log and merge loop): a generator can be neither cdef nor cpdef, so a .pxd
# cannot type it; this decorator in the .py can. In the interpreter and under mypyc
# cython is reftable_core.cython_shim, whose locals() returns the function unchanged;
# scripts/build-cython-core.sh compiles it as Cython's own. block is the extension type
# (parsed_block.pxd: its fields read from its C struct); buf is a typed memoryview of
# data (an mmap or bytes; read-only, so const), which the build's rewrites replace in the
# ref and log loops by a pointer to data's bytes and their number (bp, bn: cbytes.pxd's
# bufptr, taken again after each yield; scripts/cython_rewrites.py); offsets are C
# integers; a varint's value p or s fits unsigned 64 bits (basics.get_varint checks); a
# length n, an update index and a time stay Python ints (a corrupt one may pass 2**63:
# OverflowError when it meets an offset, a truncated record). A merge loop's queue entries
# ([record, index]) are lists: their two slots read as a list's, not through the generic
# item protocol.
_RECORD_TYPES = {"block": "Block", "buf": "const unsigned char[:]",
                 **{v: "Py_ssize_t" for v in ("off", "base", "end", "block_off", "start",
                                              "nxt", "hash_size", "h2", "vt")},
                 "p": "unsigned long long", "s": "unsigned long long"}


def cython_locals(types: dict[str, str]) -> str:
    """The decorator line(s) declaring `types` (name -> C type) to Cython."""
    items = [f'{name}="{typ}"' for name, typ in types.items()]
    lines, line = [], "@cython.locals("
    for i, item in enumerate(items):
        piece = item + (", " if i < len(items) - 1 else ")")
        if len(line) + len(piece) > 92:
            lines.append(line.rstrip())
            line = "               "
        line += piece
    return "\n".join(lines + [line])


# A merge loop's heap indices are in range by construction (each below the heap's length,
# from 0 up), so its typed lists are indexed as git's arrays are, unchecked: no bounds
# test, no negative index counted from the end.
MERGE_CHECKS = "@cython.boundscheck(False)\n@cython.wraparound(False)\n"

CYTHON_LOCALS = {
    "ref": cython_locals({**_RECORD_TYPES, "rec": "RefRecord"}),
    "log": cython_locals({**_RECORD_TYPES, "kl": "Py_ssize_t", "tz": "Py_ssize_t"}),
    **{f"merge_{kind}": MERGE_CHECKS + cython_locals({
        "heap": "list", "its": "list",
        **{v: "list" for v in ("entry", "last", "child", "right", "parent", "top", "e")},
        **{v: "Py_ssize_t" for v in ("n", "i", "j", "k", "idx", "tidx")},
        "erec": record, "rec": record}) for kind, record in (("ref", "RefRecord"),
                                                             ("log", "LogRecord"))},
}

# ================================================================ the record layout
def indented(indent: str, text: str) -> list[str]:
    return [indent + t for t in text.splitlines()]


# The statements that read a record's bytes come from reftable_core.reftable.record
# (VARINT, SUFFIX_VARINT, SKIP_VARINT, REF_VALUE_IDS: the layout written once); the
# record loops above and the scans below are made of them, so no loop reads the layout
# its own way and none calls a function per record to read it.
def _value_end(ids: int | None, to: str, at: str, h2: str) -> str:
    """Statements setting `to` past a ref value of `ids` object ids (None: a varint
    length and that many bytes) at index `at`; `to` == `at` advances `at` itself;
    h2 is the expression for the size of two ids."""
    if ids is None:
        n = "n, {at} = get_varint(data, {at})\n".format(at=at)
        return n + (f"{at} += n" if to == at else f"{to} = {at} + n")
    size = {0: "", 1: "hash_size", 2: h2}[ids]
    if to == at:
        return f"{at} += {size}" if size else ""
    return f"{to} = {at} + {size}" if size else f"{to} = {at}"


def _ref_value_skip(h2: str, error: str) -> str:
    """The if-chain stepping off over the ref value of type vt; error raises for a
    type the format does not know."""
    if [vt for vt, ids in record.REF_VALUE_IDS.items() if ids == 0] != [0]:
        raise AssertionError("the skip's final `elif vt:` assumes type 0 alone is empty")
    out: list[str] = []
    for vt, ids in record.REF_VALUE_IDS.items():
        if ids:
            out.append(f"{'elif' if out else 'if'} vt == {vt}:")
            out += indented("    ", _value_end(ids, "off", "off", h2))
        elif ids is None:
            out.append(f"{'elif' if out else 'if'} vt == {vt}:")
            out += indented("    ", _value_end(None, "off", "off", h2))
    return "\n".join(out + ["elif vt:", "    " + error])


LAYOUT = {
    "READ_PREFIX": record.VARINT.format(v="p", at="off"),
    "READ_SUFFIX": record.SUFFIX_VARINT.format(v="s", at="off"),
    "READ_UPDATE_INDEX": record.VARINT.format(v="u", at="off"),
    "SKIP_VARINT": record.SKIP_VARINT.format(at="off"),
    **{f"VALUE_END_{vt}": _value_end(ids, "nxt", "off", "h2")
       for vt, ids in record.REF_VALUE_IDS.items()},
}

# The seek's scans (block.seek_in_block and seek_in_block_copying; the restart table's
# binary search and the linear scan's step over one record, keys read, values skipped)
# and lab.stages' walk (the floor of a record loop: every record stepped over, nothing
# decoded). Called once a block (a seek, a walk) or once a record of a seek's scan,
# never from a record loop. RESTART_SCAN is the binary search, one function per value of
# restart_key_in_place (RESTART_KEY: how a probed restart record's key is compared).
RESTART_SCAN = '''

def FUNC(block: Any, want: bytes) -> int:
    """Binary search for the first restart point whose key is > want (restart records
    store their whole key); the index in block.data of the restart point before it
    (or of the first record), where the linear scan starts
    (VARIANT)."""
    data = block.data
    buf = data                  # its bytes one at a time (see record.VARINT)
    base = block.base           # positions below are indexes into data (base + rel)
    end = base + block.end
    rs = base + block.restart_start
    lo, hi = 0, block.restart_count
    try:
        while lo < hi:
            mid = (lo + hi) >> 1
            q = rs + 3 * mid
            r = base + ((buf[q] << 16) | (buf[q + 1] << 8) | buf[q + 2])
            if r >= end:
                raise block.error(f"restart offset {r - base} outside the block's records",
                                  q - base)
            RESTART_KEY
                hi = mid
            else:
                lo = mid + 1
    except (IndexError, FormatError) as e:
        if isinstance(e, FormatError) and e.path is not None:
            raise
        raise block.error("restart table points outside the block", rs - base) from None
    return base + (block.restart_offset(lo - 1) if lo > 0 else block.header_off + 4)
'''
# restart_key_in_place (upstream d51d8cc368, 2024-04-03, "reftable/block: avoid decoding
# keys when searching restart points"; restart_needle_less in reftable/block.c), keyed by
# the flag: the lines from a probed restart record's start r to the comparison with want.
# Both reject a restart record whose prefix length is not 0 (the same error), and one
# whose key runs past the block's records.
#   off:  -	struct strbuf kth_restart_key = STRBUF_INIT;
#         -	n = reftable_decode_key(&kth_restart_key, &unused_extra, in);
#         -	result = strbuf_cmp(&args->needle, &kth_restart_key);
#         -	strbuf_release(&kth_restart_key);
#         reftable_decode_key reads both lengths (reftable_decode_keylen: get_var_int,
#         read here as every loop reads a varint, record.VARINT), fails when
#         "prefix_len > last_key->len" (the key it extends is the empty kth_restart_key:
#         any nonzero prefix) or the suffix runs past the input, then strbuf_add()s the
#         suffix to the empty buffer: a new bytearray per probe (counted in
#         WORK.restart_keys_decoded), compared with want
#   on:   +	n = reftable_decode_keylen(in, &prefix_len, &suffix_len, &extra);
#         +	if (n < 0 || prefix_len) {
#         +	n = memcmp(args->needle.buf, in.buf,
#         +		   args->needle.len < suffix_len ? args->needle.len : suffix_len);
#         the same two lengths (reftable_decode_keylen, called by both versions), the
#         prefix length checked to be 0 (its one byte: a varint 0), the suffix compared
#         where it lies (the slice is how Python reads bytes as a unit)
RESTART_KEY = {
    False: """\
o = r
RESTART_PREFIX
RESTART_SUFFIX
n = s >> 3
if p:
    raise block.error("restart point is not an uncompressed record", q - base)
if o + n > end:
    raise block.error("restart key runs past the block's records", q - base)
key = bytearray()               # struct strbuf kth_restart_key = STRBUF_INIT
key += data[o:o + n]            # strbuf_add(&kth_restart_key, in.buf, suffix_len)
WORK.restart_keys_decoded += 1
if key > want:""",
    True: """\
if buf[r] != 0:
    raise block.error("restart point is not an uncompressed record", q - base)
o = r + 1
RESTART_SUFFIX
n = s >> 3
if o + n > end:
    raise block.error("restart key runs past the block's records", q - base)
if data[o:o + n] > want:    # type: ignore[operator]  # bytes or a map""",
}
RESTART_SCAN_NAMES = {True: "restart_scan_start", False: "restart_scan_start_decoding"}
SCANS = '''

def record_extent(block: Any, data: Any, off: int, end: int, last_len: int,
                  hash_size: int) -> tuple[int, int, int, int]:
    """(prefix length, suffix start, suffix end, record end) of the record at index off
    of block.data, its value skipped undecoded (IndexError when it is truncated)."""
    buf = data
    start = off
    READ_PREFIX
    READ_SUFFIX
    lo = off
    off += s >> 3
    if off > end or p > last_len:
        raise block.error("record key runs past the block or bad prefix length",
                          start - block.base)
    hi = off
    typ = block.typ
    if typ == BLOCK_TYPE_REF:
        SKIP_VARINT
        vt = s & 7
        EXTENT_VALUE_SKIP
    elif typ == BLOCK_TYPE_INDEX:
        SKIP_VARINT
    else:
        off = skip_value(typ, data, off, s & 7, hash_size)
    if off > end:
        raise block.error("record runs past the block", start - block.base)
    return p, lo, hi, off


def walk_ref_records(data: Any, off: int, end: int, hash_size: int) -> int:
    """The number of ref records at data[off:end], each stepped over, nothing decoded:
    its prefix length and update index skipped, its suffix length read, its key suffix
    and value skipped (lab.stages' walk: the least a record loop does)."""
    buf = data
    count = 0
    h2 = 2 * hash_size
    while off < end:
        SKIP_VARINT
        READ_SUFFIX
        off += s >> 3
        SKIP_VARINT
        vt = s & 7
        WALK_VALUE_SKIP
        count += 1
    return count
'''
SCAN_LINES = {
    **LAYOUT,
    "RESTART_PREFIX": record.VARINT.format(v="p", at="o"),
    "RESTART_SUFFIX": record.SUFFIX_VARINT.format(v="s", at="o"),
    "EXTENT_VALUE_SKIP": _ref_value_skip(
        "2 * hash_size", 'raise block.error(f"unknown ref value type {vt}", start - block.base)'),
    "WALK_VALUE_SKIP": _ref_value_skip("h2", 'raise FormatError(f"unknown ref value type {vt}")'),
}
SCAN_NAMES = (*RESTART_SCAN_NAMES.values(), "record_extent", "walk_ref_records")

# The key buffers. git's block_iter decodes each key into the scratch strbuf
# it->key (reftable_decode_key: strbuf_reset, then strbuf_add of the prefix of
# it->last_key and of the suffix); here `key = last[:p] + suffix` builds it, a
# bytearray as `last` is one. Both variants do that; they differ in what follows.
#
# block_key_swap (seed 000 5/7, block_iter_next in reftable/block.c):
#   off:  - strbuf_reset(&it->last_key);
#         - strbuf_addbuf(&it->last_key, &it->key);
#         the key is copied into the reused last_key buffer, once per record
#   on:   + strbuf_swap(&it->last_key, &it->key);
#         no copy: the key becomes last_key (its old buffer is dropped, the next
#         key is built anew in both variants)
KEY = {
    True: {"KEY_STORE": "last = key"},
    False: {"KEY_STORE": "last[:] = key"},
}
# decode_key_in_place (upstream daf4f43d0d, 2024-03-04, "reftable/record: decode keys in
# place"; reftable_decode_key and block_iter_next in reftable/{record,block}.c), keyed by
# the flag: KEY_DECODE builds the record's key, KEY_STORE (the block_key_swap lines
# above) then keeps it as last_key only when off.
#   off:  - int reftable_decode_key(struct strbuf *key, uint8_t *extra,
#         -                         struct strbuf last_key, struct string_view in)
#         -	strbuf_reset(key);
#         -	strbuf_add(key, last_key.buf, prefix_len);
#         -	strbuf_add(key, in.buf, suffix_len);
#         the key is assembled in a second buffer (last[:p]: a new bytearray holding
#         the prefix, then the suffix added), which becomes last_key per block_key_swap
#   on:   + int reftable_decode_key(struct strbuf *last_key, uint8_t *extra,
#         +                         struct string_view in)
#         +	strbuf_setlen(last_key, prefix_len);
#         +	strbuf_add(last_key, in.buf, suffix_len);
#         -	strbuf_swap(&it->last_key, &it->key);
#         last_key is cut to the prefix and the suffix appended: one buffer, no key
#         buffer, nothing to swap or copy (block_key_swap has no line left to act on)
KEY_DECODE = {
    False: "key = last[:p]\nkey += data[off:nxt]",
    True: "del last[p:]                # strbuf_setlen(last_key, prefix_len)\n"
          "last += data[off:nxt]       # strbuf_add(last_key, suffix)\n"
          "key = last",
}
# ref_name_alloc (seed 000 6/7, reftable_ref_record_decode in reftable/record.c).
# Both versions first call reftable_ref_record_release(r), which frees r->refname
# and leaves it NULL, and both then memcpy the key into the new name; the patch
# changes one line:
#   off:  - r->refname = reftable_realloc(r->refname, key.len + 1);
#         realloc of a pointer that is always NULL: realloc's NULL test, then the
#         same malloc ("we know at that point that the refname will always be
#         NULL, so we would always end up allocating a new char array anyway")
#   on:   + r->refname = reftable_malloc(key.len + 1);
# The allocation plus memcpy is bytes(key) (a new bytes object copied from the
# key buffer); the release is dropping the loop's reference to the last name. Off,
# realloc is record.realloc_refname: one call more, its pointer test, then the same
# bytes(key) (in C, realloc(NULL, n) calls malloc(n)).
NAME = {
    True: {"NAME": "name = bytes(key)"},
    False: {"NAME": ("name: bytes | None = None   # reftable_ref_record_release(r): NULL\n"
                     "name = realloc_refname(name, key)   # realloc(NULL, n): malloc(n)")},
}
# mmap (seed 004 4/4) is not a loop variant: it acts where the block's bytes come
# from (block._setup: the map in place / a fresh pread buffer). The loops index
# data at base + offset and slice each field out of it; a slice of bytes or of an
# mmap.mmap is a fresh bytes, the copy git's memcpy into the record makes in both
# versions, so one loop serves both values.

# the generic loops: block type constant and function name prefix
GENERIC_TYPES = (("BLOCK_TYPE_OBJ", "obj"), ("BLOCK_TYPE_INDEX", "index"))

# ================================================================ merge loops
MERGE_LOOP = '''
CYTHON_LOCALS
def FUNC(
        heap: list[Any], its: list[Iterator[Any]]) -> Iterator[Any]:
    """Yield the merged records (VARIANT): pop the smallest entry, advance its
    sub-iterator, drop every queued entry with a key not greater than it (older
    versions of the same key), DELETIONS."""
    nxt = next
    pop = heap.pop
    append = heap.append
    BUFFERS
    while heap:
        entry = heap[0]
        REMOVE_TOP
        erec, idx = entry
        BYPASS
        rec = nxt(its[idx], None)
        if rec is not None:
            entry[0] = rec
            ADD(entry)
        ENTRY_KEY
        SHADOW_HEAD
            top = heap[0]
            tidx = top[1]
            SAME_SUBITER
            TOP_KEY
            if SHADOWED:
                break
            REMOVE_TOP
            rec = nxt(its[tidx], None)
            if rec is not None:
                top[0] = rec
                ADD(top)
            DROPPED
        EMIT
'''

# pq remove (the top was read as heap[0] just before)
REMOVE_TOP = """\
last = pop()
n = len(heap)
if n:
    i = 0
    j = 1
    while j < n:
        child = heap[j]
        k = j + 1
        if k < n:
            right = heap[k]
            if LESS(right, child):
                j = k
                child = right
        if not LESS(child, last):
            break
        heap[i] = child
        i = j
        j = 2 * i + 1
    heap[i] = last"""

# pq add of entry ENTRY: a [record, sub-iterator index] list, reused for the
# sub-iterator's next record (no entry built per record)
ADD = """\
e = ENTRY
i = len(heap)
append(e)
while i:
    j = (i - 1) >> 1
    parent = heap[j]
    if LESS(parent, e):
        break
    heap[i] = parent
    i = j
heap[i] = e"""

# pq.MergedIterPQueue's add and remove (its methods themselves: no call more): the same
# ADD and REMOVE_TOP, the less-than a call (the queue's own, pq.make_less)
HEAP = '''

def pq_add(pq: Any, entry: Any) -> None:
    """pq.MergedIterPQueue.add (git's merged_iter_pqueue_add): the merge loops' add."""
    heap = pq.heap
    less = pq.less
    append = heap.append
    ADD(entry)


def pq_remove(pq: Any) -> Any:
    """pq.MergedIterPQueue.remove (merged_iter_pqueue_remove): the top entry, taken off
    by the merge loops' remove."""
    heap = pq.heap
    less = pq.less
    entry = heap[0]
    pop = heap.pop
    REMOVE_TOP
    return entry
'''

# pq_cmp (seed 000 4/7, pq_less in reftable/pq.c), keyed (kind, pq_cmp): the
# queue's less-than of entries A, B; on equal keys the entry of the newer table
# (higher index) is smaller ("if (cmp == 0) return a->index > b->index;").
#   off:  - struct strbuf ak = STRBUF_INIT;
#         - struct strbuf bk = STRBUF_INIT;
#         - reftable_record_key(&a->rec, &ak);
#         - reftable_record_key(&b->rec, &bk);
#         - cmp = strbuf_cmp(&ak, &bk);
#         - strbuf_release(&ak);
#         - strbuf_release(&bk);
#         two fresh buffers per comparison, each allocated and filled with a key:
#         bytearray(refname) for a ref (bytes(refname) would be the same object),
#         the record's key() for a log (refname NUL reversed update index)
#   on:   + int cmp = reftable_record_cmp(&a->rec, &b->rec);
#         the key fields compared, no key built
LESS = {
    ("ref", False): "((ak := bytearray(A[0].refname)) < (bk := bytearray(B[0].refname))"
                    " or (ak == bk and A[1] > B[1]))",
    ("ref", True): "((an := A[0].refname) < (bn := B[0].refname) or (an == bn and A[1] > B[1]))",
    ("log", False): "((ak := A[0].key()) < (bk := B[0].key()) or (ak == bk and A[1] > B[1]))",
    ("log", True): "((an := A[0].refname) < (bn := B[0].refname) or (an == bn and"
                   " ((au := A[0].update_index) > (bu := B[0].update_index)"
                   " or (au == bu and A[1] > B[1]))))",
}


def _format_key(kind: str, buf: str, rec: str) -> str:
    """Statements formatting the key of record rec into the reused bytearray buf, as
    reftable_record_key does into a strbuf (reset, then add): a ref key is the
    refname, a log key the refname, NUL and the big-endian MAX_U64 - update_index."""
    if kind == "ref":
        return f"{buf}[:] = {rec}.refname"
    return (f"{buf}[:] = {rec}.refname\n{buf} += b\"\\0\"\n"
            f"{buf} += (MAX_U64 - {rec}.update_index).to_bytes(8, \"big\")")


# merged_cmp (seed 000 2/7, merged_iter_next_entry in reftable/merged.c), keyed
# (kind, merged_cmp): BUFFERS (at the iterator's start), ENTRY_KEY (once per
# returned record erec), TOP_KEY (per shadow comparison) and SHADOWED (whether
# the queue top's key is greater than erec's).
#   off:  the two buffers of the merged iterator, reused since 829231dc20
#         ("reftable/merged: reuse buffer to compute record keys"):
#         - .key = STRBUF_INIT,
#         - .entry_key = STRBUF_INIT,
#         - reftable_record_key(&entry.rec, &mi->entry_key);
#         -  reftable_record_key(&top.rec, &mi->key);
#         -  cmp = strbuf_cmp(&mi->key, &mi->entry_key);
#         both keys are formatted (copied) into the two reused bytearrays, which
#         are then compared; nothing is allocated per comparison
#   on:   +  cmp = reftable_record_cmp(&top.rec, &entry.rec);
#         field-wise (a log key sorts by refname, then update_index descending)
SHADOW = {
    ("ref", False): {"BUFFERS": "key = bytearray()\nentry_key = bytearray()",
                     "ENTRY_KEY": _format_key("ref", "entry_key", "erec"),
                     "TOP_KEY": _format_key("ref", "key", "top[0]"),
                     "SHADOWED": "key > entry_key"},
    ("ref", True): {"BUFFERS": "", "ENTRY_KEY": "", "TOP_KEY": "",
                    "SHADOWED": "top[0].refname > erec.refname"},
    ("log", False): {"BUFFERS": "key = bytearray()\nentry_key = bytearray()",
                     "ENTRY_KEY": _format_key("log", "entry_key", "erec"),
                     "TOP_KEY": "trec = top[0]\n" + _format_key("log", "key", "trec"),
                     "SHADOWED": "key > entry_key"},
    ("log", True): {"BUFFERS": "", "ENTRY_KEY": "", "TOP_KEY": "",
                    "SHADOWED": ("((tn := top[0].refname) > (en := erec.refname) or"
                                 " (tn == en and top[0].update_index < erec.update_index))")},
}

# same_subiter_skip (seed 000 3/7, merged_iter_next_entry in reftable/merged.c):
#   off:  every pass of the shadow loop compares the queue top with the entry
#   on:   +		if (top.index == entry.index)
#         +			break;
#         a sub-iterator yields strictly increasing keys, so the loop stops when
#         the top came from the returned entry's sub-iterator
SAME_SUBITER = {False: "", True: "if tidx == idx:\n    break"}

# single_subiter_bypass (no seed: upstream f8c1a8e2e1, "reftable/merged:
# circumvent pqueue with single subiter", git 2.45; the seeds hold no diff of it):
#   on:   when the queue is empty after taking an entry, every other sub-iterator
#         is exhausted; the entry's own sub-iterator yields strictly increasing
#         keys, so its records need neither the queue nor the shadow check
#   off:  (git at the time of seed 000) they go through both
# The test reads n, the length the queue's removal just left (REMOVE_TOP), as f8c1a8e2e1's
# `empty = merged_iter_pqueue_is_empty(mi->pq)` reads the queue's count.
BYPASS = {
    (False, False): "",
    (False, True): "",
    (True, False): """\
if not n:
    yield erec
    yield from its[idx]
    return""",
    (True, True): """\
if not n:
    if erec.value_type:
        yield erec
    else:
        WORK.deletions_suppressed += 1
    for erec in its[idx]:
        if erec.value_type:
            yield erec
        else:
            WORK.deletions_suppressed += 1
    return""",
}

# single_subiter_bypass, keyed by bypass: SHADOW_HEAD (the shadow loop's head) and
# DROPPED (after a shadowed entry's sub-iterator is advanced). f8c1a8e2e1 tests the
# queue once, before the advance, and lets that answer stand for the test the old
# code made after it:
#         +	empty = merged_iter_pqueue_is_empty(mi->pq);
#         ...
#         +		if (!err)
#         +			empty = 0;
#         -	if (merged_iter_pqueue_is_empty(mi->pq))
#         +	if (empty)
#   off:  the shadow loop tests the queue before each pass, the first one included
#         (after the advance, the queue is empty when the advanced sub-iterator ended
#         and it held no other entry)
#   on:   the bypass test found the queue not empty, and the advance only adds, so
#         the first pass is made untested; a later pass is tested only when the
#         entry it removed was not put back (its sub-iterator ended)
SHADOW_LOOP = {
    False: {"SHADOW_HEAD": "while heap:", "DROPPED": ""},
    True: {"SHADOW_HEAD": "while True:", "DROPPED": "elif not heap:\n    break"},
}

# suppress (the merged table's suppress_deletions; the reader view's value is
# flags.tombstone_suppression's business, upstream 146a946321, 2026-07-10, in
# refs/reftable_backend.py), keyed by suppress: EMIT (the end of each pass) and
# DELETIONS (the docstring's words). git before 146a946321, merged_iter_next_void
# in reftable/merged.c:
#   on:   	while (1) {
#         		int err = merged_iter_next_entry(mi, rec);
#         		if (err)
#         			return err;
#         		if (mi->suppress_deletions && reftable_record_is_deletion(rec))
#         			continue;
#         		return 0;
#         	}
#         the loop consumes every deletion before its caller sees a record, so a
#         caller's bound check waits until the next live record (or the end)
#   off:  (git from 146a946321 on, which no longer sets suppress_deletions;
#         compaction always) every record is returned, deletions included
SUPPRESS = {
    True: {"EMIT": "if erec.value_type == 0:\n    WORK.deletions_suppressed += 1\n"
                   "    continue\nyield erec",
           "DELETIONS": "consume deletions here"},
    False: {"EMIT": "yield erec", "DELETIONS": "deletions returned"},
}
