"""`reftable-lab gen PRESET [options]`: build (or reuse) a benchmark dataset.

`reftable-lab gen --list` lists the presets with their parameters and
defaults. Progress bars go to stderr; stdout gets the dataset's git dir (so
`GIT_DIR=$(reftable-lab gen refs-1m-1table)` works) unless --json asks for
the manifest. Exit status 0 on success (built or reused), 2 on bad input.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from reftable_core.flags import Flags

import data_gen


def register(sub: argparse._SubParsersAction, add_flag_options: Callable) -> None:
    p = sub.add_parser("gen", help="generate a benchmark dataset (deterministic, cached)",
                       description="Build a dataset from a preset (see --list). The same "
                       "preset and parameters give the same bytes; an existing matching "
                       "dataset is reused.")
    p.add_argument("preset", nargs="?", help="preset name (see --list)")
    p.add_argument("--list", action="store_true", help="list the presets and exit")
    p.add_argument("--refs", type=int, default=None, help="number of refs")
    p.add_argument("--tables", type=int, default=None, help="reftable tables in the stack")
    p.add_argument("--seed", type=int, default=None, help="random seed")
    p.add_argument("--object-format", choices=("sha1", "sha256"), default=None)
    p.add_argument("--ref-format", choices=("reftable", "files"), default=None,
                   help="ref storage (empty-repo)")
    p.add_argument("--via-git", action="store_true", default=None,
                   help="let git's own commands write the refs (update-ref --stdin, "
                   "pack-refs) for cross-checking")
    p.add_argument("--reflog", action=argparse.BooleanOptionalAction, default=None,
                   help="one reflog record per ref")
    p.add_argument("--values", choices=("spread", "single"), default=None,
                   help="refs point at many real commits (spread) or all at one (single)")
    p.add_argument("--commits", type=int, default=None, help="commits (history-depth50)")
    p.add_argument("--files", type=int, default=None, help="files (history-depth50)")
    p.add_argument("--depth", type=int, default=None, help="repack --depth (history-depth50)")
    p.add_argument("--window", type=int, default=None, help="repack --window (history-depth50)")
    p.add_argument("--out", default=None, help="dataset directory "
                   "(default ./datasets/<preset>-<params>)")
    p.add_argument("--root", default=None, help="parent of the default dataset directories")
    p.add_argument("--force", action="store_true", help="rebuild even if a matching dataset exists")
    p.add_argument("--verify", choices=("fingerprint", "hash"), default="fingerprint",
                   help="how to check an existing dataset before reusing it")
    p.add_argument("--json", action="store_true", help="print the manifest as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_flag_options(p)
    p.set_defaults(func=run)


PARAM_OPTS = ("refs", "tables", "seed", "object_format", "ref_format", "via_git", "reflog",
              "values", "commits", "files", "depth", "window")


def _list() -> int:
    for name, desc, seed, defaults in data_gen.list_presets():
        print(f"{name}\n  {desc}\n  seed thread: {seed}")
        opts = " ".join(f"--{k.replace('_', '-')}={v}" for k, v in defaults.items())
        print(f"  parameters: {opts}\n")
    return 0


def run(args: argparse.Namespace, flags: Flags) -> int:
    if args.list:
        return _list()
    if not args.preset:
        print("fatal: gen needs a PRESET (or --list)", file=sys.stderr)
        return 2
    params = {k: getattr(args, k) for k in PARAM_OPTS if getattr(args, k) is not None}
    try:
        ds = data_gen.build(args.preset, out=args.out, root=args.root, force=args.force,
                            progress=not args.no_progress, verify=args.verify, **params)
    except data_gen.DataGenError as e:
        print(f"fatal: {e}", file=sys.stderr)
        return 2
    state = "reused" if ds.cached else "built"
    secs = ds.manifest.get("build_seconds")
    extra = "" if ds.cached else f" in {secs:.2f} s"
    print(f"{state} {ds.path}{extra} ({ds.manifest.get('content_hash', '')[:23]})",
          file=sys.stderr)
    if args.json:
        out = {k: v for k, v in ds.manifest.items()
               if k != "fingerprint" and not k.startswith("_")}
        out["cached"] = ds.cached
        out["path"], out["gitdir"] = str(ds.path), str(ds.gitdir)
        print(json.dumps(out, indent=1, sort_keys=True))
    else:
        print(ds.gitdir)
    return 0
