# The C types of table.py for the Cython build (scripts/build-cython-core.sh; the
# interpreter and mypyc never read this file). A TableReader is an extension type: its
# fields sit in its C struct (the interpreted class sets the same names in __init__ and
# _parse), and the seek's own steps (finding the block, loading it, the section's start
# and index) are called in C from the reader's methods; so are the steps a flag picks (the
# block loader, the seek in a block, the start of the record loop: block.pxd's and the
# reader's own, each chosen at the call by the flag's C field, scripts/cython_rewrites.py).
# The blocks they hand each other are typed (parsed_block.pxd): their fields read in C. A
# RecordIterator is an extension type too, its reader typed: its seek calls the reader's in
# C. The reader's own fields stay Python objects.
import cython
from reftable_core.reftable.iter cimport RecordIter, Reftable
from reftable_core.reftable.parsed_block cimport Block
from reftable_core.reftable.block cimport (load_block_early_exit, load_block_full_setup,
                                           seek_in_block, seek_in_block_copying)
from reftable_core.counters cimport Counters
from reftable_core.reftable.loops cimport finish_loop

cdef Counters WORK     # counters.pxd: the import's WORK, its counters added to in C


cdef class TableReader(Reftable):
    cdef public object source, flags, path, name
    cdef public object _load, _views, _records_from, _seek_in_block, _restart_scan
    cdef public object _loops, _next_blocks, _limit
    cdef public object file_size, version, header_size, block_size
    cdef public object hash_size
    cdef public object ref_index_offset, obj_offset, obj_id_len, obj_index_offset
    cdef public object log_offset, log_index_offset
    cdef public object first_block_type, has_refs, has_logs, has_objs
    cdef bint _early, _seek_in_place, _next_in_place     # the flags of the steps above

    cpdef Block load_block(self, off, want_type=*)
    cpdef _section_start(self, typ)
    cpdef _index_offset(self, typ)
    @cython.locals(block=Block, nxt=Block)
    cpdef Block _seek_linear(self, start, key, typ)
    cpdef Block _find_block(self, typ, key)
    @cython.locals(block=Block)
    cpdef _seek(self, typ, key)
    cpdef _records_in_place(self, Block block, off, last)


cdef class RecordIterator(RecordIter):
    cdef public object _gen, _typ
    cdef public TableReader _reader

    cpdef seek(self, key)
    cpdef _drop_loop(self)
