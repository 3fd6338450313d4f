# The record types of record.py as extension types for the Cython build
# (scripts/build-cython-core.sh; Cython reads this file beside record.py, the interpreter
# and mypyc never do). The build spells record.py's @dataclass(slots=True) as Cython's
# own dataclass decorator, so each record is a cdef class with the same fields, __init__,
# __eq__, __match_args__ and dataclasses.fields(); a module that cimports it (loops.pxd)
# creates one with its type's tp_new and stores its fields in the object's C struct,
# where the interpreted model calls object.__new__ and stores slots through descriptors.
# The fields stay Python objects (public: read and written from Python as before) but
# value_type, a C int as git's uint8_t value_type: the loops' deletion test is a C
# compare, where Cython's compare of an int object is a helper that GCC inlined into
# some loops and called from others. An int reads back as the same int; what is stored
# there is converted as Cython converts to a C int: None or a str raises TypeError, an
# int past a C int's range OverflowError, and a float is truncated (1.5 reads back 1),
# where the interpreter keeps any object (git's parser and the lab's make 0 to 4).
# get_varint is basics.pxd's, called in C (the build's copy of record.py imports it from
# Python no more), and skip_value is callable in C from loops.pxd's record_extent.
from reftable_core.reftable.basics cimport get_varint
from reftable_core.reftable.cbytes cimport frozen


cpdef skip_value(typ, buf, off, vt, hash_size)
# realloc_refname is called in C by the ref loops (loops.pxd cimports it), through a
# function pointer the loops' module takes at import, which the C compiler cannot
# inline, as git's call of libc's realloc is not inlined; its bytes(key) is spelled as
# the loops spell the allocation (frozen)
cpdef bytes realloc_refname(refname, bytearray key)

cdef class RefRecord:
    cdef public object refname
    cdef public object update_index
    cdef public int value_type
    cdef public object value
    cdef public object target_value
    cdef public object target

cdef class LogRecord:
    cdef public object refname
    cdef public object update_index
    cdef public int value_type
    cdef public object old_id
    cdef public object new_id
    cdef public object name
    cdef public object email
    cdef public object time
    cdef public object tz_offset
    cdef public object message

cdef class ObjRecord:
    cdef public object hash_prefix
    cdef public object offsets

cdef class IndexRecord:
    cdef public object last_key
    cdef public object offset


# LogRecord(refname, ui, vt, old, new, name, email, time, tz, message) as the log loops make
# one in the Cython build (scripts/cython_rewrites.py): the type's tp_new, then the ten fields
# the dataclass's __init__ sets, stored in its C struct (the class call parses ten
# arguments into __init__ first), as the ref loops make a RefRecord
cdef inline LogRecord new_log(refname, update_index, value_type, old_id, new_id, name, email,
                              time, tz_offset, message):
    cdef LogRecord r = LogRecord.__new__(LogRecord)
    r.refname = refname
    r.update_index = update_index
    r.value_type = value_type
    r.old_id = old_id
    r.new_id = new_id
    r.name = name
    r.email = email
    r.time = time
    r.tz_offset = tz_offset
    r.message = message
    return r
