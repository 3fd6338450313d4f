# The C types of show_ref.py for the Cython build (scripts/build-cython-core.sh; Cython reads
# this file beside show_ref.py, the interpreter and mypyc never do): the record type its
# loop over a reftable store's records declares (@cython.locals in the .py), and the C
# walk that loop checks each name with (scripts/cython_rewrites.py).
from reftable_core.refs.crefname cimport refname_ok_c
from reftable_core.reftable.record cimport RefRecord
