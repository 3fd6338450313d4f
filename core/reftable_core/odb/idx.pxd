# The C of idx.py for the Cython build (scripts/build-cython-core.sh; Cython reads this file
# beside idx.py, the interpreter and mypyc never do): the binary search's compare, rewritten
# to cidx.pxd's C (scripts/cython_rewrites.py); its locals are typed by the @cython.locals
# line in the .py.
from reftable_core.odb.cidx cimport hashcmp_at
