"""Interop with the provisioned git: tables git writes are read exactly; tables we
write are read by git (show-ref, for-each-ref, reflog)."""
from __future__ import annotations

from pathlib import Path

import pytest
from reftable_core.reftable.block import iter_block
from reftable_core.flags import Flags, baseline
from reftable_core.reftable.record import BLOCK_TYPE_INDEX, LogRecord, RefRecord
from reftable_core.reftable.table import TableReader
from reftable_core.reftable.writer import TableWriter, WriterOptions

pytestmark = pytest.mark.git

HS = {"sha1": 20, "sha256": 32}


def _only_table(repo: Path) -> Path:
    d = repo / ".git" / "reftable"
    names = (d / "tables.list").read_text().split()
    assert len(names) == 1, names
    return d / names[0]


def _commits(git, repo: Path, n: int) -> list[str]:
    out = []
    for i in range(n):
        git.run(["commit", "-q", "--allow-empty", "-m", f"c{i}"], cwd=repo)
        out.append(git.out(["rev-parse", "HEAD"], cwd=repo).decode().strip())
    return out


def _git_refs(git, repo: Path) -> dict[bytes, tuple[bytes, bytes | None]]:
    """refname -> (object id, peeled id or None) according to git."""
    out = git.out(["for-each-ref", "--format=%(refname) %(objectname) %(*objectname)"],
                  cwd=repo)
    refs = {}
    for line in out.splitlines():
        name, oid, peeled = (line.split(b" ") + [b""])[:3]
        refs[name] = (bytes.fromhex(oid.decode()),
                      bytes.fromhex(peeled.decode()) if peeled else None)
    return refs


def _our_refs(reader: TableReader) -> dict[bytes, tuple[bytes, bytes | None]]:
    out = {}
    recs = {r.refname: r for r in reader.refs()}
    for r in recs.values():
        target = r
        while target is not None and target.value_type == 3:    # resolve symrefs
            target = recs.get(target.target)
        if target is not None and target.value_type in (1, 2) and r.refname.startswith(b"refs/"):
            out[r.refname] = (target.value, target.target_value)
    return out


def _compare_points_at(git, repo: Path, reader: TableReader, oids: list[str]) -> None:
    # git also lists symrefs resolving to the object; obj blocks only index direct values
    symrefs = {r.refname for r in reader.refs() if r.value_type == 3}
    for oid in oids:
        want = [x for x in git.out(["for-each-ref", "--points-at", oid,
                                    "--format=%(refname)"], cwd=repo).split()
                if x not in symrefs]
        got = [r.refname for r in reader.refs_for(bytes.fromhex(oid))
               if r.refname.startswith(b"refs/")]
        assert got == want, oid


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_git_to_us_basic_with_tags(git, make_repo, object_format: str) -> None:
    repo = make_repo(f"basic-{object_format}", object_format=object_format)
    commits = _commits(git, repo, 3)
    git.run(["tag", "-a", "-m", "annotated", "v1.0", commits[0]], cwd=repo)
    git.run(["tag", "-a", "-m", "annotated 2", "v2.0", commits[2]], cwd=repo)
    git.run(["tag", "light", commits[1]], cwd=repo)
    git.run(["branch", "feature", commits[1]], cwd=repo)
    git.run(["symbolic-ref", "refs/heads/alias", "refs/heads/feature"], cwd=repo)
    git.run(["pack-refs", "--all"], cwd=repo)
    for flags in (Flags(), baseline()):
        with TableReader.open(_only_table(repo), flags) as r:
            assert r.hash_id == ("sha1" if object_format == "sha1" else "sha256")
            assert r.hash_size == HS[object_format]
            assert r.version == (1 if object_format == "sha1" else 2)
            assert _our_refs(r) == _git_refs(git, repo)
            tags = [x for x in r.refs() if x.refname.startswith(b"refs/tags/v")]
            assert tags and all(x.value_type == 2 for x in tags)   # peeled values stored
            head = r.seek_ref(b"HEAD")
            assert head.value_type == 3 and head.target == b"refs/heads/main"
            alias = r.seek_ref(b"refs/heads/alias")
            assert alias.target == b"refs/heads/feature"
            _compare_points_at(git, repo, r, commits)


def _reflog(git, repo: Path, ref: str) -> list[tuple]:
    out = git.out(["reflog", "show", "--date=raw",
                   "--format=%H%x00%gn%x00%ge%x00%gd%x00%gs%x00", ref], cwd=repo)
    entries = []
    for chunk in out.split(b"\x00\n"):
        if not chunk.strip():
            continue
        h, name, email, sel, msg = chunk.strip(b"\n").split(b"\x00")
        when = sel[sel.index(b"@{") + 2:-1].split()
        entries.append((bytes.fromhex(h.decode()), name, email, int(when[0]), when[1], msg))
    return entries


def _tz(stored: int) -> bytes:
    # git stores the zone as the decimal number hhmm (-0800 -> -800), not in minutes
    return (b"-" if stored < 0 else b"+") + b"%04d" % abs(stored)


def test_git_to_us_reflog_many_updates_non_ascii(git, make_repo) -> None:
    repo = make_repo("hot")
    commits = _commits(git, repo, 2)
    n = 200
    for i in range(n):
        tz = ["+0530", "-0800", "+0000", "+0100"][i % 4]
        git.run(["update-ref", "-m", f"mise à jour n° {i} – ünïcödé ✓",
                 "refs/heads/hot", commits[i % 2]], cwd=repo,
                env={"GIT_COMMITTER_DATE": f"{1700000000 + i * 60} {tz}",
                     "GIT_COMMITTER_NAME": "Zoë Ünïcode"})
    git.run(["pack-refs"], cwd=repo)
    want = _reflog(git, repo, "refs/heads/hot")
    assert len(want) == n
    r = TableReader.open(_only_table(repo))
    logs = list(r.logs_for(b"refs/heads/hot"))
    assert len(logs) == n
    got = [(x.new_id, x.name, x.email, x.time, _tz(x.tz_offset), x.message.rstrip(b"\n"))
           for x in logs]
    assert got == want
    # newest first, old id chains to the previous entry's new id
    assert [x.update_index for x in logs] == sorted((x.update_index for x in logs),
                                                    reverse=True)
    for newer, older in zip(logs, logs[1:]):
        assert newer.old_id == older.new_id
    assert all(x.email == b"committer@example.com" for x in logs)
    # every log record of the table is found by seeking its key
    all_logs = list(r.logs())
    for x in all_logs[::17]:
        assert next(r.logs().seek(x.key())) == x
    r.close()


def _create_many(git, repo: Path, n: int, commits: list[str]) -> None:
    lines = "".join(f"create refs/heads/topic/{i:06d} {commits[i % len(commits)]}\n"
                    for i in range(n))
    git.run(["update-ref", "--stdin"], cwd=repo, input=lines.encode())
    git.run(["pack-refs", "--all"], cwd=repo)


def test_git_to_us_multi_level_index(git, make_repo) -> None:
    repo = make_repo("big", config={"reftable.blockSize": "1024",
                                    "reftable.restartInterval": "3"})
    commits = _commits(git, repo, 4)
    _create_many(git, repo, 30000, commits)
    r = TableReader.open(_only_table(repo))
    assert r.block_size == 1024 and r.ref_index_offset and r.obj_offset
    # multi-level: the top-level index block points at index blocks
    top = r.load_block(r.ref_index_offset)
    child = next(iter(iter_block(top, r.hash_size)))
    assert r.load_block(child.offset).typ == BLOCK_TYPE_INDEX
    restarts = [b.restart_count for b in r.blocks() if b.typ == ord("r")]
    assert max(restarts) > 1
    want = _git_refs(git, repo)
    assert len(want) == 30000 + 1
    assert _our_refs(r) == want
    for name in list(want)[::1234]:
        rec = r.seek_ref(name)
        assert rec is not None and rec.value == want[name][0]
        assert r.seek_ref(name + b"x") is None
    _compare_points_at(git, repo, r, commits[:2])
    logs = list(r.logs())
    assert len(logs) >= 30000
    r.close()


def test_git_to_us_index_objects_false(git, make_repo) -> None:
    repo = make_repo("noobj", config={"reftable.blockSize": "1024",
                                      "reftable.indexObjects": "false"})
    commits = _commits(git, repo, 3)
    _create_many(git, repo, 3000, commits)
    r = TableReader.open(_only_table(repo))
    assert r.ref_index_offset and r.obj_offset == 0 and not r.has_objs
    assert _our_refs(r) == _git_refs(git, repo)
    _compare_points_at(git, repo, r, commits)       # falls back to a full scan
    r.close()


# ------------------------------------------------------------------ us -> git
def _append_table(repo: Path, refs: list[RefRecord], logs: list[LogRecord],
                  block_size: int, hash_id: str) -> Path:
    d = repo / ".git" / "reftable"
    names = (d / "tables.list").read_text().split()
    last_max = 0
    for n in names:
        with TableReader.open(d / n) as t:
            last_max = max(last_max, t.max_update_index)
    ui = last_max + 1
    name = f"0x{ui:012x}-0x{ui:012x}-0badcafe.ref"
    for x in refs:
        x.update_index = ui
    for x in logs:
        x.update_index = ui
    opts = WriterOptions(block_size=block_size, hash_id=hash_id, min_update_index=ui,
                         max_update_index=ui)
    with TableWriter(d / name, opts) as w:
        for x in sorted(refs, key=lambda x: x.refname):
            w.add_ref(x)
        for x in sorted(logs, key=lambda x: x.refname):
            w.add_log(x)
    with open(d / "tables.list", "a") as f:
        f.write(name + "\n")
    return d / name


@pytest.mark.parametrize("object_format,block_size", [("sha1", 1024), ("sha1", 4096),
                                                      ("sha256", 1024), ("sha256", 4096)])
def test_us_to_git(git, make_repo, object_format: str, block_size: int) -> None:
    repo = make_repo(f"ours-{object_format}-{block_size}", object_format=object_format)
    commits = _commits(git, repo, 3)
    git.run(["tag", "-a", "-m", "t", "vtag", commits[1]], cwd=repo)
    tag_oid = git.out(["rev-parse", "vtag"], cwd=repo).decode().strip()
    c = [bytes.fromhex(x) for x in commits]
    hs = HS[object_format]
    refs = [RefRecord(b"refs/heads/ours/%04d" % i, 0, 1, c[i % 3]) for i in range(600)]
    refs.append(RefRecord(b"refs/tags/ours-annotated", 0, 2, bytes.fromhex(tag_oid), c[1]))
    refs.append(RefRecord(b"refs/heads/ours-sym", 0, 3, target=b"refs/heads/ours/0001"))
    refs.append(RefRecord(b"refs/heads/main", 0, 1, c[0]))      # moves main back
    msg = "écrit par reftable_core ✓".encode()
    logs = [LogRecord(b"refs/heads/ours/%04d" % i, 0, 1, bytes(hs), c[i % 3], b"Us Ourselves",
                      b"us@example.com", 1700001234, -500, msg) for i in range(0, 600, 50)]
    logs.append(LogRecord(b"refs/heads/main", 0, 1, c[2], c[0], b"Us Ourselves",
                          b"us@example.com", 1700005678, 130, b"reset to first"))
    _append_table(repo, refs, logs, block_size,
                  "sha1" if object_format == "sha1" else "sha256")
    show = git.out(["show-ref"], cwd=repo).decode().splitlines()
    shown = dict(reversed(line.split(" ", 1)) for line in show)
    for x in refs[:600]:
        assert shown[x.refname.decode()] == x.value.hex()
    assert shown["refs/heads/main"] == commits[0]
    assert shown["refs/heads/ours-sym"] == commits[1]
    assert shown["refs/tags/ours-annotated"] == tag_oid
    peeled = git.out(["show-ref", "-d", "refs/tags/ours-annotated"], cwd=repo).decode()
    assert f"{commits[1]} refs/tags/ours-annotated^{{}}" in peeled
    fer = git.out(["for-each-ref", "--format=%(refname) %(objectname) %(symref)",
                   "refs/heads/ours-sym", "refs/heads/ours/0599"], cwd=repo).decode()
    assert fer.splitlines() == [f"refs/heads/ours-sym {commits[1]} refs/heads/ours/0001",
                                f"refs/heads/ours/0599 {commits[2]} "]
    assert git.out(["symbolic-ref", "refs/heads/ours-sym"], cwd=repo) == \
        b"refs/heads/ours/0001\n"
    rl = _reflog(git, repo, "refs/heads/ours/0050")
    assert rl == [(c[2], b"Us Ourselves", b"us@example.com", 1700001234, b"-0500", msg)]
    rl = _reflog(git, repo, "refs/heads/main")
    assert rl[0] == (c[0], b"Us Ourselves", b"us@example.com", 1700005678, b"+0130",
                     b"reset to first")
    assert len(rl) == 4          # three commits by git, then ours
    # git keeps working on top of our table: an update, then compaction into one table
    git.run(["update-ref", "refs/heads/after", commits[2]], cwd=repo)
    git.run(["pack-refs"], cwd=repo)
    assert git.out(["rev-parse", "refs/heads/ours/0004"], cwd=repo).decode().strip() == \
        commits[1]
    assert git.run(["fsck", "--no-progress"], cwd=repo).returncode == 0


def test_git_to_us_deletions_and_log_only_tables(git, make_repo) -> None:
    """Tables of an uncompacted stack: ref/log deletion records and a log-only table."""
    repo = make_repo("dels", object_format="sha256",
                     config={"reftable.autoCompaction": "false",
                             "reftable.blockSize": "65536", "reftable.restartInterval": "1"})
    _commits(git, repo, 1)
    git.run(["branch", "x"], cwd=repo)
    git.run(["branch", "y"], cwd=repo)
    git.run(["branch", "-D", "x"], cwd=repo)
    git.run(["reflog", "expire", "--expire=all", "refs/heads/y"], cwd=repo)
    git.run(["reflog", "delete", "HEAD@{0}"], cwd=repo)
    d = repo / ".git" / "reftable"
    tables = [TableReader.open(d / n) for n in (d / "tables.list").read_text().split()]
    try:
        deletions = [r for t in tables for r in t.refs() if r.value_type == 0]
        assert [r.refname for r in deletions] == [b"refs/heads/x"]
        assert deletions[0].update_index > 1
        log_dels = [lg for t in tables for lg in t.logs() if lg.value_type == 0]
        assert {lg.refname for lg in log_dels} >= {b"refs/heads/x", b"HEAD"}
        log_only = [t for t in tables if t.first_block_type == ord("g")]
        assert log_only            # `reflog delete` writes a table without refs
        for t in log_only:
            assert t.log_offset == 0 and list(t.refs()) == [] and list(t.logs())
        for t in tables:
            assert t.hash_id == "sha256" and t.block_size == 65536
    finally:
        for t in tables:
            t.close()
