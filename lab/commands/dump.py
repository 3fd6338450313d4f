"""`reftable-lab dump --table FILE`: print every record of one reftable
(`--stack DIR`: a whole stack, see dump_stack).

Modelled on git's `test-tool dump-reftable`. Output (one item per line, names
and messages printed with Python-style escapes for non-printable bytes, ids in
lowercase hex):

    table <path>
    header version=<1|2> hash=<sha1|sha256> block_size=<n> min_update_index=<n> max_update_index=<n>
    footer ref_index=<off> obj=<off> obj_id_len=<n> obj_index=<off> log=<off> log_index=<off> size=<bytes>
    block <type> at=<off> len=<block_len> full=<bytes to next block> restarts=<count>   (every block, file order)
    ref{<refname>(<update_index>) delete}
    ref{<refname>(<update_index>) val1 <id>}
    ref{<refname>(<update_index>) val2 <id> peeled <id>}
    ref{<refname>(<update_index>) symref <target>}
    log{<refname>(<update_index>) delete}
    log{<refname>(<update_index>) old <id> new <id> <name> <<email>> <time> <+hhmm> <message>}

(<+hhmm> is the stored tz_offset printed the way git reads it: sign and 4 digits.)
    obj{<id prefix> [<ref block offset>, ...]}
    index{<type of indexed blocks> at=<index block offset> <last key> -> <block offset>}

Sections come in that order: header, footer, blocks, refs, logs, objs, index
records. The log message is printed with its trailing newline escaped ("\\n").
`dump_table(reader, out)` does the work so a stack dump can reuse it.
Exit status 0; a corrupt table raises FormatError, which the CLI prints as
`fatal: <file> at offset N: ...` with exit status 128; so is a path that is no
table (a directory, unreadable) or no stack (see stack_dir: `--stack GITDIR`
dumps GITDIR/reftable).
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from typing import TextIO

from reftable_core.errors import ReftableError
from reftable_core.flags import Flags
from reftable_core.reftable.block import iter_block
from reftable_core.reftable.parsed_block import Block
from reftable_core.reftable.record import BLOCK_TYPE_INDEX, IndexRecord, LogRecord, RefRecord
from reftable_core.reftable.stack import Stack, StackOptions
from reftable_core.reftable.table import TableReader


def register(sub: argparse._SubParsersAction, add_flag_options: Callable) -> None:
    p = sub.add_parser("dump", help="print every record of a reftable")
    p.add_argument("--table", metavar="FILE", help="one reftable file")
    p.add_argument("--stack", metavar="DIR",
                   help="a reftable stack directory ($GIT_DIR/reftable): its tables and "
                        "the merged records readers see")
    add_flag_options(p)
    p.set_defaults(func=run, _dump_parser=p)


def run(args: argparse.Namespace, flags: Flags) -> int:
    if getattr(args, "stack", None):
        dump_stack(stack_dir(args.stack), flags, sys.stdout)
        return 0
    if not getattr(args, "table", None):
        print("usage: reftable-lab dump --table FILE | --stack DIR", file=sys.stderr)
        return 129
    path = args.table
    if os.path.isdir(path):
        hint = " (a stack: use --stack)" if _has_tables_list(path) else ""
        raise ReftableError(f"{path}: is a directory, not a reftable file{hint}")
    try:
        reader = TableReader.open(path, flags, name=path)
    except OSError as e:
        raise ReftableError(f"{path}: {e.strerror or e}") from None
    with reader:
        dump_table(reader, sys.stdout)
    return 0


def _has_tables_list(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "tables.list"))


def stack_dir(path: str) -> str:
    """The stack directory `--stack path` means: path itself when it holds a
    tables.list, else path/reftable when that does (a git dir was given);
    ReftableError naming what is missing otherwise (never an empty stack)."""
    if _has_tables_list(path):
        return path
    sub = os.path.join(path, "reftable")
    if _has_tables_list(sub):
        return sub
    if not os.path.isdir(path):
        raise ReftableError(f"{path}: no such reftable stack directory")
    raise ReftableError(f"{path}: not a reftable stack: no tables.list in it "
                        f"(nor in {sub})")


def show(b: bytes | None) -> str:
    """Bytes as text: printable ASCII as is, everything else escaped."""
    if b is None:
        return "<none>"
    return repr(bytes(b))[2:-1]


def _tz(stored: int) -> str:
    # git stores the zone as the decimal number hhmm (-0800 -> -800), see record.py
    return f"{'-' if stored < 0 else '+'}{abs(stored):04d}"


def format_ref(r: RefRecord) -> str:
    head = f"ref{{{show(r.refname)}({r.update_index})"
    vt = r.value_type
    if vt == 1:
        return f"{head} val1 {r.value.hex()}}}"          # type: ignore[union-attr]
    if vt == 2:
        return f"{head} val2 {r.value.hex()} peeled {r.target_value.hex()}}}"  # type: ignore[union-attr]
    if vt == 3:
        return f"{head} symref {show(r.target)}}}"
    return f"{head} delete}}"


def format_log(lg: LogRecord) -> str:
    head = f"log{{{show(lg.refname)}({lg.update_index})"
    if lg.value_type == 0:
        return f"{head} delete}}"
    return (f"{head} old {lg.old_id.hex()} new {lg.new_id.hex()} "   # type: ignore[union-attr]
            f"{show(lg.name)} <{show(lg.email)}> {lg.time} {_tz(lg.tz_offset)} "
            f"{show(lg.message)}}}")


def dump_table(reader: TableReader, out: TextIO) -> None:
    w = out.write
    w(f"table {reader.path}\n")
    w(f"header version={reader.version} hash={reader.hash_id} block_size={reader.block_size} "
      f"min_update_index={reader.min_update_index} "
      f"max_update_index={reader.max_update_index}\n")
    w(f"footer ref_index={reader.ref_index_offset} obj={reader.obj_offset} "
      f"obj_id_len={reader.obj_id_len} obj_index={reader.obj_index_offset} "
      f"log={reader.log_offset} log_index={reader.log_index_offset} "
      f"size={reader.file_size}\n")
    index_blocks = []
    for b in reader.blocks():
        w(f"block {chr(b.typ)} at={b.off} len={b.length} full={b.full_size} "
          f"restarts={b.restart_count}\n")
        if b.typ == BLOCK_TYPE_INDEX:
            index_blocks.append(b)
    for r in reader.refs():
        w(format_ref(r) + "\n")
    for lg in reader.logs():
        w(format_log(lg) + "\n")
    for o in reader.objs():
        w(f"obj{{{o.hash_prefix.hex()} [{', '.join(str(x) for x in o.offsets)}]}}\n")
    for b in index_blocks:
        for rec in _block_records(reader, b):
            child = reader.load_block(rec.offset)
            kind = chr(child.typ) if child is not None else "?"
            w(f"index{{{kind} at={b.off} {show(rec.last_key)} -> {rec.offset}}}\n")


def _block_records(reader: TableReader, block: Block) -> Iterator[IndexRecord]:
    return iter_block(block, reader.hash_size, reader.flags, reader.min_update_index)


def dump_stack(path: str, flags: Flags, out: TextIO) -> None:
    """`dump --stack DIR`: the tables of tables.list (oldest first), then the merged
    refs and logs as readers see them (newest wins, deletions suppressed):

        stack <dir>
        tables <n> next_update_index=<n>
        table <name> min_update_index=<n> max_update_index=<n> size=<bytes>
        ref{...} / log{...} lines as for --table
    """
    st = Stack(path, flags, StackOptions(hash_id=None), create=False)
    try:
        w = out.write
        w(f"stack {path}\n")
        w(f"tables {len(st.tables)} next_update_index={st.next_update_index()}\n")
        for t in st.tables:
            w(f"table {t.name} min_update_index={t.reader.min_update_index} "
              f"max_update_index={t.reader.max_update_index} size={t.file_size}\n")
        for r in st.merged.refs():
            w(format_ref(r) + "\n")
        for lg in st.merged.logs():
            w(format_log(lg) + "\n")
    finally:
        st.close()
