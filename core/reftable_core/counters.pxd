# The C types of counters.py for the Cython build (scripts/build-cython-core.sh; the
# interpreter and mypyc never read this file). Counters is an extension type whose counters
# are C integers in its struct (tests/reftable/test_cython_decls.py: the names are
# COUNTER_NAMES, in its order). A module whose .pxd declares its global `cdef Counters WORK`
# (the object `from ..counters import WORK` binds, type-checked there) adds to a counter in
# C, where the interpreter makes four bytecodes of it (LOAD_GLOBAL, LOAD_ATTR, BINARY_OP,
# STORE_ATTR): the same count, one increment per unit of work.
cdef class Counters:
    cdef public Py_ssize_t blocks_read, blocks_set_up, blocks_inflated, block_iters_built
    cdef public Py_ssize_t seek_iter_copies, restart_keys_decoded, source_preads
    cdef public Py_ssize_t source_pread_bytes, source_mmap_slices, source_maps, tables_opened
    cdef public Py_ssize_t tables_list_reads, tables_list_stats, packed_files_parsed
    cdef public Py_ssize_t packed_lines, packed_bytes, packed_getc_locked, packed_getc_unlocked
    cdef public Py_ssize_t packed_buffer_reads, packed_line_copies, packed_maps
    cdef public Py_ssize_t packed_bsearch_seeks, refname_format_checks, refname_normalized
    cdef public Py_ssize_t refname_escape_scans, pack_objects_read, deletions_suppressed
    cdef public Py_ssize_t deletions_returned, ref_iterators_built, refname_store_checks
    cdef public Py_ssize_t library_name_checks, loose_refs_written, writer_buffers_built
    cdef public Py_ssize_t writer_buffers_reused, block_writer_buffers_built
    cdef public Py_ssize_t block_writer_buffers_reused
    cdef public list _caches
