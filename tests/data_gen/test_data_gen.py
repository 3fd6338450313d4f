"""data_gen: every preset builds a repository git opens; determinism, cache, errors.

Small scales only (a few thousand refs); speed is measured by benchmarks, not here.
"""
from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest
from reftable_core.reftable.writer import WriterOptions

import data_gen
from data_gen.fastwrite import write_bulk_table
from data_gen.names import apportion, ref_names
from gitbin import GitRunner

pytestmark = pytest.mark.git

SMALL: dict[str, dict] = {
    "refs-1m-1table": {"refs": 2000},
    "refs-1m-3tables": {"refs": 2500},
    "refs-100k-reflog": {"refs": 1500},
    "empty-repo": {"refs": 100},
    "packed-1m": {"refs": 3000},
    "history-depth50": {"commits": 40, "files": 25, "window": 10},
}


def all_ref_names(n: int, seed: int, hexlen: int = 40) -> list[bytes]:
    """Every name ref_names yields, in one list."""
    return [name for _kind, chunk in ref_names(n, seed, hexlen) for name in chunk]


def _show_ref(git: GitRunner, gitdir: Path) -> bytes:
    return git.out(["--git-dir", str(gitdir), "show-ref", "--head", "-d"])


def _fsck(git: GitRunner, gitdir: Path) -> None:
    git.run(["--git-dir", str(gitdir), "fsck", "--strict", "--no-progress"])


# -- names ---------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 100, 2345])
def test_names_sorted_unique_valid(n: int) -> None:
    names = all_ref_names(n, seed=3)
    assert len(names) == n
    assert all(a < b for a, b in zip(names, names[1:]))
    s = set(names)
    for name in names:
        assert name.startswith(b"refs/")
        assert b".." not in name and b"//" not in name and not name.endswith(b"/")
        parts = name.split(b"/")
        for i in range(2, len(parts)):          # no directory/file conflicts
            assert b"/".join(parts[:i]) not in s
    if n:
        assert b"refs/heads/main" in s


def test_names_shapes_and_determinism() -> None:
    names = all_ref_names(5000, seed=1)
    assert names == all_ref_names(5000, seed=1)
    assert names != all_ref_names(5000, seed=2)
    text = b"\n".join(names)
    for prefix in (b"refs/heads/", b"refs/tags/v", b"refs/remotes/origin/",
                   b"refs/merge-requests/", b"refs/keep-around/"):
        assert prefix in text
    assert any(n.endswith(b"/head") for n in names)
    kinds = {k for k, _ in ref_names(5000, 1)}
    assert kinds == {"head", "keep", "mr", "remote", "tag"}
    assert sum(apportion(12345, {"a": 1, "b": 2}).values()) == 12345


# -- fast path == TableWriter -------------------------------------------------------

@pytest.mark.parametrize("n,hash_id,block_size,restart", [
    (0, "sha1", 4096, 16), (1, "sha1", 4096, 16), (60, "sha1", 256, 3),
    (3000, "sha1", 4096, 16), (2000, "sha256", 1024, 16), (800, "sha1", 300, 1),
    (5000, "sha1", 200_000, 16)])
@pytest.mark.parametrize("parallel", [False, True])
def test_fast_writer_bytes_identical(tmp_path: Path, n: int, hash_id: str, block_size: int,
                                     restart: int, parallel: bool,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import data_gen.fastwrite as fw
    # parallel: the log section is built in a forked worker process
    monkeypatch.setattr(fw, "PARALLEL_LOGS_FROM", 1 if parallel else 10**12)
    hs = 32 if hash_id == "sha256" else 20
    names = all_ref_names(n, 5, 2 * hs)
    rng = random.Random(n)
    commits = [rng.randbytes(hs) for _ in range(40)]
    values = [rng.choice(commits) for _ in names]
    peeled = [rng.choice(commits) if nm.startswith(b"refs/tags/") else None for nm in names]
    log = {"old": bytes(hs), "name": b"C O Mitter", "email": b"c@example.com",
           "time": 1700000000, "tz": -120, "message": b"create\n", "head_new": commits[0]}
    for lg in (None, log):
        digests = []
        for fast in (True, False):
            opts = WriterOptions(block_size=block_size, restart_interval=restart, hash_id=hash_id,
                                 min_update_index=4, max_update_index=4)
            path = tmp_path / f"t-{fast}.ref"
            write_bulk_table(path, opts, names, values, peeled, log=lg, fast=fast)
            digests.append(hashlib.sha256(path.read_bytes()).hexdigest())
        assert digests[0] == digests[1]


@pytest.mark.parametrize("long", [True, False])
def test_fast_writer_long_names_and_tags(tmp_path: Path, long: bool) -> None:
    """Names beyond the varint table, and an id peeled to two ids, take the generic paths."""
    extra = [b"refs/heads/" + b"x" * 1500, b"refs/heads/" + b"x" * 1400 + b"y"] if long else []
    names = sorted(extra + [b"refs/tags/a", b"refs/tags/b"]
                   + [b"refs/heads/b%04d" % i for i in range(300)])
    rng = random.Random(0)
    commits = [rng.randbytes(20) for _ in range(5)]
    values = [commits[i % 5] for i in range(len(names))]
    peeled = [None] * len(names)
    peeled[names.index(b"refs/tags/a")] = commits[1]
    peeled[names.index(b"refs/tags/b")] = commits[2]
    values[names.index(b"refs/tags/a")] = values[names.index(b"refs/tags/b")] = commits[0]
    log = {"old": bytes(20), "name": b"n", "email": b"e", "time": 1, "tz": 60,
           "message": b"m", "head_new": commits[0]}
    digests = []
    for fast in (True, False):
        path = tmp_path / f"long-{fast}.ref"
        write_bulk_table(path, WriterOptions(block_size=4096, min_update_index=1,
                                             max_update_index=1), names, values, peeled,
                         log=log, fast=fast)
        digests.append(path.read_bytes())
    assert digests[0] == digests[1]


@pytest.mark.parametrize("ambiguous", [False, True])
def test_packed_chunk_identical_to_core_formatter(ambiguous: bool) -> None:
    from reftable_core.refs import packed

    from data_gen.builders import format_packed_chunk
    rng = random.Random(4)
    commits = [rng.randbytes(32) for _ in range(6)]
    names = all_ref_names(700, 2, 64)
    values = [rng.choice(commits) for _ in names]
    peeled = [commits[0] if v == commits[5] else None for v in values]
    if ambiguous:                     # the same id peeled to two different ids
        i = values.index(commits[5])
        peeled[i] = commits[1]
    rows = [(n, v) if p is None else (n, v, p) for n, v, p in zip(names, values, peeled)]
    want = packed.format_packed_refs(rows, header=packed.PACKED_REFS_HEADER, sort=False)
    assert format_packed_chunk(packed, names, values, peeled, packed.PACKED_REFS_HEADER) == want


# -- presets -------------------------------------------------------------------------

@pytest.mark.parametrize("preset", list(SMALL))
def test_every_preset_builds_and_git_opens_it(preset: str, tmp_path: Path, git: GitRunner,
                                               git_path: str) -> None:
    ds = data_gen.build(preset, root=tmp_path, git=git_path, **SMALL[preset])
    assert not ds.cached
    assert ds.gitdir.is_dir() and (ds.path / "manifest.json").is_file()
    m = json.loads((ds.path / "manifest.json").read_text())
    assert m["preset"] == preset and m["content_hash"].startswith("sha256:")
    out = _show_ref(git, ds.gitdir)
    lines = out.splitlines()
    assert lines[0].endswith(b" HEAD")
    assert any(line.endswith(b" refs/heads/main") for line in lines)
    refs = [ln for ln in lines if not ln.endswith(b"^{}") and not ln.endswith(b" HEAD")]
    assert len(refs) + 1 == m["facts"]["ref_count"]
    _fsck(git, ds.gitdir)
    if preset in ("refs-1m-1table", "refs-1m-3tables", "refs-100k-reflog"):
        assert any(ln.endswith(b"^{}") for ln in lines)       # annotated tags are peeled
        tl = (ds.gitdir / "reftable" / "tables.list").read_text().split()
        assert tl == m["facts"]["tables"]
        want = 3 if preset == "refs-1m-3tables" else 1
        assert len(tl) == want
        log = git.out(["--git-dir", str(ds.gitdir), "reflog", "show", "refs/heads/main"])
        assert b"data_gen: create" in log
    if preset == "packed-1m":
        first = (ds.gitdir / "packed-refs").read_bytes().split(b"\n", 1)[0]
        assert first == b"# pack-refs with: peeled fully-peeled sorted "
        assert not list((ds.gitdir / "refs" / "heads").iterdir())
    if preset == "empty-repo":
        script = ds.path / m["facts"]["update_ref_script"]
        assert len(script.read_bytes().splitlines()) == 100
        git.run(["--git-dir", str(ds.gitdir), "update-ref", "--stdin"], input=script.read_bytes())
        assert len(_show_ref(git, ds.gitdir).splitlines()) == 102
    if preset == "history-depth50":
        count = git.out(["--git-dir", str(ds.gitdir), "rev-list", "--count", "HEAD"])
        assert int(count) == 40
        assert list((ds.gitdir / "objects" / "pack").glob("*.pack"))


def test_top_tables_shadow_and_delete(tmp_path: Path, git: GitRunner, git_path: str) -> None:
    ds = data_gen.build("refs-1m-3tables", root=tmp_path, git=git_path, refs=3000, tables=4,
                        reflog=False)
    tl = (ds.gitdir / "reftable" / "tables.list").read_text().split()
    assert [t[:30] for t in tl] == [f"0x{i:012x}-0x{i:012x}-" for i in (1, 2, 3, 4)]
    sizes = [(ds.gitdir / "reftable" / t).stat().st_size for t in tl]
    assert sizes[0] > 10 * max(sizes[1:])
    shown = _show_ref(git, ds.gitdir)
    assert b"refs/heads/new-t4/topic-0" in shown
    base = set(all_ref_names(3000, 0))
    names = {ln.split(b" ", 1)[1] for ln in shown.splitlines()
             if not ln.endswith(b"^{}") and not ln.endswith(b" HEAD")}
    assert len(base - names) >= 3                        # deletions in the tables on top
    for key in ("first", "middle", "last"):
        assert ds.manifest["facts"]["probe_refs"][key].encode() in names


@pytest.mark.parametrize("preset,params", [
    ("refs-1m-1table", {"refs": 1200}),
    ("refs-1m-3tables", {"refs": 1500}),
    ("refs-1m-3tables", {"refs": 5, "tables": 3, "reflog": False}),
    ("packed-1m", {"refs": 600}),
    ("empty-repo", {"refs": 10, "ref_format": "files"}),
    ("empty-repo", {"refs": 10}),
    ("refs-1m-1table", {"refs": 300, "object_format": "sha256", "values": "single"}),
    ("refs-1m-3tables", {"refs": 400, "object_format": "sha256"}),
    ("packed-1m", {"refs": 250, "object_format": "sha256"}),
])
def test_via_git_gives_the_same_refs(preset: str, params: dict, tmp_path: Path,
                                     git: GitRunner, git_path: str) -> None:
    ours = data_gen.build(preset, root=tmp_path, git=git_path, **params)
    theirs = data_gen.build(preset, root=tmp_path, git=git_path, via_git=True, **params)
    assert ours.path != theirs.path
    assert _show_ref(git, ours.gitdir) == _show_ref(git, theirs.gitdir)
    _fsck(git, theirs.gitdir)
    _fsck(git, ours.gitdir)


def test_cache_hit_determinism_and_seed(tmp_path: Path, git_path: str) -> None:
    a = data_gen.build("refs-1m-1table", root=tmp_path / "a", git=git_path, refs=1000, seed=7)
    before = {p: p.stat().st_mtime_ns for p in a.path.rglob("*")}
    again = data_gen.build("refs-1m-1table", root=tmp_path / "a", git=git_path, refs=1000, seed=7)
    assert again.cached and again.path == a.path
    assert again.manifest["content_hash"] == a.manifest["content_hash"]
    assert {p: p.stat().st_mtime_ns for p in a.path.rglob("*")} == before
    # same parameters elsewhere: the same bytes
    b = data_gen.build("refs-1m-1table", root=tmp_path / "b", git=git_path, refs=1000, seed=7)
    assert not b.cached
    assert b.manifest["content_hash"] == a.manifest["content_hash"]
    # another seed: other content
    c = data_gen.build("refs-1m-1table", root=tmp_path / "a", git=git_path, refs=1000, seed=8)
    assert c.path != a.path
    assert c.manifest["content_hash"] != a.manifest["content_hash"]
    # --force rebuilds, to the same bytes
    d = data_gen.build("refs-1m-1table", root=tmp_path / "a", git=git_path, refs=1000, seed=7,
                       force=True)
    assert not d.cached and d.manifest["content_hash"] == a.manifest["content_hash"]


def test_history_is_deterministic(tmp_path: Path, git_path: str) -> None:
    kw = {"commits": 30, "files": 12, "window": 10, "git": git_path}
    a = data_gen.build("history-depth50", root=tmp_path / "a", **kw)
    b = data_gen.build("history-depth50", root=tmp_path / "b", **kw)
    assert a.manifest["content_hash"] == b.manifest["content_hash"]


def test_changed_parameter_regenerates_our_dataset(tmp_path: Path, git_path: str,
                                                   git: GitRunner) -> None:
    out = tmp_path / "ds"
    a = data_gen.build("packed-1m", out=out, git=git_path, refs=500)
    b = data_gen.build("packed-1m", out=out, git=git_path, refs=700)
    assert not b.cached and b.path == out
    assert b.manifest["params"]["refs"] == 700
    assert b.manifest["content_hash"] != a.manifest["content_hash"]
    assert len((out / "repo.git" / "packed-refs").read_bytes().splitlines()) > 700
    # a damaged dataset (a file changed size) is rebuilt, not reused
    (out / "repo.git" / "packed-refs").write_bytes(b"# pack-refs with: peeled \n")
    c = data_gen.build("packed-1m", out=out, git=git_path, refs=700)
    assert not c.cached and c.manifest["content_hash"] == b.manifest["content_hash"]


# -- bad input -------------------------------------------------------------------------

def test_unknown_preset(tmp_path: Path) -> None:
    with pytest.raises(data_gen.DataGenError, match="unknown preset 'refs-2m'.*known presets"):
        data_gen.build("refs-2m", root=tmp_path)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("preset,params,msg", [
    ("refs-1m-3tables", {"refs": 1, "tables": 3},
     "impossible parameters: --tables 3 with --refs 1"),
    ("refs-1m-3tables", {"refs": 4, "tables": 3}, "need at least --refs 5"),
    ("refs-1m-3tables", {"tables": 0}, "--tables must be >= 1"),
    ("refs-1m-1table", {"tables": 3}, "takes no --tables other than 1"),
    ("refs-1m-1table", {"object_format": "md5"}, "--object-format must be one of sha1, sha256"),
    ("history-depth50", {"refs": 10}, "does not take --refs"),
    ("history-depth50", {"via_git": True}, "always made by git"),
    ("packed-1m", {"reflog": True}, "takes no --reflog"),
    ("packed-1m", {"refs": -1}, "--refs must be between 0"),
    ("refs-1m-1table", {"colour": "red"}, "unknown parameter 'colour'"),
    ("refs-1m-1table", {"refs": "many"}, "expected an integer"),
])
def test_impossible_parameters(preset: str, params: dict, msg: str, tmp_path: Path) -> None:
    with pytest.raises(data_gen.DataGenError, match=msg.replace("(", r"\(")):
        data_gen.build(preset, root=tmp_path, **params)
    assert not any(tmp_path.iterdir())


def test_foreign_directory_is_never_overwritten(tmp_path: Path, git_path: str) -> None:
    out = tmp_path / "precious"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "manifest.json").write_text('{"something": "else"}')
    with pytest.raises(data_gen.DataGenError, match="not a data_gen dataset"):
        data_gen.build("refs-1m-1table", out=out, git=git_path, refs=10)
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "notes.txt"]
    assert (out / "notes.txt").read_text() == "mine"
    assert [p.name for p in tmp_path.iterdir()] == ["precious"]      # no temp dirs left
    with pytest.raises(data_gen.DataGenError):
        data_gen.build("refs-1m-1table", out=out, git=git_path, refs=10, force=True)
    # an empty directory is fine
    empty = tmp_path / "empty"
    empty.mkdir()
    ds = data_gen.build("refs-1m-1table", out=empty, git=git_path, refs=10)
    assert (empty / "manifest.json").exists() and ds.gitdir == empty / "repo.git"


# -- CLI ---------------------------------------------------------------------------

def test_cli_list_and_gen(tmp_path: Path, git_path: str, capsys: pytest.CaptureFixture[str],
                          monkeypatch: pytest.MonkeyPatch) -> None:
    from lab.cli import main
    monkeypatch.setenv("REFTABLE_LAB_GIT", git_path)
    assert main(["gen", "--list"]) == 0
    listed = capsys.readouterr().out
    for name in SMALL:
        assert name in listed
    out = tmp_path / "cli-ds"
    assert main(["gen", "refs-1m-3tables", "--refs", "300", "--seed", "2", "--out", str(out),
                 "--no-progress"]) == 0
    cap = capsys.readouterr()
    assert cap.out.strip() == str(out / "repo.git")
    assert "built" in cap.err
    assert main(["gen", "refs-1m-3tables", "--refs", "300", "--seed", "2", "--out", str(out),
                 "--json"]) == 0
    cap = capsys.readouterr()
    assert "reused" in cap.err
    assert json.loads(cap.out)["params"]["seed"] == 2
    assert main(["gen", "refs-1m-3tables", "--refs", "1", "--tables", "3", "--out",
                 str(tmp_path / "x")]) == 2
    assert "impossible parameters" in capsys.readouterr().err
    assert main(["gen", "no-such-preset"]) == 2
    assert "unknown preset" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
