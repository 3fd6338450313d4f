# The C types of blocksource.py for the Cython build (scripts/build-cython-core.sh; the
# interpreter and mypyc never read this file). The three sources are extension types: their
# fields sit in their C structs (the interpreted classes list the same names in __slots__),
# their methods are cpdef (a caller that knows the type calls them in C; the block loader,
# which does not, still calls them by name) and their counters are added to in C.
from reftable_core.counters cimport Counters

cdef Counters WORK


cdef class BytesSource:
    cdef public object _data, _size, name

    cpdef size(self)
    cpdef read(self, offset, length)
    cpdef in_place(self, offset)
    cpdef close(self)


cdef class PreadSource:
    cdef public object _fd, _size, name

    cpdef size(self)
    cpdef read(self, offset, length)
    cpdef in_place(self, offset)
    cpdef close(self)


cdef class MmapSource:
    cdef public object _map, _size, name

    cpdef size(self)
    cpdef read(self, offset, length)
    cpdef in_place(self, offset)
    cpdef close(self)
