# The C types of iter.py for the Cython build (scripts/build-cython-core.sh; the
# interpreter and mypyc never read this file). The table interface is an extension type,
# so that the table reader (table.pxd) can be one: an extension type's bases are extension
# types. The build's copy of iter.py declares Reftable and RecordIter without their
# Python bases (ABC, collections.abc.Iterator; scripts/cython_rewrites.py): the same
# methods, the abstract ones not enforced; Reftable's three annotated fields are declared
# here (the build's copy comments their annotations out).
cdef class RecordIter:
    pass


cdef class Reftable:
    cdef public object hash_id, min_update_index, max_update_index
