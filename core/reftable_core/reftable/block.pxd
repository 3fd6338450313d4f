# The C types of block.py for the Cython build (scripts/build-cython-core.sh; Cython reads
# this file beside block.py, the interpreter and mypyc never do). A Block is an extension
# type (parsed_block.pxd) whose fields sit in its C struct; the loader and the seek read
# and write them there, and call the scans of loops.pxd directly. Offsets (indexes into
# block.data) are C integers; keys and the prefix length stay Python objects; a block
# offset read from a table (an index record's) is compared with the table's end before it
# becomes one.
import cython
from reftable_core.reftable.parsed_block cimport Block, new_block
from reftable_core.reftable.blocksource cimport MmapSource
from reftable_core.reftable.loops cimport record_extent
from reftable_core.reftable.cbytes cimport byte_in, joinkey
from reftable_core.counters cimport Counters

cdef Counters WORK     # counters.pxd: the import's WORK, its counters added to in C


@cython.locals(base=Py_ssize_t, have=Py_ssize_t)
cpdef tuple _read_header(source, Py_ssize_t off, Py_ssize_t header_off, Py_ssize_t guess,
                         Py_ssize_t limit, bint views)


# _read_header as the two loaders call it in the Cython build (scripts/cython_rewrites.py):
# the same steps and errors, the data returned and base, have and the block type written
# through pointers as C integers, where _read_header returns a tuple of four of them (and a
# mapped table's MmapSource.in_place a tuple of two: here its count, its check of a closed
# map and its map are read in C; any other source is asked by name, as there)
cdef inline object read_header(source, Py_ssize_t off, Py_ssize_t header_off,
                               Py_ssize_t guess, Py_ssize_t limit, bint views,
                               Py_ssize_t *base, Py_ssize_t *have, Py_ssize_t *typ):
    cdef MmapSource ms
    WORK.blocks_read += 1
    if views and type(source) is MmapSource:
        ms = <MmapSource>source
        WORK.source_mmap_slices += 1
        data = ms._map
        if data is None:
            raise ValueError(f"{ms.name}: read after the table was closed")
        base[0] = off
        have[0] = limit - off
    else:
        where = source.in_place(off) if views else None
        if where is None:
            data = source.read(off, min(guess, limit - off))
            base[0] = 0
            have[0] = len(data)
        else:
            data, base[0] = where
            have[0] = limit - off
    if have[0] < header_off + 4:          # (a .pxd names no module global: imported here)
        errors = __import__("reftable_core.errors", None, None, ["FormatError"])
        raise errors.FormatError("truncated block header", source.name, off)
    typ[0] = byte_in(data, base[0] + header_off)
    return data

@cython.locals(base=Py_ssize_t, typ=Py_ssize_t, off=Py_ssize_t, header_off=Py_ssize_t,
               h=Py_ssize_t, sz=Py_ssize_t, skip=Py_ssize_t, full=Py_ssize_t, e=Py_ssize_t,
               count=Py_ssize_t, end=Py_ssize_t)
cpdef Block _setup(Block block, source, Py_ssize_t have, Py_ssize_t table_block_size,
                   Py_ssize_t limit)

# a log block's inflate: called from _setup in C, its offsets and counts C integers
@cython.locals(base=Py_ssize_t, off=Py_ssize_t, skip=Py_ssize_t, want=Py_ssize_t,
               chunk=Py_ssize_t, pos=Py_ssize_t, got=Py_ssize_t, consumed=Py_ssize_t)
cpdef tuple _inflate(source, Block block, Py_ssize_t have, Py_ssize_t sz, Py_ssize_t guess,
                     Py_ssize_t limit)

# the two loaders (flag block_type_early_exit) are cpdef so that the table reader calls them
# in C; their locals are typed by the .py's @cython.locals lines; off stays an object (an
# index record's offset may not fit one until the loader has compared it with the end)
cpdef Block load_block_early_exit(source, off, Py_ssize_t header_off,
                                  Py_ssize_t table_block_size, Py_ssize_t limit,
                                  Py_ssize_t want_type=*, bint views=*)
cpdef Block load_block_full_setup(source, off, Py_ssize_t header_off,
                                  Py_ssize_t table_block_size, Py_ssize_t limit,
                                  Py_ssize_t want_type=*, bint views=*)

@cython.locals(base=Py_ssize_t, end=Py_ssize_t, off=Py_ssize_t, start=Py_ssize_t,
               lo=Py_ssize_t, hi=Py_ssize_t, p=Py_ssize_t)
cpdef tuple seek_in_block(Block block, want, Py_ssize_t hash_size, scan=*)

@cython.locals(base=Py_ssize_t, end=Py_ssize_t, off=Py_ssize_t, start=Py_ssize_t,
               lo=Py_ssize_t, hi=Py_ssize_t, p=Py_ssize_t)
cpdef tuple seek_in_block_copying(Block block, want, Py_ssize_t hash_size, scan=*)


# the name of a block's table, from a mapped table's source in C, any other's by name
cdef inline object source_name(source):
    if type(source) is MmapSource:
        return (<MmapSource>source).name
    return source.name
