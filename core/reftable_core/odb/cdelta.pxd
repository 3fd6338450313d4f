# A delta's result as C, for the Cython build only: no module imports this file's names;
# scripts/cython_rewrites.py spells delta.py's apply_delta with them in the build's copy (line
# for line), and delta.pxd cimports them. git's patch_delta allocates the result at its
# declared size once and memcpys each copy and insert into it; the interpreter appends each
# to a bytearray (a memoryview slice an instruction, the buffer regrown as it fills) and
# copies that into a bytes at the end. Here the result is one bytes made at its declared
# size, as git's, unless that is more than the base and the delta together: a delta cannot
# declare memory it does not produce (a size bomb), so the first allocation is at most
# that, and the result grows (doubling, never past the declared size) only as the
# instructions fill it.
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.string cimport memcpy


cdef inline bytes reserve(Py_ssize_t size, Py_ssize_t blen, Py_ssize_t dlen):
    """The result to fill: size bytes (git: xmallocz(size)), at most blen + dlen."""
    return PyBytes_FromStringAndSize(NULL, min(size, blen + dlen))


cdef inline bytes put(bytes out, Py_ssize_t size, Py_ssize_t back, const unsigned char[:] src,
                      Py_ssize_t a, Py_ssize_t n):
    """out with src[a:a + n] memcpy'd where back bytes of the size-byte result are left to
    fill; a new bytes when out is too short (the part made so far copied into it). The
    caller checked both ranges; checked again here."""
    cdef Py_ssize_t at = size - back
    cdef Py_ssize_t cap = PyBytes_GET_SIZE(out)
    cdef bytes grown
    if n <= 0 or a < 0 or a + n > src.shape[0] or at < 0 or at + n > size:
        raise ValueError(f"delta copy out of range ({a}+{n} of {src.shape[0]}, at {at})")
    if at + n > cap:
        grown = PyBytes_FromStringAndSize(NULL, min(size, max(at + n, 2 * cap)))
        memcpy(PyBytes_AS_STRING(grown), PyBytes_AS_STRING(out), at)
        out = grown
    memcpy(PyBytes_AS_STRING(out) + at, &src[a], n)
    return out
