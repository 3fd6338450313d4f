# The C of tree.py for the Cython build (scripts/build-cython-core.sh; Cython reads this file
# beside tree.py, the interpreter and mypyc never do): split_tree's findall, rewritten to
# ctree.pxd's C (scripts/cython_rewrites.py).
from reftable_core.odb.ctree cimport split_known
