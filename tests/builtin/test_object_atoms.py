"""ref_filter's object atoms (object_atoms, person_atoms, contents_atoms, trailers,
signature_atoms, describe_atoms): unit checks on known bytes, and every atom (with its
arguments) called directly on the GitObject the store gives, compared with
`git for-each-ref --format=%(atom)` for the same ref, on a repository git builds:
annotated tags of commits and of tags, lightweight tags, trailers (folded, git-generated,
custom), multi-line bodies, CRLF, non-ASCII names, a merge, a PGP-looking signature
block in a tag, dates in several zones; every date format and trailer option."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from reftable_core.builtin.gitlike import Die
from reftable_core.builtin.ref_filter.atom import AtomParser, GitObject, RefItem
from reftable_core.builtin.ref_filter.contents_atoms import Message, format_sanitized_subject
from reftable_core.builtin.ref_filter.format import Context, atom_parser
from reftable_core.builtin.ref_filter.person_atoms import copy_email
from reftable_core.builtin.ref_filter.trailers import (
    find_trailer_block_start,
    format_trailers_from_commit,
    parse_trailer_options,
)
from reftable_core.refs.date import parse_date_format, show_date
from reftable_core.repo import open_repo

from gitbin import GitRunner, hermetic_env

NOW = "1300000000"


def _parser(name: str) -> AtomParser:
    p = atom_parser(name)
    assert p is not None, name
    return p


MESSAGES = {
    "plain": "one line subject\n",
    "body": "subject here\nstill subject\n\nbody line 1\nbody line 2\n\nlast paragraph\n",
    "trailers": ("fix: a thing\n\nSome body text.\n\nSigned-off-by: A U Thor <a@example.com>\n"
                 "Reviewed-by: Someone <s@example.com>\nAcked-by:  spaced   value\n"
                 "Helped-by: folded\n  continuation line\n"),
    "mixed": ("mixed trailers\n\nbody\n\nnot a trailer line\nSigned-off-by: X <x@y>\n"
              "Key: value\n(cherry picked from commit abc)\n"),
    "crlf": "crlf subject\r\nsecond\r\n\r\nbody\r\nBug: 12\r\n",
    "unicode": "Ünïcödé subject — dash\n\nkörper\n\nCo-authored-by: Jürgen <j@ex.de>\n",
    "sanitize": "  [PATCH] Fix..the   bug!! in foo.c --- ok...\n",
    "comment": "title\n\nbody\n\nKey: v\n# a comment\n\n# another\n",
}


def _git(g: GitRunner, d: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return g.out(list(args), cwd=d, env=env).decode()


@pytest.fixture(scope="module")
def mgit(git_path: str, tmp_path_factory: pytest.TempPathFactory) -> GitRunner:
    return GitRunner(git_path, hermetic_env(tmp_path_factory.mktemp("home"),
                                            {"GIT_TEST_DATE_NOW": NOW}))


@pytest.fixture(scope="module")
def repo(mgit: GitRunner, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("atoms") / "r"
    g = mgit
    g.run(["init", "-q", "-b", "main", str(d)])
    dates = ["1112911993 +0200", "1299990000 -0130", "1299999990 +0000", "1200000000 +1245",
             "1300000000 -0800", "1000000000 +0530", "1290000000 +0100", "1295000000 -0000"]
    for i, (name, msg) in enumerate(MESSAGES.items()):
        (d / "f").write_text(f"{i}\n")
        g.run(["add", "f"], cwd=d)
        env = {"GIT_COMMITTER_DATE": dates[i % len(dates)],
               "GIT_AUTHOR_DATE": dates[(i + 3) % len(dates)]}
        if name == "unicode":
            env["GIT_AUTHOR_NAME"] = "Jöhn Dœ"
            env["GIT_AUTHOR_EMAIL"] = "joehn@exämple.org"
        g.run(["commit", "-q", "--cleanup=verbatim", "-m", msg], cwd=d, env=env)
        g.run(["branch", f"c-{name}"], cwd=d)
    g.run(["checkout", "-q", "-b", "side", "c-plain"], cwd=d)
    (d / "g").write_text("side\n")
    g.run(["add", "g"], cwd=d)
    g.run(["commit", "-q", "-m", "side"], cwd=d)
    g.run(["checkout", "-q", "main"], cwd=d)
    g.run(["merge", "-q", "--no-ff", "-m", "merge side\n\nMerged-by: me", "side"], cwd=d,
          env={"GIT_COMMITTER_DATE": "1299999999 +0900"})
    tenv = {"GIT_COMMITTER_DATE": "1299000000 -0700"}
    g.run(["tag", "-a", "-m", "release one\n\ntag body\n\nTag-trailer: yes", "v1", "c-body"],
          cwd=d, env=tenv)
    g.run(["tag", "-a", "-m", "tag of a tag", "v1-outer", "v1"], cwd=d, env=tenv)
    g.run(["tag", "light", "c-trailers"], cwd=d)
    blob = _git(g, d, "hash-object", "-w", "f").strip()
    tree = _git(g, d, "rev-parse", "main^{tree}").strip()
    g.run(["tag", "blobtag", blob], cwd=d)
    g.run(["tag", "-a", "-m", "a tree", "treetag", tree], cwd=d, env=tenv)
    head = _git(g, d, "rev-parse", "main").strip()
    signed = (f"object {head}\ntype commit\ntag signed\ntagger T Agger <t@example.com> "
              "1299500000 +0100\n\nsigned subject\n\nsigned body\n"
              "-----BEGIN PGP SIGNATURE-----\n\nabcdef\n-----END PGP SIGNATURE-----\n")
    oid = g.out(["hash-object", "-t", "tag", "-w", "--stdin"], cwd=d,
                input=signed.encode()).decode().strip()
    g.run(["update-ref", "refs/tags/signed", oid], cwd=d)
    odd = (f"object {head}\ntype commit\ntag odd\ntagger No Email 1299500000\n\n"
           "odd tag\n")
    oid = g.out(["hash-object", "-t", "tag", "-w", "--stdin", "--literally"], cwd=d,
                input=odd.encode()).decode().strip()
    g.run(["update-ref", "refs/tags/odd", oid], cwd=d)
    (d / ".mailmap").write_text("# comment\nMapped Author <mapped@example.com> <AUTHOR@example.com>\n"
                                "<new-c@example.com> <committer@example.com>\n"
                                "Only Name <joehn@exämple.org>\n"
                                "Other <o@x> Nobody <committer@example.com>\n")
    return d


def _refs(g: GitRunner, d: Path) -> list[tuple[bytes, bytes]]:
    out = g.out(["for-each-ref", "--format=%(refname) %(objectname)"], cwd=d).split(b"\n")
    return [(ln.split()[0], bytes.fromhex(ln.split()[1].decode())) for ln in out if ln]


def lab_values(d: Path, atom: str, refs: list[tuple[bytes, bytes]]) -> list[bytes]:
    """The atom's value per ref, by calling its parser and value directly."""
    repo = open_repo(d / ".git")
    ctx = Context(repo, False)
    deref = atom.startswith("*")
    text = atom[1:] if deref else atom
    name, colon, arg = text.partition(":")
    parsed = _parser(name)(ctx, name, arg if colon and arg else None)
    out = []
    for refname, oid in refs:
        obj = ctx.object(oid, refname)
        if deref:
            if obj.type != "tag":
                out.append(b"")
                continue
            poid = repo.objects.peel(oid)
            obj = ctx.object(poid, refname)
            oid = poid
        out.append(parsed.value(ctx, RefItem(refname, oid, None), obj).text)
    return out


def git_values(g: GitRunner, d: Path, atom: str) -> list[bytes]:
    sep = "\x01RECORD\x01"
    out = g.out(["for-each-ref", f"--format=%({atom}){sep}"], cwd=d)
    return out.split(sep.encode() + b"\n")[:-1]


def check(g: GitRunner, d: Path, atom: str) -> None:
    refs = _refs(g, d)
    want = git_values(g, d, atom)
    got = lab_values(d, atom, refs)
    assert len(want) == len(refs)
    for (name, _), w, v in zip(refs, want, got):
        assert v == w, (atom, name)


DESCRIBE = ["describe", "describe:tags", "describe:abbrev=3", "describe:abbrev=0",
            "describe:abbrev=12", "describe:match=v*", "describe:exclude=v1", "describe:tags=no",
            "describe:tags,abbrev=10", "*describe", "describe:match=v*,exclude=v1-*",
            "describe:match=nomatch", "describe:tags,match=l*", "describe:tags=maybe,abbrev=5"]
SIMPLE = ["tree", "tree:short", "tree:short=10", "parent", "parent:short", "parent:short=5",
          "numparent", "object", "type", "tag", "*tree", "*parent", "*object", "*type",
          "raw", "raw:size", "*raw:size", "numparent:x", "object:x"]
PEOPLE = [f"{w}{f}" for w in ("author", "committer", "tagger")
          for f in ("", "name", "email", "email:trim", "email:localpart",
                    "email:trim,localpart", "date")] + [
    "creator", "creatordate", "*creator", "*authorname", "*authoremail:trim", "author:x",
    "creator:x"] + [f"{w}{f}" for w in ("author", "committer", "tagger")
                    for f in ("name:mailmap", "email:mailmap", "email:mailmap,trim",
                              "email:localpart,mailmap", "email:trim,mailmap,trim")]
DATES = ["default", "relative", "short", "local", "iso", "iso8601", "iso-strict",
         "iso8601-strict", "rfc", "rfc2822", "raw", "unix", "human", "format:%Y-%m-%d %H:%M %z",
         "format:%s|%Z|%%|%a %b", "default-local", "iso-local", "iso-strict-local",
         "rfc-local", "raw-local", "short-local", "relative-local", "human-local",
         "unix-local", "format-local:%c %z %Z", "format:", "auto:short"]
CONTENTS = ["subject", "subject:sanitize", "body", "contents", "contents:subject",
            "contents:body", "contents:signature", "contents:size", "contents:lines=0",
            "contents:lines=1", "contents:lines=3", "contents:lines=99", "*subject",
            "*contents", "*body", "contents:trailers"]
TRAILERS = ["trailers", "trailers:only", "trailers:only=no", "trailers:unfold",
            "trailers:only,unfold", "trailers:keyonly", "trailers:valueonly",
            "trailers:key=Signed-off-by", "trailers:key=signed-off-by:",
            "trailers:key=Reviewed-by,key=Key", "trailers:key=Key,only=false",
            "trailers:separator=%x2C ", "trailers:separator=|,unfold",
            "trailers:key_value_separator==", "trailers:key_value_separator=%n,keyonly",
            "trailers:only,separator=;%n", "trailers:valueonly,separator=%%",
            "trailers:unfold=yes,only=on", "contents:trailers:only,unfold",
            "trailers:key=Helped-by,unfold,valueonly", "trailers:separator=", "*trailers"]


@pytest.mark.parametrize("atom", SIMPLE + PEOPLE + CONTENTS + TRAILERS + DESCRIBE)
def test_atom_equals_git(mgit: GitRunner, repo: Path, atom: str) -> None:
    check(mgit, repo, atom)


@pytest.mark.parametrize("fmt", ["%(*objecttype) %(*subject)", "%(*subject) %(*objectsize)",
                                 "%(*type) %(*authorname) %(*objectsize:disk) %(*body)"])
def test_peeled_content_beside_peeled_info_equals_git(mgit: GitRunner, repo: Path,
                                                      fmt: str, tmp_path: Path) -> None:
    """A "*" atom that needs the peeled object's content (SOURCE_OBJ) beside one that needs
    only its type or size (SOURCE_OTHER): the content is read (git's get_object reads the
    whole object when any atom wants it), loose objects and packed ones."""
    from tests.helpers.labrun import run_lab
    packed = tmp_path / "packed"
    shutil.copytree(repo, packed)
    mgit.run(["repack", "-adq"], cwd=packed)
    for d in (repo, packed):          # tags alone: no branch has read the commits before
        for args in (["for-each-ref", f"--format={fmt}"],
                     ["for-each-ref", f"--format={fmt}", "refs/tags/"]):
            status, out, err = run_lab(args, cwd=d)
            assert (status, err) == (0, b"")
            assert out == mgit.out(args, cwd=d)


@pytest.mark.parametrize("fmt", DATES)
@pytest.mark.parametrize("who", ["authordate", "committerdate", "taggerdate", "creatordate"])
def test_dates_equal_git(mgit: GitRunner, repo: Path, who: str, fmt: str,
                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_TEST_DATE_NOW", NOW)
    monkeypatch.setenv("TZ", "UTC")
    check(mgit, repo, f"{who}:{fmt}")


def test_dates_in_another_local_zone(mgit: GitRunner, repo: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import time
    monkeypatch.setenv("GIT_TEST_DATE_NOW", NOW)
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        g = GitRunner(mgit.git, {**mgit.env, "TZ": "America/New_York"})
        for fmt in ("local", "iso-local", "human", "format-local:%c %Z %z", "rfc-local"):
            check(g, repo, f"committerdate:{fmt}")
    finally:
        monkeypatch.setenv("TZ", "UTC")
        time.tzset()


def test_signature_of_unsigned_commits(mgit: GitRunner, repo: Path) -> None:
    for opt in ("", ":signer", ":grade", ":key", ":fingerprint", ":primarykeyfingerprint",
                ":trustlevel"):
        check(mgit, repo, "signature" + opt)


BAD = [("subject", "x", "unrecognized %(subject) argument: x"),
       ("body", "x", "%(body) does not take arguments"),
       ("contents", "lines=-1", "positive value expected contents:lines=-1"),
       ("contents", "lines=x", "positive value expected contents:lines=x"),
       ("contents", "nope", "unrecognized %(contents) argument: nope"),
       ("raw", "x", "unrecognized %(raw) argument: x"),
       ("signature", "x", "unrecognized %(signature) argument: x"),
       ("trailers", "key", "expected %(trailers:key=<value>)"),
       ("trailers", "bogus", "unknown %(trailers) argument: bogus"),
       ("trailers", "only=maybe", "unknown %(trailers) argument: "),
       ("trailers", "only=maybe,bogus", "unknown %(trailers) argument: bogus"),
       ("trailers", "unfold,foo=bar", "unknown %(trailers) argument: foo=bar"),
       ("tree", "long", "unrecognized %(tree) argument: long"),
       ("parent", "short=0", "positive value expected '0' in %(parent:short=0)"),
       ("authoremail", "bogus", "unrecognized %(authoremail) argument: bogus"),
       ("authoremail", "trim,", "unrecognized %(authoremail) argument: "),
       ("authoremail", "trimx", "unrecognized %(authoremail) argument: x"),
       ("authorname", "x", "unrecognized %(authorname) argument: x"),
       ("describe", "abbrev", "argument expected for describe:abbrev"),
       ("describe", "abbrev=-1,tags", "positive value expected describe:abbrev=-1,tags"),
       ("describe", "abbrev=3x,tags", "cannot fully parse describe:abbrev=3x,tags"),
       ("describe", "match=", "value expected describe:match="),
       ("describe", "exclude", "value expected describe:exclude="),
       ("describe", "tags,bogus", "unrecognized %(describe) argument: bogus"),
       ("describe", "tags=maybe", "unrecognized %(describe) argument: tags=maybe")]


@pytest.mark.parametrize("name,arg,msg", BAD)
def test_parse_errors_are_gits(mgit: GitRunner, repo: Path, name: str, arg: str,
                               msg: str) -> None:
    p = mgit.run(["for-each-ref", f"--format=%({name}:{arg})"], cwd=repo, check=False)
    assert p.returncode == 128 and p.stderr.decode() == f"fatal: {msg}\n"
    with pytest.raises(Die) as e:
        _parser(name)(None, name, arg)
    assert e.value.msg == msg


def test_unknown_date_format_dies_when_read(mgit: GitRunner, repo: Path) -> None:
    p = mgit.run(["for-each-ref", "--format=%(authordate:bogus)", "refs/heads/main"],
                 cwd=repo, check=False)
    assert p.returncode == 128 and p.stderr == b"fatal: unknown date format bogus\n"
    atom = _parser("authordate")(None, "authordate", "bogus")    # parses
    repo_ = open_repo(repo / ".git")
    oid = repo_.refs.resolve(b"refs/heads/main")
    oid = oid if isinstance(oid, bytes) else oid.value
    assert oid is not None
    typ, data = repo_.objects.read(oid)
    with pytest.raises(Die) as e:
        atom.value(Context(repo_, False), RefItem(b"refs/heads/main", oid, None),
                   GitObject(oid, typ, data, len(data)))
    assert e.value.msg == "unknown date format bogus"


# -- units ------------------------------------------------------------------------
def test_show_date_units() -> None:
    t, tz = 1112911993, 200
    assert show_date(t, tz, parse_date_format("default")) == "Fri Apr 8 00:13:13 2005 +0200"
    assert show_date(t, -130, parse_date_format("iso-strict")) == "2005-04-07T20:43:13-01:30"
    assert show_date(t, 0, parse_date_format("iso-strict")) == "2005-04-07T22:13:13Z"
    assert show_date(t, tz, parse_date_format("rfc")) == "Fri, 8 Apr 2005 00:13:13 +0200"
    assert show_date(t, tz, parse_date_format("raw")) == "1112911993 +0200"
    assert show_date(t, tz, parse_date_format("relative"), now=t + 100) == "2 minutes ago"
    assert show_date(t, tz, parse_date_format("relative"), now=t - 1) == "in the future"
    assert show_date(t, tz, parse_date_format("relative"), now=t + 86400 * 400) == \
        "1 year, 1 month ago"
    assert show_date(t, tz, parse_date_format("format:%s %z")) == "1112911993 +0200"


def test_email_and_sanitize_units() -> None:
    line = b"A U Thor <author@example.com> 1 +0000\n"
    assert copy_email(line, 0) == b"<author@example.com>"
    assert copy_email(line, 1) == b"author@example.com"
    assert copy_email(line, 2) == b"author"
    assert format_sanitized_subject(b"  [PATCH] Fix..the bug!! --- ok...") == \
        b"PATCH-Fix.the-bug-ok"


def test_message_split_and_trailers_units() -> None:
    m = Message(b"tree x\n\nsub\nject\n\nbody\n-----BEGIN PGP SIGNATURE-----\nx\n")
    assert m.buf[m.sub:m.sub + m.sublen] == b"sub\nject"
    assert m.buf[m.body:m.body + m.nonsiglen] == b"body\n"
    assert m.buf[m.sig:] == b"-----BEGIN PGP SIGNATURE-----\nx\n"
    msg = b"t\n\nbody\n\nA: 1\nB: two\n  three\n"
    assert find_trailer_block_start(msg, len(msg)) == msg.index(b"A:")
    opts = parse_trailer_options("unfold,separator=%x2C")
    assert format_trailers_from_commit(opts, msg) == b"A: 1,B: two three"
    assert format_trailers_from_commit(parse_trailer_options(None), msg) == \
        b"A: 1\nB: two\n  three\n"
