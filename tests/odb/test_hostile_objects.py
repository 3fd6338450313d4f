"""Hostile objects git dies on, the lab beside git: a loose object whose header's
size overflows size_t (`fatal: size_t overflow: ...`, 128, from cat-file -s/-t and
--batch-check) and a tree entry with an empty name (`fatal: empty filename in tree
entry`, 128, from log --raw and log -S). The objects are written by the test."""
from __future__ import annotations

import hashlib
import zlib
from pathlib import Path

import pytest
from reftable_core.errors import FormatError
from reftable_core.odb.loose import decode_loose
from reftable_core.odb.tree import split_tree

from gitbin import GitRunner, hermetic_env
from tests.helpers.labrun import run_lab


@pytest.fixture(scope="module")
def mgit(git_path: str, tmp_path_factory: pytest.TempPathFactory) -> GitRunner:
    return GitRunner(git_path, hermetic_env(tmp_path_factory.mktemp("home")))


def _write_loose(gitdir: Path, kind: bytes, body: bytes, header: bytes | None = None) -> str:
    raw = (header if header is not None else b"%s %d\0" % (kind, len(body))) + body
    oid = hashlib.sha1(raw).hexdigest()
    p = gitdir / "objects" / oid[:2] / oid[2:]
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(zlib.compress(raw))
    return oid


@pytest.mark.parametrize("size", [b"9" * 25, b"18446744073709551615", b"18446744073709551616",
                                  b"184467440737095516150"])
def test_loose_size_overflow_dies_as_git(mgit: GitRunner, tmp_path: Path, size: bytes) -> None:
    repo = tmp_path / "r"
    mgit.run(["init", "-q", str(repo)])
    oid = _write_loose(repo / ".git", b"blob", b"hello", header=b"blob " + size + b"\0")
    for argv, stdin in ((["-s", oid], b""), (["-t", oid], b""),
                        (["--batch-check"], oid.encode() + b"\n")):
        g = mgit.run(["cat-file", *argv], cwd=repo, check=False, input=stdin)
        status, out, err = run_lab(["odb", "cat-file", "--git-dir", str(repo / ".git"), *argv],
                                   stdin=stdin)
        assert (status, out, err) == (g.returncode, g.stdout, g.stderr), argv


def test_size_overflow_in_the_decoder() -> None:
    for header, words in ((b"9" * 25, "size_t overflow: 9999999999999999999 * 10"),
                          (b"18446744073709551616", "size_t overflow: 18446744073709551610 + 6")):
        with pytest.raises(FormatError) as e:
            decode_loose(zlib.compress(b"blob " + header + b"\0x"))
        assert (e.value.msg, e.value.path) == (words, None)


def test_empty_name_in_a_tree_is_refused() -> None:
    entry = b"100644 \0" + b"\x11" * 20
    with pytest.raises(FormatError, match="empty filename in tree entry"):
        split_tree(b"100644 a\0" + b"\x22" * 20 + entry, 20)


@pytest.mark.parametrize("walk", [["log-raw"], ["log-S", "hello"]])
def test_empty_tree_entry_name_dies_as_git(mgit: GitRunner, tmp_path: Path,
                                           walk: list[str]) -> None:
    repo = tmp_path / "r"
    mgit.run(["init", "-q", "-b", "main", str(repo)])
    blob = _write_loose(repo / ".git", b"blob", b"hello\n")
    tree = _write_loose(repo / ".git", b"tree", b"100644 \0" + bytes.fromhex(blob))
    commit = mgit.out(["commit-tree", "-m", "empty name", tree], cwd=repo).strip().decode()
    mgit.run(["update-ref", "refs/heads/main", commit], cwd=repo)
    gargs = (["log", "--raw", "--no-abbrev", "--format=%H", "--first-parent", "-m",
              "--no-renames"] if walk[0] == "log-raw" else
             ["log", f"-S{walk[1]}", "--format=%H", "--first-parent", "--no-renames"])
    g = mgit.run(gargs, cwd=repo, check=False)
    status, out, err = run_lab(["odb", *walk, "--git-dir", str(repo / ".git")])
    assert g.returncode == 128 and g.stderr.endswith(b"fatal: empty filename in tree entry\n")
    assert (status, err) == (128, b"fatal: empty filename in tree entry\n")
    assert out == g.stdout
