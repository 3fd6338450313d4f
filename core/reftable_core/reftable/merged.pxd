# The C types of merged.py for the Cython build (scripts/build-cython-core.sh; the
# interpreter and mypyc never read this file). A MergedIter is an extension type, its
# fields in its C struct (the interpreted class lists the same names in __slots__). Its seek
# makes the queue (pq.pxd) and adds to it (loops.pxd's pq_add) in C. (Its sub-iterators
# stay untyped: a merged table takes any table-shaped reader, as the interpreter does.)
import cython
from reftable_core.reftable.iter cimport RecordIter
from reftable_core.reftable.loops cimport finish_loop, pq_add
from reftable_core.reftable.pq cimport MergedIterPQueue, new_pq
from reftable_core.reftable.table cimport RecordIterator


cdef class MergedIter(RecordIter):
    cdef public object _gen, _kind, _less, _subs, _variant

    @cython.locals(pq=MergedIterPQueue, its=list)
    cpdef seek(self, key)
    cpdef _drop_loop(self)


# a sub-iterator's seek (scripts/cython_rewrites.py): a table's record iterator's called in
# C, any other by name (a merged table takes any table-shaped reader)
cdef inline object seek_sub(sub, key):
    if type(sub) is RecordIterator:
        return (<RecordIterator>sub).seek(key)
    return sub.seek(key)
