# The C types of merged.py for the Cython build (scripts/build-cython-core.sh; the
# interpreter and mypyc never read this file). A MergedIter is an extension type, its
# fields in its C struct (the interpreted class lists the same names in __slots__).
from reftable_core.reftable.iter cimport RecordIter


cdef class MergedIter(RecordIter):
    cdef public object _gen, _kind, _less, _subs, _variant

    cpdef seek(self, key)
