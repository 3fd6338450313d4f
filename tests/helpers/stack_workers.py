"""Process bodies for the stack concurrency test (importable by spawned children)."""
from __future__ import annotations

import os
import random
import sys
import time

from reftable_core.errors import LockError, OutdatedError, ReftableError
from reftable_core.flags import Flags
from reftable_core.reftable.record import LogRecord, RefRecord
from reftable_core.reftable.stack import Stack, StackOptions


def writer(path: str, wid: int, n: int, flags_spec: str, q) -> None:
    """Commit n single-ref tables, retrying on lock/outdated errors."""
    flags = Flags.parse(flags_spec)
    st = Stack(path, flags, StackOptions(lock_timeout_ms=50))
    rng = random.Random(wid)
    lock_errors = outdated = 0
    oid = bytes([wid + 1]) * 20
    for i in range(n):
        name = b"refs/heads/w%d/%04d" % (wid, i)
        while True:
            try:
                def write(wr, name: bytes = name) -> None:
                    u = wr.options.min_update_index
                    wr.add_ref(RefRecord(name, u, 1, oid))
                    wr.add_log(LogRecord(name, u, 1, bytes(20), oid, b"w", b"w@x", 1, 0, b"c"))
                st.add(write)
                break
            except LockError:
                lock_errors += 1
            except OutdatedError:
                outdated += 1
            time.sleep(rng.random() * 0.002)
            try:
                st.reload()
            except ReftableError:
                pass
    st.close()
    q.put(("writer", wid, lock_errors, outdated))


def reader(path: str, rid: int, stop_file: str, flags_spec: str, q) -> None:
    """Iterate the whole stack until stop_file exists; report errors and progress."""
    flags = Flags.parse(flags_spec)
    errors: list[str] = []
    rounds = 0
    last = 0
    st = Stack(path, flags, StackOptions())
    while True:
        stop = os.path.exists(stop_file)
        try:
            st.reload()
            names = [r.refname for r in st.merged.refs()]
            if names != sorted(names) or len(set(names)) != len(names):
                errors.append("unsorted or duplicate refs")
            if len(names) < last:
                errors.append(f"refs went from {last} to {len(names)}")
            last = len(names)
            rounds += 1
        except Exception as e:          # noqa: BLE001 -- the test wants to see anything
            errors.append(f"{type(e).__name__}: {e}")
        if stop:
            break
    st.close()
    q.put(("reader", rid, rounds, errors))


def killed_writer(path: str, stage: str) -> None:
    """Lock the stack, write a table up to `stage`, then wait to be SIGKILLed.

    stage "renamed": the table is renamed to its final name, tables.list not yet;
    stage "temp": the table is still a temp file.
    """
    st = Stack(path, Flags(), StackOptions())
    add = st.new_addition()
    ui = add.next_update_index
    if stage == "renamed":
        add.add(lambda wr: wr.add_ref(RefRecord(b"refs/heads/killed", ui, 1, b"\x09" * 20)))
    else:
        st.write_temp_table(
            lambda wr: wr.add_ref(RefRecord(b"refs/heads/killed", ui, 1, b"\x09" * 20)), ui, ui)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    time.sleep(60)
