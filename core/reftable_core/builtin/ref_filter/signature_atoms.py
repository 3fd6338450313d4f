"""%(signature...) of a commit (ref-filter.c grab_signature).

Contract: SIGNATURE_ATOMS maps "signature" to its AtomParser (atom.py).
  signature [:signer | :grade | :key | :fingerprint | :primarykeyfingerprint |
      :trustlevel]   of a commit, from gpg_interface.check_commit_signature (gpg run
      as git runs it; the check made once per object for all the atoms of a format):
      bare = the program's stderr; grade = G (U when the trust level is undefined or
      never), B, E, N, X, Y, R; key, signer, fingerprint, primary key fingerprint as
      parsed; trustlevel = git's name of the level. An unsigned commit gives git's "no
      signature" answer (grade N, trust level "undefined"). Other objects give "".
"""
from __future__ import annotations

from typing import Any

from ..gpg_interface import (
    TRUST_LEVELS,
    TRUST_NEVER,
    TRUST_UNDEFINED,
    SignatureCheck,
    check_commit_signature,
)
from .atom import AtomContext, AtomParser, AtomValue, GitObject
from .object_atoms import ObjectAtom
from .ref_atoms import EMPTY, err_bad_arg

_SIG_OPTIONS = (None, "signer", "grade", "key", "fingerprint", "primarykeyfingerprint",
                "trustlevel")
_last: list[Any] = []          # [ctx, oid, SignatureCheck] of the last object checked


def _check(ctx: AtomContext, obj: GitObject) -> SignatureCheck:
    if _last and _last[0] is ctx and _last[1] == obj.oid:
        got: SignatureCheck = _last[2]
        return got
    sigc = check_commit_signature(ctx.repo.config, obj.data, ctx.repo.object_format)
    _last[:] = [ctx, obj.oid, sigc]
    return sigc


def _grade(sigc: SignatureCheck) -> bytes:
    if sigc.result == "G":
        return b"U" if sigc.trust_level in (TRUST_UNDEFINED, TRUST_NEVER) else b"G"
    return sigc.result.encode() if sigc.result in "BENXYR" else b""


class SignatureAtom(ObjectAtom):
    def __init__(self, option: str | None) -> None:
        self.option = option

    def get(self, ctx: AtomContext, obj: GitObject) -> AtomValue:
        if obj.type != "commit":
            return EMPTY
        sigc = _check(ctx, obj)
        opt = self.option
        if opt == "grade":
            return AtomValue(_grade(sigc))
        if opt == "trustlevel":
            return AtomValue(TRUST_LEVELS[sigc.trust_level].encode())
        field = {None: sigc.output, "signer": sigc.signer, "key": sigc.key,
                 "fingerprint": sigc.fingerprint,
                 "primarykeyfingerprint": sigc.primary_key_fingerprint}[opt]
        return AtomValue(field or b"")


def parse_signature(ctx: Any, name: str, arg: str | None) -> SignatureAtom:
    if arg not in _SIG_OPTIONS:
        raise err_bad_arg("signature", str(arg))
    return SignatureAtom(arg)


SIGNATURE_ATOMS: dict[str, AtomParser] = {"signature": parse_signature}
