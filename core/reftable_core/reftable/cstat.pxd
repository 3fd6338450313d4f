# A file's stat key as C, for the Cython build only: no module imports this file's names;
# scripts/cython_rewrites.py spells stack.py's stat of tables.list with it in the build's
# copy (line for line), and stack.pxd cimports it. git's stat_cache compares the result of
# stat(2) with the one it kept; the interpreter calls os.stat, which builds a stat_result
# of some twenty fields (float times among them) for the five the key keeps.
import os

from libc.errno cimport errno
from posix.stat cimport stat, struct_stat


cdef extern from "Python.h":
    bytes PyUnicode_EncodeFSDefault(object path)


cdef inline tuple stat_key(path):
    """stack._stat_key(os.stat(path)) by one stat(2): (st_dev, st_ino, st_size,
    st_mtime_ns, st_ctime_ns); a failing stat raises the OSError os.stat raises
    (FileNotFoundError when the file is missing)."""
    cdef struct_stat st
    cdef bytes name
    if type(path) is str:       # os.fsencode's encoding of a str, called in C
        name = PyUnicode_EncodeFSDefault(path)
    else:
        name = os.fsencode(path)
    if stat(name, &st) != 0:
        e = errno
        raise OSError(e, os.strerror(e), path)
    return (st.st_dev, st.st_ino, st.st_size,
            <long long>st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
            <long long>st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec)
