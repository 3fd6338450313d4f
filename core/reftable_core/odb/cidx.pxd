# A pack index's name compare as C, for the Cython build only: no module imports this
# file's names; scripts/cython_rewrites.py spells idx.py's binary search (a slice of the
# index compared with the wanted id) with it in the build's copy (line for line), and
# idx.pxd cimports it. git's bsearch_hash compares the id where it lies in the index
# (hashcmp); the interpreter first slices it out into a new bytes.
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.string cimport memcmp


cdef inline int hashcmp_at(const unsigned char[:] buf, Py_ssize_t o, Py_ssize_t n,
                           bytes oid) except? -2:
    """The sign of buf[o:o + n] against oid (len(oid) == n, the caller's check): -1, 0, 1;
    past the end of buf, the Python comparison of the shorter slice."""
    cdef int c
    if o < 0 or o + n > buf.shape[0] or PyBytes_GET_SIZE(oid) != n:
        name = bytes(buf[o:o + n])
        return 0 if name == oid else (-1 if name < oid else 1)
    c = memcmp(&buf[o], PyBytes_AS_STRING(oid), n)
    return (c > 0) - (c < 0)
