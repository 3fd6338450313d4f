"""%(describe...) (ref-filter.c describe_atom_parser, grab_describe_values).

Contract: DESCRIBE_ATOMS maps "describe" to its AtomParser (atom.py).
  describe [:tags[=bool] | :abbrev=N | :match=P | :exclude=P]   builtin.describe of a
      commit or of the commit a tag names; "" when describe finds nothing (git's child
      process fails quietly).
"""
from __future__ import annotations

import re
from typing import Any

from ...config import parse_bool
from ...errors import ReftableError
from ..describe import Describer
from ..gitlike import Die
from .atom import AtomContext, AtomParser, AtomValue, GitObject
from .object_atoms import ObjectAtom
from .ref_atoms import EMPTY, err_bad_arg


class DescribeAtom(ObjectAtom):
    def __init__(self, tags: bool, abbrev: int | None, match: list[bytes],
                 exclude: list[bytes]) -> None:
        self.tags = tags
        self.abbrev = abbrev
        self.match = match
        self.exclude = exclude
        self._describer: Describer | None = None

    def get(self, ctx: AtomContext, obj: GitObject) -> AtomValue:
        if obj.type not in ("commit", "tag"):
            return EMPTY
        d = self._describer
        if d is None or d.repo is not ctx.repo:
            d = self._describer = Describer(ctx.repo, self.match, self.exclude)
        try:
            return AtomValue(d.describe(obj.oid, self.tags, self.abbrev, ctx.abbrev))
        except (Die, ReftableError):
            return EMPTY          # git runs describe as a child; its failure prints ""


def _atom_arg_value(s: str, cand: str) -> tuple[bool, str | None, str]:
    """ref-filter.c match_atom_arg_value: (matched, value or None, rest)."""
    if not s.startswith(cand):
        return False, None, s
    p = s[len(cand):]
    if p.startswith("="):
        val, _comma, rest = p[1:].partition(",")
        return True, val, rest
    if p and not p.startswith(","):
        return False, None, s
    return True, None, p[1:]


_STRTOL = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+")


def parse_describe(ctx: Any, name: str, arg: str | None) -> DescribeAtom:
    """describe_atom_parser: tags[=bool], abbrev=N, match=P, exclude=P, comma separated."""
    tags = False
    abbrev: int | None = None
    match: list[bytes] = []
    exclude: list[bytes] = []
    s = arg or ""
    while s:
        bad = s
        ok, val, rest = _atom_arg_value(s, "tags")
        if ok:
            s = rest
            b = True if val is None else parse_bool(val)
            if b is not None:
                tags = b
                continue
        ok, val, rest = _atom_arg_value(s, "abbrev")
        if ok:
            if not val:
                raise Die("argument expected for describe:abbrev")
            after = s[s.index("=") + 1:]
            m = _STRTOL.match(val)
            n = int(m.group(0)) if m else 0
            if n < 0:
                raise Die(f"positive value expected describe:abbrev={after}")
            if m is None or m.end() != len(val):
                raise Die(f"cannot fully parse describe:abbrev={after}")
            abbrev = n if n == 0 or n >= 4 else 4
            s = rest
            continue
        for key, into in (("match", match), ("exclude", exclude)):
            ok, val, rest = _atom_arg_value(s, key)
            if ok:
                if not val:
                    raise Die(f"value expected describe:{key}=")
                into.append(val.encode("utf-8", "surrogateescape"))
                s = rest
                break
        else:
            raise err_bad_arg("describe", bad)
    return DescribeAtom(tags, abbrev, match, exclude)


DESCRIBE_ATOMS: dict[str, AtomParser] = {"describe": parse_describe}
