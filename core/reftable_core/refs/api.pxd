# The C types of api.py for the Cython build (scripts/build-cython-core.sh; Cython reads this
# file beside api.py, the interpreter and mypyc never do). A RefUpdate, made for every update
# queued, is an extension type: the build spells its @dataclass(slots=True) as Cython's own
# dataclass decorator (scripts/cython_rewrites.py), as it does the record types, so that its
# fields, __init__, __eq__, __repr__, dataclasses.fields() and dataclasses.replace() are the
# same, the fields in the object's C struct (tests/refs/test_api.py checks them in every
# build), and __init__ is C where the standard decorator's is Python compiled at start-up.
cdef class RefUpdate:
    cdef public object refname
    cdef public object new_value
    cdef public object old_value
    cdef public object new_target
    cdef public object message
    cdef public object flags
    cdef public object old_target
    cdef public object original
    cdef public object shown
