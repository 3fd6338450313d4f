"""reftable_core.lockfile: git's <path>.lock protocol, one implementation."""
from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from reftable_core.errors import LockError
from reftable_core.lockfile import (EXISTS_ADVICE, PERM_EVERYBODY, PERM_GROUP, PERM_UMASK,
                                    LockFile, shared_perm, umask_file_mode, write_locked)


def test_write_locked_replaces_file(tmp_path: Path) -> None:
    p = tmp_path / "f"
    p.write_bytes(b"old")
    write_locked(str(p), b"new\n" * 10000, fsync=True)
    assert p.read_bytes() == b"new\n" * 10000
    assert not (tmp_path / "f.lock").exists()


def test_lock_held_is_exclusive_and_text_is_gits(tmp_path: Path) -> None:
    p = str(tmp_path / "f")
    lk = LockFile(p)
    with pytest.raises(LockError) as ei:
        LockFile(p)
    assert str(ei.value) == f"Unable to create '{p}.lock': File exists.\n\n{EXISTS_ADVICE}"
    lk.rollback()
    assert not os.path.exists(p + ".lock") and not os.path.exists(p)
    lk.rollback()                                   # released: nothing to do
    LockFile(p).rollback()


def test_stale_lock_is_left_alone(tmp_path: Path) -> None:
    p = tmp_path / "f"
    p.write_bytes(b"keep")
    (tmp_path / "f.lock").write_bytes(b"stale")
    with pytest.raises(LockError, match="File exists"):
        write_locked(str(p), b"new")
    assert p.read_bytes() == b"keep"
    assert (tmp_path / "f.lock").read_bytes() == b"stale"


def test_other_errors_name_the_lock(tmp_path: Path) -> None:
    p = str(tmp_path / "no" / "such" / "f")
    with pytest.raises(LockError, match=r"Unable to create '.*/no/such/f\.lock': No such file"):
        LockFile(p)


def test_failed_write_removes_lock(tmp_path: Path) -> None:
    p = tmp_path / "f"
    p.write_bytes(b"keep")

    class Boom(Exception):
        pass

    with pytest.raises(Boom):
        with LockFile(str(p)) as lk:
            lk.write(b"partial")
            raise Boom
    assert p.read_bytes() == b"keep"
    assert not (tmp_path / "f.lock").exists()


def test_failed_rename_keeps_lock_until_rollback(tmp_path: Path) -> None:
    target = tmp_path / "d"
    (target / "sub").mkdir(parents=True)            # a non-empty directory in the way
    lk = LockFile(str(target))
    lk.write(b"x")
    with pytest.raises(OSError):
        lk.commit()
    assert lk.is_locked and (tmp_path / "d.lock").exists()
    (target / "sub").rmdir()
    target.rmdir()
    lk.commit()
    assert target.read_bytes() == b"x" and not lk.is_locked
    lk.rollback()
    assert target.read_bytes() == b"x"


def test_mode_follows_umask_and_perms(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        lk = LockFile(str(tmp_path / "a"))
        assert stat.S_IMODE(os.stat(lk.lock_path).st_mode) == 0o640
        lk.commit()
        assert stat.S_IMODE(os.stat(tmp_path / "a").st_mode) == 0o640
        lk = LockFile(str(tmp_path / "b"), perms=0o664)
        assert stat.S_IMODE(os.stat(lk.lock_path).st_mode) == 0o664
        lk.rollback()
    finally:
        os.umask(old)


def test_timeout_waits_for_release(tmp_path: Path) -> None:
    p = str(tmp_path / "f")
    held = LockFile(p)
    threading.Timer(0.05, held.rollback).start()
    t0 = time.monotonic()
    lk = LockFile(p, timeout_ms=5000)
    assert time.monotonic() - t0 < 4.0
    lk.rollback()


def test_timeout_gives_up(tmp_path: Path) -> None:
    p = str(tmp_path / "f")
    held = LockFile(p)
    t0 = time.monotonic()
    with pytest.raises(LockError, match="File exists"):
        LockFile(p, timeout_ms=60)
    assert time.monotonic() - t0 >= 0.05
    with pytest.raises(LockError):
        LockFile(p, timeout_ms=0)                   # one attempt
    held.rollback()


def test_shared_perm_is_gits_calc_shared_perm() -> None:
    # git's calc_shared_perm for the values git_config_perm returns
    assert shared_perm(0o644, PERM_UMASK) == 0o644
    assert shared_perm(0o644, PERM_GROUP) == 0o664
    assert shared_perm(0o600, PERM_GROUP) == 0o660
    assert shared_perm(0o600, PERM_EVERYBODY) == 0o664
    assert shared_perm(0o644, -0o640) == 0o640          # an explicit 0640 ignores the umask
    assert shared_perm(0o444, PERM_GROUP) == 0o444 | 0o440   # no write bit: none added
    assert shared_perm(0o755, PERM_GROUP) == 0o775      # x follows r
    old = os.umask(0o027)
    try:
        assert umask_file_mode() == 0o640
        assert os.umask(0o027) == 0o027                 # the umask was restored
    finally:
        os.umask(old)
