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
known format dies ("bad/incompatible signature"). SSH runs verify_ssh_signed_buffer's
steps: `ssh-keygen -Y find-principals -f <gpg.ssh.allowedSignersFile> -s <file>
-Overify-time=<committer date>`, then `-Y verify -n git -f ... -I <principal>` for each
principal found until one says "Good" (gpg.ssh.revocationFile as -r), or `-Y
check-novalidate` when none is; parse_ssh_output reads the first line (G with trust
"fully" for a known principal, G "undefined" for an unknown key, else B "never").
TRUST_LEVELS lists git's trust level names in enum order (gpg_trust_level_to_str).
"""
from __future__ import annotations

import os
from collections.abc import Mapping

from ..refs.date import parse_date_format, show_date
from .gitlike import Die, write_err

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


def _header(payload: bytes, key: bytes) -> bytes | None:
    """find_commit_header: the value of key's header line, None if none or empty."""
    for line in payload.split(b"\n"):
        if not line:
            return None
        if line.startswith(key + b" ") and len(line) > len(key) + 1:
            return line[len(key) + 1:]
    return None


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


def _timestamp(ident: bytes) -> int:
    """split_ident_line's date: the number after the last "> " (0 if none)."""
    gt = ident.rfind(b"> ")
    digits = ident[gt + 2:].split(b" ")[0] if gt >= 0 else b""
    return int(digits) if digits.isdigit() else 0


def stripspace(text: bytes) -> bytes:
    """strbuf_stripspace without comments: trailing blanks off every line, runs of empty
    lines as one, none at the start or the end, every line ended by LF."""
    out: list[bytes] = []
    empty = 0
    for line in text.split(b"\n"):
        line = line.rstrip(b" \t\n\v\f\r")
        if not line:
            empty += 1
            continue
        if empty and out:
            out.append(b"")
        empty = 0
        out.append(line)
    return b"".join(ln + b"\n" for ln in out)


def parse_ssh_output(sigc: SignatureCheck, output: bytes) -> None:
    """parse_ssh_output: ssh-keygen's first line."""
    sigc.result = "B"
    sigc.trust_level = TRUST_NEVER
    line = output.split(b"\n")[0]
    known = b'Good "git" signature for '
    unknown = b'Good "git" signature with '
    if line.startswith(known):
        rest = line[len(known):]
        at = rest.rfind(b" with ")
        if at < 0:
            return
        sigc.result = "G"
        sigc.trust_level = TRUST_FULLY
        sigc.signer = rest[:at]
        line = rest[at + 1:]
    elif line.startswith(unknown):
        sigc.result = "G"
        sigc.trust_level = TRUST_UNDEFINED
        line = line[len(unknown):]
    else:
        return
    k = line.find(b"key ")
    if k >= 0:
        sigc.fingerprint = sigc.key = line[k + 4:]
    else:
        sigc.result = "B"


def _run(argv: list[str], stdin: bytes) -> tuple[int, bytes, bytes]:
    import subprocess              # here, not at the top: only a signature check pays for it
    try:
        p = subprocess.run(argv, input=stdin, capture_output=True, check=False)
    except OSError:
        return -1, b"", b""
    return p.returncode, p.stdout, p.stderr


def _verify_ssh(sigc: SignatureCheck, config: Mapping[str, str], payload: bytes,
                signature: bytes, timestamp: int) -> None:
    """verify_ssh_signed_buffer."""
    allowed = config.get("gpg.ssh.allowedsignersfile")
    if allowed is None:
        write_err("error: ", "gpg.ssh.allowedSignersFile needs to be configured and exist "
                  "for ssh signature verification")
        return
    allowed = os.path.expanduser(allowed)
    program = _program(config, "ssh", "ssh-keygen")
    revocation = config.get("gpg.ssh.revocationfile")
    import tempfile
    fd, path = tempfile.mkstemp(prefix=".git_vtag_tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(signature)
        when = ""
        if timestamp:
            when = "-Overify-time=" + show_date(
                timestamp, 0, parse_date_format("format-local:%Y%m%d%H%M%S"))
        rc, principals, p_err = _run([program, "-Y", "find-principals", "-f", allowed,
                                      "-s", path, when], b"")
        if rc and b"usage:" in p_err:
            write_err("error: ", "ssh-keygen -Y find-principals/verify is needed for ssh "
                      "signature verification (available in openssh version 8.2p1+)")
            return
        out = err = b""
        if rc or not principals:
            _, out, err = _run([program, "-Y", "check-novalidate", "-n", "git", "-s", path,
                                when], payload)
        else:
            for line in principals.split(b"\n"):
                principal = line[:-1] if line.endswith(b"\r") else line
                if not principal:
                    continue
                argv = [program, "-Y", "verify", "-n", "git", "-f", allowed, "-I",
                        principal.decode("utf-8", "surrogateescape"), "-s", path, when]
                if revocation is not None:
                    revocation = os.path.expanduser(revocation)
                    if os.path.exists(revocation):
                        argv += ["-r", revocation]
                    else:
                        write_err("warning: ", "ssh signing revocation file configured but "
                                  f"not found: {revocation}")
                rc, out, err = _run(argv, payload)
                if not rc and out.startswith(b"Good"):
                    break
        output = stripspace(out) + p_err + stripspace(err)
        sigc.output = sigc.status = output
        parse_ssh_output(sigc, output)
    finally:
        os.unlink(path)


def _verify_gpg(sigc: SignatureCheck, program: str, args: tuple[str, ...],
                payload: bytes, signature: bytes) -> None:
    """verify_gpg_signed_buffer: the detached signature in a temporary file."""
    import subprocess
    import tempfile
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
    committer = _header(payload, b"committer")
    if committer is None:
        return sigc
    if name == "ssh":
        _verify_ssh(sigc, config, payload, signature, _timestamp(committer))
        return sigc
    _verify_gpg(sigc, _program(config, name, default), args, payload, signature)
    return sigc
