# The byte moves of the ref and log loops as C, for the Cython build only: no module
# imports this file's names; scripts/cython_rewrites.py spells loops.py's slices and
# bytearray operations with them in the build's copy (line for line), and loops.pxd
# cimports them. Each makes the objects its Python spelling makes and copies what it
# copies; the loops read `data`'s bytes through a pointer (bufptr, below), taken again at
# each block and each time a loop resumes. Out of range (a corrupt table; the loops check
# the offsets after the fact) each does what Python's slice does.
from cpython.bytearray cimport (PyByteArray_AS_STRING, PyByteArray_FromStringAndSize,
                                PyByteArray_GET_SIZE, PyByteArray_Resize)
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.ref cimport Py_DECREF
from libc.string cimport memcmp, memcpy


cdef extern from "Python.h":
    void Py_SET_SIZE(object o, Py_ssize_t n)


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


# The merge loops' off values (merged_cmp=off, pq_cmp=off) spell git's strbuf keys as
# bytearrays: a key made (bytearray(name): strbuf_init, then reftable_record_key's
# strbuf_addbuf), refilled (key[:] = name: strbuf_reset, strbuf_addbuf) and compared
# (key < other: strbuf_cmp); block_key_swap=off's copy of the key into the kept last key
# is such a refill too. The interpreter reaches each through a type call, a slice
# assignment and a rich comparison over the buffer protocol; these are the same
# allocation, copy and compare as direct C calls.
cdef inline bytearray fresh(name):
    """bytearray(name): a new buffer holding a copy of the bytes name."""
    if type(name) is bytes:
        return PyByteArray_FromStringAndSize(PyBytes_AS_STRING(name), PyBytes_GET_SIZE(name))
    return bytearray(name)


cdef inline int setkey(bytearray key, src) except -1:
    """key[:] = src (strbuf_reset, then strbuf_addbuf): key's length set to src's (a bytes or
    a bytearray), src's bytes copied in; anything else as the slice assignment does it."""
    cdef Py_ssize_t n
    cdef const char *p
    if type(src) is bytes:
        n = PyBytes_GET_SIZE(src)
        p = PyBytes_AS_STRING(src)
    elif type(src) is bytearray:
        if src is key:
            return 0
        n = PyByteArray_GET_SIZE(src)
        p = PyByteArray_AS_STRING(src)
    else:
        key[:] = src
        return 0
    PyByteArray_Resize(key, n)
    memcpy(PyByteArray_AS_STRING(key), p, n)
    return 0


cdef inline int _sign(const char *a, Py_ssize_t la, const char *b, Py_ssize_t lb) noexcept:
    """The sign of a[:la] against b[:lb] as bytes compare: memcmp of the shorter length,
    then the lengths (git's strbuf_cmp)."""
    cdef int c = memcmp(a, b, la if la < lb else lb)
    if c:
        return -1 if c < 0 else 1
    return (la > lb) - (la < lb)


cdef inline int keycmp(bytearray a, bytearray b) except? -2:
    """The sign of a against b as their bytes compare (strbuf_cmp): -1, 0 or 1."""
    return _sign(PyByteArray_AS_STRING(a), PyByteArray_GET_SIZE(a),
                 PyByteArray_AS_STRING(b), PyByteArray_GET_SIZE(b))


# The merge loops' on values compare record names, bytes (git: strcmp of two refnames);
# the interpreter's rich comparison, here memcmp then the lengths.
cdef inline int bytescmp(a, b) except? -2:
    """The sign of a against b as bytes compare: -1, 0 or 1 (anything but two bytes: the
    Python comparison)."""
    if type(a) is not bytes or type(b) is not bytes:
        return (a > b) - (a < b)
    return _sign(PyBytes_AS_STRING(a), PyBytes_GET_SIZE(a), PyBytes_AS_STRING(b),
                 PyBytes_GET_SIZE(b))


# The seek's scans (loops.py's restart_scan_start, restart_scan_start_decoding and
# record_extent) read a few bytes of a block a call: they read them through a pointer
# to data's bytes (a bytes' own, or an mmap's exported for the moment it takes to read
# the pointer: a scan calls nothing that could close or resize the map while it reads)
# where the record loops, which read whole blocks, hold a typed view.
ctypedef const unsigned char *cbuf


# A map's bytes are read where the map holds them: CPython's mmap object starts, after its
# object header, with the pointer to the mapping and its length (Modules/mmapmodule.c,
# mmap_object; the same in every 3.x), which its buffer export reads too (mmap_buffer_getbuf
# fills a Py_buffer with them, counts an export, and the release uncounts it: some hundred
# instructions a byte the loader reads, where git reads through its pointer). A closed map
# (no pointer) and anything else take the buffer protocol, which raises as it does.
cdef extern from *:
    """
    typedef struct { PyObject_HEAD char *data; Py_ssize_t size; } lab_mmap_head;
    static PyTypeObject *lab_mmap_type = NULL;
    static int lab_is_mmap(PyObject *o) {
        if (lab_mmap_type == NULL) {
            PyObject *m = PyImport_ImportModule("mmap");
            PyObject *t = m ? PyObject_GetAttrString(m, "mmap") : NULL;
            Py_XDECREF(m);
            if (t == NULL || !PyType_Check(t)) { Py_XDECREF(t); PyErr_Clear(); return 0; }
            lab_mmap_type = (PyTypeObject *)t;      /* kept for the module's life */
        }
        return Py_TYPE(o) == lab_mmap_type && ((lab_mmap_head *)o)->data != NULL;
    }
    """
    ctypedef struct lab_mmap_head:
        char *data
        Py_ssize_t size
    bint lab_is_mmap(object o)


cdef inline cbuf bufptr(data, Py_ssize_t *n) except? NULL:
    """A pointer to data's bytes (a bytes, a map, or an object with the buffer protocol),
    their number in n."""
    cdef Py_buffer view
    cdef cbuf p
    if type(data) is bytes:
        n[0] = PyBytes_GET_SIZE(data)
        return <cbuf>PyBytes_AS_STRING(data)
    if lab_is_mmap(data):
        n[0] = (<lab_mmap_head *><void *>data).size
        return <cbuf>(<lab_mmap_head *><void *>data).data
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    p = <cbuf>view.buf
    n[0] = view.len
    PyBuffer_Release(&view)
    return p


cdef inline bint _chars(o, const char **p, Py_ssize_t *n) noexcept:
    """Point p at the bytes of a bytes or a bytearray o, their number in n; False (p and n
    untouched) for anything else."""
    if type(o) is bytes:
        p[0], n[0] = PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o)
        return True
    if type(o) is bytearray:
        p[0], n[0] = PyByteArray_AS_STRING(o), PyByteArray_GET_SIZE(o)
        return True
    return False


# A log key is the ref's name, a NUL, then the update index reversed (MAX_U64 minus it) in
# eight big-endian bytes; the log loops spell its two parts as a slice made a bytes and an
# int of a slice (git's decode: the name copied into the record, get_be64 of the rest).
cdef inline bytes head_bytes(key, Py_ssize_t n):
    """bytes(key[:n]) of a bytes or bytearray key: one new bytes, the first n bytes copied
    (the interpreter makes the slice first, then a bytes of it); else as that expression."""
    cdef const char *p
    cdef Py_ssize_t k
    if _chars(key, &p, &k) and 0 <= n <= k:
        return PyBytes_FromStringAndSize(p, n)
    return bytes(key[:n])


cdef inline object rev_index(key, Py_ssize_t at):
    """MAX_U64 - int.from_bytes(key[at:], "big") for a bytes or bytearray key whose last
    eight bytes start at at: the eight bytes read in C (get_be64); else as that expression."""
    cdef const char *p
    cdef Py_ssize_t n
    cdef unsigned long long v = 0
    cdef int i
    if not _chars(key, &p, &n) or at < 0 or n - at != 8:
        return 0xFFFFFFFFFFFFFFFF - int.from_bytes(key[at:], "big")
    for i in range(8):
        v = (v << 8) | <unsigned char>p[at + i]
    return 0xFFFFFFFFFFFFFFFFULL - v


cdef inline Py_ssize_t prefix_len_c(a, b) except -2:
    """block_writer.common_prefix_len(a, b) of two bytes or bytearrays: their bytes
    compared one by one from the first (git's common_prefix_size), where the interpreter
    makes two big ints of them and finds the highest bit of their XOR; -1 for any other
    objects (common_prefix_len then runs as committed)."""
    cdef const char *pa
    cdef const char *pb
    cdef Py_ssize_t la, lb, i = 0
    if not (_chars(a, &pa, &la) and _chars(b, &pb, &lb)):
        return -1
    if lb < la:
        la = lb
    while i < la and pa[i] == pb[i]:
        i += 1
    return i


cdef inline object varint_at(data, Py_ssize_t off):
    """basics.get_varint(data, off) of a bytes or a map, its bytes read through the pointer
    and the value summed in a C integer: (value, offset after it). None for anything else,
    a negative or out-of-range offset, and a varint of more than nine bytes (one that is
    truncated among them): get_varint's own loop then reads it and raises as it does. (Nine
    bytes hold at most 2**63 + 2**56 + ... + 2**7 - 1: below 2**64.)"""
    cdef Py_ssize_t n
    cdef cbuf p
    cdef unsigned long long val
    cdef unsigned char c
    cdef int count = 1
    if type(data) is bytes:
        n = PyBytes_GET_SIZE(data)
        p = <cbuf>PyBytes_AS_STRING(data)
    elif lab_is_mmap(data):
        n = (<lab_mmap_head *><void *>data).size
        p = <cbuf>(<lab_mmap_head *><void *>data).data
    else:
        return None
    if off < 0 or off >= n:
        return None
    c = p[off]
    off += 1
    val = c & 0x7F
    while c & 0x80:
        if off >= n or count == 9:
            return None
        count += 1
        c = p[off]
        off += 1
        val = ((val + 1) << 7) | (c & 0x7F)
    return (val, off)


cdef inline bytes take_at(data, cbuf p, Py_ssize_t n, Py_ssize_t a, Py_ssize_t b):
    """data[a:b] of data's n bytes at p: a new bytes, the range copied."""
    if 0 <= a < b <= n:
        return PyBytes_FromStringAndSize(<const char *>p + a, b - a)
    return data[a:b]


cdef inline Py_ssize_t byte_at(cbuf p, Py_ssize_t n, Py_ssize_t i) except -1:
    """data[i] of data's n bytes at p: an int, a negative i counted from the end, out of
    range an IndexError (as indexing a bytes or a map)."""
    if i < 0:
        i += n
    if i < 0 or i >= n:
        raise IndexError("index out of range")
    return p[i]


cdef inline int slice_cmp(data, cbuf p, Py_ssize_t n, Py_ssize_t a, Py_ssize_t b,
                          want) except? -2:
    """The sign of data[a:b] against the bytes want (-1, 0 or 1), the range compared where
    it lies (memcmp); out of range or anything but bytes, the slice's comparison."""
    if 0 <= a <= b <= n and type(want) is bytes:
        return _sign(<const char *>p + a, b - a, PyBytes_AS_STRING(want),
                     PyBytes_GET_SIZE(want))
    s = data[a:b]
    return (s > want) - (s < want)


cdef inline int extend_at(bytearray key, data, cbuf p, Py_ssize_t n, Py_ssize_t a,
                          Py_ssize_t b) except -1:
    """key += data[a:b] (strbuf_add) from data's n bytes at p: key grown in place, the range
    copied (Python makes the slice a bytes object first; git's strbuf_add does not)."""
    cdef Py_ssize_t k
    if not (0 <= a < b <= n):
        key += data[a:b]
        return 0
    k = PyByteArray_GET_SIZE(key)
    PyByteArray_Resize(key, k + (b - a))
    memcpy(PyByteArray_AS_STRING(key) + k, p + a, b - a)
    return 0


cdef inline object joinkey(last, Py_ssize_t p, data, Py_ssize_t lo, Py_ssize_t hi):
    """last[:p] + data[lo:hi] (a seek's key: the last key's prefix, then the record's
    suffix): one new object of last's type (bytes or bytearray), both parts copied in (the
    interpreter makes the two slices first, then the sum); out of range, or a last of
    another type, as that expression."""
    cdef Py_ssize_t n, k
    cdef cbuf p_data = bufptr(data, &n)
    cdef const char *head_p
    cdef char *out_p
    if type(last) is bytes:
        k = PyBytes_GET_SIZE(last)
        head_p = PyBytes_AS_STRING(last)
    elif type(last) is bytearray:
        k = PyByteArray_GET_SIZE(last)
        head_p = PyByteArray_AS_STRING(last)
    else:
        return last[:p] + data[lo:hi]
    if not (0 <= p <= k and 0 <= lo <= hi <= n):
        return last[:p] + data[lo:hi]
    if type(last) is bytes:
        out = PyBytes_FromStringAndSize(NULL, p + hi - lo)
        out_p = PyBytes_AS_STRING(out)
    else:
        out = PyByteArray_FromStringAndSize(NULL, p + hi - lo)
        out_p = PyByteArray_AS_STRING(out)
    memcpy(out_p, head_p, p)
    memcpy(out_p + p, p_data + lo, hi - lo)
    return out


cdef inline Py_ssize_t byte_in(data, Py_ssize_t i) except -1:
    """data[i] of a bytes or a map (the block loader's few header and trailer bytes): the
    byte read through a pointer (bufptr), out of range an IndexError, as indexing does."""
    cdef Py_ssize_t n
    cdef cbuf p = bufptr(data, &n)
    return byte_at(p, n, i)


# The merge loops' queue: heap.pop() as git's merged_iter_pqueue_remove takes the last
# entry (pq->len--): the list's length cut by one, its allocation kept. list.pop gives
# the allocation back when the length falls below half of it, so a queue of one entry
# (the last table's records, under single_subiter_bypass=off) freed its array at every
# pop and allocated it again at the push that follows: two allocations a record that
# git does not make.
cdef inline object heap_pop(list heap):
    """heap.pop(): the last entry, taken out; IndexError on an empty list."""
    cdef Py_ssize_t n = PyList_GET_SIZE(heap)
    if n == 0:
        raise IndexError("pop from empty list")
    last = <object>PyList_GET_ITEM(heap, n - 1)    # a new reference ...
    Py_SET_SIZE(heap, n - 1)
    Py_DECREF(last)                                 # ... for the one the list gave up
    return last


# The merge loops' queue read, heap[i], as git's pq reads pq->heap[i]: the entry at i, read
# from the list's array. The queue is the list MergedIter.seek made (never None), its
# entries [record, index] lists (never anything else), i below its length (the loops'
# boundscheck(False)); Cython's own heap[i] tests the list against None and the entry's
# type at every read.
cdef inline list heap_at(list heap, Py_ssize_t i):
    """heap[i] of a merge loop's queue (a new reference, unchecked)."""
    return <list><object>PyList_GET_ITEM(heap, i)
