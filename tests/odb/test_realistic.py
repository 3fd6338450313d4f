"""odb on a real-data-shaped repository (tests/helpers/realistic.py): for every object,
(type, size) equals `git cat-file --batch-check` and the contents equal `git cat-file
--batch` -- including the deltas whose zlib header spans more than 64 compressed bytes."""
from __future__ import annotations

from pathlib import Path

import pytest
from reftable_core.flags import Flags
from reftable_core.odb import open_object_store

from gitbin import GitRunner, hermetic_env
from tests.helpers.odb import cat_file_all
from tests.helpers.realistic import delta_headers_over, make_realistic_repo
from tests.odb.test_walk import _cli, _git_log


@pytest.fixture(scope="module")
def rgit(git_path: str, tmp_path_factory: pytest.TempPathFactory) -> GitRunner:
    return GitRunner(git_path, hermetic_env(tmp_path_factory.mktemp("home")))


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def realistic(request: pytest.FixtureRequest, rgit: GitRunner,
              tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp(f"real-{request.param}") / "repo.git"
    return make_realistic_repo(d, rgit, seed=7, object_format=request.param)


def batch_check(git: GitRunner, gitdir: Path) -> dict[bytes, tuple[str, int]]:
    out = git.out(["cat-file", "--batch-check", "--batch-all-objects"], cwd=gitdir)
    res = {}
    for line in out.splitlines():
        h, t, s = line.split()
        res[bytes.fromhex(h.decode())] = (t.decode(), int(s))
    return res


def test_history_has_long_zlib_delta_headers(realistic: Path) -> None:
    with open_object_store(realistic) as store:
        assert delta_headers_over(store, 64) >= 20


@pytest.mark.parametrize("flags", [None, Flags(delta_cache_index="fixed:1", delta_cache_limit=0)])
def test_every_object_equals_git(rgit: GitRunner, realistic: Path, flags: Flags | None) -> None:
    headers = batch_check(rgit, realistic)
    contents = cat_file_all(rgit, realistic)
    assert set(headers) == set(contents)
    loose = 0
    with open_object_store(realistic, flags=flags) as store:
        assert set(store.iter_oids()) == set(headers)
        for oid, (typ, size) in headers.items():
            assert store.read_header(oid) == (typ, size), oid.hex()
            assert store.read(oid) == contents[oid], oid.hex()
            loose += not any(oid in p.idx for p in store.packs)
    assert loose == 2
    assert sum(t == "tag" for t, _ in headers.values()) == 7
    assert max(s for _, s in headers.values()) > 900_000


def test_tags_peel_like_git(rgit: GitRunner, realistic: Path) -> None:
    refs = rgit.out(["show-ref", "-d", "--tags"], cwd=realistic).decode().splitlines()
    peeled = {name[:-3]: bytes.fromhex(h) for h, name in (l.split() for l in refs)
              if name.endswith("^{}")}
    tags = {name: bytes.fromhex(h) for h, name in (l.split() for l in refs)
            if not name.endswith("^{}")}
    assert set(peeled) == set(tags) and len(tags) == 7
    with open_object_store(realistic) as store:
        for name, oid in tags.items():
            assert store.read_header(oid)[0] == "tag"
            assert store.peel(oid) == peeled[name], name


@pytest.mark.parametrize("argv", [["log-raw", "main"], ["log-raw", "side"],
                                  ["log-raw", "-n", "5", "main"], ["log-S", "side", "main"]])
def test_log_equals_git_byte_for_byte(rgit: GitRunner, realistic: Path, argv: list[str]) -> None:
    """log-raw / log-S over the real-shaped history (deltas with long zlib headers,
    quoted and non-ASCII paths, deep trees, merges) equal git's log, every byte."""
    got = _cli(realistic, argv)
    want = _git_log(rgit, realistic, argv)
    assert got[0] == want[0] == 0
    assert got[1] == want[1] and len(want[1].splitlines()) >= 5
