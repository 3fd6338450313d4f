# The C types of block.py for the Cython build (scripts/build-cython-core.sh; Cython reads
# this file beside block.py, the interpreter and mypyc never do). A Block is an extension
# type whose fields sit in its C struct (the interpreted class has the same names as
# __slots__); the loader and the seek read and write them there, and call the scans of
# loops.pxd directly. Offsets (indexes into block.data) are C integers; keys and the
# prefix length stay Python objects; a block offset read from a table (an index record's)
# is compared with the table's end before it becomes one.
import cython
from reftable_core.reftable.loops cimport record_extent
from reftable_core.reftable.cbytes cimport byte_in, joinkey


cdef class Block:
    cdef public Py_ssize_t typ
    cdef public object data
    cdef public Py_ssize_t base
    cdef public Py_ssize_t off
    cdef public Py_ssize_t header_off
    cdef public object name
    cdef public Py_ssize_t end
    cdef public Py_ssize_t restart_count
    cdef public Py_ssize_t restart_start
    cdef public Py_ssize_t full_size


@cython.locals(base=Py_ssize_t, have=Py_ssize_t)
cpdef tuple _read_header(source, Py_ssize_t off, Py_ssize_t header_off, Py_ssize_t guess,
                         Py_ssize_t limit, bint views)

@cython.locals(base=Py_ssize_t, typ=Py_ssize_t, off=Py_ssize_t, header_off=Py_ssize_t,
               h=Py_ssize_t, sz=Py_ssize_t, skip=Py_ssize_t, full=Py_ssize_t, e=Py_ssize_t,
               count=Py_ssize_t, end=Py_ssize_t)
cpdef Block _setup(Block block, source, Py_ssize_t have, Py_ssize_t table_block_size,
                   Py_ssize_t limit)

@cython.locals(base=Py_ssize_t, end=Py_ssize_t, off=Py_ssize_t, start=Py_ssize_t,
               lo=Py_ssize_t, hi=Py_ssize_t)
cpdef tuple seek_in_block(Block block, want, Py_ssize_t hash_size, scan=*)

@cython.locals(base=Py_ssize_t, end=Py_ssize_t, off=Py_ssize_t, start=Py_ssize_t,
               lo=Py_ssize_t, hi=Py_ssize_t)
cpdef tuple seek_in_block_copying(Block block, want, Py_ssize_t hash_size, scan=*)
