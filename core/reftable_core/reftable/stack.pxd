# The C of stack.py for the Cython build (scripts/build-cython-core.sh; Cython reads this file
# beside stack.py, the interpreter and mypyc never do): the stat of tables.list under
# stat_cache=on, rewritten to cstat.pxd's C (scripts/cython_rewrites.py).
from reftable_core.reftable.cstat cimport stat_key
