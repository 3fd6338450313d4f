# A packed-refs chunk's lines and a line's fields as C, for the Cython build only: no module
# imports this file's names; scripts/cython_rewrites.py spells packed.py's
# `chunk.split(b"\n")`, `unhex(line[a:b])` and `line[a:]` with them in the build's copy
# (line for line), and packed.pxd cimports them. Each makes the objects Python's spelling
# makes: the list of lines (a new bytes each), the decoded id, the name (a new bytes). Where
# Python first copies the hex digits into a slice, unhex_c reads them where they lie, as
# git's hex_to_bytes does; anything that is not an even run of hex digits goes to the
# Python spelling, unhex(line[a:b]), which raises binascii.Error as the interpreted model
# does.
from cpython.bytes cimport (PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_FromStringAndSize,
                           PyBytes_GET_SIZE)
from libc.string cimport memchr


cdef extern from *:
    """
    /* git's hexval_table (hex.c): a hex digit's value, -1 for any other byte */
    static const signed char reftable_lab_hexval[256] = {
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -1, -1, -1, -1, -1,
        -1, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    };
    """
    const signed char reftable_lab_hexval[256]


cdef inline object unhex_c(object unhex, bytes line, Py_ssize_t a, Py_ssize_t b):
    """unhex(line[a:b]) (binascii.unhexlify): a new bytes of the digits' values."""
    cdef Py_ssize_t n = b - a
    cdef const unsigned char *src
    cdef const unsigned char *stop
    cdef unsigned char *dst
    cdef int hi, lo
    cdef bytes out
    if a < 0 or n < 0 or n & 1 or b > PyBytes_GET_SIZE(line):
        return unhex(line[a:b])
    src = <const unsigned char *>PyBytes_AS_STRING(line) + a
    stop = src + n
    out = PyBytes_FromStringAndSize(NULL, n >> 1)
    dst = <unsigned char *>PyBytes_AS_STRING(out)
    while src < stop:
        hi = reftable_lab_hexval[src[0]]
        lo = reftable_lab_hexval[src[1]]
        if (hi | lo) < 0:
            return unhex(line[a:b])
        dst[0] = <unsigned char>((hi << 4) | lo)
        src += 2
        dst += 1
    return out


cdef inline bytes tail(bytes line, Py_ssize_t a):
    """line[a:]: a new bytes of the line's bytes from a on."""
    cdef Py_ssize_t n = PyBytes_GET_SIZE(line)
    if 0 <= a <= n:
        return PyBytes_FromStringAndSize(PyBytes_AS_STRING(line) + a, n - a)
    return line[a:]


cdef inline list split_lf(object chunk):
    """chunk.split(b"\\n"): the lines, each a new bytes, the LFs found by memchr (git's
    next_record finds each line's end so) where CPython's split steps byte by byte. A
    chunk of another type than bytes is split by its own split."""
    cdef const char *s
    cdef const char *end
    cdef const char *nl
    cdef list out = []
    if not PyBytes_CheckExact(chunk):
        return chunk.split(b"\n")
    s = PyBytes_AS_STRING(chunk)
    end = s + PyBytes_GET_SIZE(chunk)
    while True:
        nl = <const char *>memchr(s, 10, end - s)
        if nl == NULL:
            out.append(PyBytes_FromStringAndSize(s, end - s))
            return out
        out.append(PyBytes_FromStringAndSize(s, nl - s))
        s = nl + 1
