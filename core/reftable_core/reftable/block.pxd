# The C types of block.py's seek for the Cython build (scripts/build-cython-core.sh; Cython
# reads this file beside block.py, the interpreter and mypyc never do). Offsets (indexes
# into block.data) are C integers; keys and the prefix length stay Python objects.
import cython

@cython.locals(base=Py_ssize_t, end=Py_ssize_t, off=Py_ssize_t, start=Py_ssize_t,
               lo=Py_ssize_t, hi=Py_ssize_t)
cpdef tuple seek_in_block(block, want, Py_ssize_t hash_size, scan=*)

@cython.locals(base=Py_ssize_t, end=Py_ssize_t, off=Py_ssize_t, start=Py_ssize_t,
               lo=Py_ssize_t, hi=Py_ssize_t)
cpdef tuple seek_in_block_copying(block, want, Py_ssize_t hash_size, scan=*)
