"""git's ref-filter format (ref-filter.c verify_ref_format, parse_ref_filter_atom,
populate_value, format_ref_array_item).

Contract:
  VALID_ATOMS    every name of git's valid_atom[] in git's order, with git's info
                 source for it (SOURCE_NONE / SOURCE_OTHER / SOURCE_OBJ).
  Context(repo, use_color)   the AtomContext: object(oid, refname) (full read, dies
                 "missing object <hex> for <ref>"), info(oid, refname) (type and size),
                 abbrev, shorten (cached), use_color.
  RefFormat(ctx, fmt, quote_style)   parses fmt once (git's verify_ref_format): literal
                 runs with "%%" and "%xx" resolved, atoms by name (the same text is
                 one used atom, as in git); Die with git's message and status for a
                 bad atom ("unknown field name: X", each parser's own), a "%(" without
                 ")" (error + usage, 129), %(rest) ("this command reject atom"), a bare
                 %(raw) with --python, --shell or --tcl ("cannot be used with"). The
                 nesting of %(align)/%(if)/%(then)/%(else)/%(end) is checked when a
                 ref is formatted, as git does (no refs: no error).
    add_atom(text) -> index   parse one more atom into the same table (sort keys).
    populate(ref) -> list[AtomValue]   every used atom's value: the ref's object is
                 read only when an atom needs it (its header for SOURCE_OTHER atoms,
                 its content for SOURCE_OBJ ones or any "*" atom), and for "*" atoms
                 of a tag the peeled object once (git: "bad tag" when peeling fails).
    render(values) -> bytes   format_ref_array_item: the stack of %(align)/%(if)
                 frames, quoting per atom at the top level or per outermost frame at
                 its %(end), the color reset at end of line when a %(color:...) other
                 than reset was used with colors on.
    prepare(refs)   the batch steps of atoms that have one (ahead-behind, is-base).
  atom_parser(name)   the parser of a valid_atom[] name, from the tables of ref_atoms,
                 the structural atoms here, filters, object_atoms, person_atoms,
                 contents_atoms, signature_atoms, describe_atoms and remote_atoms.
"""
from __future__ import annotations

import unicodedata
from typing import Any

from ...config import config_bool
from ...errors import ReftableError
from ...repo import Repo
from ..gitlike import Die, ambiguity_warning, write_err
from ..show_ref import Objects
from .atom import (
    SOURCE_NONE,
    SOURCE_OBJ,
    SOURCE_OTHER,
    Atom,
    AtomParser,
    AtomValue,
    GitObject,
    RefItem,
)
from .contents_atoms import CONTENTS_ATOMS
from .describe_atoms import DESCRIBE_ATOMS
from .filters import FILTER_ATOMS
from .object_atoms import OBJECT_ATOMS, RawAtom
from .person_atoms import PERSON_ATOMS
from .quoting import QUOTE_NONE, QUOTE_PYTHON, QUOTE_SHELL, QUOTE_TCL, quote
from .ref_atoms import EMPTY, REF_ATOMS, err_bad_arg, err_no_arg, shorten, strtoul_ui
from .remote_atoms import REMOTE_ATOMS
from .signature_atoms import SIGNATURE_ATOMS

N, O, B = SOURCE_NONE, SOURCE_OTHER, SOURCE_OBJ
VALID_ATOMS: dict[str, int] = {
    "refname": N, "objecttype": O, "objectsize": O, "objectname": O, "deltabase": O,
    "tree": B, "parent": B, "numparent": B, "object": B, "type": B, "tag": B,
    "author": B, "authorname": B, "authoremail": B, "authordate": B, "committer": B,
    "committername": B, "committeremail": B, "committerdate": B, "tagger": B,
    "taggername": B, "taggeremail": B, "taggerdate": B, "creator": B, "creatordate": B,
    "describe": B, "subject": B, "body": B, "trailers": B, "contents": B,
    "signature": B, "raw": B, "upstream": N, "push": N, "symref": N, "flag": N,
    "HEAD": N, "color": N, "worktreepath": N, "align": N, "end": N, "if": N,
    "then": N, "else": N, "rest": N, "ahead-behind": O, "is-base": O}
# the quoting styles a bare %(raw) in the format is refused with (verify_ref_format)
_NO_RAW_QUOTE = QUOTE_PYTHON | QUOTE_SHELL | QUOTE_TCL
# atoms whose "*" form git computes from the ref, not the peeled object
_REF_SIDE = frozenset(("ahead-behind", "is-base"))
_DEREF_SUFFIX = frozenset(("refname", "symref"))

# structural atoms: their kind in the formatting stack
K_VALUE, K_ALIGN, K_END, K_IF, K_THEN, K_ELSE = 0, 1, 2, 3, 4, 5
ALIGN_LEFT, ALIGN_MIDDLE, ALIGN_RIGHT = 0, 1, 2
CMP_NONE, CMP_EQUAL, CMP_UNEQUAL = 0, 1, 2
COLOR_RESET = b"\033[m"


class Structural:
    """%(align), %(end), %(if), %(then), %(else): no value, a stack handler."""
    __slots__ = ("cmp", "kind", "position", "source", "text", "width")

    def __init__(self, kind: int, width: int = 0, position: int = ALIGN_LEFT,
                 cmp: int = CMP_NONE, text: bytes = b"") -> None:
        self.source = SOURCE_NONE
        self.kind = kind
        self.width = width
        self.position = position
        self.cmp = cmp
        self.text = text

    def value(self, ctx: Any, ref: RefItem, obj: GitObject | None) -> AtomValue:
        return EMPTY


def _align_position(s: str) -> int:
    return {"right": ALIGN_RIGHT, "middle": ALIGN_MIDDLE, "left": ALIGN_LEFT}.get(s, -1)


def parse_align(ctx: Any, name: str, arg: str | None) -> Structural:
    """align_atom_parser."""
    if arg is None:
        raise Die("expected format: %(align:<width>,<position>)")
    position = ALIGN_LEFT
    width = -1
    for s in arg.split(","):
        if s.startswith("position="):
            p = _align_position(s[9:])
            if p < 0:
                raise Die(f"unrecognized position:{s[9:]}")
            position = p
        elif s.startswith("width="):
            w = strtoul_ui(s[6:])
            if w is None:
                raise Die(f"unrecognized width:{s[6:]}")
            width = w
        elif strtoul_ui(s) is not None:
            width = strtoul_ui(s) or 0
        elif _align_position(s) >= 0:
            position = _align_position(s)
        else:
            raise Die(f"unrecognized %(align) argument: {s}")
    if width < 0 or width == 2 ** 32 - 1:
        raise Die("positive width expected with the %(align) atom")
    return Structural(K_ALIGN, width, position)


def parse_if(ctx: Any, name: str, arg: str | None) -> Structural:
    if arg is None:
        return Structural(K_IF)
    if arg.startswith("equals="):
        return Structural(K_IF, cmp=CMP_EQUAL, text=arg[7:].encode("utf-8", "surrogateescape"))
    if arg.startswith("notequals="):
        return Structural(K_IF, cmp=CMP_UNEQUAL,
                          text=arg[10:].encode("utf-8", "surrogateescape"))
    raise err_bad_arg("if", arg)


def parse_end(ctx: Any, name: str, arg: str | None) -> Structural:
    return Structural(K_END)


def parse_then(ctx: Any, name: str, arg: str | None) -> Structural:
    return Structural(K_THEN)


def parse_else(ctx: Any, name: str, arg: str | None) -> Structural:
    return Structural(K_ELSE)


def parse_rest(ctx: Any, name: str, arg: str | None) -> Structural:
    if arg is not None:
        raise err_no_arg("rest")
    raise Die("this command reject atom %(rest)")


_FORMAT_ATOMS: dict[str, AtomParser] = {
    "align": parse_align, "end": parse_end, "if": parse_if, "then": parse_then,
    "else": parse_else, "rest": parse_rest}


def atom_parser(name: str) -> AtomParser | None:
    """The parser registered for a valid_atom[] name (None: the lab lacks it)."""
    for table in (REF_ATOMS, _FORMAT_ATOMS, FILTER_ATOMS, OBJECT_ATOMS, PERSON_ATOMS,
                  CONTENTS_ATOMS, SIGNATURE_ATOMS, DESCRIBE_ATOMS, REMOTE_ATOMS):
        p = table.get(name)
        if p is not None:
            return p
    return None


# -- the context the atoms read --------------------------------------------------

def missing(oid: bytes, refname: bytes) -> Die:
    return Die(f"missing object {oid.hex()} for {refname.decode('utf-8', 'surrogateescape')}")


def tag_target(data: bytes) -> tuple[bytes, str] | None:
    """A tag's "object <hex>" and "type <name>" lines, or None."""
    if not data.startswith(b"object "):
        return None
    end = data.find(b"\n")
    t = data.find(b"\ntype ", end - 1)
    if end < 0 or t != end:
        return None
    tend = data.find(b"\n", t + 6)
    try:
        oid = bytes.fromhex(data[7:end].decode("ascii"))
    except (ValueError, UnicodeDecodeError):
        return None
    return oid, data[t + 6:tend if tend >= 0 else len(data)].decode("ascii", "replace")


class Context:
    """The AtomContext of one run: the repository, colors, cached lookups."""

    def __init__(self, repo: Repo, use_color: bool) -> None:
        self.repo = repo
        self.use_color = use_color
        self._objects: Objects | None = None
        self._short: dict[bytes, bytes] = {}
        self._cache: dict[bytes, GitObject] = {}
        self.known: dict[bytes, str] = {}
        self.strict = config_bool(repo.config, "core.warnambiguousrefs", True)
        # get_oid_basic's warning of an ambiguous name, read from the config once a run
        self.ambiguous = ambiguity_warning(repo.config)

    def object(self, oid: bytes, refname: bytes) -> GitObject:
        """get_object with contentp: read and parse (parse_object_buffer)."""
        got = self._cache.get(oid)
        if got is None:
            try:
                typ, data = self.repo.objects.read(oid)
            except ReftableError:
                raise missing(oid, refname) from None
            got = GitObject(oid, typ, data, len(data))
            if not self.parse(got):
                raise Die(f"parse_object_buffer failed on {oid.hex()} for "
                          f"{refname.decode('utf-8', 'surrogateescape')}")
            if len(self._cache) > 256:
                self._cache.clear()
            self._cache[oid] = got
        return got

    def content_read(self, obj: GitObject) -> bool:
        """Was obj read whole (object()), not by its header (info())?"""
        return self._cache.get(obj.oid) is obj

    def lookup(self, oid: bytes, typ: str) -> bool:
        """object.c object_as_type on git's in-process object table: an id first met
        as one type stays that type ("error: object X is a T, not a U" otherwise)."""
        had = self.known.get(oid)
        if had is None:
            self.known[oid] = typ
            return True
        if had != typ:
            write_err("error: ", f"object {oid.hex()} is a {had}, not a {typ}")
            return False
        return True

    def parse(self, obj: GitObject) -> bool:
        """parse_object_buffer's lookups: the object itself as its type, and a tag's
        target as the type the tag names ("bad tag pointer to X in T")."""
        if not self.lookup(obj.oid, obj.type):
            return False
        if obj.type == "tag":
            target = tag_target(obj.data)
            if target is not None:
                toid, ttype = target
                if not self.lookup(toid, ttype):
                    write_err("error: ", f"bad tag pointer to {toid.hex()} in {obj.oid.hex()}")
                    return False
        return True

    def commit(self, oid: bytes, quiet: bool = True) -> bytes | None:
        """lookup_commit_reference_gently over the object table: the commit oid peels
        to, or None (a broken tag's errors written as git writes them; not quiet,
        "object X is a T, not a commit" too)."""
        seen = 0
        while seen < 64:
            seen += 1
            try:
                typ, data = self.repo.objects.read(oid)
            except ReftableError:
                return None
            if not self.parse(GitObject(oid, typ, data, len(data))):
                return None
            if typ == "commit":
                return oid
            if typ != "tag":
                if not quiet:
                    write_err("error: ", f"object {oid.hex()} is a {typ}, not a commit")
                return None
            target = tag_target(data)
            if target is None:
                return None
            oid = target[0]
        return None

    def info(self, oid: bytes, refname: bytes) -> GitObject:
        got = self._cache.get(oid)
        if got is not None:
            return got
        try:
            typ, size = self.repo.objects.read_header(oid)
        except ReftableError:
            raise missing(oid, refname) from None
        return GitObject(oid, typ, b"", size)

    def abbrev(self, oid: bytes, length: int) -> bytes:
        if self._objects is None:
            self._objects = Objects(self.repo)
        return self._objects.abbrev(oid, length).encode()

    def shorten(self, refname: bytes) -> bytes:
        s = self._short.get(refname)
        if s is None:
            s = self._short[refname] = shorten(self.repo.refs, refname, self.strict)
        return s


# -- the format string -----------------------------------------------------------

def _hex2chr(s: bytes, i: int) -> int:
    """git's hex2chr on s[i:i+2], or -1."""
    pair = s[i:i + 2]
    if len(pair) != 2 or any(c not in b"0123456789abcdefABCDEF" for c in pair):
        return -1
    return int(pair, 16)


def literal(s: bytes) -> bytes:
    """git's append_literal: "%%" is "%", "%xx" a byte, any other "%" itself."""
    if b"%" not in s:
        return s
    out = bytearray()
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == 37:
            if s[i + 1:i + 2] == b"%":
                i += 1
            else:
                ch = _hex2chr(s, i + 1)
                if ch >= 0:
                    out.append(ch)
                    i += 3
                    continue
        out.append(s[i])
        i += 1
    return bytes(out)


def find_next(s: bytes, i: int) -> int:
    """git's find_next: the index of the next "%(", skipping "%%", or -1."""
    n = len(s)
    while i < n:
        if s[i] == 37:
            if s[i + 1:i + 2] == b"(":
                return i
            if s[i + 1:i + 2] == b"%":
                i += 1
        i += 1
    return -1


class UsedAtom:
    """One used_atom[]: its text, whether "*", its name, its parsed Atom, and how
    populate fetches it (PEELED: from the peeled object; SUFFIX: "^{}" added)."""
    __slots__ = ("atom", "deref", "name", "numeric", "source", "text")

    def __init__(self, text: str, deref: bool, name: str, atom: Atom) -> None:
        self.text = text
        self.deref = deref
        self.name = name
        self.atom = atom
        self.source: int = atom.source
        self.numeric = False


def _utf8_width(b: bytes) -> int:
    """utf8.c utf8_strnwidth: the display width (an invalid sequence: its bytes), each
    character's git_wcwidth: a control character (a newline too) or NUL 0; git's
    zero_width table (categories Mn, Me, Cf and U+1160..U+11FF, not U+00AD) 0; east
    Asian wide or fullwidth 2; else 1."""
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError:
        return len(b)
    w = 0
    for ch in s:
        o = ord(ch)
        if o < 0x20 or 0x7F <= o < 0xA0 or 0x1160 <= o <= 0x11FF:
            continue
        if unicodedata.category(ch) in _ZERO_WIDTH and o != 0xAD:
            continue
        w += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
    return w


_ZERO_WIDTH = ("Mn", "Me", "Cf")


def utf8_align(position: int, width: int, s: bytes) -> bytes:
    """utf8.c strbuf_utf8_align."""
    dl = _utf8_width(s)
    if dl >= width:
        return s
    pad = width - dl
    if position == ALIGN_LEFT:
        return s + b" " * pad
    if position == ALIGN_MIDDLE:
        left = pad // 2
        return b" " * left + s + b" " * (pad - left)
    return b" " * pad + s


class _Frame:
    __slots__ = ("at_end", "data", "out")

    def __init__(self, at_end: int, data: Any) -> None:
        self.out = bytearray()
        self.at_end = at_end           # 0 none, K_ALIGN, K_IF
        self.data = data


class _IfState:
    __slots__ = ("cmp", "else_seen", "satisfied", "text", "then_seen")

    def __init__(self, cmp: int, text: bytes) -> None:
        self.cmp = cmp
        self.text = text
        self.then_seen = False
        self.else_seen = False
        self.satisfied = False


class RefFormat:
    """A parsed format and the used-atom table it shares with the sort keys."""

    def __init__(self, ctx: Context, fmt: bytes, quote_style: int = QUOTE_NONE,
                 usage: str = "") -> None:
        self.ctx = ctx
        self.quote_style = quote_style
        self.used: list[UsedAtom] = []
        self._index: dict[str, int] = {}
        self.parts: list[bytes | int] = []
        self.structural = False
        reset_eol = False
        i = 0
        n = len(fmt)
        while i < n:
            sp = find_next(fmt, i)
            if sp < 0:
                break
            ep = fmt.find(b")", sp)
            if ep < 0:
                shown = fmt[sp:].decode("utf-8", "surrogateescape")
                raise Die(f"error: malformed format string {shown}\n{usage}", 129, "usage")
            if sp > i:
                self.parts.append(literal(fmt[i:sp]))
            text = fmt[sp + 2:ep].decode("utf-8", "surrogateescape")
            at = self.add_atom(text)
            atom = self.used[at].atom
            if quote_style & _NO_RAW_QUOTE and isinstance(atom, RawAtom) and not atom.size:
                raise Die(f"--format={text} cannot be used with --python, --shell, --tcl")
            self.parts.append(at)
            if text.startswith("color:"):
                reset_eol = text[6:] != "reset"
            i = ep + 1
        if i < n:
            self.parts.append(literal(fmt[i:]))
        self.reset_eol = reset_eol and ctx.use_color
        self.structural = any(isinstance(self.used[p].atom, Structural)
                              for p in self.parts if isinstance(p, int))
        self.format_atoms = len(self.used)      # the format's; the sort keys' come after
        self._plan()

    def add_atom(self, text: str) -> int:
        """parse_ref_filter_atom: the index of text in the used-atom table."""
        got = self._index.get(text)
        if got is not None:
            return got
        deref = text.startswith("*")
        body = text[1:] if deref else text
        if not body:
            raise Die(f"malformed field name: {text}")
        name, colon, arg = body.partition(":")
        if name not in VALID_ATOMS:
            raise Die(f"unknown field name: {text}")
        parser = atom_parser(name)
        if parser is None:
            raise Die(f"reftable-lab for-each-ref does not support %({name})")
        atom = parser(self.ctx, name, arg if colon and arg else None)
        u = UsedAtom(text, deref, name, atom)
        self._index[text] = len(self.used)
        self.used.append(u)
        self._plan()
        return len(self.used) - 1

    def _plan(self) -> None:
        """What populate reads for the atoms used so far."""
        used = self.used
        self.need_tagged = any(u.deref for u in used)
        self.need_obj = self.need_tagged or any(
            not u.deref and u.source == SOURCE_OBJ for u in used)
        self.need_info = any(not u.deref and u.source == SOURCE_OTHER for u in used)
        self.plain = not self.need_tagged and not self.need_obj and not self.need_info
        # the content (SOURCE_OBJ) serves the atoms that want only the header too
        # (SOURCE_OTHER): not the greater constant, the one that reads more
        peeled = {u.source for u in used if u.deref}
        self.peeled_source = next((s for s in (SOURCE_OBJ, SOURCE_OTHER) if s in peeled),
                                  SOURCE_NONE)

    def populate(self, ref: RefItem) -> list[AtomValue]:
        """populate_value: every used atom's value for ref."""
        ctx = self.ctx
        if self.plain:
            return [u.atom.value(ctx, ref, None) for u in self.used]
        obj: GitObject | None = None
        if self.need_obj:
            obj = ctx.object(ref.oid, ref.name)
        elif self.need_info:
            obj = ctx.info(ref.oid, ref.name)
        peeled: GitObject | None = None
        pref: RefItem | None = None
        if self.need_tagged and obj is not None and obj.type == "tag":
            try:
                poid = ctx.repo.objects.peel(ref.oid)
            except ReftableError:
                raise Die("bad tag") from None
            pref = RefItem(ref.name, poid, ref.target, ref.kind, ref.flag)
            if self.peeled_source == SOURCE_OBJ:
                peeled = ctx.object(poid, ref.name)
            elif self.peeled_source == SOURCE_OTHER:
                peeled = ctx.info(poid, ref.name)
        out: list[AtomValue] = []
        for u in self.used:
            a = u.atom
            if not u.deref:
                out.append(a.value(ctx, ref, obj if a.source != SOURCE_NONE else None))
            elif u.name in _DEREF_SUFFIX:
                v = a.value(ctx, ref, None)
                out.append(AtomValue(v.text + b"^{}"))
            elif VALID_ATOMS[u.name] == SOURCE_NONE or u.name in _REF_SIDE:
                out.append(a.value(ctx, ref, obj if a.source != SOURCE_NONE else None))
            elif pref is None:
                out.append(EMPTY)
            else:
                out.append(a.value(ctx, pref, peeled if a.source != SOURCE_NONE else None))
        return out

    def prepare(self, refs: list[RefItem]) -> None:
        for u in self.used:
            prep = getattr(u.atom, "prepare", None)
            if prep is not None:
                prep(self.ctx, refs)

    def render(self, values: list[AtomValue]) -> bytes:
        """format_ref_array_item for one ref's values."""
        style = self.quote_style
        if not self.structural:
            if style == QUOTE_NONE:
                out = [p if isinstance(p, bytes) else values[p].text for p in self.parts]
            else:
                out = [p if isinstance(p, bytes) else quote(style, values[p].text)
                       for p in self.parts]
            if self.reset_eol:
                out.append(quote(style, COLOR_RESET))
            return b"".join(out)
        return self._render_stack(values)

    def _render_stack(self, values: list[AtomValue]) -> bytes:
        style = self.quote_style
        stack = [_Frame(0, None)]
        used = self.used
        for p in self.parts:
            if isinstance(p, bytes):
                stack[-1].out += p
                continue
            a = used[p].atom
            if not isinstance(a, Structural):
                text = values[p].text
                stack[-1].out += quote(style, text) if len(stack) == 1 else text
                continue
            kind = a.kind
            if kind == K_ALIGN:
                stack.append(_Frame(K_ALIGN, a))
            elif kind == K_IF:
                stack.append(_Frame(K_IF, _IfState(a.cmp, a.text)))
            elif kind == K_THEN:
                cur = stack[-1]
                st = cur.data if cur.at_end == K_IF else None
                if st is None:
                    raise Die("format: %(then) atom used without a %(if) atom")
                if st.then_seen:
                    raise Die("format: %(then) atom used more than once")
                if st.else_seen:
                    raise Die("format: %(then) atom used after %(else)")
                st.then_seen = True
                got = bytes(cur.out)
                if st.cmp == CMP_EQUAL:
                    st.satisfied = got == st.text
                elif st.cmp == CMP_UNEQUAL:
                    st.satisfied = got != st.text
                else:
                    st.satisfied = bool(got.strip(b" \t\n\v\f\r"))
                cur.out = bytearray()
            elif kind == K_ELSE:
                prev = stack[-1]
                st = prev.data if prev.at_end == K_IF else None
                if st is None:
                    raise Die("format: %(else) atom used without a %(if) atom")
                if not st.then_seen:
                    raise Die("format: %(else) atom used without a %(then) atom")
                if st.else_seen:
                    raise Die("format: %(else) atom used more than once")
                st.else_seen = True
                stack.append(_Frame(K_IF, st))
            else:                                   # %(end)
                cur = stack[-1]
                if cur.at_end == 0:
                    raise Die("format: %(end) atom used without corresponding atom")
                if cur.at_end == K_ALIGN:
                    al = cur.data
                    cur.out = bytearray(utf8_align(al.position, al.width, bytes(cur.out)))
                else:
                    st = cur.data
                    if not st.then_seen:
                        raise Die("format: %(if) atom used without a %(then) atom")
                    if st.else_seen:
                        stack.pop()
                        prev = stack[-1]
                        if not st.satisfied:
                            prev.out = cur.out
                    elif not st.satisfied:
                        cur.out = bytearray()
                cur = stack[-1]
                if len(stack) == 2:
                    cur.out = bytearray(quote(style, bytes(cur.out)))
                stack.pop()
                stack[-1].out += cur.out
        if self.reset_eol:
            stack[-1].out += quote(style, COLOR_RESET) if len(stack) == 1 else COLOR_RESET
        if len(stack) > 1:
            raise Die("format: %(end) atom missing")
        return bytes(stack[0].out)
