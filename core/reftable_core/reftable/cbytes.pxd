# The byte moves of the ref and log loops as C, for the Cython build only: no module
# imports this file's names; scripts/cython_rewrites.py spells loops.py's slices and
# bytearray operations with them in the build's copy (line for line), and loops.pxd
# cimports them. Each makes the objects its Python spelling makes and copies what it
# copies; `buf` is the typed view of `data` the loops read their bytes from. Out of range
# (a corrupt table; the loops check the offsets after the fact) each does what Python's
# slice does.
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.bytearray cimport (PyByteArray_AS_STRING, PyByteArray_FromStringAndSize,
                                PyByteArray_GET_SIZE, PyByteArray_Resize)
from libc.string cimport memcpy


cdef inline bytes take(data, const unsigned char[:] buf, Py_ssize_t a, Py_ssize_t b):
    """data[a:b]: a new bytes, the range copied from the view."""
    if 0 <= a < b <= buf.shape[0]:
        return PyBytes_FromStringAndSize(<char *>&buf[a], b - a)
    return data[a:b]


cdef inline int extend(bytearray key, data, const unsigned char[:] buf, Py_ssize_t a,
                       Py_ssize_t b) except -1:
    """key += data[a:b] (strbuf_add): key grown in place, the range copied from the view
    (Python makes the slice a bytes object first; git's strbuf_add does not)."""
    cdef Py_ssize_t n
    if not (0 <= a < b <= buf.shape[0]):
        key += data[a:b]
        return 0
    n = PyByteArray_GET_SIZE(key)
    PyByteArray_Resize(key, n + (b - a))
    memcpy(PyByteArray_AS_STRING(key) + n, &buf[a], b - a)
    return 0


cdef inline int setlen(bytearray last, Py_ssize_t p) except -1:
    """del last[p:] (strbuf_setlen): p is at most len(last) (the loops check it first)."""
    if 0 <= p <= PyByteArray_GET_SIZE(last):
        return PyByteArray_Resize(last, p)
    del last[p:]
    return 0


cdef inline bytearray head(bytearray last, Py_ssize_t p):
    """last[:p]: a new bytearray of last's first p bytes."""
    if 0 <= p <= PyByteArray_GET_SIZE(last):
        return PyByteArray_FromStringAndSize(PyByteArray_AS_STRING(last), p)
    return last[:p]


cdef inline bytes frozen(bytearray key):
    """bytes(key): a new bytes copied from the key buffer."""
    return PyBytes_FromStringAndSize(PyByteArray_AS_STRING(key), PyByteArray_GET_SIZE(key))
