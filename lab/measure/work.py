"""The work pass: what each flags variant's run did, counted by the core, untimed.

Contract: after the measures, every flags variant runs once more in
`python -m lab.worker --work OUT` (lab.worker.work: a warm-up, then one run between
a reset and a snapshot of reftable_core.counters, and with trace_loops the hot
loops' bytecodes of a third run); its counters become the variant's `work`, which
lab.results.work_differs compares. Peers are not passed (the core does not count
their work). MEASURE has the shape of every measure (lab.measure.context.Measure) but
is not one `--measure` names: the harness runs it last unless told not to.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import run_command
from .instructions import count_env

if TYPE_CHECKING:           # annotations only (lab.measure.context)
    from ..scenario import Variant
    from .context import Record, RunContext


def work_variant(ctx: RunContext, v: Variant) -> dict[str, int]:
    """The work counters of one untimed run of the variant (ctx.trace_loops: with the
    hot loops' bytecodes)."""
    out = ctx.out_dir / f"{ctx.scenario}.{v.label}.work.json"
    run_command(ctx.worker_cmd(v, "--work", str(out),
                               *(["--trace-loops"] if ctx.trace_loops else [])),
                env=count_env(ctx.env(v)))
    work: dict[str, int] = json.loads(out.read_text())["work"]
    out.unlink()
    return work


class Work:
    """The work pass in a run (see the module doc)."""
    name = "work"
    phase = 5

    def steps(self, ctx: RunContext, variants: Sequence[Variant]) -> int:
        return sum(not v.peer for v in variants)

    def run(self, ctx: RunContext, variants: Sequence[Variant], record: Record) -> None:
        def one(v: Variant) -> None:
            record(v.label, {"work": work_variant(ctx, v)})
            ctx.progress(f"work {v.label}", 1)
        ctx.each(one, [v for v in variants if not v.peer])

    def load(self, entry: Mapping[str, Any], run_dir: Path) -> dict[str, Any]:
        return {"work": dict(entry.get("work", {}))}


MEASURE = Work()
