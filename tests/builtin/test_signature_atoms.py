"""%(signature...) beside git: commits signed with gpg (a good signature of an
ultimately trusted key, a forged one, one whose key is not in the keyring, one of a key
without trust) and unsigned ones, every option, the same bytes as git's for-each-ref;
the status parser on gpg's lines. Skipped where gpg cannot make a key (no gpg, no agent),
as git's GPG prerequisite skips."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from reftable_core.builtin.gpg_interface import SignatureCheck, parse_gpg_output

from gitbin import GitRunner, find_git, hermetic_env
from tests.helpers.labrun import run_lab

FORMAT = ("%(refname)%0a%(signature:grade)%0a%(signature:key)%0a%(signature:signer)%0a"
          "%(signature:fingerprint)%0a%(signature:primarykeyfingerprint)%0a"
          "%(signature:trustlevel)%0a%(signature)")


def _gpg(home: Path, *args: str, stdin: bytes = b"") -> bytes:
    return subprocess.run(["gpg", "--homedir", str(home), "--batch", "--yes", *args],
                          input=stdin, capture_output=True, check=True).stdout


def _fingerprint(home: Path, uid: str) -> str:
    out = _gpg(home, "--with-colons", "--list-keys", uid).decode()
    return next(ln.split(":")[9] for ln in out.splitlines() if ln.startswith("fpr:"))


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRunner, Path, Path]:
    if shutil.which("gpg") is None:
        pytest.skip("no gpg (git's GPG prerequisite)")
    tmp = tmp_path_factory.mktemp("sig")
    home = tmp / "gnupg"
    home.mkdir(mode=0o700)
    try:
        for uid in ("C O Mitter <committer@example.com>", "Other <other@example.com>",
                    "Gone <gone@example.com>"):
            _gpg(home, "--passphrase", "", "--quick-gen-key", uid, "default", "default", "never")
    except subprocess.CalledProcessError as err:
        pytest.skip(f"gpg cannot make a key here: {err.stderr.decode()[-200:]}")
    other = _fingerprint(home, "other@example.com")
    _gpg(home, "--import-ownertrust", stdin=f"{other}:2:\n".encode())   # unknown trust
    git = GitRunner(find_git(), hermetic_env(tmp, {"GNUPGHOME": str(home)}))
    d = tmp / "r"
    git.run(["init", "-q", "-b", "main", str(d)])
    for i, key in enumerate(("committer@example.com", None, "other@example.com",
                             "gone@example.com")):
        (d / "f").write_text(f"{i}\n")
        git.run(["add", "f"], cwd=d)
        sign = [f"-S{key}"] if key else []
        git.run(["commit", "-q", *sign, "-m", f"c{i}"], cwd=d)
        git.run(["tag", f"t{i}"], cwd=d)
    raw = git.out(["cat-file", "commit", "t0"], cwd=d).replace(b"\nc0\n", b"\nc0 forged\n")
    forged = git.out(["hash-object", "-w", "-t", "commit", "--stdin"], cwd=d, input=raw)
    git.run(["update-ref", "refs/tags/forged", forged.decode().strip()], cwd=d)
    git.run(["tag", "-a", "-m", "a tag", "annotated", "t0"], cwd=d)
    gone = _fingerprint(home, "gone@example.com")
    _gpg(home, "--delete-secret-and-public-key", gone)
    _gpg(home, "--check-trustdb")     # else the first verify after it says so on stderr
    return git, d, home


def test_signatures_are_gits(signed: tuple[GitRunner, Path, Path],
                             monkeypatch: pytest.MonkeyPatch) -> None:
    git, d, _home = signed
    for key in ("GNUPGHOME", "HOME", "TZ", "LC_ALL", "LANG"):   # gpg's words and dates
        monkeypatch.setenv(key, git.env[key])
    for opts in ([f"--format={FORMAT}"], [f"--format={FORMAT}", "--shell"],
                 ["--format=%(*signature:grade)%(*signature:key) %(refname)"],
                 ["--sort=signature:grade", "--format=%(refname)"]):
        want = git.run(["for-each-ref", *opts], cwd=d, check=False)
        got = run_lab(["for-each-ref", *opts], cwd=d)
        assert got == (want.returncode, want.stdout, want.stderr), opts
    grades = git.out(["for-each-ref", "--format=%(signature:grade)", "refs/tags"], cwd=d)
    assert sorted(set(grades.split())) == [b"B", b"E", b"G", b"N", b"U"]   # each case seen


def test_status_parser_as_parse_gpg_output() -> None:
    sigc = SignatureCheck()
    parse_gpg_output(sigc, b"[GNUPG:] NEWSIG\n[GNUPG:] GOODSIG 13B6 C O Mitter <c@e>\n"
                           b"[GNUPG:] VALIDSIG F1 2006-07-03 1 0 4 0 17 2 00 P1\n"
                           b"[GNUPG:] TRUST_FULLY 0 pgp\n")
    assert (sigc.result, sigc.key, sigc.signer, sigc.fingerprint, sigc.primary_key_fingerprint,
            sigc.trust_level) == ("G", b"13B6", b"C O Mitter <c@e>", b"F1", b"P1", 3)
    twice = SignatureCheck()
    parse_gpg_output(twice, b"[GNUPG:] GOODSIG K A\n[GNUPG:] BADSIG K A\n")
    assert (twice.result, twice.key, twice.signer) == ("E", None, None)
    bad_trust = SignatureCheck()
    parse_gpg_output(bad_trust, b"[GNUPG:] TRUST_WHATEVER\n")
    assert bad_trust.result == "E"


def test_ssh_signatures_are_gits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Signed with an ssh key: a known principal (G, fully), a key missing from the
    allowed signers (G, undefined), a forged commit (B), no allowedSignersFile (N)."""
    if shutil.which("ssh-keygen") is None:
        pytest.skip("no ssh-keygen (git's GPGSSH prerequisite)")
    keys = {}
    for name in ("known", "stranger"):
        keys[name] = tmp_path / name
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f",
                        str(keys[name])], check=True, capture_output=True)
    pub = (tmp_path / "known.pub").read_text().split()
    allowed = tmp_path / "allowed"
    allowed.write_text(f'"principal with number 1" {pub[0]} {pub[1]}\n')
    git = GitRunner(find_git(), hermetic_env(tmp_path))
    d = tmp_path / "r"
    git.run(["init", "-q", "-b", "main", str(d)])
    git.run(["config", "gpg.format", "ssh"], cwd=d)
    for i, name in enumerate(("known", "stranger")):
        (d / "f").write_text(f"{i}\n")
        git.run(["add", "f"], cwd=d)
        git.run(["-c", f"user.signingkey={keys[name]}", "commit", "-q", "-S", "-m", f"c{i}"],
                cwd=d)
        git.run(["tag", name], cwd=d)
    raw = git.out(["cat-file", "commit", "known"], cwd=d).replace(b"\nc0\n", b"\nc0 forged\n")
    forged = git.out(["hash-object", "-w", "-t", "commit", "--stdin"], cwd=d, input=raw)
    git.run(["update-ref", "refs/tags/forged", forged.decode().strip()], cwd=d)
    for key in ("HOME", "TZ", "LC_ALL", "LANG"):
        monkeypatch.setenv(key, git.env[key])
    seen: set[bytes] = set()
    for config in ([], ["-c", f"gpg.ssh.allowedSignersFile={allowed}"]):
        opts = [*config, "for-each-ref", f"--format={FORMAT}"]
        want = git.run(opts, cwd=d, check=False)
        assert run_lab(opts, cwd=d) == (want.returncode, want.stdout, want.stderr), config
        seen.update(git.out([*config, "for-each-ref", "--format=%(signature:grade)"],
                            cwd=d).split())
    assert seen == {b"G", b"U", b"B", b"N"}         # every case seen
