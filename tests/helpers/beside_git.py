"""Random cases run by git and by the lab, compared (the seventh round's differential
check; tests/lab/test_random_beside_git.py runs a few of each kind, this module's
command line as many as asked).

Contract:
  run(kind, seed, count, work) -> list[str]   count cases of kind from seed, each one
      a repository built by git in work/<kind>/ and copied, the same command run by git
      in one copy and by the lab (`python -m lab.cli`) in the other; the report of each
      case whose exit status, stdout, stderr or resulting repository differ ([] when
      none does). A case is a function of (kind, seed) alone.
  KINDS   the kinds:
      update-files, update-reftable   random states (loose, packed or both; a broken
          loose file, a file or a directory in a ref's or a reflog's way, a dangling
          reflog, symrefs) and a random `update-ref --stdin` script (transactions,
          no-deref, symref commands);
      update-z                         the same scripts in -z form, with broken lines;
      read-files, read-reftable        show-ref, for-each-ref and update-ref -d/<new>
          over such states;
      atoms-files, atoms-reftable      for-each-ref with random formats (every atom
          family, if/align, sort keys, filters, quoting) over a repository with bodies,
          trailers, annotated and nested tags, a blob and a tree ref, upstreams;
      show-ref                         --verify, --exists, --exclude-existing (stdin),
          patterns, over the same repository;
      migrate-files, migrate-reftable  `refs migrate` (and --dry-run) from the format
          named, after a random script (migrate_initial=off: git 2.47's layout);
      worktree-files, worktree-reftable   (GAP_KINDS: not in the suite, differences
          left) update-ref scripts in a linked worktree (or the main one) over
          per-worktree refs, main-worktree/ and worktrees/<name>/ names;
      hooks-files, hooks-reftable      update-ref scripts under a reference-transaction
          hook that logs each call (its state and lines, in hook.log at the worktree's
          top, where git runs hooks) and sometimes refuses one.
  The repository after a command is compared file by file under the git dir (files
  backend) or as git lists it (refs with their values and symrefs, every reflog).

Command line: python -m tests.helpers.beside_git KIND SEED COUNT [WORK]
"""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from gitbin import find_git, hermetic_env

ROOT = Path(__file__).resolve().parents[2]
NAMES = ["refs/heads/a", "refs/heads/a/b", "refs/heads/a/b/c", "refs/tags/t", "refs/tags/t/u",
         "refs/heads/main", "refs/x", "refs/heads/z", "HEAD", "refs/heads/sym"]


class _Case:
    """One kind's run: git, the environment, the template repositories."""

    def __init__(self, work: Path) -> None:
        self.git = find_git()
        self.work = work
        (work / "home").mkdir(parents=True, exist_ok=True)
        self.env = hermetic_env(work / "home")
        self.env.pop("REFTABLE_LAB_FLAGS", None)
        self.env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "core"), str(ROOT)])
        self.oids: list[str] = []

    def sh(self, args: list[str], cwd: Path, stdin: bytes = b"",
           lab: bool = False) -> subprocess.CompletedProcess[bytes]:
        argv = [sys.executable, "-m", "lab.cli", *args] if lab else [self.git, *args]
        return subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, env=self.env,
                              check=False)

    def plain(self, ref_format: str) -> Path:
        t = self.work / f"plain-{ref_format}"
        if not t.exists():
            self.sh(["init", "-q", f"--ref-format={ref_format}", "-b", "main", str(t)], self.work)
            self.sh(["commit", "-q", "--allow-empty", "-m", "one"], t)
            self.sh(["commit", "-q", "--allow-empty", "-m", "two"], t)
        self.oids = [self.sh(["rev-parse", r], t).stdout.decode().strip()
                     for r in ("HEAD", "HEAD~1")]
        return t

    def rich(self, ref_format: str) -> Path:
        t = self.work / f"rich-{ref_format}"
        if t.exists():
            return t
        self.sh(["init", "-q", f"--ref-format={ref_format}", "-b", "main", str(t)], self.work)
        g: Callable[..., subprocess.CompletedProcess[bytes]] = lambda *a: self.sh(list(a), t)
        for i in range(4):
            (t / f"f{i}.txt").write_text(f"line {i}\n" * (i + 1))
            g("add", ".")
            msg = (f"subject {i}\n\nbody {i}\tmore\n\nSigned-off-by: A <a@x>\n" if i % 2
                   else f"only subject {i}")
            g("commit", "-q", "-m", msg)
        g("branch", "topic", "HEAD~2")
        g("branch", "side", "HEAD~1")
        g("tag", "-a", "-m", "annotated one\n\nwith body", "v1", "HEAD~3")
        g("tag", "-a", "-m", "tag of tag", "v1-outer", "v1")
        g("tag", "light", "HEAD~1")
        g("tag", "main", "HEAD~1")                          # "main" is ambiguous
        blob = g("hash-object", "-w", "f0.txt").stdout.decode().strip()
        g("update-ref", "refs/blobs/b", blob)
        g("update-ref", "refs/trees/t", "HEAD^{tree}")
        g("config", "branch.topic.remote", "origin")
        g("config", "branch.topic.merge", "refs/heads/main")
        g("config", "remote.origin.url", "/nowhere")
        g("config", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")
        g("update-ref", "refs/remotes/origin/main", "HEAD~1")
        g("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
        g("config", "branch.side.remote", ".")
        g("config", "branch.side.merge", "refs/heads/topic")
        if ref_format == "files":
            g("pack-refs", "--all")
            g("branch", "-f", "side", "HEAD")
        return t


# -- states and scripts ---------------------------------------------------------------

def _state_setup(c: _Case, rng: random.Random, repo: Path, files: bool) -> None:
    gd = repo / ".git"
    for n in rng.sample(NAMES[:8] + ["refs/heads/q", "refs/heads/q/r"], rng.randrange(0, 4)):
        c.sh(["update-ref", n, rng.choice(c.oids)], repo)
    if rng.random() < 0.5:
        c.sh(["pack-refs", "--all", "--prune" if rng.random() < 0.5 else "--no-prune"], repo)
    k = rng.random()
    if not files and k < 0.3:
        k = 0.4
    try:
        if k < 0.1:
            p = gd / rng.choice(["refs/heads/a", "refs/heads/z", "refs/tags/t"])
            if not p.exists():
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text("garbage\n")
        elif k < 0.2:
            p = gd / "logs" / rng.choice(["refs/heads/a", "refs/heads/z/y", "refs/heads/a/b"])
            if not p.exists():
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text("")
        elif k < 0.3:
            (gd / rng.choice(["refs/heads/a/b", "refs/heads/z/w"])).mkdir(parents=True,
                                                                       exist_ok=True)
        elif k < 0.5:
            c.sh(["symbolic-ref", "refs/heads/sym", rng.choice(
                ["refs/heads/a", "refs/heads/main", "refs/heads/nope", "refs/heads/a/b"])], repo)
            if rng.random() < 0.3:
                c.sh(["pack-refs", "--all"], repo)
        elif k < 0.55:
            c.sh(["symbolic-ref", "HEAD", rng.choice(["refs/heads/a", "refs/heads/nope"])], repo)
    except OSError:
        pass                                # a file where a directory goes: as it is


def _script(c: _Case, rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randrange(1, 4)):
        n = rng.choice(NAMES)
        o = lambda: rng.choice(c.oids + ["0" * 40])          # noqa: E731
        op = rng.randrange(8)
        if op == 0:
            lines.append(f"create {n} {rng.choice(c.oids)}")
        elif op == 1:
            lines.append(f"update {n} {o()}" + (f" {o()}" if rng.random() < 0.4 else ""))
        elif op == 2:
            lines.append(f"delete {n}" + (f" {o()}" if rng.random() < 0.4 else ""))
        elif op == 3:
            lines.append(f"verify {n}" + (f" {o()}" if rng.random() < 0.6 else ""))
        elif op == 4:
            lines.append(f"symref-update {n} {rng.choice(NAMES[:6])}")
        elif op == 5:
            lines.append(f"symref-create {n} {rng.choice(NAMES[:6])}")
        elif op == 6:
            lines.append(f"symref-delete {n}")
        else:
            lines.append(f"symref-verify {n}" + (f" {rng.choice(NAMES[:6])}"
                                                 if rng.random() < 0.5 else ""))
    if rng.random() < 0.3:
        lines.insert(0, "start")
        lines += rng.choice([["prepare", "commit"], ["commit"], ["prepare", "abort"],
                             ["abort"], ["prepare"], []])
    if rng.random() < 0.15:
        lines.insert(rng.randrange(len(lines) + 1), "option no-deref")
    return "\n".join(lines) + "\n"


def _script_z(c: _Case, rng: random.Random) -> str:
    parts = ["start\0"] if rng.random() < 0.3 else []
    for _ in range(rng.randrange(1, 4)):
        n = rng.choice(NAMES)
        o = lambda: rng.choice(c.oids + ["0" * 40, "", "HEAD", "main", "bogus"])  # noqa: E731
        op = rng.randrange(6)
        maybe = lambda: o() if rng.random() < 0.5 else ""                        # noqa: E731
        if op == 0:
            parts.append(f"update {n}\0{o()}\0{maybe()}\0")
        elif op == 1:
            parts.append(f"create {n}\0{o()}\0")
        elif op == 2:
            parts.append(f"delete {n}\0{maybe()}\0")
        elif op == 3:
            parts.append(f"verify {n}\0{maybe()}\0")
        elif op == 4:
            parts.append("option no-deref\0")
        else:
            parts.append(rng.choice([f"update {n}\0", f"create {n}\0{o()}", "delete\0",
                                     "bogus\0", f"update  {n}\0x\0\0"]))
    if parts and parts[0] == "start\0" and rng.random() < 0.7:
        parts.append(rng.choice(["prepare\0commit\0", "commit\0", "abort\0", "prepare\0"]))
    return "".join(parts)


def _files_state(repo: Path) -> list[str]:
    out = []
    for root, _dirs, files in os.walk(repo / ".git"):
        rel = os.path.relpath(root, repo)
        if "objects" in rel.split(os.sep) or "hooks" in rel:
            continue
        out.append("D " + rel)
        for f in files:
            if f in ("index", "COMMIT_EDITMSG", "description", "exclude", "config"):
                continue
            p = os.path.join(root, f)
            try:
                data = (b"->" + os.readlink(p).encode() if os.path.islink(p)
                        else open(p, "rb").read())
            except OSError as e:
                data = str(e).encode()
            out.append(f"F {os.path.relpath(p, repo)} {data!r}")
    return sorted(out)


def _listed_state(c: _Case, repo: Path) -> list[str]:
    out = [c.sh(["for-each-ref", "--format=%(refname) %(objectname) %(symref)"],
                repo).stdout.decode("utf-8", "replace"),
           c.sh(["symbolic-ref", "HEAD"], repo).stdout.decode(),
           c.sh(["config", "extensions.refstorage"], repo).stdout.decode()]
    for n in NAMES + ["refs/heads/q", "refs/heads/q/r", "refs/heads/nope"]:
        p = c.sh(["reflog", "show", "--format=%H %gs %gd", n], repo)
        out.append(f"{n}: {p.stdout.decode('utf-8', 'replace')} {p.returncode}")
    return out


# -- the read commands ----------------------------------------------------------------

_PATS = ["a", "refs/heads/a", "heads/a", "b", "a/b", "refs/heads", "main", "sym", "HEAD", "t",
         "refs/tags/t", "q/r", "nope", "refs/x", "x"]
_ATOMS = ["refname", "refname:short", "refname:lstrip=1", "refname:rstrip=-2", "objectname",
          "objectname:short=5", "objecttype", "objectsize", "objectsize:disk", "*objectname",
          "*objecttype", "tree", "parent", "numparent", "author", "authoremail:trim",
          "authordate:iso", "authordate:short", "committerdate:format:%Y", "creatordate",
          "creator", "tagger", "subject", "subject:sanitize", "body", "contents",
          "contents:subject", "contents:body", "contents:lines=1", "contents:size",
          "trailers", "trailers:only", "upstream", "upstream:short", "upstream:track",
          "upstream:trackshort", "upstream:remotename", "push", "push:short", "symref",
          "symref:short", "HEAD", "*subject", "type", "object", "tag", "deltabase",
          "raw:size", "describe", "describe:tags", "ahead-behind:main", "is-base:side",
          "worktreepath", "rest", "refname:strip=2", "flag", "signature"]
_SORTS = ["refname", "-refname", "objectsize", "-creatordate", "objecttype",
          "version:refname", "*subject", "upstream", "taggerdate", "HEAD",
          "ahead-behind:main", "is-base:side"]


def _format(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randrange(1, 4)):
        a = rng.choice(_ATOMS)
        k = rng.random()
        if k < 0.08:
            parts.append(f"%(if)%({a})%(then)yes%(else)no%(end)")
        elif k < 0.16:
            where = rng.choice(["left", "right", "middle"])
            parts.append(f"%(align:12,{where})%({a})%(end)")
        else:
            parts.append(f"%({a})")
    return " ".join(parts)


def _read_command(rng: random.Random) -> list[str]:
    k = rng.randrange(3)
    if k == 0:
        opts = rng.sample(["--head", "-d", "--tags", "--branches", "--hash", "-s", "--abbrev",
                           "--verify", "-q", "--exists"], rng.randrange(0, 3))
        if "--exists" in opts:
            opts = [o for o in opts if o != "--verify"]
        return ["show-ref", *opts, *rng.sample(_PATS, rng.randrange(0, 3))]
    if k == 1:
        opts = rng.sample(["--sort=-refname", "--count=2", "--points-at=HEAD", "--merged=HEAD",
                           "--contains=HEAD~1", "--include-root-refs", "--no-contains=HEAD",
                           "--omit-empty", "--exclude=refs/heads/a"], rng.randrange(0, 3))
        fmt = rng.choice(["%(refname)", "%(refname) %(objectname) %(symref)",
                          "%(refname:short) %(upstream)", "%(HEAD) %(refname) %(flag)"])
        return ["for-each-ref", "--format=" + fmt, *opts,
                *rng.sample(["refs/heads", "refs/heads/a", "refs/tags/", "refs"],
                            rng.randrange(0, 2))]
    n = rng.choice(["refs/heads/a", "refs/heads/a/b", "refs/heads/sym", "HEAD",
                    "refs/heads/nope", "refs/heads/q"])
    nd = ["--no-deref"] if rng.random() < 0.3 else []
    if rng.random() < 0.5:
        return ["update-ref", *nd, "-d", n, *(["HEAD"] if rng.random() < 0.3 else [])]
    return ["update-ref", *nd, n, "HEAD", *(["HEAD~1"] if rng.random() < 0.3 else [])]


def _atoms_command(rng: random.Random) -> list[str]:
    opts = [f"--format={_format(rng)}"]
    for _ in range(rng.randrange(0, 3)):
        opts.append(rng.choice(["--sort=" + rng.choice(_SORTS), "--count=3",
                                "--points-at=HEAD~1", "--merged=topic", "--no-merged=HEAD",
                                "--contains=HEAD~2", "--ignore-case", "--include-root-refs",
                                "--exclude=refs/tags/v1*", "--omit-empty", "-s", "--python",
                                "--tcl"]))
    pats = rng.sample(["refs/heads", "refs/tags/v*", "refs/remotes/", "refs/blobs", "refs",
                       "v1", "refs/heads/s*", "refs/tags"], rng.randrange(0, 2))
    return ["for-each-ref", *opts, *pats]


_SHOW = ["main", "refs/heads/main", "heads/main", "v1", "refs/tags/v1", "HEAD",
         "refs/heads/nope", "side", "refs/remotes/origin/HEAD", "origin/main", "refs/blobs/b",
         "refs/heads", "refs/heads/", "refs/tags/main", "refs//heads/main",
         "refs/heads/../x", "", "refs/heads/main.lock", "@"]


def _show_command(rng: random.Random) -> tuple[list[str], bytes]:
    k = rng.randrange(4)
    if k == 0:
        opts = rng.sample(["-d", "-s", "--hash=5", "--abbrev=12", "-q", "--head"],
                          rng.randrange(0, 3))
        return ["show-ref", "--verify", *opts, *rng.sample(_SHOW, rng.randrange(0, 3))], b""
    if k == 1:
        return ["show-ref", "--exists", *rng.sample(_SHOW, rng.randrange(0, 2))], b""
    if k == 2:
        lines = rng.sample(_SHOW + ["abc refs/heads/main", "refs/tags/v1^{}"],
                           rng.randrange(0, 5))
        pat = rng.choice(["--exclude-existing", "--exclude-existing=refs/heads",
                          "--exclude-existing=refs/tags/"])
        return ["show-ref", pat], ("\n".join(lines) + "\n").encode()
    opts = rng.sample(["-d", "-s", "--hash", "--head", "--tags", "--branches", "--abbrev=7",
                       "-q"], rng.randrange(0, 3))
    return ["show-ref", *opts, *rng.sample(_SHOW, rng.randrange(0, 3))], b""


# -- the cases ------------------------------------------------------------------------

KINDS = ("update-files", "update-reftable", "update-z", "read-files", "read-reftable",
         "atoms-files", "atoms-reftable", "show-ref", "migrate-files", "migrate-reftable",
         "hooks-files", "hooks-reftable")
# kinds with differences left (README: "Known differences"): run from the command line
GAP_KINDS = ("worktree-files", "worktree-reftable")

WT_NAMES = ["HEAD", "refs/bisect/x", "refs/worktree/y", "refs/rewritten/z", "refs/heads/a",
            "main-worktree/HEAD", "main-worktree/refs/bisect/m", "worktrees/wt/HEAD",
            "worktrees/wt/refs/bisect/w", "worktrees/nope/refs/bisect/n", "ORIG_HEAD",
            "refs/heads/wt-branch"]


def _wt_script(c: _Case, rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randrange(1, 4)):
        n = rng.choice(WT_NAMES)
        o = rng.choice(c.oids)
        lines.append(rng.choice([f"update {n} {o}", f"create {n} {o}", f"delete {n}",
                                 f"verify {n} {o}", f"symref-update {n} refs/heads/main",
                                 f"update {n} {o} {rng.choice(c.oids)}"]))
    return "\n".join(lines) + "\n"


def _wt_state(c: _Case, repo: Path) -> list[str]:
    out = []
    for where in (repo, repo / "wt"):
        out.append(c.sh(["for-each-ref", "--format=%(refname) %(objectname) %(symref)"],
                        where).stdout.decode("utf-8", "replace"))
        for n in WT_NAMES:
            p = c.sh(["rev-parse", "--verify", "-q", n], where)
            label = "main" if where == repo else "wt"
            out.append(f"{label} {n} {p.stdout.decode().strip()} {p.returncode}")
            q = c.sh(["reflog", "show", "--format=%H %gs", n], where)
            out.append(f"  log {q.stdout.decode('utf-8', 'replace')} {q.returncode}")
    return out

_HOOK = """#!/bin/sh
echo "== $1" >>hook.log
cat >>hook.log
test "$1" != "{refuse}"
"""


def _install_hook(rng: random.Random, repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "reference-transaction"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(_HOOK.format(refuse=rng.choice(["prepared", "committed", "aborted",
                                                    "none", "none"])))
    hook.chmod(0o755)


def _one(c: _Case, kind: str, seed: int) -> str | None:
    fmt = "reftable" if kind.endswith("reftable") else "files"
    read_only = kind.startswith(("atoms", "show-ref"))
    template = c.rich(fmt) if read_only else c.plain(fmt)
    results = []
    shown = ""
    for lab in (False, True):
        rng = random.Random(f"{kind}/{seed}")
        repo = c.work / ("lab" if lab else "git")
        if read_only:
            repo = template
        else:
            shutil.rmtree(repo, ignore_errors=True)
            shutil.copytree(template, repo, symlinks=True)
            if not kind.startswith("worktree"):
                _state_setup(c, rng, repo, fmt == "files")
        stdin = b""
        if kind.startswith("hooks"):
            _install_hook(rng, repo)
        run_in = repo
        if kind.startswith("worktree"):
            made = c.sh(["worktree", "add", "-q", "-b", "wt-branch", "wt"], repo)
            if made.returncode:
                raise RuntimeError(f"git worktree add: {made.stderr!r}")
            if rng.random() < 0.5:
                c.sh(["update-ref", "refs/bisect/x", c.oids[1]], repo / "wt")
            run_in = repo / "wt" if rng.random() < 0.7 else repo
        if kind.startswith(("update", "hooks")):
            z = kind == "update-z"
            stdin = (_script_z(c, rng) if z else _script(c, rng)).encode()
            nd = ["--no-deref"] if rng.random() < 0.3 else []
            args = ["update-ref", *nd, "-m", "msg", *(["-z"] if z else []), "--stdin"]
        elif kind.startswith("worktree"):
            stdin = _wt_script(c, rng).encode()
            args = ["update-ref", *(["--no-deref"] if rng.random() < 0.3 else []), "-m", "msg",
                    "--stdin"]
        elif kind.startswith("read"):
            args = _read_command(rng)
            stdin = b"refs/heads/a\nrefs/heads/q\n"
        elif kind.startswith("atoms"):
            args = _atoms_command(rng)
        elif kind == "show-ref":
            args, stdin = _show_command(rng)
        else:
            c.sh(["update-ref", "-m", "msg", "--stdin"], repo, _script(c, rng).encode())
            if rng.random() < 0.3:
                c.sh(["pack-refs", "--all"], repo)
            to = "reftable" if fmt == "files" else "files"
            args = ["refs", "migrate", f"--ref-format={to}",
                    *(["--dry-run"] if rng.random() < 0.2 else [])]
        if kind.startswith("migrate"):
            c.env["REFTABLE_LAB_FLAGS"] = "migrate_initial=off"
        p = c.sh(args, run_in, stdin, lab=lab)
        c.env.pop("REFTABLE_LAB_FLAGS", None)
        state: list[str] = []
        if kind.startswith("worktree"):
            state = _wt_state(c, repo)
        elif not read_only:
            state = (_files_state(repo) if fmt == "files" and not kind.startswith("migrate")
                     else _listed_state(c, repo))
            log = repo / "hook.log"             # the hook runs at the worktree's top
            if log.exists():
                state.append("hook.log " + log.read_text("utf-8", "replace"))
        err = p.stderr.replace(str(c.work / "lab").encode(), str(c.work / "git").encode())
        results.append((p.returncode, p.stdout, err, state))
        shown = f"{' '.join(args)!r} stdin={stdin!r}"
    if results[0] == results[1]:
        return None
    lines = [f"{kind} seed {seed}: {shown}"]
    for i, what in enumerate(("status", "stdout", "stderr")):
        if results[0][i] != results[1][i]:
            lines.append(f"  {what}: git {results[0][i]!r}\n  {' ' * len(what)}  lab "
                         f"{results[1][i]!r}")
    g, ours = set(results[0][3]), set(results[1][3])
    lines += [f"  git only: {x[:300]}" for x in sorted(g - ours)]
    lines += [f"  lab only: {x[:300]}" for x in sorted(ours - g)]
    lines.append(f"  again: python -m tests.helpers.beside_git {kind} {seed} 1")
    return "\n".join(lines)


def run(kind: str, seed: int, count: int, work: Path) -> list[str]:
    if kind not in KINDS + GAP_KINDS:
        raise ValueError(f"unknown kind {kind!r} (one of {', '.join(KINDS + GAP_KINDS)})")
    c = _Case(work / kind)
    return [r for s in range(seed, seed + count) if (r := _one(c, kind, s)) is not None]


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4):
        print(__doc__.split("Command line: ")[1].strip(), file=sys.stderr)
        return 2
    work = Path(argv[3]) if len(argv) == 4 else Path(tempfile.mkdtemp(prefix="beside-git-"))
    reports = run(argv[0], int(argv[1]), int(argv[2]), work)
    for r in reports:
        print(r)
    print(f"{argv[0]}: {argv[2]} cases from seed {argv[1]}, {len(reports)} differ")
    return 1 if reports else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
