# The C of writer.py for the Cython build (scripts/build-cython-core.sh; Cython reads this file
# beside writer.py, the interpreter and mypyc never do): a record's key put into its key buffer
# (`buf[:] = key`: git's reftable_buf_reset, then reftable_buf_add) by cbytes.pxd's setkey,
# a resize and a memcpy, where the interpreter assigns a slice (scripts/cython_rewrites.py).
from reftable_core.reftable.cbytes cimport setkey


# A TableWriter is an extension type: its fields sit in its C struct (the interpreted class
# sets the same names in its methods; tests/reftable/test_cython_decls.py), so its methods
# read and write them there.
cdef class TableWriter:
    cdef public object _block_keys, _bw, _closed, _deflating, _executor, _header, _index
    cdef public object _keys, _last_key, _log_ident, _log_ident_enc, _log_msg, _log_tail
    cdef public object _max, _min, _next, _obj, _out, _own, _pending, _phase, _section
    cdef public object _threshold, _write, hash_size, options, stats, version
