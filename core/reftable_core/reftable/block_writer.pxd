# The C of block_writer.py for the Cython build (scripts/build-cython-core.sh; Cython reads this file
# beside block_writer.py, the interpreter and mypyc never do): a record's key put into its key buffer
# (`buf[:] = key`: git's reftable_buf_reset, then reftable_buf_add) by cbytes.pxd's setkey,
# a resize and a memcpy, where the interpreter assigns a slice (scripts/cython_rewrites.py).
from reftable_core.reftable.cbytes cimport prefix_len_c, setkey
import cython


# common_prefix_len: called in C; two bytes or bytearrays compared byte by byte first
# (cbytes.pxd's prefix_len_c, git's common_prefix_size; scripts/cython_rewrites.py)
@cython.locals(n=Py_ssize_t, m=Py_ssize_t, c=Py_ssize_t)
cpdef Py_ssize_t common_prefix_len(a, b) except -1


# A BlockWriter is an extension type: its fields sit in its C struct (the interpreted class
# lists the same names in __slots__; tests/reftable/test_cython_decls.py).
cdef class BlockWriter:
    cdef public object block_size, buf, compression_level, entries, hash_size, header_off
    cdef public object key_buffer, last_key, restart_interval, restarts, room, typ
