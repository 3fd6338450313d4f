"""`reftable-lab flags`: every flag, its values, default, baseline and layer, grouped
by source (the seed threads 000 .. 004, then later upstream commits with id and date)."""
from __future__ import annotations

import argparse
from collections.abc import Callable

from reftable_core.flags import FLAG_INFO, Flags, baseline, by_source, format_value


def register(sub: argparse._SubParsersAction, add_flag_options: Callable) -> None:
    p = sub.add_parser("flags", help="list every optimization flag")
    add_flag_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, flags: Flags) -> int:
    default, base = Flags(), baseline()
    groups = by_source()
    head = ("flag", "values", "default", "baseline", "current", "seed", "layer")
    rows = {src: [(name, FLAG_INFO[name].values, format_value(getattr(default, name)),
                   format_value(getattr(base, name)), format_value(getattr(flags, name)),
                   FLAG_INFO[name].seed, FLAG_INFO[name].layer) for name in names]
            for src, names in groups.items()}
    every = [head, *(r for group in rows.values() for r in group)]
    widths = [max(len(r[i]) for r in every) for i in range(len(head))]

    def line(r: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
    print(line(head))
    for src, group in rows.items():
        print(f"\n{src}:")
        for r in group:
            print(line(r))
    print()
    for src, names in groups.items():
        print(f"== {src}")
        for name in names:
            info = FLAG_INFO[name]
            print(f"{name}:\n  off/before: {info.off}\n  on/after:   {info.on}")
    return 0
