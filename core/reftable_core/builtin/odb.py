"""`reftable-lab odb log-raw|log-S|cat-file`: the object-store walks of seed 002.

log-raw prints what `git log --raw --no-abbrev --format=%H --first-parent -m --no-renames
[-n N] REV...` prints (no rename detection: that is the documented equivalent we
match), paths quoted as git does under the repository's core.quotePath. log-S
prints the commits `git log -S<STRING> --format=%H --first-parent --no-renames
[-n N] REV...` prints. REV... are git log's revision arguments (A..B, ^A, several
tips; default HEAD), resolved by reftable_core.odb.revision against the
repository's ref store (repo.open_repo). A commit or tree git refuses ends the
walk with git's one line (`fatal: bad object <id>`, `fatal: exceeded maximum
allowed tree depth`) and status 128. --stats writes the delta base cache
counters (and the wall time) to stderr. cat-file is `git cat-file`'s -t/-s/-e,
<type> <object>, --batch-check/--batch (names on stdin) and --batch-all-objects.
For other lab callers: walk_start(gitdir, rev, store, flags) resolves one
revision, walk_args(gitdir, revs, store, flags) a log's arguments;
log_raw(gitdir, rev, flags) / log_S(gitdir, rev, needle, flags) are the whole
walks on gitdir (what the commands print, as ids and Changes).
"""
from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from reftable_core.config import config_bool
from reftable_core.errors import FormatError, ReftableError
from reftable_core.flags import Flags
from reftable_core.odb.revision import parse_commit, resolve_range, resolve_revision
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

    def revs(q: argparse.ArgumentParser) -> None:
        q.add_argument("-n", "--max-count", type=int, default=None, metavar="N",
                       help="show at most N commits")
        q.add_argument("revs", nargs="*", metavar="REV",
                       help="revisions as git log takes them: A..B, ^A, several tips "
                            "(default HEAD)")

    q = osub.add_parser("log-raw", help="like git log --raw --no-abbrev --format=%%H --first-parent -m")
    common(q)
    revs(q)
    q.set_defaults(func=run_log_raw)

    q = osub.add_parser("log-S", help="like git log -SSTRING --format=%%H --first-parent")
    common(q)
    q.add_argument("needle", metavar="STRING")
    revs(q)
    q.set_defaults(func=run_log_S)

    q = osub.add_parser("cat-file", help="like git cat-file: -t/-s/-e OBJ, TYPE OBJ, "
                        "--batch-check/--batch (names on stdin, or --batch-all-objects)")
    common(q)
    for opt in ("-t", "-s", "-e"):
        q.add_argument(opt, dest="mode", action="append_const", const=opt)
    q.add_argument("--batch", dest="batch", action="append_const", const="--batch")
    q.add_argument("--batch-check", dest="batch", action="append_const", const="--batch-check")
    q.add_argument("--batch-all-objects", action="store_true")
    q.add_argument("args", nargs="*", metavar="ARG")
    q.set_defaults(func=run_cat_file)


def walk_start(gitdir: str | os.PathLike[str], rev: str | bytes | None, store: ObjectStore,
               flags: Flags | None = None) -> bytes:
    """The id a walk of store starts from: rev resolved with gitdir's refs."""
    repo = open_repo(gitdir, flags)
    try:
        return resolve_start(store, rev, ref_resolver(repo.refs))
    finally:
        repo.close()


class WalkArgs(NamedTuple):
    include: list[bytes]
    exclude: list[bytes]
    quote_high: bool            # core.quotePath (default true)


def walk_args(gitdir: str | os.PathLike[str], revs: Sequence[str], store: ObjectStore,
              flags: Flags | None = None) -> WalkArgs:
    """git log's revision arguments resolved with gitdir's refs, and the config
    that shapes the output."""
    repo = open_repo(gitdir, flags)
    try:
        include, exclude = resolve_range(
            [r.encode("utf-8", "surrogateescape") for r in revs], ref_resolver(repo.refs),
            lambda: store, store.hash_len)
        return WalkArgs(include, exclude, config_bool(repo.config, "core.quotepath", True))
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


def _git_words(run: Callable[[argparse.Namespace, Flags], int]
               ) -> Callable[[argparse.Namespace, Flags], int]:
    """A walk that fails on an object git names in its own words (FormatError
    without a file: "bad object <id>", "exceeded maximum allowed tree depth")
    prints git's one line, `fatal: <words>`, after what was shown, status 128."""
    @functools.wraps(run)
    def wrapped(args: argparse.Namespace, flags: Flags) -> int:
        try:
            return run(args, flags)
        except FormatError as e:
            if e.path is not None:
                raise
            sys.stdout.flush()
            print(f"fatal: {e.msg}", file=sys.stderr)
            return 128
    return wrapped


def _stats(store: ObjectStore, t0: float, args: argparse.Namespace) -> None:
    if args.stats:
        s = store.stats
        print(f"strategy={s.strategy} limit={s.limit} lookups={s.lookups} hits={s.hits} "
              f"misses={s.misses} adds={s.adds} evictions={s.evictions} "
              f"collisions={s.collisions} bytes={s.bytes} peak_bytes={s.peak_bytes} "
              f"entries={s.entries} seconds={time.perf_counter() - t0:.3f}", file=sys.stderr)


@_git_words
def run_log_raw(args: argparse.Namespace, flags: Flags) -> int:
    t0 = time.perf_counter()
    out = sys.stdout.buffer
    with open_object_store(args.git_dir, None, flags) as store:
        w = walk_args(args.git_dir, args.revs, store, flags)
        hl = store.hash_len
        for oid, changes in walk_log_raw(store, w.include, w.exclude, args.max_count):
            if changes:
                text = "".join(format_raw(c, hl, w.quote_high) + "\n" for c in changes)
                out.write(b"%s\n\n%s" % (oid.hex().encode(),
                                          text.encode("utf-8", "surrogateescape")))
            else:
                out.write(b"%s\n" % oid.hex().encode())
        out.flush()
        _stats(store, t0, args)
    return 0


@_git_words
def run_log_S(args: argparse.Namespace, flags: Flags) -> int:
    t0 = time.perf_counter()
    needle = args.needle.encode("utf-8", "surrogateescape")
    with open_object_store(args.git_dir, None, flags) as store:
        w = walk_args(args.git_dir, args.revs, store, flags)
        for oid in walk_log_S(store, w.include, needle, w.exclude, args.max_count):
            sys.stdout.write(oid.hex() + "\n")
        sys.stdout.flush()
        _stats(store, t0, args)
    return 0


class _CatFileUsage(Exception):
    """A usage error of cat-file: git prints this line (then its usage text), status 129."""


def _cat_file_mode(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """(single-object mode or None, batch mode or None) with git's usage checks."""
    modes = args.mode or []
    batches = args.batch or []
    if len(batches) > 1:
        raise _CatFileUsage("error: only one batch option may be specified")
    if len(modes) > 1:
        raise _CatFileUsage(f"error: options '{modes[1]}' and '{modes[0]}' cannot be used "
                            "together")       # git's cmdmode: the later one first
    mode = modes[0] if modes else None
    batch = batches[0] if batches else None
    if batch is not None:
        if mode is not None:
            raise _CatFileUsage(f"fatal: '{mode}' is incompatible with batch mode")
        if args.args:
            raise _CatFileUsage("fatal: batch modes take no arguments")
    elif args.batch_all_objects:
        raise _CatFileUsage("fatal: '--batch-all-objects' requires a batch mode")
    elif mode is not None:
        if not args.args:
            raise _CatFileUsage(f"fatal: <object> required with '{mode}'")
        if len(args.args) > 1:
            raise _CatFileUsage("fatal: too many arguments")
    elif not args.args:
        raise _CatFileUsage("usage: git cat-file <type> <object>")
    elif len(args.args) != 2:
        raise _CatFileUsage("fatal: only two arguments allowed in <type> <object> mode, "
                            f"not {len(args.args)}")
    return mode, batch


def _read_typed(store: ObjectStore, oid: bytes, want: str, name: str) -> bytes:
    """git's read_object_with_reference: tags are followed, a commit gives its tree."""
    while True:
        tname, data = store.read(oid)
        if tname == want:
            return data
        if tname == "tag":
            oid = store.peel(oid)
        elif tname == "commit" and want == "tree":
            oid = parse_commit(data)[0]
        else:
            raise ReftableError(f"git cat-file {name}: bad file")


@_git_words
def run_cat_file(args: argparse.Namespace, flags: Flags) -> int:
    """git cat-file's shapes, its outputs and statuses; a usage error is one line."""
    try:
        mode, batch = _cat_file_mode(args)
    except _CatFileUsage as e:
        print(e, file=sys.stderr)
        return 129
    t0 = time.perf_counter()
    out = sys.stdout.buffer
    repo = open_repo(args.git_dir, flags)
    try:
        with open_object_store(args.git_dir, None, flags) as store:
            resolve_ref = ref_resolver(repo.refs)

            def resolve(text: bytes) -> bytes | None:
                return resolve_revision(text, resolve_ref, lambda: store, store.hash_len)

            if batch is not None:
                _cat_file_batch(store, resolve, batch == "--batch", args.batch_all_objects, out)
            else:
                status = _cat_file_one(store, resolve, mode, args.args, out)
                if status:
                    return status
            out.flush()
            _stats(store, t0, args)
    finally:
        repo.close()
    return 0


def _cat_file_one(store: ObjectStore, resolve: Callable[[bytes], bytes | None],
                  mode: str | None, argv: list[str], out: Any) -> int:
    name = argv[-1]
    oid = resolve(name.encode("utf-8", "surrogateescape"))
    if oid is None:
        raise ReftableError(f"Not a valid object name {name}")
    if mode == "-e":
        return 0 if store.has(oid) else 1
    if mode is not None:
        if not store.has(oid):
            raise ReftableError("git cat-file: could not get object info")
        tname, size = store.read_header(oid)
        out.write(b"%s\n" % (tname.encode() if mode == "-t" else b"%d" % size))
        return 0
    out.write(_read_typed(store, oid, argv[0], name))
    return 0


def _cat_file_batch(store: ObjectStore, resolve: Callable[[bytes], bytes | None],
                    contents: bool, all_objects: bool, out: Any) -> None:
    """`<oid> <type> <size>` per object (and its contents with --batch); a name
    that resolves to no object prints `<name> missing`. With all_objects every
    object once, sorted by id (git's default without --unordered)."""
    if all_objects:
        items: Iterable[tuple[bytes, bytes | None]] = ((o, o) for o in sorted(store.iter_oids()))
    else:
        items = ((line, resolve(line)) for line in
                 (raw[:-1] if raw.endswith(b"\n") else raw for raw in sys.stdin.buffer))
    for name, oid in items:
        if oid is None or not store.has(oid):
            out.write(name + b" missing\n")
            continue
        if contents:
            tname, data = store.read(oid)
            out.write(b"%s %s %d\n%s\n" % (oid.hex().encode(), tname.encode(), len(data), data))
        else:
            tname, size = store.read_header(oid)
            out.write(b"%s %s %d\n" % (oid.hex().encode(), tname.encode(), size))
