"""The source of a core function, interpreted or compiled by mypyc.

Contract: source_of(fn) is inspect.getsource(fn) for a Python function. A function
compiled by mypyc (the compiled core, tests/conftest.py) has no code object; its source
is the def of that name (decorators included, as inspect gives them) in the .py file
beside its module's extension module: the compiled core is built from, and keeps, a
byte-for-byte copy of each source file (scripts/build-compiled-core.sh).
"""
from __future__ import annotations

import ast
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
