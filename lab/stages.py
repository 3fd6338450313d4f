"""Where a ref's instructions go in the lab's show-ref over a reftable stack: the
stages `reftable-lab speed --stages` counts (lab.speed.stage_table).

    python -m lab.stages STAGE GITDIR

runs the start of show-ref's work up to STAGE and prints the number of ref records
it went through:

- open:    start-up, the imports of `reftable-lab show-ref` (lab.cli and its show-ref
           module), the repository and its stack opened;
- walk:    open, then every ref block of every table loaded as the record loops load
           them and its records stepped through, nothing decoded: each record's
           suffix length read (git's varint), its prefix length and update index
           varints, key suffix and value skipped (a floor: the least a per-record
           Python loop over these bytes does, no key built, no object made; the
           core's loops.walk_ref_records, made of the statements the record loops
           read the layout with);
- tables:  open, then each table's own ref records from "refs/" on (every record of
           every table, the sub-iterators' record loops alone, no merge);
- merged:  open, then the merged iterator from "refs/" on (the record loops under
           the merge loop: what show-ref's loop reads).

Differences of whole-process counts give the cost of one stage: walk - open is the
blocks' loading and the bare walk, tables - open the record loops, merged - tables
the merge loop, and the whole command (lab.cli show-ref) - merged show-ref's own
loop (its object checks, its pattern match; the command's imports are in every
stage's count, so they cancel). The consumers are
loops inside functions (a loop at module level pays a dict store per record).
"""
from __future__ import annotations

import importlib
import sys
from typing import Any

from reftable_core.reftable.loops import walk_ref_records
from reftable_core.reftable.record import BLOCK_TYPE_REF
from reftable_core.repo import open_repo

STAGES = ("open", "walk", "tables", "merged")
START = b"refs/"


def _walk(store: Any) -> int:
    n = 0
    for table in store.stack.merged.readers:
        block = table.load_block(0, BLOCK_TYPE_REF) if table.has_refs else None
        while block is not None:
            n += walk_ref_records(block.data, block.base + block.header_off + 4,
                                  block.base + block.end, table.hash_size)
            block = table.load_block(block.off + block.full_size, BLOCK_TYPE_REF)
    return n


def _tables(store: Any) -> int:
    n = 0
    for table in store.stack.merged.readers:
        it = table.refs()
        it.seek(START)
        for _ in it:
            n += 1
    return n


def _merged(store: Any) -> int:
    n = 0
    for _ in store.ref_record_iter(START):
        n += 1
    return n


def run(stage: str, gitdir: str) -> int:
    """The records stage went through (0 for open), the repository opened with the
    default flags (all on, what `reftable-lab show-ref` runs with)."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r} (stages: {', '.join(STAGES)})")
    for module in ("lab.cli", "reftable_core.builtin.show_ref"):    # the command's start-up
        importlib.import_module(module)
    repo = open_repo(gitdir)
    try:
        store = repo.refs
        if not hasattr(store, "ref_record_iter"):
            raise ValueError(f"{gitdir}: not a reftable repository")
        store.stack.reload()
        if stage == "walk":
            return _walk(store)
        if stage == "tables":
            return _tables(store)
        if stage == "merged":
            return _merged(store)
        return 0
    finally:
        repo.close()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m lab.stages {open|walk|tables|merged} GITDIR", file=sys.stderr)
        return 2
    try:
        print(run(argv[0], argv[1]))
    except ValueError as e:
        print(f"lab.stages: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
