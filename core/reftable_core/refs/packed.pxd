# The C types of packed.py for the Cython build (scripts/build-cython-core.sh; Cython reads
# this file beside packed.py, the interpreter and mypyc never do): the hex decoding a walk's
# usual rows spell as `....split(b"\n")`, `unhex(...)` and `line[name_off:]`, rewritten to cline.pxd's C (scripts/cython_rewrites.py);
# the walk's locals are typed by @cython.locals lines in the .py.
from reftable_core.refs.cline cimport split_lf, tail, unhex_c
from reftable_core.counters cimport Counters

cdef Counters WORK     # counters.pxd: the import's WORK, its counters added to in C
