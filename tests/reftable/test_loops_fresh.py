"""loops.py is exactly what scripts/gen_loops.py generates, and every variant is reachable."""
from __future__ import annotations

import inspect
import itertools
import subprocess
import sys
from pathlib import Path

from reftable_core.flags import Flags
from reftable_core.reftable import loops
from reftable_core.reftable.block import record_loop
from reftable_core.reftable.merged import merge_function
from reftable_core.reftable.record import BLOCK_TYPES

from scripts import gen_loops
from tests.helpers.source import source_file, source_of

ROOT = Path(__file__).resolve().parents[2]


def test_committed_loops_py_is_fresh() -> None:
    committed = gen_loops.TARGET.read_text()
    loaded = source_file(loops)
    if loops.__file__ != str(loaded):       # the compiled core: built from a copy of it
        assert loaded.read_text() == committed
    else:
        assert loaded.resolve() == gen_loops.TARGET
    assert gen_loops.render() == committed, (
        "core/reftable_core/reftable/loops.py is stale: run python scripts/gen_loops.py")
    assert gen_loops.PXD_TARGET.read_text() == gen_loops.PXD, (
        "core/reftable_core/reftable/loops.pxd is stale: run python scripts/gen_loops.py")


def test_script_writes_the_same_file_and_check_detects_staleness(tmp_path: Path) -> None:
    out = tmp_path / "loops.py"
    script = str(ROOT / "scripts" / "gen_loops.py")
    subprocess.run([sys.executable, script, "--output", str(out)], check=True)
    assert out.read_text() == source_file(loops).read_text()
    ok = subprocess.run([sys.executable, script, "--check", "--output", str(out)], check=False)
    assert ok.returncode == 0
    assert out.with_suffix(".pxd").read_text() == gen_loops.PXD_TARGET.read_text()
    out.write_text(out.read_text().replace("last = key", "last = bytes(key)", 1))
    stale = subprocess.run([sys.executable, script, "--check", "--output", str(out)],
                           check=False, capture_output=True, text=True)
    assert stale.returncode == 1 and "stale" in stale.stderr
    out.write_text(source_file(loops).read_text())          # fresh again; the .pxd stale
    out.with_suffix(".pxd").write_text("# edited\n")
    stale = subprocess.run([sys.executable, script, "--check", "--output", str(out)],
                           check=False, capture_output=True, text=True)
    assert stale.returncode == 1 and "loops.pxd is stale" in stale.stderr


def test_every_generated_function_is_in_a_registry_and_picked_by_flags() -> None:
    generated = {name for name, fn in inspect.getmembers(loops, inspect.isroutine)
                 if fn.__module__ == loops.__name__}
    registered = {fn.__name__ for fn in [*loops.RECORD_LOOPS.values(),
                                         *loops.MERGE_LOOPS.values(), *loops.SCANS.values()]}
    queue = {"pq_add", "pq_remove"}     # pq.MergedIterPQueue's add and remove
    finish = {"finish_loop"}            # the iterators' last call on a loop they drop
    assert generated == registered | queue | finish
    assert len(set(loops.RECORD_LOOPS.values())) == 13      # 6 ref, 3 log, 2 obj, 2 index
    assert len(set(loops.MERGE_LOOPS.values())) == 64      # 32 flag variants x suppress
    picked = set(loops.SCANS) | queue | finish  # no flag variants: each is the one there is
    for values in itertools.product((False, True), repeat=8):
        flags = Flags(block_key_swap=values[0], ref_name_alloc=values[1],
                      merged_cmp=values[2], same_subiter_skip=values[3],
                      single_subiter_bypass=values[4], pq_cmp=values[5], mmap=values[6],
                      decode_key_in_place=values[7])
        picked |= {record_loop(t, flags).__name__ for t in BLOCK_TYPES}
        picked |= {merge_function(flags, kind, suppress).__name__
                   for kind in ("ref", "log") for suppress in (False, True)}
    assert picked == generated
