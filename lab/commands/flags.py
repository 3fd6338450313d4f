"""`reftable-lab flags`: list every flag, its values, default, baseline and seed."""
from __future__ import annotations

import argparse
from collections.abc import Callable

from reftable_core.flags import FLAG_INFO, Flags, baseline, format_value


def register(sub: argparse._SubParsersAction, add_flag_options: Callable) -> None:
    p = sub.add_parser("flags", help="list every optimization flag")
    add_flag_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, flags: Flags) -> int:
    default, base = Flags(), baseline()
    rows = [("flag", "values", "default", "baseline", "current", "seed", "layer")]
    for name, info in FLAG_INFO.items():
        rows.append((name, info.values, format_value(getattr(default, name)),
                     format_value(getattr(base, name)), format_value(getattr(flags, name)),
                     info.seed, info.layer))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    print()
    for name, info in FLAG_INFO.items():
        print(f"{name}:\n  off/before: {info.off}\n  on/after:   {info.on}")
    return 0
