"""Signature checks as git's gpg-interface.c and commit.c do them, for %(signature...).

Contract: check_commit_signature(config, data, object_format) -> SignatureCheck, git's
check_commit_signature: the commit's "gpgsig" (SHA-1) or "gpgsig-sha256" (SHA-256)
header is split from its payload (parse_buffer_signed_by_header); an unsigned commit, or
one without a committer line, gives result "N". The signature's first line picks the
format (get_format_by_sig): OpenPGP runs `gpg --keyid-format=long --status-fd=1 --verify
<file> -` (gpg.program / gpg.openpgp.program), X.509 `gpgsm --status-fd=1 --verify <file>
-` (gpg.x509.program), the payload on stdin, as verify_gpg_signed_buffer does: `output` is
the program's stderr, `status` its stdout, parsed by parse_gpg_output (result G B E X Y
R, key, signer, fingerprint, primary key fingerprint, trust level). A signature of no
known format dies ("bad/incompatible signature"). SSH signatures (ssh-keygen -Y verify
against gpg.ssh.allowedSignersFile) are not implemented: NotImplementedSignature.
TRUST_LEVELS lists git's trust level names in enum order (gpg_trust_level_to_str).
"""
from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping

from ..errors import ReftableError
from .gitlike import Die

TRUST_UNDEFINED, TRUST_NEVER, TRUST_MARGINAL, TRUST_FULLY, TRUST_ULTIMATE = range(5)
TRUST_LEVELS = ("undefined", "never", "marginal", "fully", "ultimate")

_OPENPGP = ("openpgp", "gpg", ("--keyid-format=long",),
            ("-----BEGIN PGP SIGNATURE-----", "-----BEGIN PGP MESSAGE-----"))
_X509 = ("x509", "gpgsm", (), ("-----BEGIN SIGNED MESSAGE-----",))
_SSH = ("ssh", "ssh-keygen", (), ("-----BEGIN SSH SIGNATURE-----",))
_FORMATS = (_OPENPGP, _X509, _SSH)

# sigcheck_gpg_status[]: (result, status keyword, exclusive, keyid, uid, fingerprint, trust)
_STATUS = (("G", "GOODSIG ", True, True, True, False, False),
           ("B", "BADSIG ", True, True, True, False, False),
           ("E", "ERRSIG ", True, True, False, False, False),
           ("X", "EXPSIG ", True, True, True, False, False),
           ("Y", "EXPKEYSIG ", True, True, True, False, False),
           ("R", "REVKEYSIG ", True, True, True, False, False),
           ("", "VALIDSIG ", False, False, False, True, False),
           ("", "TRUST_", False, False, False, False, True))


class NotImplementedSignature(ReftableError):
    """A signature format the lab does not verify (ssh)."""


class SignatureCheck:
    """struct signature_check: what a check found; None where git leaves NULL."""
    __slots__ = ("fingerprint", "key", "output", "primary_key_fingerprint", "result",
                 "signer", "status", "trust_level")

    def __init__(self) -> None:
        self.result = "N"
        self.trust_level = TRUST_UNDEFINED
        self.output: bytes | None = None
        self.status: bytes | None = None
        self.signer: bytes | None = None
        self.key: bytes | None = None
        self.fingerprint: bytes | None = None
        self.primary_key_fingerprint: bytes | None = None


def split_signed_commit(data: bytes, object_format: str) -> tuple[bytes, bytes]:
    """parse_buffer_signed_by_header: (payload, signature); signature b"" if none."""
    header = b"gpgsig-sha256" if object_format == "sha256" else b"gpgsig"
    payload = bytearray()
    signature = bytearray()
    in_signature = other_signature = False
    pos, tail = 0, len(data)
    while pos < tail:
        nl = data.find(b"\n", pos)
        nxt = tail if nl < 0 else nl + 1
        line = data[pos:nxt]
        sig: bytes | None = None
        if in_signature and line.startswith(b" "):
            sig = line[1:]
        elif line.startswith(header + b" "):
            sig = line[len(header) + 1:]
            other_signature = False
        elif line.startswith(b"gpgsig"):
            other_signature = True
        elif other_signature and not line.startswith(b" "):
            other_signature = False
        if sig is not None:
            signature += sig
            in_signature = True
        else:
            if line.startswith(b"\n"):
                nxt = tail
                line = data[pos:]
            if not other_signature:
                payload += line
            in_signature = False
        pos = nxt
    return bytes(payload), bytes(signature)


def _has_header(payload: bytes, key: bytes) -> bool:
    """find_commit_header with a non-empty value."""
    for line in payload.split(b"\n"):
        if not line:
            return False
        if line.startswith(key + b" ") and len(line) > len(key) + 1:
            return True
    return False


def parse_gpg_output(sigc: SignatureCheck, status: bytes) -> None:
    """parse_gpg_output over gpg's --status-fd lines."""
    seen_exclusive = False
    for raw in status.split(b"\n"):
        if not raw.startswith(b"[GNUPG:] "):
            continue
        line = raw[9:]
        for result, check, exclusive, keyid, uid, fpr, trust in _STATUS:
            kw = check.encode()
            if not line.startswith(kw):
                continue
            rest = line[len(kw):]
            if exclusive:
                if seen_exclusive:
                    _error(sigc)
                    return
                seen_exclusive = True
            if result:
                sigc.result = result
            if keyid:
                key, sp, after = rest.partition(b" ")
                sigc.key = key
                if sp and uid:
                    sigc.signer = after
            if trust:
                level = rest.split(b" ")[0].decode("ascii", "replace")
                names = [n.upper() for n in TRUST_LEVELS]
                if level not in names:
                    _error(sigc)
                    return
                sigc.trust_level = names.index(level)
            if fpr:
                fields = rest.split(b" ")
                sigc.fingerprint = fields[0]
                sigc.primary_key_fingerprint = (b" ".join(fields[9:]) if len(fields) > 9
                                                else None)
            break


def _error(sigc: SignatureCheck) -> None:
    sigc.result = "E"
    sigc.primary_key_fingerprint = sigc.fingerprint = sigc.signer = sigc.key = None


def _program(config: Mapping[str, str], fmt: str, default: str) -> str:
    if fmt == "openpgp":
        keys = ("gpg.program", "gpg.openpgp.program")
        values = [config[k] for k in keys if k in config]
        return values[-1] if values else default   # both set: the config keeps no order
    return config.get(f"gpg.{fmt}.program", default)


def _verify_gpg(sigc: SignatureCheck, program: str, args: tuple[str, ...],
                payload: bytes, signature: bytes) -> None:
    """verify_gpg_signed_buffer: the detached signature in a temporary file."""
    fd, path = tempfile.mkstemp(prefix=".git_vtag_tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(signature)
        try:
            p = subprocess.run([program, *args, "--status-fd=1", "--verify", path, "-"],
                               input=payload, capture_output=True, check=False)
        except OSError:              # start_command failed: empty output, as git's
            sigc.output = sigc.status = b""
            return
        sigc.output = p.stderr
        sigc.status = p.stdout
        parse_gpg_output(sigc, p.stdout)
    finally:
        os.unlink(path)


def check_commit_signature(config: Mapping[str, str], data: bytes,
                           object_format: str) -> SignatureCheck:
    """check_commit_signature (commit.c) over check_signature (gpg-interface.c)."""
    sigc = SignatureCheck()
    payload, signature = split_signed_commit(data, object_format)
    if not signature:
        return sigc
    for name, default, args, starts in _FORMATS:
        if signature.startswith(tuple(s.encode() for s in starts)):
            break
    else:
        text = signature.split(b"\0")[0].decode("utf-8", "surrogateescape")
        raise Die(f"bad/incompatible signature '{text}'")
    if not _has_header(payload, b"committer"):
        return sigc
    if name == "ssh":
        raise NotImplementedSignature("verifying ssh signatures is not implemented")
    _verify_gpg(sigc, _program(config, name, default), args, payload, signature)
    return sigc
