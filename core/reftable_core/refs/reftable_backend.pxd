# The C types of reftable_backend.py for the Cython build (scripts/build-cython-core.sh;
# Cython reads this file beside reftable_backend.py, the interpreter and mypyc never do).
# The store stays a plain class (its base, RefStoreBase, is one); a read calls its steps on
# the types they have (scripts/cython_rewrites.py): the stack's reload, the merged
# iterator's seek and the ref record's fields, each through a checked cast (a TypeError,
# never a wrong read, should another type get there) in C, where the interpreter looks each
# up by name on the object.
from reftable_core.reftable.merged cimport MergedIter
from reftable_core.reftable.record cimport RefRecord
from reftable_core.reftable.stack cimport Stack
