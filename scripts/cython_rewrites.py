"""The lines the Cython build compiles differently from the committed sources.

    python scripts/cython_rewrites.py TREE     (a copy of core/; scripts/build-cython-core.sh)

Each rewrite is a regular expression applied line by line to one file of TREE, and must
match exactly the number of times given here: a source edit (or a regenerated loops.py)
that adds, moves or removes one is an error naming the rewrite, never a silently
different build. A rewrite never adds or removes a line, so a compiled module's line
numbers are the committed file's. Each rewritten file is first copied to FILE.committed;
the build puts those back beside the extensions once compiled (what inspect, tracebacks
and line profilers read).

- record.py: the record types are slotted dataclasses; record.pxd declares them as cdef
  classes, and a cdef class takes Cython's own dataclass decorator only (mypyc compiles the
  standard one natively; a decorator of the shim's it would not).
- loops.py (generated): a ref record is made by RefRecord's tp_new (the interpreter
  calls object.__new__, hoisted into a local); the ref and log loops' byte moves, spelled for the interpreter as
  slices and bytearray operations on `data` and the key buffers, become the inline C
  functions of cbytes.pxd over the typed view `buf` (PyBytes_FromStringAndSize from the
  view, PyByteArray_Resize plus memcpy). Each makes the objects its Python spelling makes
  and copies what it copies (a field is a new bytes; the off value of decode_key_in_place
  still builds a new key buffer a record), with one exception: `key += data[a:b]` appends
  the view's bytes where Python first makes them a bytes object (git's strbuf_add is a
  memcpy too). The merge loops read a queued entry's record as the record type of their
  kind (a checked cast), so its fields are read from the C struct, and call the builtin
  next() by its name (a local alias of it is a generic call in C).
  Their off values' keys (pq_cmp=off: a new bytearray of each name a comparison;
  merged_cmp=off: two bytearrays refilled a record), git's strbufs, are made, refilled and
  compared by cbytes.pxd's C (fresh, setkey, keycmp: PyByteArray_FromStringAndSize, a
  resize and memcpy, memcmp then the lengths) where the interpreter reaches them through
  a type call, a slice assignment and a rich comparison: the same allocations and copies.
  Their on values compare two names by memcmp (bytescmp; git's strcmp), and pop and push
  the queue by the list's own calls (the interpreter: bound methods hoisted into locals,
  which the build does not make; so pq_add and pq_remove).
  block_key_swap=off's copy of the key into the kept last key is setkey too (a resize and
  a memcpy: strbuf_reset + strbuf_addbuf) where the interpreter assigns a slice.
  The seek's scans (restart_scan_start, restart_scan_start_decoding, record_extent) read
  a few bytes a call, where a typed view costs more to make than it saves: they read
  data's bytes through a pointer (cbytes.pxd's bufptr: a bytes' own, or an mmap's
  exported while the pointer is read) with byte_at (an int a byte, IndexError out of
  range, as indexing the bytes or the map). restart_key_in_place=on compares a probed key
  where it lies (memcmp; the interpreter slices it into a new bytes first, git compares
  in place); =off still decodes it into a new buffer, appended by memcpy (strbuf_add).
  loops.py and record.py call basics.pxd's get_varint, and record_extent record.pxd's
  skip_value, in C (cimported; the build's copies import them from Python no more).
  A record loop's kept last key starts as a copy of the key it starts after, made by
  fresh() (PyByteArray_FromStringAndSize) where the interpreter calls bytearray().
  finish_loop, which the interpreter runs as a no-op, marks a started loop generator that
  its caller alone holds finished (loops.pxd's LAB_FINISH_LOOP), so that freeing it does
  not resume it to throw GeneratorExit: no loop has a finally, a with or a handler that
  exception matches, so only the cost differs (the iterators' __dealloc__ call it).
- block.py: a Block is a cdef class (block.pxd: its fields in its C struct, offsets C
  integers); the loader's and the seek's locals are typed, and the seek calls loops.pxd's
  record_extent in C (the build's copy imports it from Python no more: it is cimported).
  The seek's key (the last key's prefix, then the record's suffix) is one new object with
  both parts copied in (cbytes.pxd's joinkey; the interpreter slices both, then adds them),
  and the loader reads its few header and trailer bytes through a pointer (byte_in) and
  makes its Block by the type's tp_new, its six fields stored in C (parsed_block.pxd's
  new_block), where the interpreter calls the class; it asks a mapped table's source
  (MmapSource, mmap=on) for its bytes in place by a C call, any other source by name.
- iter.py, table.py, merged.py: the table interface (Reftable) and the record iterator
  (RecordIter) are extension types (iter.pxd), declared without their Python bases (ABC,
  collections.abc.Iterator: the same methods, the abstract ones not enforced; Reftable's
  three annotated fields declared in iter.pxd), so that the table reader (table.pxd), a
  section's iterator (RecordIterator) and the merged iterator (merged.pxd) are extension
  types too: their fields sit in their C structs (where the interpreter lists them in
  __slots__ or sets them in __init__) and the seek's steps call each other in C (cpdef).
  The same methods in the same order.
- table.py: the table reader calls its block loader with the views flag (mmap) as one more
  argument, where the interpreter binds it in a functools.partial (a keyword merged into
  every call), and picks an index offset by comparisons where the interpreter builds a
  dict a call. The same loader, the same offsets. The steps a flag picks (the loader,
  block_type_early_exit; the seek in a block, seek_in_place; the record loop's start,
  next_block_in_place) are called in C, each chosen at the call by the flag's value kept
  in a C field, where the interpreter calls the function it bound when the reader was
  made: the same function (block_loader hands the partial the loader's Python function,
  looked up by its name, since a cpdef function named in its own module is its C).
- merged.py: the seek makes its queue (pq.pxd, an extension type) and adds to it with
  loops.pxd's pq_add in C.
- stack.py: under stat_cache=on the stat of tables.list is one stat(2) whose fields make
  the key (cstat.pxd), where the interpreter builds os.stat's stat_result first. A Stack
  is an extension type (stack.pxd), and reload calls the up-to-date check stat_cache picks
  in C, by the flag's C field, where the interpreter calls the bound method it stored.
- counters.py, blocksource.py: Counters and the block sources are extension types
  (counters.pxd, blocksource.pxd); the modules whose .pxd types their global WORK add to a
  counter in C (no rewrite: the .pxd declarations alone).
- packed.py: a walk's chunk is split into its lines by cline.pxd's C (memchr finds each LF,
  where CPython's split tests byte by byte; the same list of new bytes); its usual rows
  decode each hex id with cline.pxd's C, from the line where
  it lies (git's hex_to_bytes); the interpreter first slices the digits into a new bytes
  for binascii. The decoded id is a new bytes in both; a bad digit takes the Python
  spelling, and its binascii.Error. The row's name is a new bytes copied from the line
  (PyBytes_FromStringAndSize, where Python's slice goes through a slice object).
- refname.py: names_well_formed, the batch check of a walk's names, first walks each name
  through git's refname_disposition table in C (crefname.pxd: check_refname_format per
  name, as git's next_record calls it); when every name passes it answers True there, else
  the interpreted batch check runs as committed (and says False).
- odb/idx.py: PackIndex.find's binary search compares each probed name where it lies in
  the index (cidx.pxd: memcmp over a typed view, git's hashcmp in bsearch_hash), where the
  interpreter slices it out into a new bytes first.
- odb/delta.py: apply_delta reads the delta's bytes from a typed view (C integers, where the
  interpreter makes an int object a byte), makes the result once at its declared size and
  memcpys each copy and insert into it (cdelta.pxd; git's patch_delta), where the
  interpreter appends a memoryview slice an instruction to a bytearray, regrown as it
  fills, and copies it into a bytes at the end. A declared size beyond the base and the
  delta together is not allocated at once (a size bomb): the result starts there and
  doubles as it fills. The same checks in the same order, the same errors.
- odb/tree.py: split_tree walks a tree's entries one by one in C (ctree.pxd: memchr finds
  each space and NUL, the mode compared with the five git writes, as git's
  decode_tree_entry reads an entry), where the interpreter has a regular expression's
  findall match them and checks that the matches cover the tree. The same list of new
  bytes; a tree with any other entry is split entry by entry as committed.
"""
from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

RECORD = "reftable_core/reftable/record.py"
LOOPS = "reftable_core/reftable/loops.py"
PACKED = "reftable_core/refs/packed.py"
REFNAME = "reftable_core/refs/refname.py"
IDX = "reftable_core/odb/idx.py"
BLOCK = "reftable_core/reftable/block.py"
STACK = "reftable_core/reftable/stack.py"
BASICS = "reftable_core/reftable/basics.py"
PARSED_BLOCK = "reftable_core/reftable/parsed_block.py"
BACKEND = "reftable_core/refs/reftable_backend.py"
TABLE = "reftable_core/reftable/table.py"
DELTA = "reftable_core/odb/delta.py"
TREE = "reftable_core/odb/tree.py"
ITER = "reftable_core/reftable/iter.py"
MERGED = "reftable_core/reftable/merged.py"
SHOW_REF = "reftable_core/builtin/show_ref.py"
UPDATE_REF = "reftable_core/builtin/update_ref.py"
API = "reftable_core/refs/api.py"
READERS = "reftable_core/refs/packed_readers.py"
WRITER = "reftable_core/reftable/writer.py"
BLOCK_WRITER = "reftable_core/reftable/block_writer.py"
FIELD = r"(off(?: \+ hash_size)?)"              # a record loop's field start
# a merge loop's queue entry [record, index]: its record read through the entry's type
# (a checked cast: a TypeError, never a wrong read, should another type get there)
QUEUED = r"\b(right|child|last|parent|e|top)\[0\]\.(refname|update_index)\b"
COUNT_REF = COUNT_LOG = 416    # in the 32 ref and the 32 log merge loops
SCANS = r"(restart_scan_start|restart_scan_start_decoding|record_extent)$"   # the seek's scans
CAST_NAME = r"cython\.cast\(RefRecord, \w+\[0\], typecheck=True\)\.refname"   # a queued name
# (file, pattern, replacement, times[, scope]); applied in this order, each to the lines
# the ones before it left; with a scope, only inside the functions (top-level defs) whose
# names match it
REWRITES: list[tuple[str, ...]] = [
    (RECORD, r"^from dataclasses import dataclass, field, fields$",
     "import cython; from dataclasses import fields", 1),
    (RECORD, r"^@dataclass\(slots=True\)$", "@cython.dataclasses.dataclass", 4),
    # get_varint cimported (record.pxd, loops.pxd) and skip_value too (loops.pxd): called in C
    (RECORD, r"^from \.basics import MAX_U64, Buf, get_varint, put_varint$",
     "from .basics import MAX_U64, Buf, put_varint", 1),
    (RECORD, r"= field\(default_factory=list\)$",
     "= cython.dataclasses.field(default_factory=list)", 1),
    (LOOPS, r"^from \.basics import MAX_U64, get_varint$", "from .basics import MAX_U64", 1),
    (LOOPS, r"^    skip_value,$", "    # skip_value: cimported (loops.pxd)", 1),
    # a ref record made by its type's tp_new (the interpreter: object.__new__ hoisted into
    # a local; Cython calls tp_new directly for T.__new__(T) only)
    (LOOPS, r"\brec(?:: RefRecord)? = new\(RefRec\)$", "rec = RefRecord.__new__(RefRecord)", 12),
    (LOOPS, r"^    new = RefRec\.__new__ .*$", "    pass    # (RefRecord's tp_new is called by name: below)", 6),
    # strbuf_add(last_key, suffix): in place (decode_key_in_place=on) or onto a new key
    (LOOPS, r"\b(last|key) \+= data\[off:nxt\]", r"extend_at(\1, data, bp, bn, off, nxt)", 9),
    # strbuf_setlen(last_key, prefix_len)
    (LOOPS, r"\bdel last\[p:\]", "setlen(last, p)", 3),
    # block_key_swap=off: the key copied into the kept last key (strbuf_reset + strbuf_addbuf)
    (LOOPS, r"^(\s+)last\[:\] = key$", r"\1setkey(last, key)", 5),
    # the off value's new key buffer: the first p bytes of the last key
    (LOOPS, r"\bkey = last\[:p\]$", "key = head(last, p)", 6),
    # the record's name, a new bytes copied from the key buffer
    (LOOPS, r"\bname = bytes\(key\)", "name = frozen(key)", 3),
    (RECORD, r"^    return bytes\(key\)$", "    return frozen(key)", 1, "realloc_refname$"),
    # a field: a new bytes copied from the block
    (LOOPS, rf"(?<![\w.])data\[{FIELD}:((?:off \+ (?:hash_size|h2|n))|nxt)\]",
     r"take_at(data, bp, bn, \1, \2)", 39),
    # a log record's name and update index from its key (cbytes.pxd's head_bytes and
    # rev_index: the name copied once into a new bytes, the index's eight bytes read in C),
    # and the record made by its type's tp_new, its ten fields stored in C (record.pxd's
    # new_log), where the interpreter calls the class
    (LOOPS, r"\brefname = bytes\(key\[:kl - 9\]\)$", "refname = head_bytes(key, kl - 9)", 3),
    (LOOPS, r"\bui = MAX_U64 - int\.from_bytes\(key\[kl - 8:\], \"big\"\)$",
     "ui = rev_index(key, kl - 8)", 3),
    (LOOPS, r"\brec = LogRec\(", "rec = new_log(", 6),
    # the ref and log loops read a block's bytes through a pointer (cbytes.pxd's bufptr: a
    # bytes' own, or a map's, read from the map) with byte_at (an int a byte, IndexError out
    # of range, as indexing), taken again each time the loop resumes after a yield, so that
    # a map closed or a bytearray resized while the loop waits is read no more (a closed
    # map raises ValueError, as indexing it does); a typed view of the map, made at each
    # block, cost more than the seek's few reads of a record
    (LOOPS, r'\bbuf="const unsigned char\[:\]"', 'bp="cbuf", bn="Py_ssize_t"', 9),
    (LOOPS, r"^(\s+)buf = data\b.*$", r"\1bp = bufptr(data, cython.address(bn))", 9,
     "(ref|log)_loop__"),
    (LOOPS, r"\bbuf\[([^\]]+)\]", r"byte_at(bp, bn, \1)", 39, "(ref|log)_loop__"),
    (LOOPS, r"^(\s+)yield rec$", r"\1yield rec; bp = bufptr(data, cython.address(bn))", 9,
     "(ref|log)_loop__"),
    # finish_loop: the sole holder's started generator marked finished (loops.pxd's macro)
    (LOOPS, r"^    return None$", "    LAB_FINISH_LOOP(gen)", 1, "finish_loop$"),
    # a sub-iterator's next record: the builtin by its name, which Cython calls as the
    # iterator's tp_iternext (the interpreter reads it from a local, nxt = next)
    (LOOPS, r"\bnxt\((its\[t?idx\]), None\)", r"next(\1, None)", 128, "merge_"),
    (LOOPS, QUEUED, r"cython.cast(RefRecord, \1[0], typecheck=True).\2", COUNT_REF, "merge_ref__"),
    (LOOPS, QUEUED, r"cython.cast(LogRecord, \1[0], typecheck=True).\2", COUNT_LOG, "merge_log__"),
    # the off values' strbuf keys (pq_cmp=off: two new keys a comparison; merged_cmp=off:
    # two keys refilled a record) made, refilled and compared by direct C calls
    (LOOPS, rf"\bbytearray\(({CAST_NAME})\)", r"fresh(\1)", 192, "merge_ref__"),
    (LOOPS, rf"\(ak := (fresh\({CAST_NAME}\))\) < \(bk := (fresh\({CAST_NAME}\))\) or \(ak == bk and ",
     r"keycmp((ak := \1), (bk := \2)) < 0 or (keycmp(ak, bk) == 0 and ", 96, "merge_ref__"),
    (LOOPS, rf"\b(entry_key|key)\[:\] = ((?:erec|trec)\.refname|{CAST_NAME})$", r"setkey(\1, \2)", 64,
     "merge_"),
    (LOOPS, r"\bif key > entry_key:$", "if keycmp(key, entry_key) > 0:", 32, "merge_"),
    # the on values' name compares (strcmp), and the queue's pop (cbytes.pxd's heap_pop:
    # pq_remove's len--, the allocation kept) and push (the list's own append; the
    # interpreter calls both through bound methods hoisted into locals)
    (LOOPS, rf"\(an := ({CAST_NAME})\) < \(bn := ({CAST_NAME})\) or \(an == bn and ",
     r"bytescmp((an := \1), (bn := \2)) < 0 or (bytescmp(an, bn) == 0 and ", 96, "merge_ref__"),
    (LOOPS, rf"\bif ({CAST_NAME}) > erec\.refname:$", r"if bytescmp(\1, erec.refname) > 0:", 16,
     "merge_ref__"),
    (LOOPS, r"\blast = pop\(\)$", "last = heap_pop(heap)", 129, "(merge_|pq_remove)"),
    # the queue's reads (cbytes.pxd's heap_at: the list's array read, as git's pq->heap[i],
    # where Cython tests the list against None and the entry's type at each)
    (LOOPS, r"\b(entry|child|right|parent|top) = heap\[(0|j|k)\]$", r"\1 = heap_at(heap, \2)",
     516, "(merge_|pq_remove|pq_add)"),
    (LOOPS, r"^(\s+)append\(e\)$", r"\1heap.append(e)", 129, "(merge_|pq_add)"),
    # ... so the bound methods (and the builtin next) the interpreter hoists into locals
    # are not made: a method lookup each, at every seek, that C would not use
    (LOOPS, r"^    nxt = next$", "    pass    # next is called by its name (above)", 64, "merge_"),
    (LOOPS, r"^    pop = heap\.pop$", "    pass    # the pop is heap_pop (above)", 65,
     "(merge_|pq_remove)"),
    (LOOPS, r"^    append = heap\.append$", "    pass    # the push is the list's append (above)",
     65, "(merge_|pq_add)"),
    # the seek's scans: data's bytes read through a pointer (cbytes.pxd's bufptr and
    # byte_at: an int a byte, IndexError out of range, as the view's indexing), a probed
    # restart key compared where it lies (memcmp) and a decoded one appended by memcpy
    (LOOPS, r"^(\s+)buf = data\b.*$", r"\1bp = bufptr(data, cython.address(bn))", 3, SCANS),
    (LOOPS, r"\bbuf\[([^\]]+)\]", r"byte_at(bp, bn, \1)", 20, SCANS),
    (LOOPS, r"\bif data\[o:o \+ n\] > want:", "if slice_cmp(data, bp, bn, o, o + n, want) > 0:", 1,
     SCANS),
    (LOOPS, r"^(\s+)key \+= data\[o:o \+ n\]", r"\1extend_at(key, data, bp, bn, o, o + n)", 1,
     SCANS),
    # a record loop's kept last key: a new buffer holding a copy of the key it starts after
    (LOOPS, r"^(\s+)last = bytearray\(last\)$", r"\1last = fresh(last)", 13),
    # block.py: the seek's record_extent is loops.pxd's, cimported (block.pxd): called in C
    (BLOCK, r"^from \.loops import RECORD_LOOPS, RESTART_SCANS, RecordLoop, record_extent, restart_scan_start$",
     "from .loops import RECORD_LOOPS, RESTART_SCANS, RecordLoop, restart_scan_start", 1),
    # iter.py: the table interface and the record iterator as extension types (iter.pxd),
    # so that the table reader can be one: no Python base
    (ITER, r"^class RecordIter\(Iterator\[Any\]\):$", "class RecordIter:", 1),
    (ITER, r"^class Reftable\(ABC\):$", "class Reftable:", 1),
    (ITER, r"^    ((?:hash_id|min_update_index|max_update_index): .*)$", r"    # \1", 3),
    # table.py, merged.py: the record iterators are extension types too (their fields
    # declared in table.pxd and merged.pxd, where the interpreter lists them in __slots__)
    (ITER, r"^    __slots__ = \(\)$", "    pass    # no fields", 1),
    (TABLE, r"^    __slots__ = \((.*)\)$", r"    pass    # fields (table.pxd): \1", 1),
    (MERGED, r"^    __slots__ = \((.*)\)$", r"    pass    # fields (merged.pxd): \1", 1),
    # merged.py: a table's record iterator sought in C (merged.pxd's seek_sub), any other
    # sub-iterator by name
    (MERGED, r"^            sub\.seek\(key\)$", "            seek_sub(sub, key)", 1),
    # merged.py: the seek's queue made by its type's tp_new, its two fields stored in C
    # (pq.pxd's new_pq), where the interpreter calls the class
    (MERGED, r"^        pq = MergedIterPQueue\(self\._less\)$", "        pq = new_pq(self._less)", 1),
    # merged.py: the seek's queue add is loops.pxd's, cimported (merged.pxd): called in C
    (MERGED, r"^from \.loops import MERGE_LOOPS, MergeLoop, finish_loop, pq_add$",
     "from .loops import MERGE_LOOPS, MergeLoop", 1),
    (TABLE, r"^from \.loops import finish_loop$", "pass    # finish_loop: cimported (table.pxd)", 1),
    # the seek's key: the last key's prefix and the record's suffix copied into one new
    # object (the interpreter slices both first, then adds them)
    # a mapped table's bytes in place: MmapSource.in_place called in C (blocksource.pxd; any
    # other source by name, as the interpreter calls every one)
    (BLOCK, r"^    where = source\.in_place\(off\) if views else None$",
     "    where = ((cython.cast(MmapSource, source).in_place(off) if type(source) is MmapSource"
     " else source.in_place(off)) if views else None)", 1),
    # the loaders read a block's header by block.pxd's read_header: base, have and the type
    # written through pointers, where _read_header returns them in a tuple
    (BLOCK, r"^    data, base, have, typ = _read_header\(source, off, header_off, guess, limit, views\)$",
     "    data = read_header(source, off, header_off, guess, limit, views, cython.address(base),"
     " cython.address(have), cython.address(typ))", 2),
    # a block made by its type's tp_new and its six fields stored in C (parsed_block.pxd)
    (BLOCK, r"\bBlock\(typ, data, off, header_off, source\.name, base\)",
     "new_block(typ, data, off, header_off, source_name(source), base)", 2),
    (BLOCK, r"\b(key|next_last) = (last|next_last)\[:p\] \+ data\[lo:hi\]$",
     r"\1 = joinkey(\2, p, data, lo, hi)", 2, "seek_in_block"),
    # the loaders are cpdef (block.pxd): block_loader hands out the Python function of the
    # one the flag picks by its name (a cpdef function's name in its own module is its C)
    (BLOCK, r"^    load = load_block_early_exit if flags\.block_type_early_exit else load_block_full_setup$",
     "    load = globals()['load_block_early_exit' if flags.block_type_early_exit"
     " else 'load_block_full_setup']", 1),
    # the loader's header and trailer bytes, each read through a pointer (cbytes.pxd's byte_in)
    (BLOCK, r"\bdata\[((?:base|h|e) [+-] (?:header_off|sz|1|2|3))\]", r"byte_in(data, \1)", 7,
     "(_read_header|_setup)$"),
    # table.py: the block loader called with its views flag as an argument (where the
    # interpreter binds it in a functools.partial: a keyword merged a call), and an index
    # offset picked by comparisons (where the interpreter builds a dict a call)
    (TABLE, r"^        self\._load = block_loader\(flags\)$",
     "        self._load = block_loader(flags); "
     "self._load, self._views = self._load.func, self._load.keywords['views']; "
     "self._early = flags.block_type_early_exit", 1),
    # ... and the flag-picked steps of a seek (the loader, the seek in a block, the record
    # loop's start) called in C (cimported, table.pxd): each flag read from a C field at
    # the call, where the interpreter calls the function it bound when the reader was made
    # (the same function: the flag's value does not change under a reader)
    (TABLE, r"^from \.block import \(block_loader, record_loop, restart_scan, seek_in_block,$",
     "from .block import (block_loader, record_loop, restart_scan,", 1),
    (TABLE, r"^                    seek_in_block_copying\)$", "                    )", 1),
    (TABLE, r"^                              else self\._records_block_by_block\)$",
     "                              else self._records_block_by_block); "
     "self._next_in_place = flags.next_block_in_place", 1),
    (TABLE, r"^        self\._seek_in_block = seek_in_block if flags\.seek_in_place else seek_in_block_copying$",
     "        self._seek_in_block = None; self._seek_in_place = flags.seek_in_place", 1),
    (TABLE, r"^        return self\._load\(self\.source, off, self\.header_size if off == 0 else 0,$",
     "        return (load_block_early_exit(self.source, off, self.header_size if off == 0 else 0, "
     "self.block_size, self._limit, want_type, self._views) if self._early "
     "else load_block_full_setup(self.source, off, self.header_size if off == 0 else 0,", 1),
    (TABLE, r"^                          self\.block_size, self\._limit, want_type\)$",
     "                          self.block_size, self._limit, want_type, self._views))", 1),
    (TABLE, r"^            off, last = self\._seek_in_block\(block, key, hs, self\._restart_scan\)$",
     "            off, last = (seek_in_block(block, key, hs, self._restart_scan) if self._seek_in_place"
     " else seek_in_block_copying(block, key, hs, self._restart_scan))", 1),
    (TABLE, r"^        off, last = self\._seek_in_block\(block, (key|name), self\.hash_size,$",
     r"        off, last = (seek_in_block(block, \1, self.hash_size, self._restart_scan)"
     r" if self._seek_in_place else seek_in_block_copying(block, \1, self.hash_size,", 2),
    (TABLE, r"^                                         self\._restart_scan\)$",
     "                                         self._restart_scan))", 2),
    (TABLE, r"^        return self\._records_from\(block, off, last\)$",
     "        return (self._records_in_place(block, off, last) if self._next_in_place"
     " else self._records_block_by_block(block, off, last))", 1),
    (TABLE, r"^        load = self\._load$", "        load = self._load; views = self._views", 1),
    (TABLE, r"^            return load\(src, b\.off \+ b\.full_size, 0, bsize, limit, typ\)$",
     "            return load(src, b.off + b.full_size, 0, bsize, limit, typ, views)", 1),
    (TABLE, r"^        return \{BLOCK_TYPE_REF: self\.ref_index_offset, BLOCK_TYPE_LOG: self\.log_index_offset,$",
     "        return (self.ref_index_offset if typ == BLOCK_TYPE_REF else self.log_index_offset"
     " if typ == BLOCK_TYPE_LOG else", 1),
    (TABLE, r"^                BLOCK_TYPE_OBJ: self\.obj_index_offset\}\[typ\]$",
     "                {BLOCK_TYPE_OBJ: self.obj_index_offset}[typ])", 1),
    # block_writer.py: a key's common prefix with the last key, the bytes of two bytes or
    # bytearrays compared one by one in C (cbytes.pxd's prefix_len_c: git's
    # common_prefix_size), where the interpreter XORs two big ints made of them
    (BLOCK_WRITER, r"^    \"\"\"Length of the common prefix, in a constant number of big-int operations\.\"\"\"$",
     "    if (c := prefix_len_c(a, b)) >= 0: return c", 1),
    # parsed_block.py: a restart point's three bytes read through the pointer (byte_in: an
    # int a byte, IndexError out of range, as indexing the bytes or the map)
    (PARSED_BLOCK, r"^        r = \(d\[q\] << 16\) \| \(d\[q \+ 1\] << 8\) \| d\[q \+ 2\]$",
     "        r = (byte_in(d, q) << 16) | (byte_in(d, q + 1) << 8) | byte_in(d, q + 2)", 1),
    # reftable_backend.py: a read's steps called on their types in C through checked casts
    # (reftable_backend.pxd): the stack's reload, the merged iterator's seek, the record's
    # type and name, where the interpreter looks each up by name on the object
    (BACKEND, r"^import bisect$", "import bisect; import cython", 1),
    (BACKEND, r"^        self\.stack\.reload\(\)$",
     "        cython.cast(Stack, self.stack, typecheck=True).reload()", 5),
    (BACKEND, r"^        it\.seek\(name\)$", "        cython.cast(MergedIter, it, typecheck=True).seek(name)",
     1),
    (BACKEND, r"^        if rec\.value_type == REF_DELETION:( +# returned only under tombstone_suppression=on:)$",
     r"        if cython.cast(RefRecord, rec, typecheck=True).value_type == REF_DELETION:\1", 1),
    (BACKEND, r"^        return rec if rec\.refname == name else None$",
     "        return rec if cython.cast(RefRecord, rec, typecheck=True).refname == name else None", 1),
    # update_ref.py: an argument's end found by a loop over the bytes in C (update_ref.pxd's
    # arg_end: git's parse_arg), where the interpreter searches with _ARG_END
    (UPDATE_REF, r"^        m = _ARG_END\.search\(buf, pos\) .*$",
     "        end = arg_end(buf, pos, _ARG_END)     # (update_ref.pxd)", 1),
    (UPDATE_REF, r"^        end = len\(buf\) if m is None else m\.start\(\)$", "        pass", 1),
    # api.py: RefUpdate as Cython's dataclass (api.pxd), as record.py's records are
    (API, r"^from dataclasses import dataclass, field$",
     "import cython; from dataclasses import dataclass, field", 1),
    (API, r"^@dataclass\(slots=True\)$", "@cython.dataclasses.dataclass", 1),
    (API, r"= field\(default_factory=set\)", "= cython.dataclasses.field(default_factory=set)", 1),
    # basics.py: a varint of a bytes or a map read through its pointer, its value summed in
    # a C integer (cbytes.pxd's varint_at), where the interpreter indexes the object a byte
    # and sums Python ints; any other, and any longer than nine bytes, as committed
    (BASICS, r"^    \"\"\"Decode git's varint at buf\[off:\]; return \(value, new_off\)\.\"\"\"$",
     "    if (t := varint_at(buf, off)) is not None: return t", 1),
    # stack.py: stat_cache=on's stat of tables.list, its key made from one stat(2)
    # and compared with the kept key field by field in C (cstat.pxd's stat_is: no tuple)
    (STACK, r"^                st = os\.stat\(self\.list_file\)$",
     "                st = stat_is(self.list_file, self._list_stat)", 1),
    (STACK, r"^            if _stat_key\(st\) == self\._list_stat:$", "            if st:", 1),
    # a reload's up-to-date check called in C, the one stat_cache picks (stack.pxd)
    (STACK, r"^            self\._uptodate_stat if self\.flags\.stat_cache else self\._uptodate_names\)$",
     "            self._uptodate_stat if self.flags.stat_cache else self._uptodate_names); "
     "self._stat_cache = self.flags.stat_cache", 1),
    (STACK, r"^        if self\._is_uptodate\(\):$",
     "        if (self._uptodate_stat() if self._stat_cache else self._uptodate_names()):", 1),
    # stat_cache=off's read of tables.list (git's read_lines: open, lseek to the end and
    # back, one read, close), each system call made from C (cstat.pxd)
    (STACK, r"^        return os\.open\(path, os\.O_RDONLY \| os\.O_CLOEXEC \| os\.O_NONBLOCK\)$",
     "        return sys_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)", 1, "_open_list$"),
    (STACK, r"\bos\.lseek\(fd, 0, os\.(SEEK_END|SEEK_SET)\)", r"sys_lseek(fd, 0, \1)", 2,
     "_read_names_fd$"),
    (STACK, r"\bos\.read\(fd, size - got\)", "sys_read(fd, size - got)", 1, "_read_names_fd$"),
    (STACK, r"^        os\.close\(fd\)$", "        sys_close(fd)", 1, "read_names$"),
    # the chunk's lines, each LF found by memchr
    (PACKED, r"\blines = self\.buf\[pos:end\]\.split\(b\"\\n\"\)$", "lines = split_lf(self.buf[pos:end])", 1),
    # get_oid_hex over the line: the usual row's id, and the "^" line's peeled id
    (PACKED, r"\bunhex\(line\[:hexsz\]\)", "unhex_c(unhex, line, 0, hexsz)", 1),
    (PACKED, r"\bunhex\(line\[1:\]\)", "unhex_c(unhex, line, 1, len(line))", 1),
    # the row's name: the rest of the line
    (PACKED, r"\(line\[name_off:\], ", "(tail(line, name_off), ", 1),
    # check_refname_format of every name, in C; the joined check only when one fails
    (REFNAME, r"^    if not names:$", "    if names_ok_c(names):", 1, "names_well_formed$"),
    # a pack index's binary search: each probed name compared where it lies (hashcmp)
    (IDX, r"^            name = buf\[o:o \+ hl\]$", "            c = hashcmp_at(buf, o, hl, oid)", 1),
    (IDX, r"^            if name == oid:$", "            if c == 0:", 1),
    (IDX, r"^            if name < oid:$", "            if c < 0:", 1),
    # patch_delta: the delta's bytes read from the typed view, the result made at once
    # (at most the base and delta's size) and each copy and insert memcpy'd into it
    (DELTA, r"^    ([bd]mv) = memoryview\((base|delta)\)$", r"    \1 = \2", 2, "apply_delta$"),
    (DELTA, r"\bdelta\[off\]", "dmv[off]", 8, "apply_delta$"),
    (DELTA, r"^    out = bytearray\(\)$", "    out = reserve(result_size, blen, len(delta))", 1,
     "apply_delta$"),
    # the top byte of a copy's offset shifted as a Py_ssize_t (a C int would overflow)
    (DELTA, r"\bdmv\[off\] << 24", "cython.cast(cython.Py_ssize_t, dmv[off]) << 24", 1,
     "apply_delta$"),
    (DELTA, r"^            out \+= bmv\[cp_off:end\]$",
     "            out = put(out, result_size, left + cp_size, bmv, cp_off, cp_size)", 1,
     "apply_delta$"),
    (DELTA, r"^            out \+= dmv\[end - cmd:end\]$",
     "            out = put(out, result_size, left + cmd, dmv, end - cmd, cmd)", 1,
     "apply_delta$"),
    (DELTA, r"^    return bytes\(out\)$", "    return out", 1, "apply_delta$"),
    # a tree's entries split one by one (decode_tree_entry), None when one is not plain
    (TREE, r"^    entries: list\[bytes\] = _entry_pattern\(hash_len\)\.findall\(data\)$",
     "    entries = split_known(data, hash_len, _entry_pattern)", 1, "split_tree$"),
    (TREE, r"^    if sum\(map\(len, entries\)\) != len\(data\):$", "    if entries is None:", 1,
     "split_tree$"),
    # show-ref's loop over a reftable store's records checks every name as git's reftable
    # iterator does (check_refname_format, a table-driven walk in C): by crefname.pxd's walk
    # (refname_ok_c), refname.iterated_refname_ok only for a name it fails
    (SHOW_REF, r"^            if not iterated_refname_ok\(name\):$",
     "            if not (type(name) is bytes and refname_ok_c(name)) and "
     "not iterated_refname_ok(name):", 1, "_show_records$"),
    # check_refname_format's plain-name test by the same C walk (it passes exactly the
    # names check_refname_format passes with REFNAME_ALLOW_ONELEVEL), the rules otherwise:
    # the packed-refs readers check each line's name with it, as git's C does
    (REFNAME, r"^    if _SIMPLE_NAME\.fullmatch\(name\) is None:$",
     "    if not (type(name) is bytes and refname_ok_c(name)):", 1, "check_refname_format$"),
    # packed_reader=fgetc: libc's fgetc a character (cstdio.pxd), where the interpreter calls
    # a buffered file object's read(1) (locked, like fgetc); the FILE reads a dup of f's fd
    (READERS, r"^        read = f\.read$", "        fp = cfile(f)", 1, "lines_fgetc$"),
    (READERS, r"^            c = read\(1\)$", "            c = cgetc(fp)", 1, "lines_fgetc$"),
    (READERS, r"^            if not c:$", "            if c < 0:", 1, "lines_fgetc$"),
    (READERS, r"^            buf\[n\] = c\[0\]$", "            buf[n] = c", 1, "lines_fgetc$"),
    (READERS, r'^            if c == b"\\n":$', "            if c == 10:", 1, "lines_fgetc$"),
    (READERS, r"^        read_bytes = f\.tell\(\)$", "        read_bytes = ctell(fp)", 1,
     "lines_fgetc$"),
    # packed_reader=getc_unlocked: each byte appended to the line in C (the buffer and the
    # byte typed: a C loop over the bytes, bytearray.append's C call)
    (READERS, r"^                append\(c\)( .*)?$", r"                line.append(c)\1", 1,
     "lines_getc_unlocked$"),
    # the writers' key buffers filled (writer_scratch, block_writer_scratch: a fresh buffer
    # or the kept one, reset and refilled) by cbytes.pxd's setkey, as the merge loops' keys
    (WRITER, r"^(\s+)([kh])\[:\] = (name|key|oid)\b", r"\1setkey(\2, \3)", 3),
    (BLOCK_WRITER, r"^(\s+)k\[:\] = key$", r"\1setkey(k, key)", 1),
]


def apply(tree: Path) -> list[str]:
    """Rewrite TREE in place; return the files rewritten."""
    touched: list[str] = []
    for name, pattern, replacement, times, *scope in REWRITES:
        path = tree / name
        lines = path.read_text().split("\n")
        rx = re.compile(pattern)
        inside = re.compile(scope[0]) if scope else None
        count = 0
        func = ""
        for i, line in enumerate(lines):
            if line.startswith("def "):
                func = line[4:].split("(", 1)[0]
            elif line[:1] not in ("", " ", "#", ")"):
                func = ""                       # module level again
            if line.lstrip().startswith("#") or (inside and not inside.match(func)):
                continue
            lines[i], n = rx.subn(replacement, line)
            count += n
        if count != times:
            sys.exit(f"cython_rewrites: {name}: {pattern!r} matches {count} times, not {times}")
        if name not in touched:
            saved = path.with_name(path.name + ".committed")
            if not saved.exists():
                shutil.copy2(path, saved)
            touched.append(name)
        path.write_text("\n".join(lines))
    return touched


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: cython_rewrites.py TREE")
    print("\n".join(apply(Path(sys.argv[1]))))
