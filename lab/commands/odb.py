"""`reftable-lab odb log-raw|log-S|cat-file`: the object-store walks of seed 002.

log-raw prints what `git log --raw --no-abbrev --format=%H --first-parent -m --no-renames`
prints (no rename detection: that is the documented equivalent we match; paths
are printed unquoted). log-S prints the commits `git log -S<STRING> --format=%H
--first-parent --no-renames` prints. --stats writes the delta base cache counters
(and the wall time) to stderr. The start revision (default HEAD) is resolved by
reftable_core.odb.revision against the repository's ref store (repo.open_repo).
For other lab callers: walk_start(gitdir, rev, store, flags) is that resolution;
log_raw(gitdir, rev, flags) / log_S(gitdir, rev, needle, flags) are the whole
walks on gitdir (what the commands print, as ids and Changes).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterator

from reftable_core.flags import Flags
from reftable_core.odb.store import ObjectStore, open_object_store
from reftable_core.odb.walk import (
    Change,
    format_raw,
    resolve_start,
    walk_log_raw,
    walk_log_S,
)
from reftable_core.repo import open_repo

from .gitlike import ref_resolver


def register(sub: argparse._SubParsersAction, add_flag_options: Callable) -> None:
    p = sub.add_parser("odb", help="object store walks (log --raw, log -S) with the delta base cache")
    osub = p.add_subparsers(dest="odb_command", metavar="ODB_COMMAND")
    osub.required = True

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--git-dir", required=True, help="the repository (git dir)")
        q.add_argument("--stats", action="store_true", help="print cache counters to stderr")
        add_flag_options(q)

    q = osub.add_parser("log-raw", help="like git log --raw --no-abbrev --format=%%H --first-parent -m")
    common(q)
    q.add_argument("ref", nargs="?", default="HEAD")
    q.set_defaults(func=run_log_raw)

    q = osub.add_parser("log-S", help="like git log -SSTRING --format=%%H --first-parent")
    common(q)
    q.add_argument("needle", metavar="STRING")
    q.add_argument("ref", nargs="?", default="HEAD")
    q.set_defaults(func=run_log_S)

    q = osub.add_parser("cat-file", help="like git cat-file --batch for the given ids (or all with --all)")
    common(q)
    q.add_argument("--all", action="store_true", help="every object of the store")
    q.add_argument("oids", nargs="*")
    q.set_defaults(func=run_cat_file)


def walk_start(gitdir: str | os.PathLike[str], rev: str | bytes | None, store: ObjectStore,
               flags: Flags | None = None) -> bytes:
    """The id a walk of store starts from: rev resolved with gitdir's refs."""
    repo = open_repo(gitdir, flags)
    try:
        return resolve_start(store, rev, ref_resolver(repo.refs))
    finally:
        repo.close()


def log_raw(gitdir: str | os.PathLike[str], rev: str | bytes | None = None,
            flags: Flags | None = None) -> Iterator[tuple[bytes, list[Change]]]:
    with open_object_store(gitdir, None, flags) as store:
        yield from walk_log_raw(store, walk_start(gitdir, rev, store, flags))


def log_S(gitdir: str | os.PathLike[str], rev: str | bytes | None, needle: bytes | str,
          flags: Flags | None = None) -> Iterator[bytes]:
    if isinstance(needle, str):
        needle = needle.encode()
    with open_object_store(gitdir, None, flags) as store:
        yield from walk_log_S(store, walk_start(gitdir, rev, store, flags), needle)


def _stats(store: ObjectStore, t0: float, args: argparse.Namespace) -> None:
    if args.stats:
        s = store.stats
        print(f"strategy={s.strategy} limit={s.limit} lookups={s.lookups} hits={s.hits} "
              f"misses={s.misses} adds={s.adds} evictions={s.evictions} "
              f"collisions={s.collisions} bytes={s.bytes} peak_bytes={s.peak_bytes} "
              f"entries={s.entries} seconds={time.perf_counter() - t0:.3f}", file=sys.stderr)


def run_log_raw(args: argparse.Namespace, flags: Flags) -> int:
    t0 = time.perf_counter()
    out = sys.stdout
    with open_object_store(args.git_dir, None, flags) as store:
        start = walk_start(args.git_dir, args.ref, store, flags)
        hl = store.hash_len
        for oid, changes in walk_log_raw(store, start):
            if changes:
                out.write(oid.hex() + "\n\n" + "".join(format_raw(c, hl) + "\n" for c in changes))
            else:
                out.write(oid.hex() + "\n")
        out.flush()
        _stats(store, t0, args)
    return 0


def run_log_S(args: argparse.Namespace, flags: Flags) -> int:
    t0 = time.perf_counter()
    needle = args.needle.encode("utf-8", "surrogateescape")
    with open_object_store(args.git_dir, None, flags) as store:
        start = walk_start(args.git_dir, args.ref, store, flags)
        for oid in walk_log_S(store, start, needle):
            sys.stdout.write(oid.hex() + "\n")
        sys.stdout.flush()
        _stats(store, t0, args)
    return 0


def run_cat_file(args: argparse.Namespace, flags: Flags) -> int:
    t0 = time.perf_counter()
    out = sys.stdout.buffer
    with open_object_store(args.git_dir, None, flags) as store:
        oids = list(store.iter_oids()) if args.all else [bytes.fromhex(h) for h in args.oids]
        for oid in oids:
            tname, data = store.read(oid)
            out.write(b"%s %s %d\n" % (oid.hex().encode(), tname.encode(), len(data)) + data + b"\n")
        out.flush()
        _stats(store, t0, args)
    return 0
