"""The notebooks' source: committed files match build_notebooks.py, and they read well.

Contract: each committed .ipynb equals what notebooks/build_notebooks.py generates
(cells; outputs are never committed); no code line is longer than LINE_MAX; one H1
per notebook, at the top, the rest H2; every notebook names its own dataset and
results folders, notebooks/.lab/<notebook>/ (or $REFTABLE_LAB_NB_DIR/<notebook>/),
in its first code cell and prints them; object ids from the Python API print in
hex, as git prints them.
"""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest
from reftable_core.refs.api import Ref
from reftable_core.reftable.record import LogRecord, RefRecord

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
_spec = importlib.util.spec_from_file_location("build_notebooks",
                                               NOTEBOOKS / "build_notebooks.py")
assert _spec is not None and _spec.loader is not None
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)
BUILT = build.all_notebooks()


def test_every_committed_notebook_is_built() -> None:
    assert sorted(BUILT) == sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))


@pytest.mark.parametrize("name", sorted(BUILT))
def test_committed_notebook_is_fresh(name: str) -> None:
    committed = nbformat.read(NOTEBOOKS / name, as_version=4)
    built = BUILT[name]
    assert [(c.cell_type, c.source) for c in committed.cells] == \
        [(c.cell_type, c.source) for c in built.cells], \
        f"{name} is stale: run notebooks/build_notebooks.py"
    assert all(not c.get("outputs") for c in committed.cells), f"{name} has outputs"


@pytest.mark.parametrize("name", sorted(BUILT))
def test_reads_well(name: str) -> None:
    cells = BUILT[name].cells
    long = [line for c in cells if c.cell_type == "code" for line in c.source.splitlines()
            if len(line) > build.LINE_MAX]
    assert not long, long
    headings = [line for c in cells if c.cell_type == "markdown"
                for line in c.source.splitlines() if line.startswith("#")]
    assert headings[0].startswith("# ")
    assert all(h.startswith("## ") for h in headings[1:]), headings
    first_code = next(c.source for c in cells if c.cell_type == "code")
    stem = name.removesuffix(".ipynb")
    assert 'ROOT / "notebooks" / ".lab"' in first_code and f'LAB = LABS / "{stem}"' in first_code
    assert "print(\"datasets:\", DATASETS)" in first_code
    code = "\n".join(c.source for c in cells if c.cell_type == "code")
    assert "DATASETS" in code.split(first_code, 1)[1], "later cells use another dataset folder"
    assert not re.search(r"ROOT / ['\"](results|datasets)['\"]", code), \
        "a notebook writes into the package's folders"


def test_ids_print_in_hex() -> None:
    oid = bytes.fromhex("e8b1" + "00" * 18)
    ref = Ref(b"refs/heads/main", oid)
    assert repr(ref) == (f"Ref(name=b'refs/heads/main', value={oid.hex()}, peeled=None, "
                         f"target=None)")
    assert f"value={oid.hex()}" in repr(RefRecord(b"refs/heads/main", 1, 1, bytearray(oid)))
    assert f"new_id={oid.hex()}" in repr(LogRecord(b"refs/heads/main", new_id=oid))
    assert ref == Ref(b"refs/heads/main", oid) and hash(ref) == hash(Ref(b"refs/heads/main",
                                                                         oid))
