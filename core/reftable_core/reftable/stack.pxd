# The C of stack.py for the Cython build (scripts/build-cython-core.sh; Cython reads this file
# beside stack.py, the interpreter and mypyc never do): the stat of tables.list under
# stat_cache=on and its read (open, lseek, read, close), rewritten to cstat.pxd's C
# (scripts/cython_rewrites.py).
from libc.stdio cimport SEEK_END, SEEK_SET
from posix.fcntl cimport O_CLOEXEC, O_NONBLOCK, O_RDONLY
from reftable_core.reftable.cstat cimport stat_is, sys_close, sys_lseek, sys_open, sys_read
from reftable_core.counters cimport Counters

cdef Counters WORK     # counters.pxd: the import's WORK, its counters added to in C


# A Stack is an extension type: its fields sit in its C struct (the interpreted class sets
# the same names in __init__; tests/reftable/test_cython_decls.py), and a reload's up-to-date
# check calls the one stat_cache picks in C, read from a C field at the call where the
# interpreter calls the bound method it stored when the stack was made (the same method).
cdef class Stack:
    cdef public object dir, on_reload, flags, opts, list_file, lock_file, tables, merged
    cdef public object _list_stat, _is_uptodate, _check_addition, stats
    cdef public Py_ssize_t _list_fd
    cdef bint _stat_cache

    cpdef reload(self)
    cpdef _uptodate_stat(self)
    cpdef _uptodate_names(self)
