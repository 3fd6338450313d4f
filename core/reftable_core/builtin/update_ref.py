"""`reftable-lab update-ref`, behaving like git's builtin/update-ref.c.

Contract: update_refs_stdin(repo, stream, out) is `--stdin` on an open Repo (the
lab's update_ref_create workload runs it). update_ref(argv, flags, out) runs `git update-ref argv` on a reftable
or files repository (reftable_core.repo): `--stdin [-z]` reads update, create,
delete, verify, symref-update, symref-create, symref-delete, symref-verify
(git 2.46+: "ref"/"oid" old values, --no-deref required where git requires
it), option, start, prepare, abort and commit commands from stdin
(one transaction unless start/prepare/commit say otherwise); without --stdin
`[-m MSG] [--no-deref] (-d <ref> [<old>] | <ref> <new> [<old>])`;
--create-reflog forces a reflog for update/create (as git's flag). Commands
are read and run as they arrive, each report flushed at once (a caller can wait
for "start: ok" before sending more). Same stdout bytes (the "<command>: ok" reports) to out, stderr messages and exit statuses as
git (die = "fatal: ..." and 128, usage 129 with git's usage text). <new-oid> and
<old-oid> are any revision reftable_core.odb.revision resolves (hex ids, ref
names, abbreviated ids, ~N ^N ^{} ^{commit} ^{tree}); a full hex id is read
as a ref name too, every dwim candidate of it (git's get_oid_basic ->
repo_dwim_ref), when core.warnAmbiguousRefs is on (the default), with git's
"warning: refname '<hex>' is ambiguous." and its advice (advice.objectNameWarning,
GIT_ADVICE) on stderr when one exists. Quoted arguments follow
git's C-style quoting (quote.unquote_c).
"""
from __future__ import annotations

import argparse
import io
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, cast

from reftable_core.errors import ReftableError
from reftable_core.flags import Flags
from reftable_core.odb.revision import resolve_revision
from reftable_core.refs.api import RefUpdate
from reftable_core.refs.packed_format import PackedRefsError
from reftable_core.refs.refname import (
    REFNAME_ALLOW_ONELEVEL,
    check_refname_format,
    refname_is_safe,
)
from reftable_core.refs.transaction import HookAbortedError
from reftable_core.repo import Repo

from .gitlike import (Die, add_git_command, ambiguity_warning, git_message, git_paths,
                      open_git_repo, ref_resolver, write_err)
from .parseopt import OptSpec, parse_git_options, split_lab_options
from .quote import cstr, unquote_c

_READ_CHUNK = 1 << 16
# where an unquoted argument ends: white space (bytes.isspace's set) or a NUL
_ARG_END = re.compile(rb"[ \t\n\r\x0b\x0c\x00]")


def register(sub: argparse._SubParsersAction, add_flag_options: Callable) -> None:
    add_git_command(sub, *GIT_COMMAND)


UPDATE_REF_SPECS = [
    OptSpec(None, "m", "string", "msg"),
    OptSpec(None, "d", "bool", "delete"),
    OptSpec("no-deref", None, "bool", "no_deref", negatable=False),
    OptSpec(None, "z", "bool", "z"),
    OptSpec("stdin", None, "bool", "stdin"),
    OptSpec("create-reflog", None, "bool", "create_reflog"),
]

USAGE_UPDATE_REF = (
    "usage: git update-ref [<options>] -d <refname> [<old-oid>]\n"
    "   or: git update-ref [<options>]    <refname> <new-oid> [<old-oid>]\n"
    "   or: git update-ref [<options>] --stdin [-z]\n\n"
    "    -m <reason>           reason of the update\n"
    "    -d                    delete the reference\n"
    "    --no-deref            update <refname> not the one it points to\n"
    "    --deref               opposite of --no-deref\n"
    "    -z                    stdin has NUL-terminated arguments\n"
    "    --[no-]stdin          read updates from stdin\n"
    "    --[no-]create-reflog  create a reflog\n\n")

# name -> (number of arguments, state it moves to)
OPEN, STARTED, PREPARED, CLOSED = 0, 1, 2, 3
COMMANDS: list[tuple[str, int, int]] = [
    ("update", 3, OPEN), ("create", 2, OPEN), ("delete", 2, OPEN), ("verify", 2, OPEN),
    ("symref-update", 4, OPEN), ("symref-create", 2, OPEN), ("symref-delete", 2, OPEN),
    ("symref-verify", 2, OPEN), ("option", 1, OPEN), ("start", 0, STARTED),
    ("prepare", 0, PREPARED), ("abort", 0, CLOSED), ("commit", 0, CLOSED),
]




def _copy(buf: bytearray, start: int, end: int) -> bytes:
    """buf[start:end] as bytes in one copy (a bytearray slice would make two)."""
    with memoryview(buf) as view:
        return bytes(view[start:end])

class _UpdateRefStdin:
    def __init__(self, repo: Repo, msg: bytes, no_deref: bool, z: bool, out: Any,
                 create_reflog: bool = False) -> None:
        self.repo = repo
        self.store = repo.refs
        self.resolve_ref = ref_resolver(self.store)
        self.ambiguous = ambiguity_warning(repo.config)
        self.msg = msg
        self.default_no_deref = no_deref
        self.no_deref = no_deref
        self.term = b"\0" if z else b"\n"
        self.z = z
        self.out = out
        self.zero = bytes(repo.hash_size)
        self.create_reflog = create_reflog
        self.tx = self.store.transaction()

    # -- argument parsing --------------------------------------------------------
    def _parse_arg(self, buf: bytes, pos: int) -> tuple[bytes, int]:
        if pos < len(buf) and buf[pos] == 34:
            r = unquote_c(buf, pos)
            if r is None:
                raise Die(f"badly quoted argument: {cstr(buf[pos:])}")
            val, end = r
            if end < len(buf) and not buf[end:end + 1].isspace():
                raise Die("unexpected character after quoted argument: "
                          f"{cstr(buf[pos:])}")
            return val, end
        m = _ARG_END.search(buf, pos)       # one C-level scan, not a loop per byte
        end = len(buf) if m is None else m.start()
        return buf[pos:end], end

    def _parse_refname(self, buf: bytes, pos: int) -> tuple[bytes | None, int]:
        if self.z:
            end = buf.find(b"\0", pos)
            end = len(buf) if end < 0 else end
            ref = buf[pos:end]
            pos = end
        else:
            ref, pos = self._parse_arg(buf, pos)
        if not ref:
            return None, pos
        if not check_refname_format(ref, REFNAME_ALLOW_ONELEVEL):
            raise Die(f"invalid ref format: {ref.decode('utf-8', 'replace')}")
        return ref, pos

    def _next_delim(self, buf: bytes, pos: int) -> int | None:
        """The start of the next argument (git's parse_next_refname / parse_next_arg
        skipping SP, or the NUL with -z), or None when there is none."""
        c = buf[pos] if pos < len(buf) else 0      # git's strbuf ends in a NUL
        if not self.z:
            if c == 0 or c == 10:
                return None
            if c != 32:
                raise Die(f"expected SP but got: {cstr(buf[pos:])}")
        elif c:
            return None
        return pos + 1

    def _parse_next_refname(self, buf: bytes, pos: int) -> tuple[bytes | None, int]:
        start = self._next_delim(buf, pos)
        if start is None:
            return None, pos
        return self._parse_refname(buf, start)

    def _parse_next_arg(self, buf: bytes, pos: int) -> tuple[bytes | None, int]:
        start = self._next_delim(buf, pos)
        if start is None:
            return None, pos
        if self.z:
            end = buf.find(b"\0", start)
            end = len(buf) if end < 0 else end
            arg = buf[start:end]
        else:
            arg, end = self._parse_arg(buf, start)
        return arg or None, end

    def _get_oid(self, text: bytes) -> bytes | None:
        """git's repo_get_oid (see reftable_core.odb.revision): a full hex id is
        checked against the refs of its name, as git's get_oid_basic does."""
        return resolve_revision(text, self.resolve_ref, lambda: self.repo.objects,
                                self.repo.hash_size, self.ambiguous)

    def _parse_next_oid(self, buf: bytes, pos: int, end: int, command: str, refname: bytes,
                        is_old: bool, allow_empty: bool) -> tuple[bytes | None, int, bool]:
        """(oid, pos, present) following git's parse_next_oid."""
        rn = refname.decode("utf-8", "replace")
        what = "<old-oid>" if is_old else "<new-oid>"
        if pos == end:
            raise Die(f"{command} {rn}: unexpected end of input when reading {what}")
        if not self.z:
            if buf[pos:pos + 1] in (b"", b"\n"):
                return None, pos, False
            if buf[pos] != 32:
                raise Die(f"{command} {rn}: expected SP but got: "
                          f"{cstr(buf[pos:])}")
            arg, pos = self._parse_arg(buf, pos + 1)
            if arg:
                oid = self._get_oid(arg)
                if oid is None:
                    raise Die(f"{command} {rn}: invalid {what}: {arg.decode('utf-8', 'replace')}")
                return oid, pos, True
            return self.zero, pos, True
        if buf[pos] != 0:
            raise Die(f"{command} {rn}: expected NUL but got: "
                      f"{cstr(buf[pos:])}")
        pos += 1
        if pos == end:
            raise Die(f"{command} {rn}: unexpected end of input when reading {what}")
        e = buf.find(b"\0", pos)
        e = len(buf) if e < 0 else e
        arg = buf[pos:e]
        pos = e
        if arg:
            oid = self._get_oid(arg)
            if oid is None:
                raise Die(f"{command} {rn}: invalid {what}: {arg.decode('utf-8', 'replace')}")
            return oid, pos, True
        if allow_empty:
            write_err("warning: ", f"{command} {rn}: missing <new-oid>, treating as zero")
            return self.zero, pos, True
        return None, pos, False

    def _queue(self, refname: bytes, new: bytes | None, old: bytes | None, kind: str,
               new_target: bytes | None = None, old_target: bytes | None = None) -> None:
        """git's ref_transaction_update with update_flags (and create_reflog_flag
        for the commands that pass it); resets the option no-deref."""
        fl = {kind}
        if self.no_deref:
            fl.add("no-deref")
        if self.create_reflog and kind in ("update", "create"):
            fl.add("create-reflog")
        self.tx.queue(RefUpdate(refname, new_value=new, old_value=old, message=self.msg,
                                flags=fl, new_target=new_target, old_target=old_target))
        self.no_deref = self.default_no_deref

    def _extra(self, buf: bytes, pos: int, what: str) -> None:
        if (buf[pos:pos + 1] or b"\0") != self.term:       # git's strbuf ends in a NUL
            raise Die(f"{what}: extra input: {cstr(buf[pos:])}")

    def _ref(self, buf: bytes, pos: int, command: str) -> tuple[bytes, str, int]:
        ref, pos = self._parse_refname(buf, pos)
        if ref is None:
            raise Die(f"{command}: missing <ref>")
        return ref, ref.decode("utf-8", "replace"), pos

    def _need_no_deref(self, command: str) -> None:
        if not self.no_deref:
            raise Die(f"{command}: cannot operate with deref mode")

    # -- commands ---------------------------------------------------------------
    def cmd_update(self, buf: bytes, pos: int, end: int) -> None:
        ref, rn, pos = self._ref(buf, pos, "update")
        new, pos, present = self._parse_next_oid(buf, pos, end, "update", ref, False, True)
        if not present:
            raise Die(f"update {rn}: missing <new-oid>")
        old, pos, have_old = self._parse_next_oid(buf, pos, end, "update", ref, True, False)
        self._extra(buf, pos, f"update {rn}")
        self._queue(ref, new, old if have_old else None, "update")

    def cmd_create(self, buf: bytes, pos: int, end: int) -> None:
        ref, rn, pos = self._ref(buf, pos, "create")
        new, pos, present = self._parse_next_oid(buf, pos, end, "create", ref, False, False)
        if not present:
            raise Die(f"create {rn}: missing <new-oid>")
        if new == self.zero:
            raise Die(f"create {rn}: zero <new-oid>")
        self._extra(buf, pos, f"create {rn}")
        self._queue(ref, new, self.zero, "create")

    def cmd_delete(self, buf: bytes, pos: int, end: int) -> None:
        ref, rn, pos = self._ref(buf, pos, "delete")
        old, pos, have_old = self._parse_next_oid(buf, pos, end, "delete", ref, True, False)
        if have_old and old == self.zero:
            raise Die(f"delete {rn}: zero <old-oid>")
        self._extra(buf, pos, f"delete {rn}")
        self._queue(ref, self.zero, old if have_old else None, "delete")

    def cmd_verify(self, buf: bytes, pos: int, end: int) -> None:
        ref, rn, pos = self._ref(buf, pos, "verify")
        old, pos, have_old = self._parse_next_oid(buf, pos, end, "verify", ref, True, False)
        if not have_old:
            old = self.zero
        self._extra(buf, pos, f"verify {rn}")
        self._queue(ref, None, old, "verify")

    def cmd_symref_update(self, buf: bytes, pos: int, end: int) -> None:
        ref, rn, pos = self._ref(buf, pos, "symref-update")
        new_target, pos = self._parse_next_refname(buf, pos)
        if new_target is None:
            raise Die(f"symref-update {rn}: missing <new-target>")
        old_oid = old_target = None
        old_arg, pos = self._parse_next_arg(buf, pos)
        if old_arg is not None:
            old_val, pos = self._parse_next_arg(buf, pos)
            if old_val is None:
                raise Die(f"symref-update {rn}: expected old value")
            text = old_val.decode("utf-8", "replace")
            if old_arg == b"oid":
                old_oid = self._get_oid(old_val)
                if old_oid is None:
                    raise Die(f"symref-update {rn}: invalid oid: {text}")
            elif old_arg == b"ref":
                if not check_refname_format(old_val, REFNAME_ALLOW_ONELEVEL):
                    raise Die(f"symref-update {rn}: invalid ref: {text}")
                old_target = old_val
            else:
                raise Die(f"symref-update {rn}: invalid arg "
                          f"'{old_arg.decode('utf-8', 'replace')}' for old value")
        self._extra(buf, pos, f"symref-update {rn}")
        self._queue(ref, None, old_oid, "update", new_target=new_target, old_target=old_target)

    def cmd_symref_create(self, buf: bytes, pos: int, end: int) -> None:
        ref, rn, pos = self._ref(buf, pos, "symref-create")
        new_target, pos = self._parse_next_refname(buf, pos)
        if new_target is None:
            raise Die(f"symref-create {rn}: missing <new-target>")
        self._extra(buf, pos, f"symref-create {rn}")
        self._queue(ref, None, self.zero, "create", new_target=new_target)

    def cmd_symref_delete(self, buf: bytes, pos: int, end: int) -> None:
        self._need_no_deref("symref-delete")
        ref, rn, pos = self._ref(buf, pos, "symref-delete")
        old_target, pos = self._parse_next_refname(buf, pos)
        self._extra(buf, pos, f"symref-delete {rn}")
        self._queue(ref, self.zero, None, "delete", old_target=old_target)

    def cmd_symref_verify(self, buf: bytes, pos: int, end: int) -> None:
        self._need_no_deref("symref-verify")
        ref, rn, pos = self._ref(buf, pos, "symref-verify")
        old_target, pos = self._parse_next_refname(buf, pos)
        self._extra(buf, pos, f"symref-verify {rn}")
        self._queue(ref, None, None if old_target else self.zero, "verify",
                    old_target=old_target)

    def cmd_option(self, buf: bytes, pos: int, end: int) -> None:
        if buf[pos:pos + 8] == b"no-deref" and buf[pos + 8:pos + 9] == self.term:
            self.no_deref = True
        else:
            raise Die(f"option unknown: {cstr(buf[pos:])}")

    def _report(self, command: str) -> None:
        self.out.write(f"{command}: ok\n".encode())
        self.out.flush()

    def cmd_start(self, buf: bytes, pos: int, end: int) -> None:
        self._extra(buf, pos, "start")
        self._report("start")

    def _finish(self, buf: bytes, pos: int, command: str) -> None:
        """prepare or commit: the transaction's step of that name, git's "<command>: ok"
        after it; a hook's refusal dies in the hook's words, any other error as
        "<command>: <error>"."""
        self._extra(buf, pos, command)
        try:
            if command == "commit":
                self._commit()
            else:
                self.tx.prepare()
        except HookAbortedError as refused:
            raise Die(str(refused)) from None
        except ReftableError as e:
            raise Die(f"{command}: {git_message(e)}")
        self._report(command)

    def _commit(self) -> None:
        """The transaction committed, git's warnings printed as they came (before
        the error that ends a failed commit)."""
        try:
            self.tx.commit()
        finally:
            for warning in self.tx.warnings:
                write_err("warning: ", git_paths(warning))

    def cmd_prepare(self, buf: bytes, pos: int, end: int) -> None:
        self._finish(buf, pos, "prepare")

    def cmd_abort(self, buf: bytes, pos: int, end: int) -> None:
        self._extra(buf, pos, "abort")
        self.tx.abort()
        self._report("abort")

    def cmd_commit(self, buf: bytes, pos: int, end: int) -> None:
        self._finish(buf, pos, "commit")

    # -- the loop ---------------------------------------------------------------
    def _records(self, stream: io.BufferedIOBase) -> Iterator[bytes]:
        """Each terminated record as soon as it has arrived (git's strbuf_getwholeline
        on stdin): the caller answers start/prepare/commit while stdin stays open."""
        term = self.term
        buf = bytearray()
        pos = 0
        scan = 0                    # buf[pos:scan] holds no terminator: never searched twice
        while True:
            e = buf.find(term, scan)
            if e >= 0:
                yield _copy(buf, pos, e + 1)
                pos = scan = e + 1
                continue
            chunk = stream.read1(_READ_CHUNK)
            if not chunk:
                if pos < len(buf):
                    yield _copy(buf, pos, len(buf))
                return
            del buf[:pos]           # a long record grows in place (amortized), not copied
            scan = len(buf)         # per chunk: linear, as git's strbuf
            pos = 0
            buf += chunk

    def run(self, stream: io.BufferedIOBase) -> int:
        state = OPEN
        recs = self._records(stream)
        for line in recs:
            if line[:1] == self.term:
                raise Die("empty command in input")
            if line[:1].isspace():
                raise Die(f"whitespace before command: {cstr(line)}")
            cmd = None
            for name, nargs, cstate in COMMANDS:
                nb = name.encode()
                if not line.startswith(nb):
                    continue
                c = b" " if nargs else self.term
                if line[len(nb):len(nb) + 1] != c:
                    continue
                cmd = (name, nargs, cstate)
                break
            if cmd is None:
                raise Die(f"unknown command: {cstr(line)}")
            name, nargs, cstate = cmd
            if self.z:
                for _ in range(1, nargs):
                    more = next(recs, None)
                    if more is None:
                        break
                    line += more
            if state in (OPEN, STARTED):
                if state == STARTED and cstate == STARTED:
                    raise Die("cannot restart ongoing transaction")
                state = max(cstate, state)
            elif state == PREPARED:
                if cstate != CLOSED:
                    raise Die("prepared transactions can only be closed")
                state = cstate
            else:
                if cstate != STARTED:
                    raise Die("transaction is closed")
                state = cstate
                self.tx = self.store.transaction()
            start = len(name) + (1 if nargs else 0)
            getattr(self, "cmd_" + name.replace("-", "_"))(line, start, len(line))
        if state == OPEN:
            try:
                self._commit()
            except ReftableError as e:
                raise Die(git_message(e))
        elif state in (STARTED, PREPARED):
            self.tx.abort()
        return 0


def _update_ref_args(o: dict[str, Any], rest: list[str], gitdir: str | None, flags: Flags,
                     out: Any) -> int:
    """`update-ref [-m MSG] [--no-deref] (-d <ref> [<old>] | <ref> <new> [<old>])`."""
    if o["z"]:
        raise Die(USAGE_UPDATE_REF, 129, "usage")
    if (o["delete"] and not 1 <= len(rest) <= 2) or (not o["delete"] and not 2 <= len(rest) <= 3):
        raise Die(USAGE_UPDATE_REF, 129, "usage")
    repo = open_git_repo(gitdir, flags)
    msg = (o["msg"] or "").encode("utf-8", "surrogateescape")
    runner = _UpdateRefStdin(repo, msg, o["no_deref"], False, out, o["create_reflog"])
    try:
        refname = rest[0].encode("utf-8", "surrogateescape")
        new = None
        if not o["delete"]:
            new = runner._get_oid(rest[1].encode("utf-8", "surrogateescape"))
            if new is None:
                raise Die(f"{rest[1]}: not a valid SHA1")
        oldval = rest[1] if o["delete"] and len(rest) == 2 else \
            (rest[2] if not o["delete"] and len(rest) == 3 else None)
        old = None
        if oldval is not None:
            old = runner.zero if oldval == "" else runner._get_oid(oldval.encode())
            if old is None:
                raise Die(f"{oldval}: not a valid old SHA1")
        if o["delete"]:
            if old == runner.zero:
                old = None                      # NULL old id means "don't care" here
            new = runner.zero
        ok_name = (check_refname_format(refname, REFNAME_ALLOW_ONELEVEL)
                   if new != runner.zero else refname_is_safe(refname))
        try:
            if not ok_name:
                raise ReftableError(f"refusing to update ref with bad name '{rest[0]}'")
            runner._queue(refname, new, old, "delete" if o["delete"] else "update")
            runner._commit()
        except (HookAbortedError, PackedRefsError) as dying:  # git dies inside the transaction
            raise Die(git_message(dying)) from None           # (packed-refs: as it reads it)
        except ReftableError as e:
            if o["delete"]:
                write_err("error: ", git_message(e))
                return 1
            raise Die(f"update_ref failed for ref '{rest[0]}': {git_message(e)}") from None
        return 0
    finally:
        runner.tx.release()
        repo.close()


def update_refs_stdin(repo: Repo, stream: io.BufferedIOBase, out: Any, z: bool = False) -> int:
    """`git update-ref --stdin [-z]` on an open repository: the commands of stream, the
    reports to out (Die as update_ref dies); the caller closes repo."""
    runner = _UpdateRefStdin(repo, b"", False, z, out)
    try:
        return runner.run(stream)
    finally:
        runner.tx.release()


def update_ref(argv: list[str], flags: Flags, out: Any) -> int:
    argv, gitdir, flags = split_lab_options(argv, flags)
    o: dict[str, Any] = {"msg": None, "delete": False, "no_deref": False, "z": False,
                         "stdin": False, "create_reflog": False}

    def handle(spec: OptSpec, val: str | None, negated: bool) -> None:
        if spec.kind == "bool":
            o[spec.dest] = not negated
        else:
            o[spec.dest] = None if negated else val

    rest = parse_git_options(argv, UPDATE_REF_SPECS, handle, USAGE_UPDATE_REF, out)
    if o["msg"] is not None and not o["msg"]:
        raise Die("Refusing to perform update with empty message.")
    if not o["stdin"]:
        return _update_ref_args(o, rest, gitdir, flags, out)
    if o["delete"] or rest:
        raise Die(USAGE_UPDATE_REF, 129, "usage")
    repo = open_git_repo(gitdir, flags)
    msg = (o["msg"] or "").encode("utf-8", "surrogateescape")
    runner = _UpdateRefStdin(repo, msg, o["no_deref"], o["z"], out, o["create_reflog"])
    try:
        return runner.run(cast(io.BufferedIOBase, sys.stdin.buffer))  # a BufferedReader
    finally:
        runner.tx.release()        # like git's atexit lock cleanup when dying
        repo.close()


# the command, as lab.cli runs it (without argparse) and register() registers it
GIT_COMMAND = ("update-ref", "update references like git update-ref --stdin", update_ref)
