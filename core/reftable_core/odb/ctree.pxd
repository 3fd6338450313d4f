# A tree's entries split as C, for the Cython build only: no module imports this file's
# names; scripts/cython_rewrites.py spells tree.py's split_tree with it in the build's copy
# (line for line), and tree.pxd cimports it. git walks a tree's entries one by one
# (decode_tree_entry: the mode up to the space, the name up to the NUL, then the id); the
# interpreter has its regular expression's findall in C match them all, then checks that
# the matches cover the tree.
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.string cimport memchr, memcmp


cdef inline bint _known_mode(const char *p, Py_ssize_t n) noexcept:
    """The mode text is one git writes (tree.py's _KNOWN_MODES)."""
    if n == 6:
        return (memcmp(p, b"100644", 6) == 0 or memcmp(p, b"100755", 6) == 0
                or memcmp(p, b"120000", 6) == 0 or memcmp(p, b"160000", 6) == 0)
    return n == 5 and memcmp(p, b"40000", 5) == 0


cdef inline list split_known(data, Py_ssize_t hash_len, entry_pattern):
    """The entries of a tree made only of entries with a mode git writes, each a new bytes
    (what the findall of entry_pattern(hash_len) gives when its matches cover the tree), or
    None when an entry is not one of those (the caller splits entry by entry). Not a bytes:
    that findall, as the interpreter does it."""
    cdef const char *s
    cdef const char *sp
    cdef const char *nul
    cdef Py_ssize_t n, pos = 0, end
    cdef list out
    if type(data) is not bytes:
        out = entry_pattern(hash_len).findall(data)
        return out if sum(map(len, out)) == len(data) else None
    s = PyBytes_AS_STRING(data)
    n = PyBytes_GET_SIZE(data)
    out = []
    while pos < n:
        sp = <const char *>memchr(s + pos, 32, n - pos)
        if sp == NULL or not _known_mode(s + pos, sp - (s + pos)):
            return None
        nul = <const char *>memchr(sp + 1, 0, n - (sp + 1 - s))
        if nul == NULL or nul == sp + 1:
            return None
        end = (nul - s) + 1 + hash_len
        if end > n:
            return None
        out.append(PyBytes_FromStringAndSize(s + pos, end - pos))
        pos = end
    return out
