"""Atoms of the ref itself (ref-filter.c): refname, symref, objectname, objecttype,
objectsize, deltabase, flag, HEAD, worktreepath, color.

Contract: REF_ATOMS maps each name (without "*") to its AtomParser (atom.py); each
parser raises Die with git's message for an argument git refuses, at parse time.
  refname, symref  [:short | :lstrip=N | :strip=N | :rstrip=N] (N may be negative:
      keep that many components; git's lstrip/rstrip_ref_components); symref is ""
      for a ref that is not a symref. "*" forms get "^{}" from the framework.
  objectname  [:short | :short=N] (N < 4 is 4; 0 or not a number: "positive value
      expected"); the ref's id (for "*", the framework passes the peeled id).
  objecttype, objectsize [:disk], deltabase   from the object's header / pack entry.
  flag        "symref", "packed" or both, comma separated.
  HEAD        "*" for the ref HEAD points at (read when parsed), else " ".
  worktreepath  the worktree whose HEAD is this branch, else "".
  color:<spec>  git's color.c color_parse, "" when colors are off (--color).
parse_color(spec) -> bytes | None   color.c color_parse_mem (None: not a color).
shorten(store, refname, strict) -> bytes   refs_shorten_unambiguous_ref.
"""
from __future__ import annotations

import os
import re
from typing import Any

from ...errors import ReftableError
from ...refs.api import RefStore
from ...refs.refname import REFNAME_ALLOW_ONELEVEL, check_refname_format
from ..gitlike import Die, write_err
from .atom import (
    FLAG_PACKED,
    FLAG_SYMREF,
    KIND_BRANCH,
    SOURCE_NONE,
    SOURCE_OTHER,
    AtomContext,
    AtomParser,
    AtomValue,
    GitObject,
    RefItem,
)

EMPTY = AtomValue(b"")
_INT = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+")
_UINT = re.compile(r"[0-9]+")
MINIMUM_ABBREV = 4


def err_no_arg(name: str) -> Die:
    return Die(f"%({name.split(':', 1)[0]}) does not take arguments")


def err_bad_arg(name: str, arg: str) -> Die:
    return Die(f"unrecognized %({name.split(':', 1)[0]}) argument: {arg}")


def strtol_i(text: str) -> int | None:
    """git's strtol_i: an int with nothing after it (None otherwise)."""
    if not _INT.fullmatch(text):
        return None
    v = int(text)
    return v if -2 ** 31 <= v < 2 ** 31 else None


def strtoul_ui(text: str) -> int | None:
    """git's strtoul_ui: an unsigned int, no sign, nothing after it."""
    t = text.lstrip(" \t\n\v\f\r")
    if not _UINT.fullmatch(t):
        return None
    v = int(t)
    return v if v < 2 ** 32 else None


# ref_rev_parse_rules (refs.c), as (prefix, suffix) around the short name
_REV_PARSE_RULES = ((b"", b""), (b"refs/", b""), (b"refs/tags/", b""), (b"refs/heads/", b""),
                    (b"refs/remotes/", b""), (b"refs/remotes/", b"/HEAD"))


def shorten(store: RefStore, name: bytes, strict: bool = True) -> bytes:
    """refs.c refs_shorten_unambiguous_ref: the shortest form no other rev-parse rule
    (strict, core.warnAmbiguousRefs on: any other rule; else the rules before the
    matched one) resolves to an existing ref."""
    rules = _REV_PARSE_RULES
    for i in range(len(rules) - 1, 0, -1):
        pre, suf = rules[i]
        if not (name.startswith(pre) and name.endswith(suf)) or len(name) < len(pre) + len(suf):
            continue
        short = name[len(pre):len(name) - len(suf)]
        for j, (p2, s2) in enumerate(rules if strict else rules[:i]):
            if j != i and _ref_exists(store, p2 + short + s2):
                break
        else:
            return short
    return name


def _ref_exists(store: RefStore, name: bytes) -> bool:
    """refs_ref_exists: name resolves (RESOLVE_REF_READING) to an object id."""
    if not check_refname_format(name, REFNAME_ALLOW_ONELEVEL):
        return False
    try:
        ref = store.resolve(name, allow_bad_name=False)
    except ReftableError:
        return False
    return ref is not None and bool(ref.value)


# -- refname-like atoms ------------------------------------------------------------

R_NORMAL, R_SHORT, R_LSTRIP, R_RSTRIP = 0, 1, 2, 3


def lstrip_components(name: bytes, n: int) -> bytes:
    """ref-filter.c lstrip_ref_components."""
    if n < 0:
        n = name.count(b"/") + n + 1
    if n <= 0:
        return name
    parts = name.split(b"/")
    if n >= len(parts):
        return b""
    return b"/".join(parts[n:])


def rstrip_components(name: bytes, n: int) -> bytes:
    """ref-filter.c rstrip_ref_components."""
    if n < 0:
        n = name.count(b"/") + n + 1
    if n <= 0:
        return name
    parts = name.split(b"/")
    if n >= len(parts):
        return b""
    return b"/".join(parts[:len(parts) - n])


class RefnameOption:
    """A parsed refname_atom option (refname_atom_parser_internal)."""
    __slots__ = ("count", "option")

    def __init__(self, name: str, arg: str | None) -> None:
        self.count = 0
        if arg is None:
            self.option = R_NORMAL
        elif arg == "short":
            self.option = R_SHORT
        elif arg.startswith(("lstrip=", "strip=")):
            self.option = R_LSTRIP
            v = arg.split("=", 1)[1]
            n = strtol_i(v)
            if n is None:
                raise Die(f"Integer value expected refname:lstrip={v}")
            self.count = n
        elif arg.startswith("rstrip="):
            self.option = R_RSTRIP
            v = arg[7:]
            n = strtol_i(v)
            if n is None:
                raise Die(f"Integer value expected refname:rstrip={v}")
            self.count = n
        else:
            raise err_bad_arg(name, arg)

    def show(self, ctx: AtomContext, name: bytes) -> bytes:
        """ref-filter.c show_ref."""
        opt = self.option
        if opt == R_NORMAL:
            return name
        if opt == R_SHORT:
            return ctx.shorten(name)
        if opt == R_LSTRIP:
            return lstrip_components(name, self.count)
        return rstrip_components(name, self.count)


class RefnameAtom:
    """%(refname...)."""
    __slots__ = ("opt", "source")

    def __init__(self, opt: RefnameOption) -> None:
        self.source = SOURCE_NONE
        self.opt = opt

    def value(self, ctx: AtomContext, ref: RefItem, obj: GitObject | None) -> AtomValue:
        return AtomValue(self.opt.show(ctx, ref.name))


class SymrefAtom:
    """%(symref...): the target of a symref, "" for another ref."""
    __slots__ = ("opt", "source")

    def __init__(self, opt: RefnameOption) -> None:
        self.source = SOURCE_NONE
        self.opt = opt

    def value(self, ctx: AtomContext, ref: RefItem, obj: GitObject | None) -> AtomValue:
        if ref.target is None:
            return EMPTY
        return AtomValue(self.opt.show(ctx, ref.target))


def parse_refname(ctx: Any, name: str, arg: str | None) -> RefnameAtom:
    return RefnameAtom(RefnameOption(name, arg))


def parse_symref(ctx: Any, name: str, arg: str | None) -> SymrefAtom:
    return SymrefAtom(RefnameOption(name, arg))


# -- objectname and the object's header ---------------------------------------------

def parse_oid_option(name: str, arg: str | None) -> int:
    """oid_atom_parser: 0 full, -1 short (core.abbrev), else the length."""
    if arg is None:
        return 0
    if arg == "short":
        return -1
    if arg.startswith("short="):
        v = arg[6:]
        n = strtoul_ui(v)
        if n is None or n == 0:
            raise Die(f"positive value expected '{v}' in %({name}:{arg})")
        return max(n, MINIMUM_ABBREV)
    raise err_bad_arg(name, arg)


def show_oid(ctx: AtomContext, oid: bytes, length: int) -> bytes:
    """do_grab_oid: the full hex, or the unique abbreviation."""
    if length == 0:
        return oid.hex().encode()
    return ctx.abbrev(oid, length)


class ObjectnameAtom:
    """%(objectname...): the ref's id (the peeled id for "*")."""
    __slots__ = ("length", "source")

    def __init__(self, length: int) -> None:
        self.source = SOURCE_NONE
        self.length = length

    def value(self, ctx: AtomContext, ref: RefItem, obj: GitObject | None) -> AtomValue:
        return AtomValue(show_oid(ctx, ref.oid, self.length))


def parse_objectname(ctx: Any, name: str, arg: str | None) -> ObjectnameAtom:
    return ObjectnameAtom(parse_oid_option(name, arg))


class ObjecttypeAtom:
    __slots__ = ("source",)

    def __init__(self) -> None:
        self.source = SOURCE_OTHER

    def value(self, ctx: AtomContext, ref: RefItem, obj: GitObject | None) -> AtomValue:
        return AtomValue(obj.type.encode() if obj is not None else b"")


def parse_objecttype(ctx: Any, name: str, arg: str | None) -> ObjecttypeAtom:
    if arg is not None:
        raise err_no_arg("objecttype")
    return ObjecttypeAtom()


def _missing(oid: bytes, name: bytes) -> Die:
    return Die(f"missing object {oid.hex()} for {name.decode('utf-8', 'surrogateescape')}")


class ObjectsizeAtom:
    """%(objectsize) (FIELD_ULONG) and %(objectsize:disk)."""
    __slots__ = ("disk", "source")

    def __init__(self, disk: bool) -> None:
        self.source = SOURCE_OTHER
        self.disk = disk

    def value(self, ctx: AtomContext, ref: RefItem, obj: GitObject | None) -> AtomValue:
        if obj is None:
            return EMPTY
        if self.disk:
            try:
                n = ctx.repo.objects.disk_size(obj.oid)
            except ReftableError:
                raise _missing(obj.oid, ref.name) from None
        else:
            n = obj.size if obj.size >= 0 else len(obj.data)
        return AtomValue(str(n).encode(), n)


def parse_objectsize(ctx: Any, name: str, arg: str | None) -> ObjectsizeAtom:
    if arg is None:
        return ObjectsizeAtom(False)
    if arg == "disk":
        return ObjectsizeAtom(True)
    raise err_bad_arg("objectsize", arg)


class DeltabaseAtom:
    __slots__ = ("source",)

    def __init__(self) -> None:
        self.source = SOURCE_OTHER

    def value(self, ctx: AtomContext, ref: RefItem, obj: GitObject | None) -> AtomValue:
        if obj is None:
            return EMPTY
        if ctx.content_read(obj):
            # git reads the content then (contentp): its delta_base_oid stays zero
            return AtomValue(bytes(len(obj.oid)).hex().encode())
        try:
            base = ctx.repo.objects.delta_base(obj.oid)
        except ReftableError:
            raise _missing(obj.oid, ref.name) from None
        return AtomValue(base.hex().encode())


def parse_deltabase(ctx: Any, name: str, arg: str | None) -> DeltabaseAtom:
    if arg is not None:
        raise err_no_arg("deltabase")
    return DeltabaseAtom()


# -- flag, HEAD, worktreepath, color ----------------------------------------------

def _packed(repo: Any, name: bytes) -> bool:
    """REF_ISPACKED: a files-backend ref read from packed-refs (no loose file)."""
    if repo.ref_storage != "files" or not name.startswith(b"refs/"):
        return False
    return not os.path.isfile(os.path.join(os.fsencode(repo.commondir), name))


class FlagAtom:
    __slots__ = ("source",)

    def __init__(self) -> None:
        self.source = SOURCE_NONE

    def value(self, ctx: AtomContext, ref: RefItem, obj: GitObject | None) -> AtomValue:
        words = []
        if ref.flag & FLAG_SYMREF:
            words.append(b"symref")
        if ref.flag & FLAG_PACKED or _packed(ctx.repo, _last_target(ctx.repo, ref)):
            words.append(b"packed")
        return AtomValue(b",".join(words))


def _last_target(repo: Any, ref: RefItem) -> bytes:
    """The ref a symref's chain ends at (its own name for a plain ref): git's flags are
    those refs_resolve_ref_unsafe gathers on the way, so a symref to a packed ref is
    "symref,packed" (at most SYMREF_MAXDEPTH, 5, steps)."""
    name, target = ref.name, ref.target
    for _ in range(5):
        if target is None:
            break
        name = target
        try:
            nxt = repo.refs.read_ref(name)
        except ReftableError:
            break
        target = nxt.target if nxt is not None else None
    return name


def parse_flag(ctx: Any, name: str, arg: str | None) -> FlagAtom:
    return FlagAtom()


class HeadAtom:
    __slots__ = ("head", "source")

    def __init__(self, head: bytes | None) -> None:
        self.source = SOURCE_NONE
        self.head = head

    def value(self, ctx: AtomContext, ref: RefItem, obj: GitObject | None) -> AtomValue:
        return AtomValue(b"*" if self.head is not None and ref.name == self.head else b" ")


def head_target(repo: Any) -> bytes | None:
    """refs_resolve_refdup("HEAD", RESOLVE_REF_READING): the ref HEAD ends at, or
    None when it does not resolve to an object."""
    store = repo.refs
    name = b"HEAD"
    try:
        for _ in range(6):
            ref = store.read_ref(name)
            if ref is None:
                return None
            if ref.target is None:
                return name if ref.value else None
            name = ref.target
    except ReftableError:
        return None
    return None


def parse_head(ctx: Any, name: str, arg: str | None) -> HeadAtom:
    if arg is not None:
        raise err_no_arg("HEAD")
    return HeadAtom(head_target(ctx.repo))


def worktree_heads(repo: Any) -> dict[bytes, bytes]:
    """{branch ref: worktree path} for every worktree (git's get_worktrees: the main
    one first, then $GIT_COMMON_DIR/worktrees/*; a linked worktree whose gitdir
    file is gone is still listed by its recorded path)."""
    out: dict[bytes, bytes] = {}
    common = repo.commondir
    entries: list[tuple[str, str]] = []
    main = os.path.realpath(common)
    main = main.removesuffix("/.git")
    entries.append((main, common))
    wtdir = os.path.join(common, "worktrees")
    try:
        names = sorted(os.listdir(wtdir))
    except OSError:
        names = []
    for n in names:
        d = os.path.join(wtdir, n)
        try:
            with open(os.path.join(d, "gitdir"), "rb") as f:
                path = os.fsdecode(f.read().strip())
        except OSError:
            continue
        path = path.removesuffix("/.git")
        entries.append((path, d))
    for path, gitdir in entries:
        target: bytes | None = None
        if gitdir == common or repo.ref_storage == "reftable":
            try:
                ref = repo.refs.read_ref(b"HEAD" if gitdir == common else
                                         b"worktrees/" + os.fsencode(os.path.basename(gitdir))
                                         + b"/HEAD")
            except ReftableError:
                ref = None
            target = ref.target if ref is not None else None
        else:
            try:
                with open(os.path.join(gitdir, "HEAD"), "rb") as f:
                    head = f.read().strip()
            except OSError:
                head = b""
            if head.startswith(b"ref: "):
                target = head[5:].strip()
        if target is not None:
            out.setdefault(target, os.fsencode(path))
    return out


class WorktreepathAtom:
    __slots__ = ("heads", "source")

    def __init__(self) -> None:
        self.source = SOURCE_NONE
        self.heads: dict[bytes, bytes] | None = None

    def value(self, ctx: AtomContext, ref: RefItem, obj: GitObject | None) -> AtomValue:
        if ref.kind != KIND_BRANCH:
            return EMPTY
        if self.heads is None:
            self.heads = worktree_heads(ctx.repo)
        return AtomValue(self.heads.get(ref.name, b""))


def parse_worktreepath(ctx: Any, name: str, arg: str | None) -> WorktreepathAtom:
    return WorktreepathAtom()


_COLOR_NAMES = ("black", "red", "green", "yellow", "blue", "magenta", "cyan", "white")
_ATTRS = {"bold": (1, 22), "dim": (2, 22), "italic": (3, 23), "ul": (4, 24),
          "blink": (5, 25), "reverse": (7, 27), "strike": (9, 29)}
_HEX = "0123456789abcdefABCDEF"
_SPACE = " \t\n\v\f\r"


def _parse_one_color(word: str) -> tuple[int, Any] | None:
    """color.c parse_color: (kind, value): kind 1 normal, 2 ansi (code), 3 256 (n),
    4 rgb ((r, g, b)); None when word is no color."""
    w = word.lower()
    if w == "normal":
        return (1, 0)
    if len(word) in (7, 4) and word[0] == "#" and all(c in _HEX for c in word[1:]):
        h = word[1:]
        if len(h) == 3:
            return (4, tuple(int(c * 2, 16) for c in h))
        return (4, (int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)))
    if w == "default":
        return (2, 39)
    offset = 30
    if w.startswith("bright"):
        offset = 90
        w = w[6:]
    if w in _COLOR_NAMES:
        return (2, _COLOR_NAMES.index(w) + offset)
    if re.fullmatch(r"[+-]?[0-9]+", word):
        v = int(word)
        if v == -1:
            return (1, 0)
        if 0 <= v < 8:
            return (2, v + 30)
        if 8 <= v < 16:
            return (2, v - 8 + 90)
        if 16 <= v < 256:
            return (3, v)
    return None


def _color_out(c: tuple[int, Any], background: bool) -> str:
    off = 10 if background else 0
    kind, v = c
    if kind == 2:
        return str(v + off)
    if kind == 3:
        return f"{38 + off};5;{v}"
    return f"{38 + off};2;{v[0]};{v[1]};{v[2]}"


def parse_color(spec: str) -> bytes | None:
    """color.c color_parse_mem: "[reset] [fg [bg]] [attr]..." -> the escape."""
    words = spec.split()
    if not words:
        return b""
    reset = False
    attr = 0
    fg: tuple[int, Any] | None = None
    bg: tuple[int, Any] | None = None
    for w in words:
        if w.lower() == "reset":
            reset = True
            continue
        c = _parse_one_color(w)
        if c is not None:
            if fg is None:
                fg = c
            elif bg is None:
                bg = c
            else:
                return None
            continue
        a = w[2:] if w.startswith("no") else None
        neg = a is not None
        if a is not None and a.startswith("-"):
            a = a[1:]
        key = a if a is not None else w
        if key not in _ATTRS:
            return None
        attr |= 1 << _ATTRS[key][1 if neg else 0]
    fg_set = fg is not None and fg[0] != 1
    bg_set = bg is not None and bg[0] != 1
    if not (reset or attr or fg_set or bg_set):
        return b""
    parts: list[str] = []
    sep = 1 if reset else 0
    out = "\033["
    i = 0
    while attr:
        bit = 1 << i
        if attr & bit:
            attr &= ~bit
            parts.append(str(i))
        i += 1
    if fg_set and fg is not None:
        parts.append(_color_out(fg, False))
    if bg_set and bg is not None:
        parts.append(_color_out(bg, True))
    out += (";" if sep and parts else "") + ";".join(parts) + "m"
    return out.encode()


class ColorAtom:
    __slots__ = ("source", "text")

    def __init__(self, text: bytes) -> None:
        self.source = SOURCE_NONE
        self.text = AtomValue(text)

    def value(self, ctx: AtomContext, ref: RefItem, obj: GitObject | None) -> AtomValue:
        return self.text


def parse_color_atom(ctx: Any, name: str, arg: str | None) -> ColorAtom:
    if arg is None:
        raise Die("expected format: %(color:<color>)")
    esc = parse_color(arg)
    if esc is None:
        write_err("error: ", f"invalid color value: {arg}")
        raise Die(f"unrecognized color: %(color:{arg})")
    return ColorAtom(esc if ctx.use_color else b"")


REF_ATOMS: dict[str, AtomParser] = {
    "refname": parse_refname,
    "objecttype": parse_objecttype,
    "objectsize": parse_objectsize,
    "objectname": parse_objectname,
    "deltabase": parse_deltabase,
    "symref": parse_symref,
    "flag": parse_flag,
    "HEAD": parse_head,
    "color": parse_color_atom,
    "worktreepath": parse_worktreepath,
}
