"""loose refs, symrefs, the <ref>.lock protocol and reflogs (git's formats)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from reftable_core.errors import LockError
from reftable_core.refs.loose import (LooseLock, LooseValue, delete_loose, iter_loose_names,
                                      parse_loose_contents, read_loose, write_loose)
from reftable_core.refs.reflog import (append_reflog, delete_reflog, format_reflog_line,
                                       read_reflog)

A = bytes(range(20))
B = bytes(range(1, 21))
AH = A.hex().encode()


@pytest.mark.parametrize("data,expect", [
    (AH, LooseValue(oid=A)),
    (AH.upper(), LooseValue(oid=A)),
    (AH + b" trailing garbage", LooseValue(oid=A)),        # FETCH_HEAD style: ignored
    (AH + b"\tx", LooseValue(oid=A)),
    (AH + b"x", LooseValue(broken=True)),
    (AH[:39], LooseValue(broken=True)),
    (b"z" * 40, LooseValue(broken=True)),
    (b"", LooseValue(broken=True)),
    (b"ref: refs/heads/main", LooseValue(target=b"refs/heads/main")),
    (b"ref:refs/heads/main", LooseValue(target=b"refs/heads/main")),
    (b"ref: \t refs/heads/main", LooseValue(target=b"refs/heads/main")),
])
def test_parse_contents(data: bytes, expect: LooseValue) -> None:
    assert parse_loose_contents(data, 20) == expect


def test_read_write_roundtrip(tmp_path: Path) -> None:
    gd = str(tmp_path)
    write_loose(gd, b"refs/heads/a/b", A)
    assert (tmp_path / "refs/heads/a/b").read_bytes() == AH + b"\n"
    assert read_loose(gd, b"refs/heads/a/b") == LooseValue(oid=A)
    write_loose(gd, b"HEAD", target=b"refs/heads/a/b")
    assert (tmp_path / "HEAD").read_bytes() == b"ref: refs/heads/a/b\n"
    assert read_loose(gd, b"HEAD") == LooseValue(target=b"refs/heads/a/b")
    assert read_loose(gd, b"refs/heads/a") is None                # a directory
    assert read_loose(gd, b"refs/heads/nope") is None
    assert read_loose(gd, b"refs/heads/a/b/c") is None            # through a file
    (tmp_path / "refs/heads/crlf").write_bytes(AH + b"\r\n\n  ")
    assert read_loose(gd, b"refs/heads/crlf") == LooseValue(oid=A)
    assert not list(tmp_path.rglob("*.lock"))


def test_symlink_symref(tmp_path: Path) -> None:
    gd = str(tmp_path)
    write_loose(gd, b"refs/heads/main", A)
    os.symlink("refs/heads/main", tmp_path / "refs/heads/link")
    assert read_loose(gd, b"refs/heads/link") == LooseValue(target=b"refs/heads/main")
    os.symlink("main", tmp_path / "refs/heads/rel")               # not a refname: read through
    assert read_loose(gd, b"refs/heads/rel") == LooseValue(oid=A)


def test_lock_protocol(tmp_path: Path) -> None:
    gd = str(tmp_path)
    write_loose(gd, b"refs/heads/x", A)
    lk = LooseLock(gd, b"refs/heads/x")
    with pytest.raises(LockError, match=r"refs/heads/x\.lock': File exists"):
        LooseLock(gd, b"refs/heads/x")
    lk.write(B.hex().encode() + b"\n")
    assert read_loose(gd, b"refs/heads/x").oid == A                # not visible before commit
    lk.commit()
    assert read_loose(gd, b"refs/heads/x").oid == B
    lk2 = LooseLock(gd, b"refs/heads/x")
    lk2.write(b"garbage")
    lk2.rollback()
    assert read_loose(gd, b"refs/heads/x").oid == B
    assert not (tmp_path / "refs/heads/x.lock").exists()


def test_stale_lock_keeps_data(tmp_path: Path) -> None:
    gd = str(tmp_path)
    write_loose(gd, b"refs/heads/x", A)
    (tmp_path / "refs/heads/x.lock").write_bytes(b"stale")
    with pytest.raises(LockError):
        write_loose(gd, b"refs/heads/x", B)
    assert read_loose(gd, b"refs/heads/x").oid == A
    assert (tmp_path / "refs/heads/x.lock").read_bytes() == b"stale"


def test_iter_loose_names(tmp_path: Path) -> None:
    gd = str(tmp_path)
    for n in (b"refs/heads/main", b"refs/heads/a-b", b"refs/heads/a/b", b"refs/tags/v1",
              b"refs/heads/z"):
        write_loose(gd, n, A)
    (tmp_path / "refs/heads/ignored.lock").write_bytes(AH)
    (tmp_path / "refs/heads/.hidden").write_bytes(AH)
    (tmp_path / "refs/heads/bad..name").write_bytes(AH)
    (tmp_path / "refs/empty").mkdir()
    names = list(iter_loose_names(gd))
    assert names == [(b"refs/heads/a-b", True), (b"refs/heads/a/b", True),
                     (b"refs/heads/bad..name", False), (b"refs/heads/main", True),
                     (b"refs/heads/z", True), (b"refs/tags/v1", True)]
    assert [n for n, _ in iter_loose_names(gd, b"refs/heads/a")] == [b"refs/heads/a-b",
                                                                      b"refs/heads/a/b"]
    assert [n for n, _ in iter_loose_names(gd, b"refs/tags/")] == [b"refs/tags/v1"]
    assert list(iter_loose_names(gd, b"HEAD")) == []
    assert len(list(iter_loose_names(gd, b""))) == 6


def test_delete_prunes_empty_dirs(tmp_path: Path) -> None:
    gd = str(tmp_path)
    write_loose(gd, b"refs/heads/a/b/c", A)
    assert delete_loose(gd, b"refs/heads/a/b/c")
    assert not (tmp_path / "refs/heads/a").exists()
    assert (tmp_path / "refs/heads").is_dir()                 # git spares refs/heads/
    assert not delete_loose(gd, b"refs/heads/a/b/c")


def test_reflog_format_and_read(tmp_path: Path) -> None:
    gd = str(tmp_path)
    line = format_reflog_line(bytes(20), A, b"C O Mitter", b"c@example.com", 1700000000, -420,
                              b"branch: Created from HEAD")
    assert line == (b"0" * 40 + b" " + AH + b" C O Mitter <c@example.com> 1700000000 -0700"
                    b"\tbranch: Created from HEAD\n")
    assert format_reflog_line(A, B, b"n", b"e", 1, 330, b"").endswith(b"<e> 1 +0530\n")
    assert not append_reflog(gd, b"refs/heads/x", line, create=False)
    assert append_reflog(gd, b"refs/heads/x", line, create=True)
    assert append_reflog(gd, b"refs/heads/x",
                         format_reflog_line(A, B, b"n", b"e", 2, 0, b"second"), create=False)
    (tmp_path / "logs/refs/heads/x").open("ab").write(b"garbage line\n")
    entries = read_reflog(gd, b"refs/heads/x")
    assert [e.message for e in entries] == [b"second", b"branch: Created from HEAD"]
    assert entries[1].tz_offset == -420 and entries[1].name == b"C O Mitter"
    assert entries[0].old_id == A and entries[0].new_id == B
    delete_reflog(gd, b"refs/heads/x")
    assert read_reflog(gd, b"refs/heads/x") == []
    assert (tmp_path / "logs/refs/heads").is_dir()
    assert not (tmp_path / "logs/refs/heads/x").exists()


def test_reflog_read_by_git(git, make_repo) -> None:
    repo = make_repo("r", ref_format="files")
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=repo)
    head = bytes.fromhex(git.out(["rev-parse", "HEAD"], cwd=repo).decode().strip())
    gd = str(repo / ".git")
    write_loose(gd, b"refs/heads/ours", head)
    append_reflog(gd, b"refs/heads/ours",
                  format_reflog_line(bytes(20), head, b"C O Mitter", b"committer@example.com",
                                     1700000000, 0, b"created by us"), create=True)
    out = git.out(["reflog", "show", "--format=%H %gs", "refs/heads/ours"], cwd=repo)
    assert out == head.hex().encode() + b" created by us\n"
    ours = read_reflog(gd, b"refs/heads/main")
    assert len(ours) == 1 and ours[0].new_id == head and ours[0].message == b"commit (initial): one"
