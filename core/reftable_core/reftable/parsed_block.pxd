# The C types of parsed_block.py for the Cython build (scripts/build-cython-core.sh; the
# interpreter and mypyc never read this file). A Block is an extension type whose fields sit
# in its C struct (the interpreted class has the same names as __slots__;
# tests/reftable/test_cython_decls.py); block.pxd and loops.pxd cimport it, so that the
# loader, the seek's scans and the record loops read its fields there and call its
# restart_offset in C (its three bytes read through cbytes.pxd's byte_in).
import cython
from reftable_core.reftable.cbytes cimport byte_in


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

    @cython.locals(p=Py_ssize_t, q=Py_ssize_t, r=Py_ssize_t)
    cpdef Py_ssize_t restart_offset(self, Py_ssize_t i) except? -1


# Block(typ, data, off, header_off, name, base) as the block loaders make it in the Cython
# build (scripts/cython_rewrites.py): the type's tp_new, then the six fields __init__ sets,
# stored in C (the class call parses six arguments into __init__ first)
cdef inline Block new_block(Py_ssize_t typ, data, Py_ssize_t off, Py_ssize_t header_off,
                            name, Py_ssize_t base):
    cdef Block b = Block.__new__(Block)
    b.typ = typ
    b.data = data
    b.base = base
    b.off = off
    b.header_off = header_off
    b.name = name
    return b
