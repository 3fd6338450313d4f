"""The registry of measures: one line per measure, the names `--measure` accepts.

Contract: REGISTRY maps each measure's name to its MEASURE (lab.measure.context's
Measure protocol; a new measure is one module of lab.measure and one line here),
in the order `--measure` lists them; the harness runs the chosen ones by phase.
WORK is the untimed work pass (the same shape, no `--measure` name). PASSES is
every registered pass, WORK included: what lab.results reads back from a result
file. parse_measures() turns the option's text into a tuple of names.
"""
from __future__ import annotations

from . import allocations, instructions, memory, syscalls, time, work
from .context import Measure

REGISTRY: dict[str, Measure] = {
    time.MEASURE.name: time.MEASURE,
    instructions.MEASURE.name: instructions.MEASURE,
    allocations.MEASURE.name: allocations.MEASURE,
    memory.MEASURE.name: memory.MEASURE,
    syscalls.MEASURE.name: syscalls.MEASURE,
}
WORK: Measure = work.MEASURE
PASSES: dict[str, Measure] = {**REGISTRY, WORK.name: WORK}
MEASURES = tuple(REGISTRY)


def parse_measures(spec: str) -> tuple[str, ...]:
    """Comma-separated MEASURES, e.g. "time,instructions" (any order; each once)."""
    names = tuple(dict.fromkeys(x.strip() for x in spec.split(",") if x.strip()))
    unknown = [n for n in names if n not in MEASURES]
    if unknown or not names:
        raise ValueError(f"unknown measure {','.join(unknown) or spec!r}; "
                         f"known: {', '.join(MEASURES)}")
    return names
