"""%(signature...) of a commit (ref-filter.c grab_signature).

Contract: SIGNATURE_ATOMS maps "signature" to its AtomParser (atom.py).
  signature [:signer | :grade | :key | :fingerprint | :primarykeyfingerprint |
      :trustlevel]   of a commit: an unsigned commit gives git's "no signature"
      answer (grade N, trust level "undefined"); a signed one dies ("verifying
      commit signatures is not implemented"): the lab runs no gpg.
"""
from __future__ import annotations

from typing import Any

from ..gitlike import Die
from .atom import AtomContext, AtomParser, AtomValue, GitObject
from .object_atoms import ObjectAtom, header_lines
from .ref_atoms import EMPTY, err_bad_arg

_SIG_OPTIONS = {None: "", "signer": "", "grade": "N", "key": "", "fingerprint": "",
                "primarykeyfingerprint": "", "trustlevel": "undefined"}


class SignatureAtom(ObjectAtom):
    def __init__(self, option: str | None) -> None:
        self.option = option

    def get(self, ctx: AtomContext, obj: GitObject) -> AtomValue:
        if obj.type != "commit":
            return EMPTY
        for line in header_lines(obj.data):
            if line.startswith((b"gpgsig ", b"gpgsig-sha256 ")):
                raise Die("verifying commit signatures is not implemented")
        return AtomValue(_SIG_OPTIONS[self.option].encode())


def parse_signature(ctx: Any, name: str, arg: str | None) -> SignatureAtom:
    if arg not in _SIG_OPTIONS:
        raise err_bad_arg("signature", str(arg))
    return SignatureAtom(arg)


SIGNATURE_ATOMS: dict[str, AtomParser] = {"signature": parse_signature}
