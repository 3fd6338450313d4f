"""Dataset builders: one function per kind of preset.

Contract: a builder gets a Context (a fresh, empty build directory, the
validated parameters, a hermetic GitRunner and a progress-bar factory),
creates `<dir>/repo.git` (a bare repository git opens) plus any side files,
and returns "facts" for the manifest (probe refs, tip commit, counts).
Everything is a function of the parameters: pinned identities and times, RNG
streams derived from the seed, reftable file names whose random suffix comes
from the seed. Ref storage is written by reftable_core (TableWriter,
packed-refs writer) or, with via_git, by git itself (`update-ref --stdin`,
`pack-refs --all`); objects always come from git (fast-import, repack).
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from gitbin import GitRunner

from .fastwrite import write_bulk_table
from .manifest import REPO_DIR, DataGenError
from .names import pick_probe_names, ref_names, rng_for
from .realshaped import build_real_shaped
from .objects import BASE_TIME, History, ObjectSet, init_repo, seed_objects, synthetic_history

Progress = Callable[..., Any]   # tqdm-like factory: progress(total=, desc=, unit=)

COMMITTER_NAME = b"C O Mitter"
COMMITTER_EMAIL = b"committer@example.com"
LOG_TIME = BASE_TIME + 20_000_000
MESSAGE_CREATE = b"data_gen: create\n"
MESSAGE_UPDATE = b"data_gen: update\n"
MESSAGE_DELETE = b"data_gen: delete\n"
SEED_COMMITS = 1000
SEED_TAGS = 100


@dataclass
class Context:
    dir: Path
    params: dict[str, Any]
    git: GitRunner
    progress: Progress
    preset: str
    phases: dict[str, float] = field(default_factory=dict)   # wall seconds per phase
    _t: float = field(default_factory=time.perf_counter)

    def phase(self, name: str) -> None:
        """Close the running phase under `name` (timings go to the manifest)."""
        now = time.perf_counter()
        self.phases[name] = round(self.phases.get(name, 0.0) + now - self._t, 3)
        self._t = now

    @property
    def gitdir(self) -> Path:
        return self.dir / REPO_DIR

    @property
    def hash_id(self) -> str:
        return self.params.get("object_format", "sha1")

    @property
    def hexlen(self) -> int:
        return 64 if self.hash_id == "sha256" else 40


# -- values -----------------------------------------------------------------------

def _objects(ctx: Context, ref_format: str) -> ObjectSet:
    init_repo(ctx.git, ctx.gitdir, ref_format, ctx.hash_id)
    single = ctx.params.get("values") == "single"
    n_commits = 1 if single else min(SEED_COMMITS, max(1, ctx.params.get("refs", 1)))
    n_tags = 1 if single else SEED_TAGS
    return seed_objects(ctx.git, ctx.gitdir, ctx.hash_id, n_commits, n_tags,
                        ctx.params["seed"])


class Valued:
    """Stream (name, oid, peeled) in name order; oids raw bytes, peeled None unless a tag."""

    def __init__(self, ctx: Context, objs: ObjectSet) -> None:
        self.ctx = ctx
        self.commits = [bytes.fromhex(c.decode()) for c in objs.commits]
        self.tags = [(bytes.fromhex(t.decode()), bytes.fromhex(c.decode())) for t, c in objs.tags]
        self.tip = self.commits[-1]

    def chunks(self) -> Iterator[tuple[list[bytes], list[bytes], list[bytes | None]]]:
        p = self.ctx.params
        rng = rng_for(p["seed"], "values")
        commits, tags, tip = self.commits, self.tags, self.tip
        for kind, names in ref_names(p["refs"], p["seed"], self.ctx.hexlen):
            k = len(names)
            if kind == "tag":
                picks = rng.choices(tags, k=k)
                yield names, [t for t, _ in picks], [c for _, c in picks]
            else:
                vals = rng.choices(commits, k=k)
                if kind == "head" and names[0] <= b"refs/heads/main" <= names[-1]:
                    vals = [tip if n == b"refs/heads/main" else v for n, v in zip(names, vals)]
                yield names, vals, [None] * k


def _suffix(seed: int, preset: str, i: int) -> int:
    """The 'random' part of a reftable file name, derived from the seed."""
    d = hashlib.sha256(f"{seed}:{preset}:table{i}".encode()).digest()
    return int.from_bytes(d[:4], "big")


def table_name(min_ui: int, max_ui: int, suffix: int) -> str:
    return f"0x{min_ui:012x}-0x{max_ui:012x}-{suffix:08x}.ref"


# -- reftable via reftable_core ----------------------------------------------------

@dataclass
class _TopTable:
    update_index: int
    updates: list[tuple[bytes, bytes, bytes]]   # (name, old, new)
    deletes: list[tuple[bytes, bytes]]          # (name, old)
    creates: list[tuple[bytes, bytes]]          # (name, new)


def _plan_top_tables(ctx: Context, names: list[bytes], values: list[bytes],
                     commits: list[bytes]) -> list[_TopTable]:
    """Tables 2..T: each updates some refs of the base, deletes others and adds new ones."""
    p = ctx.params
    t = p.get("tables", 1)
    if t <= 1:
        return []
    rng = rng_for(p["seed"], "top-tables")
    n = len(names)
    per = max(1, n // 1000)            # ~0.1% of the refs touched per table
    candidates = [i for i in range(n) if names[i] != b"refs/heads/main"]
    need = 2 * (t - 1)
    if len(candidates) < need:
        raise DataGenError(f"--tables {t} needs at least {need + 1} refs")
    k_upd = max(1, per // 2)
    k_del = max(1, per // 4)
    total = min(len(candidates), (k_upd + k_del) * (t - 1))
    if total < (k_upd + k_del) * (t - 1):      # small n: one update and one delete each
        k_upd = k_del = 1
        total = 2 * (t - 1)
    chosen = rng.sample(candidates, total)
    deleted: set[int] = set()
    current = {i: values[i] for i in chosen}
    out: list[_TopTable] = []
    pos = 0
    for ti in range(2, t + 1):
        upd_idx = chosen[pos:pos + k_upd]
        pos += k_upd
        del_idx = chosen[pos:pos + k_del]
        pos += k_del
        # a ref updated by an earlier table may be shadowed again here
        if ti > 2 and chosen[:pos - k_upd - k_del]:
            again = [i for i in chosen[:pos - k_upd - k_del]
                     if i not in deleted][:max(1, k_upd // 4)]
            upd_idx = upd_idx + again
        updates = []
        for i in upd_idx:
            new = rng.choice(commits)
            if new == current[i] and len(commits) > 1:
                new = commits[(commits.index(new) + 1) % len(commits)]
            updates.append((names[i], current[i], new))
            current[i] = new
        deletes = [(names[i], current[i]) for i in del_idx]
        deleted.update(del_idx)
        creates = [(b"refs/heads/new-t%d/topic-%d" % (ti, j), rng.choice(commits))
                   for j in range(max(1, per // 4))]
        out.append(_TopTable(ti, updates, deletes, creates))
    return out


def _writer_module() -> Any:
    try:
        from reftable_core.reftable import record, writer
    except ImportError as e:
        raise DataGenError(f"reftable_core.reftable.writer is not available yet ({e}); "
                           "use --via-git to let git write the tables") from None
    return writer, record


def _log(record: Any, name: bytes, ui: int, old: bytes, new: bytes, msg: bytes,
         when: int) -> Any:
    return record.LogRecord(name, ui, record.LOG_UPDATE, old, new, COMMITTER_NAME,
                            COMMITTER_EMAIL, when, 0, msg)


def build_reftable_refs(ctx: Context) -> dict[str, Any]:
    p = ctx.params
    objs = _objects(ctx, "reftable")
    ctx.phase("git init + fast-import")
    if p["via_git"]:
        return _reftable_via_git(ctx, objs)
    writer_mod, record = _writer_module()
    v = Valued(ctx, objs)
    zero = b"\0" * (32 if ctx.hash_id == "sha256" else 20)
    reflog = p.get("reflog", False)
    rdir = ctx.gitdir / "reftable"
    for f in rdir.iterdir():
        f.unlink()
    n = p["refs"]
    bar = ctx.progress(total=n * (2 if reflog else 1), desc=f"{ctx.preset}: table 1",
                       unit="rec")
    names: list[bytes] = []
    values: list[bytes] = []
    peeled_all: list[bytes | None] = []
    for ns, vs, ps in v.chunks():
        names.extend(ns)
        values.extend(vs)
        peeled_all.extend(ps)
    ctx.phase("names + values")
    RefRecord = record.RefRecord
    VAL1 = record.REF_VAL1
    opts = writer_mod.WriterOptions(hash_id=ctx.hash_id, min_update_index=1,
                                    max_update_index=1)
    table_names = []
    fname = table_name(1, 1, _suffix(p["seed"], ctx.preset, 1))
    log = None
    if reflog:
        log = {"old": zero, "name": COMMITTER_NAME, "email": COMMITTER_EMAIL, "time": LOG_TIME,
               "tz": 0, "message": MESSAGE_CREATE, "head_new": v.tip}
    write_bulk_table(rdir / fname, opts, names, values, peeled_all, log=log,
                     tick=bar.update)
    ctx.phase("table 1")
    bar.close()
    table_names.append(fname)
    tops = _plan_top_tables(ctx, names, values, v.commits)
    for top in tops:
        ui = top.update_index
        fname = table_name(ui, ui, _suffix(p["seed"], ctx.preset, ui))
        recs: list[tuple[bytes, int, bytes | None]] = []
        for name, _old, new in top.updates:
            recs.append((name, VAL1, new))
        for name, _old in top.deletes:
            recs.append((name, record.REF_DELETION, None))
        for name, new in top.creates:
            recs.append((name, VAL1, new))
        recs.sort(key=lambda r: r[0])
        logs: list[tuple[bytes, bytes, bytes, bytes]] = []
        if reflog:
            logs += [(nm, old, new, MESSAGE_UPDATE) for nm, old, new in top.updates]
            logs += [(nm, old, zero, MESSAGE_DELETE) for nm, old in top.deletes]
            logs += [(nm, zero, new, MESSAGE_CREATE) for nm, new in top.creates]
            logs.sort(key=lambda r: r[0])
        opts = writer_mod.WriterOptions(hash_id=ctx.hash_id, min_update_index=ui,
                                        max_update_index=ui)
        with open(rdir / fname, "wb") as out:
            w = writer_mod.TableWriter(out, opts)
            for name, vt, val in recs:
                w.add_ref(RefRecord(name, ui, vt, val))
            for name, old, new, msg in logs:
                w.add_log(_log(record, name, ui, old, new, msg, LOG_TIME + 60 * ui))
            w.close()
        table_names.append(fname)
    (rdir / "tables.list").write_text("".join(t + "\n" for t in table_names))
    final = _final_count(n, tops)
    return {"probe_refs": _live_probes(names, tops), "tip": v.tip.hex(),
            "tables": table_names, "ref_count": final + 1, "commits": len(v.commits),
            "annotated_tags": len(v.tags)}


def _live_probes(names: list[bytes], tops: list[_TopTable]) -> dict[str, str]:
    """Probe refs that still exist after the tables on top (deleted ones skipped)."""
    gone = {nm for t in tops for nm, _ in t.deletes}
    if not gone:
        return pick_probe_names(names)
    probes = pick_probe_names(names)
    try:
        i = len(names) // 2
        while names[i] in gone:
            i += 1
        probes["middle"] = names[i].decode()
        probes["missing"] = probes["middle"] + "-missing"
        for key, j, step in (("first", 0, 1), ("last", len(names) - 1, -1)):
            while names[j] in gone:
                j += step
            probes[key] = names[j].decode()
    except IndexError:
        probes = pick_probe_names([nm for nm in names if nm not in gone])
    return probes


def _final_count(n: int, tops: list[_TopTable]) -> int:
    return n - sum(len(t.deletes) for t in tops) + sum(len(t.creates) for t in tops)


def _stdin_lines(lines: Iterable[bytes], git: GitRunner, gitdir: Path, msg: str) -> None:
    # one transaction = one new table; git < 2.49 has no reftable.autoCompaction
    # config, only this environment switch, to keep the stack as written
    git.run(["--git-dir", str(gitdir), "update-ref", "--stdin", "-m", msg],
            input=b"".join(lines), env={"GIT_TEST_REFTABLE_AUTOCOMPACTION": "0"})


def _reftable_via_git(ctx: Context, objs: ObjectSet) -> dict[str, Any]:
    p = ctx.params
    g, gd = ctx.git, str(ctx.gitdir)
    reflog = p.get("reflog", False)
    g.run(["--git-dir", gd, "config", "core.logAllRefUpdates", "always" if reflog else "false"])
    g.run(["--git-dir", gd, "config", "reftable.autoCompaction", "false"])
    v = Valued(ctx, objs)
    names: list[bytes] = []
    values: list[bytes] = []
    lines: list[bytes] = []
    for ns, vs, _ps in v.chunks():
        names.extend(ns)
        values.extend(vs)
        lines.extend(b"create %s %s\n" % (nm, val.hex().encode()) for nm, val in zip(ns, vs))
    bar = ctx.progress(total=1 + max(0, p.get("tables", 1) - 1), desc=f"{ctx.preset} via git",
                       unit="txn")
    _stdin_lines(lines, g, ctx.gitdir, MESSAGE_CREATE.decode().strip())
    g.run(["--git-dir", gd, "pack-refs"])          # one base table, like the default path
    bar.update(1)
    tops = _plan_top_tables(ctx, names, values, v.commits)
    for top in tops:
        cmds = [b"update %s %s %s\n" % (nm, new.hex().encode(), old.hex().encode())
                for nm, old, new in top.updates]
        cmds += [b"delete %s %s\n" % (nm, old.hex().encode()) for nm, old in top.deletes]
        cmds += [b"create %s %s\n" % (nm, new.hex().encode()) for nm, new in top.creates]
        _stdin_lines(cmds, g, ctx.gitdir, "data_gen: update")
        bar.update(1)
    bar.close()
    tl = (ctx.gitdir / "reftable" / "tables.list").read_text().split()
    return {"probe_refs": _live_probes(names, tops), "tip": v.tip.hex(), "tables": tl,
            "ref_count": _final_count(p["refs"], tops) + 1, "commits": len(v.commits),
            "annotated_tags": len(v.tags)}


# -- packed-refs ------------------------------------------------------------------

def build_packed_refs(ctx: Context) -> dict[str, Any]:
    p = ctx.params
    objs = _objects(ctx, "files")
    ctx.phase("git init + fast-import")
    v = Valued(ctx, objs)
    gd = ctx.gitdir
    n = p["refs"]
    bar = ctx.progress(total=n, desc=f"{ctx.preset}", unit="ref")
    probe: list[bytes] = []
    if p["via_git"]:
        lines: list[bytes] = []
        for ns, vs, _ps in v.chunks():
            lines.extend(b"create %s %s\n" % (nm, val.hex().encode()) for nm, val in zip(ns, vs))
            probe.extend(ns)
            bar.update(len(ns))
        _stdin_lines(lines, ctx.git, gd, MESSAGE_CREATE.decode().strip())
        ctx.git.run(["--git-dir", str(gd), "pack-refs", "--all"])
    else:
        try:
            from reftable_core.lockfile import LockFile
            from reftable_core.refs import packed
        except ImportError as e:
            raise DataGenError(f"reftable_core.refs.packed is not available yet ({e}); "
                               "use --via-git") from None
        path = str(gd / "packed-refs")
        with LockFile(path) as lock:
            header = packed.PACKED_REFS_HEADER
            mid = n // 2
            seen = 0
            for ns, vs, ps in v.chunks():
                data = format_packed_chunk(packed, ns, vs, ps, header)
                header = b""
                lock.write(data)
                if not probe:
                    probe.append(ns[0])
                if seen <= mid < seen + len(ns):
                    probe.append(ns[mid - seen])
                seen += len(ns)
                last = ns[-1]
                bar.update(len(ns))
            if n:
                probe.append(last)
            lock.commit()
    bar.close()
    ctx.phase("names + packed-refs" if not p["via_git"] else "git update-ref + pack-refs")
    return {"probe_refs": pick_probe_names(probe), "tip": v.tip.hex(), "ref_count": n + 1,
            "commits": len(v.commits), "annotated_tags": len(v.tags)}


def format_packed_chunk(packed: Any, names: list[bytes], values: list[bytes],
                        peeled: list[bytes | None], header: bytes = b"") -> bytes:
    """packed.format_packed_refs(rows, header=header, sort=False) for sorted names,
    byte for byte (tests compare them), with the per-object text built once per
    distinct object id instead of once per ref."""
    pairs = dict.fromkeys(zip(values, peeled))
    pre = {v: v.hex().encode() + b" " for v, _ in pairs}
    post = {v: b"\n" if pv is None else b"\n^" + pv.hex().encode() + b"\n" for v, pv in pairs}
    if len(post) != len(pairs):       # one id peeled two ways: the general formatter
        return packed.format_packed_refs(list(zip(names, values, peeled)), header=header,
                                         sort=False)
    gp, gq = pre.__getitem__, post.__getitem__
    return header + b"".join([gp(v) + nm + gq(v) for nm, v in zip(names, values)])


# -- empty repository + update-ref script -------------------------------------------

def build_empty_repo(ctx: Context) -> dict[str, Any]:
    p = ctx.params
    fmt = p["ref_format"]
    init_repo(ctx.git, ctx.gitdir, fmt, ctx.hash_id)
    objs = seed_objects(ctx.git, ctx.gitdir, ctx.hash_id, 16, 1, p["seed"])
    tip = bytes.fromhex(objs.tip.decode())
    gd = ctx.gitdir
    reflog = p["reflog"]
    if p["via_git"]:
        ctx.git.run(["--git-dir", str(gd), "config", "core.logAllRefUpdates",
                     "always" if reflog else "false"])
        _stdin_lines([b"create refs/heads/main %s\n" % tip.hex().encode()], ctx.git, gd,
                     MESSAGE_CREATE.decode().strip())
    elif fmt == "reftable":
        writer_mod, record = _writer_module()
        rdir = gd / "reftable"
        for f in rdir.iterdir():
            f.unlink()
        fname = table_name(1, 1, _suffix(p["seed"], ctx.preset, 1))
        with open(rdir / fname, "wb") as out:
            w = writer_mod.TableWriter(out, writer_mod.WriterOptions(
                hash_id=ctx.hash_id, min_update_index=1, max_update_index=1))
            w.add_ref(record.RefRecord(b"HEAD", 1, record.REF_SYMREF, None, None,
                                       b"refs/heads/main"))
            w.add_ref(record.RefRecord(b"refs/heads/main", 1, record.REF_VAL1, tip))
            if reflog:
                zero = b"\0" * len(tip)
                w.add_log(_log(record, b"HEAD", 1, zero, tip, MESSAGE_CREATE, LOG_TIME))
                w.add_log(_log(record, b"refs/heads/main", 1, zero, tip, MESSAGE_CREATE,
                               LOG_TIME))
            w.close()
        (rdir / "tables.list").write_text(fname + "\n")
    else:
        # files backend: a loose ref, and its reflog line as git writes it
        (gd / "refs" / "heads").mkdir(parents=True, exist_ok=True)
        (gd / "refs" / "heads" / "main").write_bytes(tip.hex().encode() + b"\n")
        if reflog:
            line = b"%s %s %s <%s> %d +0000\t%s" % (
                b"0" * len(tip.hex()), tip.hex().encode(), COMMITTER_NAME, COMMITTER_EMAIL,
                LOG_TIME, MESSAGE_CREATE)
            for rel in ("logs/HEAD", "logs/refs/heads/main"):
                (gd / rel).parent.mkdir(parents=True, exist_ok=True)
                (gd / rel).write_bytes(line)
            ctx.git.run(["--git-dir", str(gd), "config", "core.logAllRefUpdates", "always"])
    # the workload: create N refs in one transaction, as in seed 004
    n = p["refs"]
    script = ctx.dir / f"update-ref-create-{n}.txt"
    th = tip.hex().encode()
    with open(script, "wb") as f:
        for i in range(0, n, 65536):
            f.write(b"".join(b"create refs/heads/branch-%d %s\n" % (j, th)
                             for j in range(i, min(n, i + 65536))))
    return {"probe_refs": {"existing": "refs/heads/main", "missing": "refs/heads/branch-0"},
            "tip": tip.hex(), "update_ref_script": script.name, "ref_count": 2}


# -- history -----------------------------------------------------------------------

def build_history(ctx: Context) -> dict[str, Any]:
    p = ctx.params
    init_repo(ctx.git, ctx.gitdir, "files", ctx.hash_id)
    bar = ctx.progress(total=p["commits"], desc=f"{ctx.preset}: fast-import", unit="commit")
    bar.update(1)
    repack = None

    def waiting() -> None:
        nonlocal repack
        if repack is None:
            bar.close()
            repack = ctx.progress(desc=f"{ctx.preset}: repack --depth={p['depth']}",
                                  unit="tick", total=None)
        repack.update(1)

    history = History(p["commits"], p["files"], p["seed"], p["depth"], p["window"])
    tip = synthetic_history(ctx.git, ctx.gitdir, history, tick=bar.update, wait_tick=waiting)
    bar.close()
    if repack is not None:
        repack.close()
    # fast-import wrote refs/heads/main as a loose ref; keep it packed like a clone would
    ctx.git.run(["--git-dir", str(ctx.gitdir), "pack-refs", "--all"])
    return {"probe_refs": {"existing": "refs/heads/main", "missing": "refs/heads/nope"},
            "tip": tip.decode(), "ref_count": 2, "commits": p["commits"], "files": p["files"]}


BUILDERS: dict[str, Callable[[Context], dict[str, Any]]] = {
    "build_reftable_refs": build_reftable_refs,
    "build_packed_refs": build_packed_refs,
    "build_empty_repo": build_empty_repo,
    "build_history": build_history,
    "build_real_shaped": build_real_shaped,
}
