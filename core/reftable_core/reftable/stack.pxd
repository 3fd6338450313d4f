# The C of stack.py for the Cython build (scripts/build-cython-core.sh; Cython reads this file
# beside stack.py, the interpreter and mypyc never do): the stat of tables.list under
# stat_cache=on and its read (open, lseek, read, close), rewritten to cstat.pxd's C
# (scripts/cython_rewrites.py).
from libc.stdio cimport SEEK_END, SEEK_SET
from posix.fcntl cimport O_CLOEXEC, O_NONBLOCK, O_RDONLY
from reftable_core.reftable.cstat cimport stat_key, sys_close, sys_lseek, sys_open, sys_read
