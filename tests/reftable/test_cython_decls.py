"""The .pxd files the Cython build reads beside the sources declare what the sources hold.

A .pxd's `cdef class` lists the fields of an extension type; the interpreted class lists
the same names in __slots__. A name in one and not the other fails in that build only
(an AttributeError where the field is missing, a silently unused field where the class no
longer sets it), so the two lists are compared here, in every build, against the committed
sources."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from reftable_core.counters import COUNTER_NAMES
from reftable_core.refs import transaction
from reftable_core.reftable import block_writer, blocksource, parsed_block, pq

CORE = Path(__file__).resolve().parents[2] / "core" / "reftable_core"


def pxd_fields(pxd: Path, cls: str) -> list[str]:
    """The field names `cdef class cls` declares in pxd (its `cdef [public] TYPE a, b`
    lines), in order."""
    text = pxd.read_text()
    m = re.search(rf"^cdef class {cls}\b.*?:\n((?:    .*\n|\n)*)", text, re.M)
    assert m, f"{pxd.name}: no cdef class {cls}"
    names: list[str] = []
    for line in m.group(1).splitlines():
        d = re.match(r"    cdef (?:public |readonly )?\w+ ([\w, ]+)$", line)
        if d:
            names += [n.strip() for n in d.group(1).split(",")]
    return names


def test_counters_pxd_declares_every_counter_in_order() -> None:
    fields = pxd_fields(CORE / "counters.pxd", "Counters")
    assert fields == [*COUNTER_NAMES, "_caches"]
    assert '__slots__ = (*COUNTER_NAMES, "_caches")' in (CORE / "counters.py").read_text()


@pytest.mark.parametrize("module, cls", [
    (blocksource, "BytesSource"), (blocksource, "PreadSource"), (blocksource, "MmapSource"),
    (pq, "MergedIterPQueue"), (parsed_block, "Block"), (block_writer, "BlockWriter"),
    (transaction, "QueuedUpdate"),
])
def test_pxd_fields_are_the_slots(module, cls: str) -> None:
    py = CORE.joinpath(*module.__name__.split(".")[1:]).with_suffix(".py")
    body = py.read_text().split(f"\nclass {cls}")[1]
    slots = re.search(r"__slots__ = \(([^)]*)\)", body)
    assert slots, f"{cls}: no __slots__"
    names = sorted(n.strip().strip('"') for n in slots.group(1).split(",") if n.strip())
    assert sorted(pxd_fields(py.with_suffix(".pxd"), cls)) == names


@pytest.mark.parametrize("module, cls", [("stack", "Stack"), ("writer", "TableWriter")])
def test_pxd_fields_are_what_the_class_sets(module: str, cls: str) -> None:
    """Stack and TableWriter set their fields in methods (no __slots__): every self.NAME
    assigned in the class body is a field of the .pxd's cdef class, and no field is left
    unset (but the C flag fields the Cython build's rewrites set)."""
    src = (CORE / "reftable" / f"{module}.py").read_text()
    body = re.split(r"\n(?:class |def )", src.split(f"\nclass {cls}:")[1])[0]
    assigned = set(re.findall(r"\bself\.(\w+)(?:: [^=\n]+)? = ", body))
    assigned |= set(re.findall(r"\bself\.(\w+), self\.\w+ = ", body))
    assigned |= set(re.findall(r"\bself\.\w+, self\.(\w+) = ", body))
    fields = set(pxd_fields(CORE / "reftable" / f"{module}.pxd", cls))
    assert assigned - {"_stat_cache"} == fields - {"_stat_cache"}
