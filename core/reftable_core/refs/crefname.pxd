# git's check_refname_format(name, REFNAME_ALLOW_ONELEVEL) over a list of names as C, for
# the Cython build only: no module imports this file's names; scripts/cython_rewrites.py
# spells refname.py's names_well_formed with it in the build's copy (line for line), and
# refname.pxd cimports it. It walks each name byte by byte through git's
# refname_disposition table (refs.c: check_refname_component, check_or_sanitize_refname),
# where the interpreter checks the names joined, with one translate and a few searches.
# Both answer the batch's question the same way: True only when every name passes; the
# interpreted batch may also say False for a name that passes (a false alarm the caller's
# per-name check clears), this one only for a name that fails or is no bytes object.
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_GET_SIZE
from cpython.list cimport PyList_CheckExact, PyList_GET_ITEM, PyList_GET_SIZE


cdef extern from *:
    """
    /* git's refname_disposition (refs.c): 0 an ordinary byte, 1 the end of a component
       ("/" or NUL), 2 ".", 3 "{", 4 a byte never allowed, 5 "*" */
    static const unsigned char reftable_lab_refname_disposition[256] = {
        1, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
        4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
        4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 2, 1,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 4,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 0, 4, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 4, 4,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    };
    """
    const unsigned char reftable_lab_refname_disposition[256]


cdef inline bint refname_ok_c(bytes name) noexcept:
    """check_refname_format(name, REFNAME_ALLOW_ONELEVEL) == 0; a NUL inside the name
    (which ends git's string) fails."""
    cdef const unsigned char *s = <const unsigned char *>PyBytes_AS_STRING(name)
    cdef const unsigned char *end = s + PyBytes_GET_SIZE(name)
    cdef const unsigned char *p = s
    cdef const unsigned char *start = s              # the component's first byte
    cdef unsigned char ch
    cdef unsigned char last = 0
    cdef unsigned char disp
    if p == end or (end - p == 1 and p[0] == 64):    # empty, or "@"
        return False
    while True:
        if p < end:
            ch = p[0]
            disp = reftable_lab_refname_disposition[ch]
            if disp == 0:                            # the usual byte
                last = ch
                p += 1
                continue
            if ch == 0:                              # a NUL inside
                return False
        else:
            ch = 0
            disp = 1
        if disp == 1:                                # a component ends
            if p == start or start[0] == 46:         # empty, or starts with "."
                return False
            if (p - start >= 5 and p[-1] == 107 and p[-2] == 99 and p[-3] == 111
                    and p[-4] == 108 and p[-5] == 46):   # ends with ".lock"
                return False
            if p == end:
                return p[-1] != 46                   # the name ends with "."
            start = p + 1
            last = 0
            p += 1
            continue
        if disp == 2:
            if last == 46:                           # ".."
                return False
        elif disp == 3:
            if last == 64:                           # "@{"
                return False
        else:                                        # forbidden; "*" (no pattern here)
            return False
        last = ch
        p += 1


cdef inline bint names_ok_c(object names) noexcept:
    """Every name of the list passes refname_ok_c (anything else: False)."""
    cdef Py_ssize_t i
    cdef object name
    if not PyList_CheckExact(names):
        return False
    for i in range(PyList_GET_SIZE(names)):
        name = <object>PyList_GET_ITEM(names, i)
        if not PyBytes_CheckExact(name) or not refname_ok_c(name):
            return False
    return True
