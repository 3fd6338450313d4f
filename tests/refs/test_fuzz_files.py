"""Fuzzing the files backend: random and mutated loose ref files, packed-refs files
(with and without "^" lines, sorted or not, with and without the header) and
reflogs, read through every packed_reader / packed_lookup / refname_safety and
written through transactions, and now and then through a reftable-lab command
(show-ref, update-ref). Deterministic seed; the only exceptions that may
escape the core are ReftableError subclasses, a command only exits with a status,
and no case may take more than a few seconds."""
from __future__ import annotations

import os
import random
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from reftable_core.errors import ReftableError
from reftable_core.flags import PACKED_LOOKUPS, PACKED_READERS, REFNAME_SAFETY, Flags
from reftable_core.refs.api import RefUpdate
from reftable_core.refs.files_backend import FilesRefStore

from tests.helpers.labrun import run_lab

SEED = 20240411
CASES = 4000
CASE_SECONDS = 5
CLI_EVERY = 8                    # every 8th case also runs a reftable-lab command on the repo
NAMES = [b"refs/heads/main", b"refs/heads/a/b", b"refs/heads/a", b"refs/tags/v1",
         b"refs/tags/v1/x", b"refs/remotes/o/HEAD", b"refs/heads/\xff\xfe", b"refs/heads/x\r",
         b"refs/heads/..", b"refs/heads/lock.lock", b"refs/notes/n", b"refs/x", b"HEAD"]
FLAGS = [Flags(packed_reader=r, packed_lookup=lk, refname_safety=s)
         for r in PACKED_READERS for lk in PACKED_LOOKUPS for s in REFNAME_SAFETY]
NOISE = [b"\n", b"\r\n", b" ", b"\t", b"\0", b"^", b"#", b"ref:", b"ref: ", b"/", b"..",
         b"\xff", b"refs/", b"@{", b"0" * 40, b"\n^", b" refs/heads/z\n", b"\\"]


class _Hang(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Hang()


def _oid(rng: random.Random) -> bytes:
    return b"%040x" % rng.getrandbits(160)


def _mutate(rng: random.Random, data: bytes) -> bytes:
    """A few byte-level edits: flip, insert noise, delete a span, truncate, duplicate."""
    b = bytearray(data)
    for _ in range(rng.randrange(0, 4)):
        op = rng.randrange(5)
        k = rng.randrange(len(b) + 1)
        if op == 0 and b:
            b[min(k, len(b) - 1)] = rng.randrange(256)
        elif op == 1:
            b[k:k] = rng.choice(NOISE)
        elif op == 2:
            del b[k:k + rng.randrange(1, 12)]
        elif op == 3:
            del b[k:]
        else:
            b[k:k] = b[max(0, k - 50):k]
    return bytes(b)


def _loose(rng: random.Random) -> bytes:
    kind = rng.randrange(6)
    if kind == 0:
        return _oid(rng) + b"\n"
    if kind == 1:
        return b"ref: " + rng.choice(NAMES) + b"\n"
    if kind == 2:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 90)))
    if kind == 3:
        return _oid(rng) + rng.choice([b" junk\n", b"\0", b"", b"\n\n", b"x"])
    return _mutate(rng, rng.choice([_oid(rng) + b"\n", b"ref: refs/heads/main\n"]))


def _packed(rng: random.Random) -> bytes:
    names = sorted(set(rng.sample(NAMES, rng.randrange(0, len(NAMES)))))
    if rng.random() < 0.3:
        rng.shuffle(names)
    traits = rng.choice([b"", b"peeled ", b"fully-peeled ", b"peeled fully-peeled sorted ",
                         b"sorted ", b"fully-peeled sorted "])
    out = [b"# pack-refs with: " + traits + b"\n"] if rng.random() < 0.8 else []
    for n in names:
        out.append(_oid(rng) + b" " + n + b"\n")
        if rng.random() < 0.4:
            out.append(b"^" + _oid(rng) + b"\n")
    data = b"".join(out)
    return _mutate(rng, data) if rng.random() < 0.7 else data


def _reflog(rng: random.Random) -> bytes:
    lines = []
    for _ in range(rng.randrange(0, 5)):
        lines.append(_oid(rng) + b" " + _oid(rng) + b" C O Mitter <c@example.com> "
                     + str(rng.randrange(-5, 2 ** 40)).encode() + b" "
                     + rng.choice([b"+0000", b"-0230", b"+99999", b"x", b""])
                     + rng.choice([b"\tmsg", b"", b"\t", b"\t\xff"]) + b"\n")
    data = b"".join(lines)
    return _mutate(rng, data) if rng.random() < 0.6 else data


def _write(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except (IsADirectoryError, NotADirectoryError, FileExistsError):
        pass                           # a D/F clash between two generated names: skip it


def _build(rng: random.Random, gitdir: Path) -> None:
    if gitdir.exists():
        shutil.rmtree(gitdir)
    (gitdir / "refs" / "heads").mkdir(parents=True)
    (gitdir / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n")
    _write(gitdir / "HEAD", rng.choice([b"ref: refs/heads/main\n", _loose(rng)]))
    for name in rng.sample(NAMES[:-1], rng.randrange(0, 5)):
        _write(gitdir / os.fsdecode(name), _loose(rng))
    if rng.random() < 0.8:
        _write(gitdir / "packed-refs", _packed(rng))
    for name in rng.sample(NAMES, rng.randrange(0, 3)):
        _write(gitdir / "logs" / os.fsdecode(name), _reflog(rng))


def _updates(rng: random.Random) -> Iterator[RefUpdate]:
    for _ in range(rng.randrange(1, 4)):
        name = rng.choice(NAMES)
        kind = rng.randrange(4)
        oid = bytes.fromhex(_oid(rng).decode())
        old = rng.choice([None, bytes(20), oid])
        if kind == 0:
            yield RefUpdate(name, new_value=oid, old_value=old, message=b"fuzz")
        elif kind == 1:
            yield RefUpdate(name, new_value=bytes(20), old_value=old, message=b"fuzz")
        elif kind == 2:
            yield RefUpdate(name, new_target=rng.choice(NAMES), message=b"fuzz")
        else:
            yield RefUpdate(name, new_value=oid, flags={"no-deref"}, message=b"fuzz")


def _exercise(rng: random.Random, store: FilesRefStore) -> None:
    """Every read path, then one transaction; each step may fail only with ReftableError."""
    steps = [
        lambda: list(store.iter_refs()),
        lambda: list(store.iter_ref_records(rng.choice([b"refs/", b"refs/heads/", b"", b"r"]))),
        lambda: [store.read_ref(n) for n in NAMES],
        lambda: [store.resolve(n) for n in NAMES],
        lambda: [list(store.iter_log(n)) for n in NAMES],
        lambda: [store.reflog_exists(n) for n in NAMES],
    ]
    for step in steps:
        try:
            step()
        except ReftableError:
            pass
    tx = store.transaction()
    try:
        for u in _updates(rng):
            tx.queue(u)
        tx.commit()
    except ReftableError:
        pass
    finally:
        tx.abort()


def _cli(rng: random.Random, gitdir: Path) -> None:
    """One reftable-lab command on the fuzzed repository: git's exit statuses, nothing raised."""
    (gitdir / "objects").mkdir(exist_ok=True)
    names = [n.decode("utf-8", "replace") for n in rng.sample(NAMES, 3)]
    oid = _oid(rng).decode()
    cmd, stdin = rng.choice([
        (["show-ref"], b""), (["show-ref", "--head", "-d"], b""),
        (["show-ref", "--verify", names[0]], b""), (["show-ref", "--tags"], b""),
        (["update-ref", "--stdin"], (f"create {names[0]} {oid}\ndelete {names[1]}\n"
                                     f"update {names[2]} {oid} {oid}\n").encode()),
        (["update-ref", "-d", names[0]], b""),
    ])
    status = run_lab([cmd[0], "--git-dir", str(gitdir), *cmd[1:]], stdin=stdin)[0]
    assert status in (0, 1, 128, 129), (cmd, status)


@pytest.fixture()
def scratch(tmp_path: Path) -> Iterator[Path]:
    """A directory for the cases: in memory when /dev/shm exists (thousands of
    mkdir/rmdir on a journaling disk would dominate the run), else tmp_path."""
    if not os.access("/dev/shm", os.W_OK):
        yield tmp_path
        return
    d = Path(tempfile.mkdtemp(prefix="fuzz-files-", dir="/dev/shm"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("part", range(4))
def test_fuzz_files_backend(scratch: Path, monkeypatch: pytest.MonkeyPatch, part: int) -> None:
    monkeypatch.setenv("GIT_COMMITTER_NAME", "C O Mitter")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "committer@example.com")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "1700000000 +0000")
    old = signal.signal(signal.SIGALRM, _alarm)
    gitdir = scratch / "git"
    try:
        for case in range(part, CASES, 4):
            rng = random.Random(SEED * 10007 + case)
            _build(rng, gitdir)
            store = FilesRefStore(str(gitdir), 20, FLAGS[case % len(FLAGS)])
            signal.alarm(CASE_SECONDS)
            try:
                _exercise(rng, store)
                if case % CLI_EVERY == 0:
                    _cli(rng, gitdir)
            except _Hang:
                pytest.fail(f"case {case} took more than {CASE_SECONDS} s")
            except Exception as e:          # anything but ReftableError is a bug
                raise AssertionError(f"case {case}: {type(e).__name__}: {e}") from e
            finally:
                signal.alarm(0)
                store.close()
    finally:
        signal.signal(signal.SIGALRM, old)
