# The C types of pq.py for the Cython build (scripts/build-cython-core.sh; the interpreter
# and mypyc never read this file). The merged iterator's queue is an extension type, its
# heap and less-than in its C struct (the interpreted class lists them in __slots__): a
# seek makes one.
cdef class MergedIterPQueue:
    cdef public list heap
    cdef public object less
