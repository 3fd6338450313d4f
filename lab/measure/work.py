"""The work pass: what each flags variant's run did, counted by the core, untimed.

Contract: after the measures, every flags variant runs once more in
`python -m lab.worker --work OUT` (lab.worker.work: a warm-up, then one run between
a reset and a snapshot of reftable_core.counters, and with trace_loops the hot
loops' bytecodes of a third run); its counters become the variant's `work`, which
lab.results.work_differs compares. Peers are not passed (the core does not count
their work). MEASURE has the shape of every measure (lab.measure.context.Measure) but
is not one `--measure` names: the harness runs it last unless told not to.

The counters are exact and repeat for the same code, data and variant, as the
instruction counts do, so they go through the run's counter (ctx.counter:
lab.countcache) like them, under the measure name work_name(ctx) ("work", or
"work-traced" with the loops' bytecodes): a rerun takes them from the store and runs
no work pass for them (at the full scale the pass is minutes a variant: a warm-up and
a run, and the traced run some 20 times slower); a Dask executor runs them as tasks.
A variant whose work came from the store says so in its result's "cached" (under
"work": run id and time), beside its counts'.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import run_command
from .instructions import count_env

if TYPE_CHECKING:           # annotations only (lab.measure.context)
    from ..scenario import Variant
    from .context import Record, RunContext


@dataclass(frozen=True)
class WorkCount:
    """A variant's work counters, as the count cache stores them (lab.countcache)."""
    work: dict[str, int] = field(default_factory=dict)


def work_name(ctx: RunContext) -> str:
    """The measure name the work pass's counters are cached under: the traced loops'
    bytecodes are more counters, so another name."""
    return "work-traced" if ctx.trace_loops else "work"


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
        todo = {v.label: v for v in variants if not v.peer}

        def here(missing: Mapping[str, Variant]) -> dict[str, WorkCount]:
            out: dict[str, WorkCount] = {}

            def one(v: Variant) -> None:
                out[v.label] = WorkCount(work_variant(ctx, v))
                ctx.progress(f"work {v.label}", 1)
            ctx.each(one, list(missing.values()))
            return out
        if ctx.counter is not None:
            got = ctx.counter.count(ctx, work_name(ctx), todo, here)
        else:
            got = {k: (w, None) for k, w in here(todo).items()}
        for label in todo:
            w, origin = got[label]
            figures: dict[str, Any] = {"work": dict(w.work)}
            if origin:
                figures["cached"] = {"work": origin}
            record(label, figures)

    def load(self, entry: Mapping[str, Any], run_dir: Path) -> dict[str, Any]:
        return {"work": dict(entry.get("work", {}))}


MEASURE = Work()
