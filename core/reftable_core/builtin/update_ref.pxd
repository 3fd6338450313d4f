# The C of update_ref.py for the Cython build (scripts/build-cython-core.sh; Cython reads this
# file beside update_ref.py, the interpreter and mypyc never do): the end of an argument of
# `update-ref --stdin` found by a loop over the line's bytes, as git's parse_arg finds it,
# where the interpreter searches with a regular expression (scripts/cython_rewrites.py).
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE


cdef inline Py_ssize_t arg_end(buf, Py_ssize_t pos, pattern) except -1:
    """Where the argument at pos ends: the first SP, HT, LF, CR, VT, FF or NUL from pos on,
    else len(buf) (the interpreter: pattern, _ARG_END, searched from pos; used here too for
    anything but a bytes)."""
    cdef const char *p
    cdef Py_ssize_t n, i
    cdef char c
    if type(buf) is not bytes or pos < 0:
        m = pattern.search(buf, pos)
        return len(buf) if m is None else m.start()
    p = PyBytes_AS_STRING(buf)
    n = PyBytes_GET_SIZE(buf)
    i = pos
    while i < n:
        c = p[i]
        if c == 32 or c == 9 or c == 10 or c == 13 or c == 11 or c == 12 or c == 0:
            return i
        i += 1
    return n
