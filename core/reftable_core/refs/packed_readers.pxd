# The C of packed_readers.py for the Cython build (scripts/build-cython-core.sh; Cython reads
# this file beside packed_readers.py, the interpreter and mypyc never do): lines_fgetc's
# reads, rewritten to cstdio.pxd's libc fgetc (scripts/cython_rewrites.py); the readers'
# locals are typed by @cython.locals lines in the .py (a generator's cannot be typed here).
from reftable_core.refs.cstdio cimport cfile, cgetc, ctell
from reftable_core.counters cimport Counters

cdef Counters WORK     # counters.pxd: the import's WORK, its counters added to in C
