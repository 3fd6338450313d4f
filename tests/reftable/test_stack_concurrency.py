"""Reliability of the stack under concurrent writers, readers and a killed writer.

4 processes each commit 500 single-ref tables to one stack (lock retry,
auto-compaction on) while 2 readers iterate it: afterwards every committed ref is
present, losers only ever saw LockError/OutdatedError (and retried), and no
reader ever failed. A writer SIGKILLed between writing its table and renaming
tables.list leaves a stack that reads correctly and whose stray file clean()
removes.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import subprocess
import sys
from pathlib import Path

import tests.helpers.stack_workers as workers
import pytest
from reftable_core.flags import Flags, baseline
from reftable_core.reftable.record import RefRecord
from reftable_core.reftable.stack import Stack, StackOptions

TESTS_DIR = str(Path(__file__).resolve().parents[2])  # the repository root: tests.helpers importable


@pytest.mark.slow
@pytest.mark.parametrize("flags", [Flags(), baseline()], ids=["all-on", "all-off"])
def test_concurrent_writers_and_readers(tmp_path: Path, flags: Flags) -> None:
    n_writers, per_writer = 4, 500 if flags == Flags() else 150
    path = str(tmp_path / "reftable")
    Stack(path, flags).close()
    stop = str(tmp_path / "stop")
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    spec = flags.to_spec()
    readers = [ctx.Process(target=workers.reader, args=(path, r, stop, spec, q))
               for r in range(2)]
    writers = [ctx.Process(target=workers.writer, args=(path, w, per_writer, spec, q))
               for w in range(n_writers)]
    for p in readers + writers:
        p.start()
    for p in writers:
        p.join(120)
        assert p.exitcode == 0
    Path(stop).touch()
    for p in readers:
        p.join(60)
        assert p.exitcode == 0
    reports = [q.get(timeout=10) for _ in range(len(readers) + len(writers))]
    for kind, _id, *rest in reports:
        if kind == "reader":
            rounds, errors = rest
            assert errors == [] and rounds > 0
    st = Stack(path, flags)
    names = {r.refname for r in st.merged.refs()}
    want = {b"refs/heads/w%d/%04d" % (w, i) for w in range(n_writers) for i in range(per_writer)}
    assert names == want
    assert len({(r.refname, r.update_index) for r in st.merged.logs()}) == len(want)
    assert len(st.names) < 20                          # auto-compaction kept it small
    assert not os.path.exists(os.path.join(path, "tables.list.lock"))
    st.close()


@pytest.mark.parametrize("stage", ["renamed", "temp"])
def test_sigkilled_writer_leaves_readable_stack(tmp_path: Path, stage: str) -> None:
    path = tmp_path / "reftable"
    st = Stack(path, Flags(), StackOptions(auto_compact=False))
    for i in range(3):
        ui = st.next_update_index()
        st.add(lambda wr, i=i, ui=ui: wr.add_ref(RefRecord(b"refs/heads/b%d" % i, ui, 1,
                                                           bytes([i + 1]) * 20)))
    before = [(r.refname, r.value) for r in st.merged.refs()]
    env = dict(os.environ, PYTHONPATH=TESTS_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-c",
                             f"import tests.helpers.stack_workers as w; w.killed_writer({str(path)!r}, {stage!r})"],
                            stdout=subprocess.PIPE, env=env)
    assert proc.stdout.readline() == b"ready\n"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    files = set(os.listdir(path))
    assert "tables.list.lock" in files
    stray = files - set(st.names) - {"tables.list", "tables.list.lock"}
    assert len(stray) == 1
    # readers are unaffected
    fresh = Stack(path, Flags())
    assert [(r.refname, r.value) for r in fresh.merged.refs()] == before
    assert fresh.merged.read_ref(b"refs/heads/killed") is None
    # clean() (breaking the dead writer's lock) removes the stray file
    removed = fresh.clean(stale_temp_age_s=0, stale_lock_age_s=0)
    assert set(removed) == stray
    assert set(os.listdir(path)) == set(fresh.names) | {"tables.list"}
    ui = fresh.next_update_index()
    fresh.add(lambda wr: wr.add_ref(RefRecord(b"refs/heads/after", ui, 1, b"\x07" * 20)))
    assert len(list(fresh.merged.refs())) == 4
    fresh.close()
    st.close()
