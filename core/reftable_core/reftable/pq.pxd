# The C types of pq.py for the Cython build (scripts/build-cython-core.sh; the interpreter
# and mypyc never read this file). The merged iterator's queue is an extension type, its
# heap and less-than in its C struct (the interpreted class lists them in __slots__): a
# seek makes one.
cdef class MergedIterPQueue:
    cdef public list heap
    cdef public object less


# MergedIterPQueue(less) as the merged iterator's seek makes it in the Cython build
# (scripts/cython_rewrites.py): the type's tp_new, then the two fields __init__ sets,
# stored in C (the class call parses its argument into __init__ first)
cdef inline MergedIterPQueue new_pq(less):
    cdef MergedIterPQueue pq = MergedIterPQueue.__new__(MergedIterPQueue)
    pq.heap = []
    pq.less = less
    return pq
