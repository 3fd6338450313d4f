# The C types of transaction.py for the Cython build (scripts/build-cython-core.sh; the
# interpreter and mypyc never read this file). A QueuedUpdate is an extension type: its
# fields sit in its C struct (the interpreted class lists the same names in __slots__;
# tests/reftable/test_cython_decls.py), set there by its constructor. (The files backend's
# _Upd, a Python subclass, adds its lock state in an instance dict.)
cdef class QueuedUpdate:
    cdef public object current, force_reflog, is_symref, log_only, msg, new_target
    cdef public object new_value, no_deref, old_target, old_value, original, refname, shown
    cdef public object skip_create_reflog, skip_oid_verification, via_head
