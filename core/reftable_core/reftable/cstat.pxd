# The system calls of tables.list as C, for the Cython build only: no module imports this
# file's names; scripts/cython_rewrites.py spells stack.py's stat of tables.list
# (stat_cache=on) and its open, lseek, read and close (read_lines: stat_cache=off, and
# every reload) with them in the build's copy (line for line), and stack.pxd cimports
# them. git's stat_cache compares the result of stat(2) with the one it kept; the
# interpreter calls os.stat, which builds a stat_result of some twenty fields (float times
# among them) for the five the key keeps. Each os call also reads its function from the
# module, parses its arguments and lets go of the GIL around the call and takes it back;
# here each is the system call itself, retried on EINTR and raising the OSError os raises.
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.exc cimport PyErr_SetFromErrno, PyErr_SetFromErrnoWithFilenameObject
from cpython.object cimport PyObject
from cpython.ref cimport Py_DECREF
from cpython.long cimport PyLong_AsLongLong, PyLong_AsUnsignedLongLong
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE
from libc.errno cimport EINTR, errno
from libc.string cimport strlen
from posix.fcntl cimport open as c_open
from posix.stat cimport stat, struct_stat
from posix.unistd cimport close as c_close, lseek as c_lseek, read as c_read


cdef extern from "Python.h":
    # os's own converter of a path argument: a str encoded as os.fsencode does, a bytes or
    # a path-like as os takes them; a NUL in it is os's ValueError ("embedded null byte":
    # a C string would end there, another file's name)
    int PyUnicode_FSConverter(object path, void *result) except 0
    int PyUnicode_IS_ASCII(object o)
    void *PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)


cdef inline bytes _fsname(path):
    """The file system name os would make of path (PyUnicode_FSConverter)."""
    cdef PyObject *out = NULL
    PyUnicode_FSConverter(path, &out)
    name = <bytes>out               # a new reference ...
    Py_DECREF(name)                 # ... for the one the converter handed over
    return name


cdef inline const char *_ascii(path):
    """A str path of ASCII characters without a NUL as the C string it holds (CPython keeps
    an ASCII str's characters as bytes followed by a NUL): what os.fsencode makes of it in
    any file system encoding Python runs with (all are ASCII-compatible), without the new
    bytes; NULL for anything else (then _fsname)."""
    cdef const char *p
    if type(path) is not str or not PyUnicode_IS_ASCII(path):
        return NULL
    p = <const char *>PyUnicode_DATA(path)
    return p if <Py_ssize_t>strlen(p) == PyUnicode_GET_LENGTH(path) else NULL


cdef inline int _raise(path=None) except -1:
    """The OSError os raises for errno (with the path, when given)."""
    if path is None:
        PyErr_SetFromErrno(OSError)
    else:
        PyErr_SetFromErrnoWithFilenameObject(OSError, path)
    return -1


cdef inline bint _same_u(object key, Py_ssize_t i, unsigned long long v) except -1:
    """key[i] == v for a field that is never negative (device, inode, size)."""
    f = <object>PyTuple_GET_ITEM(key, i)
    return type(f) is int and f >= 0 and PyLong_AsUnsignedLongLong(f) == v


cdef inline bint _same_s(object key, Py_ssize_t i, long long v) except -1:
    """key[i] == v for a time in nanoseconds (before 1970: negative)."""
    f = <object>PyTuple_GET_ITEM(key, i)
    return type(f) is int and PyLong_AsLongLong(f) == v


cdef inline bint stat_is(path, key) except -1:
    """stack._stat_key(os.stat(path)) == key, by one stat(2): each of the five fields
    compared in C with the kept key's (a tuple of five ints; None is never equal), where
    the interpreter builds os.stat's result, then a tuple of five new ints, and compares
    the two tuples; a failing stat raises the OSError os.stat raises."""
    cdef struct_stat st
    cdef const char *ascii = _ascii(path)
    cdef bytes name
    if ascii != NULL:
        if stat(ascii, &st) != 0:
            _raise(path)
    else:
        name = _fsname(path)
        if stat(name, &st) != 0:
            _raise(path)
    if type(key) is not tuple or PyTuple_GET_SIZE(key) != 5:
        return False
    return (_same_u(key, 0, <unsigned long long>st.st_dev)
            and _same_u(key, 1, <unsigned long long>st.st_ino)
            and _same_u(key, 2, <unsigned long long>st.st_size)
            and _same_s(key, 3, <long long>st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec)
            and _same_s(key, 4, <long long>st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec))


cdef inline int sys_open(path, int flags) except -1:
    """os.open(path, flags) (no O_CREAT: no mode): open(2)."""
    cdef bytes name = _fsname(path)
    cdef int fd
    while True:
        fd = c_open(name, flags)
        if fd >= 0:
            return fd
        if errno != EINTR:
            return _raise(path)


cdef inline long long sys_lseek(int fd, long long off, int how) except -1:
    """os.lseek(fd, off, how): lseek(2)."""
    cdef long long r = c_lseek(fd, off, how)
    if r < 0:
        return _raise()
    return r


cdef inline bytes sys_read(int fd, Py_ssize_t n):
    """os.read(fd, n): read(2) into a new bytes of n bytes, cut to what came."""
    cdef bytes out
    cdef Py_ssize_t r
    if n < 0:
        raise ValueError("negative length")
    out = PyBytes_FromStringAndSize(NULL, n)
    while True:
        r = c_read(fd, PyBytes_AS_STRING(out), n)
        if r >= 0:
            break
        if errno != EINTR:
            _raise()
    return out if r == n else out[:r]


cdef inline int sys_close(int fd) except -1:
    """os.close(fd): close(2) (an EINTR is not retried, as os.close does not)."""
    if c_close(fd) != 0:
        return _raise()
    return 0
