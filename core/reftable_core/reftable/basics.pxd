# The C types of basics.py for the Cython build (scripts/build-cython-core.sh; Cython reads
# this file beside basics.py, the interpreter and mypyc never do). Offsets and bytes are C
# integers; a varint's value stays a Python int (up to 10 bytes are read before the
# 64-bit check, as in the .py); a varint of a bytes or a map of up to nine bytes is read
# through the pointer, its value a C integer (cbytes.pxd's varint_at).
import cython
from reftable_core.reftable.cbytes cimport varint_at

@cython.locals(n=Py_ssize_t, c=Py_ssize_t, count=Py_ssize_t)
cpdef tuple get_varint(buf, Py_ssize_t off)
