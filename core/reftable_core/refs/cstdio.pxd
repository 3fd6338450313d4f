# packed_reader=fgetc's stdio as C, for the Cython build only: no module imports this file's
# names; scripts/cython_rewrites.py spells packed_readers.py's lines_fgetc with them in the
# build's copy (line for line), and packed_readers.pxd cimports them. The interpreter models
# git's fgetc (before seed 001 3/9) as a locked read(1) of a buffered file object per
# character; here it is libc's fgetc itself, on a FILE opened over a duplicate of that
# file's descriptor: a call and the stream's lock a character, as git's. The FILE is
# held by a capsule, closed when the capsule goes (the generator done or dropped).
from cpython.exc cimport PyErr_SetFromErrno
from cpython.pycapsule cimport PyCapsule_Destructor, PyCapsule_GetPointer, PyCapsule_New
from libc cimport errno as c_errno
from libc.stdio cimport EOF, FILE, fdopen, ferror, fgetc, ftell
from posix.unistd cimport close as c_close, dup


cdef extern from *:
    """
    static void reftable_lab_fclose(PyObject *capsule) {
        FILE *fp = (FILE *)PyCapsule_GetPointer(capsule, "reftable_lab.FILE");
        if (fp)
            fclose(fp);
    }
    """
    void reftable_lab_fclose(object capsule)


cdef inline object cfile(f):
    """A FILE reading f's file from its start (fdopen of a dup of f.fileno()), in a capsule."""
    cdef int fd = dup(f.fileno())
    cdef FILE *fp
    cdef int e
    if fd < 0:
        PyErr_SetFromErrno(OSError)
    fp = fdopen(fd, "rb")
    if fp == NULL:
        e = c_errno.errno
        c_close(fd)
        c_errno.errno = e               # fdopen's, for the OSError
        PyErr_SetFromErrno(OSError)
    return PyCapsule_New(fp, "reftable_lab.FILE", <PyCapsule_Destructor>reftable_lab_fclose)


cdef inline FILE *_fp(capsule) except NULL:
    return <FILE *>PyCapsule_GetPointer(capsule, "reftable_lab.FILE")


cdef inline int cgetc(capsule) except -2:
    """fgetc(fp): the next byte, or -1 at the end; a read error is the OSError read raises."""
    cdef FILE *fp = _fp(capsule)
    cdef int c = fgetc(fp)
    if c == EOF and ferror(fp):
        PyErr_SetFromErrno(OSError)
    return c


cdef inline long ctell(capsule) except -1:
    """ftell(fp): the bytes read (the FILE began at the file's start)."""
    return ftell(_fp(capsule))
