"""The source of a core function, interpreted or compiled by mypyc.

Contract: source_of(fn) is inspect.getsource(fn) for a Python function. A function
compiled by mypyc (the compiled core, tests/conftest.py) has no code object; its source
is the def of that name (decorators included, as inspect gives them) in the .py file
beside its module's extension module: the compiled core is built from, and keeps, a
byte-for-byte copy of each source file (scripts/build-compiled-core.sh).

as_python(fn) is fn itself for a Python function; for a compiled one, the function of
that name run from that .py copy (its module executed afresh as a sibling of the
compiled one, so its imports are the compiled core's): for the tests that watch a
generator's locals (gi_frame), which a compiled generator does not have.
"""
from __future__ import annotations

import ast
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def source_file(module: Any) -> Path:
    """The .py file a module was loaded or compiled from."""
    path = Path(module.__file__)
    name = module.__name__.rpartition(".")[2]
    return path if path.suffix == ".py" else path.parent / f"{name}.py"


def source_of(fn: Callable[..., Any]) -> str:
    if inspect.isfunction(fn):
        return inspect.getsource(fn)
    text = source_file(sys.modules[fn.__module__]).read_text()
    (node,) = [n for n in ast.parse(text).body
               if isinstance(n, ast.FunctionDef) and n.name == fn.__name__]
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return "".join(text.splitlines(keepends=True)[first - 1:node.end_lineno])


_PYTHON_TWINS: dict[str, Any] = {}


def as_python(fn: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.isfunction(fn):
        return fn
    module = sys.modules[fn.__module__]
    twin = _PYTHON_TWINS.get(module.__name__)
    if twin is None:
        package, _, name = module.__name__.rpartition(".")
        spec = importlib.util.spec_from_file_location(f"{package}._{name}_as_python",
                                                      source_file(module))
        assert spec and spec.loader
        twin = importlib.util.module_from_spec(spec)
        twin.__package__ = package
        spec.loader.exec_module(twin)
        _PYTHON_TWINS[module.__name__] = twin
    found = getattr(twin, fn.__name__)
    assert inspect.isfunction(found), found
    return found
