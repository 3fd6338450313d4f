# The C of delta.py for the Cython build (scripts/build-cython-core.sh; Cython reads this file
# beside delta.py, the interpreter and mypyc never do): apply_delta's result, copies and inserts,
# rewritten to cdelta.pxd's C (scripts/cython_rewrites.py); its locals are typed by the
# @cython.locals line in the .py.
from reftable_core.odb.cdelta cimport put, reserve
