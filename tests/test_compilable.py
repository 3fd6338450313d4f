"""Rules of the compiled core that the interpreter does not check.

mypyc gives a name bound by ``except T as name`` the type of the first handler that binds
it in its ``try``; a later handler binding the same name to another type compiles, then
fails at run time with "TypeError: <T> object expected; got <U>" (CI, the compiled core:
update_ref's ``except (HookAbortedError, PackedRefsError) as e`` then ``except
ReftableError as e``). The interpreted tests cannot see it, and the compiled build takes
minutes, so this test reads the sources.
"""
from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "core" / "reftable_core"


def shared_except_names(text: str) -> list[tuple[int, str, list[str]]]:
    """(line, name, handler types) for each try whose handlers bind one name to two types."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Try | ast.TryStar):
            types: dict[str, list[str]] = {}
            for h in node.handlers:
                if h.name and h.type is not None:
                    types.setdefault(h.name, []).append(ast.unparse(h.type))
            found += [(node.lineno, name, ts) for name, ts in types.items()
                      if len(set(ts)) > 1]
    return found


def test_rule_sees_a_shared_name():
    text = "try:\n    f()\nexcept KeyError as e:\n    g(e)\nexcept OSError as e:\n    g(e)\n"
    assert shared_except_names(text) == [(1, "e", ["KeyError", "OSError"])]
    assert shared_except_names(text.replace("OSError as e", "OSError as err")) == []


def test_no_except_name_is_bound_to_two_types():
    bad = [f"{p.relative_to(CORE)}:{line}: {name} bound to {', '.join(ts)}"
           for p in sorted(CORE.rglob("*.py"))
           for line, name, ts in shared_except_names(p.read_text())]
    assert not bad, "\n".join(bad)
