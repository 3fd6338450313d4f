# The C of refname.py for the Cython build (scripts/build-cython-core.sh; Cython reads this
# file beside refname.py, the interpreter and mypyc never do): names_well_formed's batch
# check and check_refname_format's plain-name test, rewritten to crefname.pxd's C walk
# over each name (scripts/cython_rewrites.py).
from reftable_core.refs.crefname cimport names_ok_c, refname_ok_c
from reftable_core.counters cimport Counters

cdef Counters WORK     # counters.pxd: the import's WORK, its counters added to in C
