"""Hot loops generated from templates, one function per flag value.

Contract: define(src, filename, func, ns) compiles the source text under
filename (a "<...>" name), registers the text with linecache so that
tracebacks and line profilers can show it, runs it in the namespace ns and
returns the function named func. Used by block.py (record loops) and
merged.py (merge loops).
"""
from __future__ import annotations

import linecache
from collections.abc import Callable
from typing import Any


def define(src: str, filename: str, func: str,
           ns: dict[str, Any] | None = None) -> Callable[..., Any]:
    """Compile src as filename, register it with linecache and return ns[func]."""
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {} if ns is None else ns
    exec(compile(src, filename, "exec"), ns)  # noqa: S102 - our own templates
    return ns[func]
