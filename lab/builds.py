"""Builds of git from a local clone of git.git, one per commit, cached; and
checkouts of this repository at a commit (two revisions of reftable-core).

Contract: build(src, rev) resolves `rev` in the repository `src` to a commit
and returns a GitBuild: the tree of that commit built out of tree in
<cache>/builds/<commit>/ (gitbin.cache_root()); with by_tree=True in
<cache>/builds/tree-<tree id>/ instead, so two commits of one tree (a recipe's
cherry-pick that remakes a commit, lab.recipes) share one build; by
`make -j$(nproc) <the provisioning script's MAKE_OPTS> all` (the same prefix
and NO_* options, read from scripts/provision-git.sh; CC="ccache cc" when
ccache is on PATH). A build is reused whenever its folder holds BUILD_INFO.

The tree is exported without touching `src`'s work tree or index: a private
index (GIT_INDEX_FILE) over the build folder, `read-tree <commit>`, a refresh,
and `checkout-index` of the paths whose content differs. A new build starts
from a copy of the most recent earlier build of a commit of src made with the
same compiler (else the provisioned git's built source tree,
gitbin.provisioned_source(), which the provisioning script made with the same
options; else, or with provisioned_base=False, an empty folder: a small project
that is not git.git), timestamps kept:
only files whose content differs are rewritten, so make recompiles only what
changed. BUILD_INFO records what was compiled (the object files make wrote)
and the tree built. The peer runs <build>/git itself: the peers' commands are
builtins. Any project whose Makefile has an `all` target that makes ./git, and
takes the MAKE_OPTS variables (make ignores the ones it does not use), builds.

core_rev(repo, rev) is the second kind: a `git worktree` of rev's commit of
the repository repo (this checkout, or a clone of it) in
<cache>/core-revs/<commit>/, reused while it is at that commit; its env()
(PYTHONPATH to its core/ and root, PYTHONSAFEPATH) makes `python -m lab.worker` run that
revision's worker, workloads and reftable_core.

compiled_core(core_dir) is the third: reftable_core of core_dir (this checkout's core/
by default) compiled by mypyc (scripts/build-compiled-core.sh: out of tree, in
<cache>/compiled-core/<hash of the sources>/, made now or reused; the modules mypyc
cannot compile stay interpreted, named with the reason in its lab-build.json).
cython_core(core_dir) is its sibling: the same sources compiled by Cython in pure Python
mode, the C types declared in .pxd files beside the hot modules
(scripts/build-cython-core.sh, in <cache>/cython-core/<hash of the .py and .pxd files>/).
A CoreBuild names one build of this checkout's core, interpreted, compiled or cython: it
stands where a CoreRev does (its short is its name, so variants read all-on@compiled), and
its env() puts that build first on the worker's PYTHONPATH.

BuildError carries one line: not a repository, unknown revision, or a failed
make (its log's path).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from gitbin import (PROVISION_SCRIPT, REPO_ROOT, cache_root, find_git, hermetic_env,
                     provisioned_source)

BUILD_INFO = "lab-build.json"
_INDEX = ".lab-index"
_LOG = "lab-build.log"
# not copied from a base tree: git's test trash (the provisioned tree ran git's tests),
# this module's own files
_NOT_COPIED = ("trash directory.*", _INDEX, _LOG, BUILD_INFO)


class BuildError(RuntimeError):
    """A git build could not be made; the message is one line."""


@dataclass(frozen=True)
class GitBuild:
    rev: str           # as given
    commit: str        # full object id
    dir: Path          # the built tree

    @property
    def short(self) -> str:
        return self.commit[:10]

    @property
    def label(self) -> str:
        """The peer's label: git@<short commit>."""
        return f"git@{self.short}"

    @property
    def git(self) -> Path:
        return self.dir / "git"

    def info(self) -> dict[str, Any]:
        return json.loads((self.dir / BUILD_INFO).read_text())


def builds_root() -> Path:
    return cache_root() / "builds"


def compiler() -> str:
    return "ccache cc" if shutil.which("ccache") else "cc"


def make_options() -> list[str]:
    """The provisioning script's MAKE_OPTS (prefix and NO_* switches), evaluated by bash
    from the script's own lines, so the two builds cannot drift apart."""
    lines = PROVISION_SCRIPT.read_text().splitlines()
    keep, inside = [], False
    for line in lines:
        if line.startswith(("CACHE_ROOT=", "PREFIX=")):
            keep.append(line)
        if line.startswith("MAKE_OPTS=("):
            inside = True
        if inside:
            keep.append(line)
            if line.rstrip().endswith(")"):
                break
    if not inside:
        raise BuildError(f"no MAKE_OPTS=( ... ) in {PROVISION_SCRIPT}")
    script = "\n".join(keep) + '\nprintf "%s\\n" "${MAKE_OPTS[@]}"\n'
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True,
                         env={**os.environ, "REFTABLE_LAB_CACHE": str(cache_root())})
    return out.stdout.splitlines()


def _git(src: Path, args: Sequence[str], env: dict[str, str] | None = None,
         input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([find_git(), "-C", str(src), *args], capture_output=True, input=input,
                          env=env or hermetic_env())


def resolve(src: Path | str, rev: str, options: tuple[str, str] = ("--git-src", "--git-rev")
            ) -> str:
    """rev's commit id in the repository src; BuildError (one line, naming the
    options src and rev came from) if src is not a repository or rev names no
    commit there."""
    src = Path(src)
    if not src.is_dir() or _git(src, ["rev-parse", "--git-dir"]).returncode != 0:
        raise BuildError(f"{options[0]} {src}: not a git repository")
    proc = _git(src, ["rev-parse", "--verify", "--quiet", "--end-of-options",
                      f"{rev}^{{commit}}"])
    if proc.returncode != 0:
        raise BuildError(f"{options[1]} {rev}: unknown revision in {src}")
    return proc.stdout.decode().strip()


def _base(src: Path, cc: str, provisioned_base: bool = True
          ) -> tuple[Path, str | None] | None:
    """The tree a new build starts from: (folder, its commit or None); None: an empty
    folder. A cached build is a base only when its commit is in src (builds from
    another clone, e.g. the tests' small repository, cannot be diffed against); the
    provisioned git's tree only when provisioned_base (src is git.git)."""
    done = [(d.joinpath(BUILD_INFO).stat().st_mtime, d) for d in builds_root().glob("*")
            if d.joinpath(BUILD_INFO).is_file()]
    for _, d in sorted(done, reverse=True):
        info = json.loads(d.joinpath(BUILD_INFO).read_text())
        if info.get("cc") == cc and _git(src, ["cat-file", "-e",
                                               f"{info['commit']}^{{commit}}"]).returncode == 0:
            return d, info["commit"]
    tree = provisioned_source() if provisioned_base else None
    return (tree, None) if tree is not None and cc == "cc" else None


def _copy_tree(base: Path, dest: Path) -> None:
    """base's files into dest with their timestamps and hard links (git's builtins are
    hard links of git: copied one by one they would take 2 GB), by a tar pipe."""
    excludes = [f"--exclude={p}" for p in _NOT_COPIED]
    pack = subprocess.Popen(["tar", "-C", str(base), "-cf", "-", *excludes, "."],
                            stdout=subprocess.PIPE)
    unpack = subprocess.run(["tar", "-C", str(dest), "-xpf", "-"], stdin=pack.stdout,
                            capture_output=True)
    assert pack.stdout is not None
    pack.stdout.close()
    if pack.wait() != 0 or unpack.returncode != 0:
        raise BuildError(f"copying {base} to {dest} failed: {unpack.stderr.decode()[-300:]}")


def _export(src: Path, commit: str, tree: Path, base_commit: str | None) -> int:
    """Make tree hold commit's files, rewriting only those whose content differs from
    what is there (and deleting the files base_commit had and commit has not); the
    number of files written."""
    git_dir = _git(src, ["rev-parse", "--absolute-git-dir"]).stdout.decode().strip()
    env = {**hermetic_env(), "GIT_DIR": git_dir, "GIT_WORK_TREE": str(tree),
           "GIT_INDEX_FILE": str(tree / _INDEX)}

    def run(args: Sequence[str], input: bytes | None = None,
            check: bool = True) -> subprocess.CompletedProcess[bytes]:
        proc = subprocess.run([find_git(), *args], cwd=tree, env=env, input=input,
                              capture_output=True)
        if check and proc.returncode != 0:
            raise BuildError(f"exporting {commit[:10]}: git {' '.join(args)}: "
                             f"{proc.stderr.decode().strip().splitlines()[-1:]}")
        return proc
    if base_commit:
        gone = run(["diff", "--name-only", "-z", "--diff-filter=D", base_commit, commit])
        for name in filter(None, gone.stdout.split(b"\0")):
            path = tree / os.fsdecode(name)
            if path.is_dir() and not path.is_symlink():     # a submodule (gitlink) the
                shutil.rmtree(path)                         # base had: a folder here
            else:
                path.unlink(missing_ok=True)
    run(["read-tree", commit])
    run(["update-index", "-q", "--refresh"], check=False)   # 1 when files differ
    changed = run(["diff-files", "--name-only", "-z"]).stdout
    run(["checkout-index", "-f", "-z", "--stdin"], input=changed)
    (tree / _INDEX).unlink()
    return len([n for n in changed.split(b"\0") if n])


def tree_of(src: Path | str, commit: str) -> str:
    """The id of commit's tree in src."""
    proc = _git(Path(src), ["rev-parse", "--verify", "--quiet", f"{commit}^{{tree}}"])
    if proc.returncode != 0:
        raise BuildError(f"{commit}: no tree in {src}")
    return proc.stdout.decode().strip()


def build(src: Path | str, rev: str, jobs: int | None = None,
          log: TextIO | None = sys.stderr, by_tree: bool = False,
          provisioned_base: bool = True) -> GitBuild:
    """The build of rev's commit (made now, or reused from the cache); by_tree: cached
    by the commit's tree (builds/tree-<tree>/, shared by the commits of that tree);
    provisioned_base: a first build of src may start from the provisioned git's tree
    (False for a project that is not git.git)."""
    src = Path(src).resolve()
    commit = resolve(src, rev)
    tree_id = tree_of(src, commit)
    target = builds_root() / (f"tree-{tree_id}" if by_tree else commit)
    if (target / BUILD_INFO).is_file() and os.access(target / "git", os.X_OK):
        return GitBuild(rev, commit, target)
    cc = compiler()
    base = _base(src, cc, provisioned_base)
    tmp = builds_root() / f"{target.name}.tmp.{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    started = time.time()
    tmp.mkdir()
    if base is not None:
        _copy_tree(base[0], tmp)
    written = _export(src, commit, tmp, base[1] if base else None)
    if log:
        print(f"reftable-lab: building git {commit[:10]} ({rev}) in {target}"
              f"{f', from {base[0]}' if base else ''}: {written} files written", file=log)
    make_start = time.time()
    cmd = ["make", "-C", str(tmp), f"-j{jobs or os.cpu_count() or 1}", *make_options(),
           f"CC={cc}", "all"]
    with open(tmp / _LOG, "wb") as out:
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        raise BuildError(f"make failed for {commit[:10]} ({rev}); its log: {tmp / _LOG}")
    compiled = sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*.o")
                      if p.stat().st_mtime >= make_start - 1)
    info = {"commit": commit, "tree": tree_id, "rev": rev, "src": str(src), "cc": cc,
            "base": str(base[0]) if base else None, "files_written": written,
            "compiled": compiled, "seconds": round(time.time() - started, 1),
            "make": cmd[3:]}
    (tmp / BUILD_INFO).write_text(json.dumps(info, indent=1))
    try:
        tmp.rename(target)
    except OSError:                  # built meanwhile by another run: keep that one
        shutil.rmtree(tmp, ignore_errors=True)
    return GitBuild(rev, commit, target)


def build_all(src: Path | str, revs: Sequence[str], jobs: int | None = None,
              log: TextIO | None = sys.stderr) -> list[GitBuild]:
    """Every rev's build, in order (each resolved first, so a bad rev fails before any
    build starts); two revs naming one commit give one build."""
    commits = [resolve(src, r) for r in revs]
    out: dict[str, GitBuild] = {}
    for rev, commit in zip(revs, commits):
        if commit not in out:
            out[commit] = build(src, rev, jobs, log)
    return list(out.values())


@dataclass(frozen=True)
class CoreRev:
    rev: str           # as given
    commit: str
    dir: Path          # the worktree

    @property
    def short(self) -> str:
        return self.commit[:10]

    def env(self) -> dict[str, str]:
        """What a worker of this revision runs with: PYTHONPATH to its core/ and root,
        and PYTHONSAFEPATH (`python -m` would put the working folder, this checkout,
        before them)."""
        return {"PYTHONPATH": f"{self.dir / 'core'}{os.pathsep}{self.dir}",
                "PYTHONSAFEPATH": "1"}


def core_rev(repo: Path | str, rev: str) -> CoreRev:
    """The worktree of rev's commit of repo (made now, or reused)."""
    repo = Path(repo).resolve()
    commit = resolve(repo, rev, ("--core-src", "--core-rev"))
    tree = cache_root() / "core-revs" / commit
    head = _git(tree, ["rev-parse", "HEAD"]) if (tree / ".git").exists() else None
    if head is None or head.returncode != 0 or head.stdout.decode().strip() != commit:
        shutil.rmtree(tree, ignore_errors=True)
        tree.parent.mkdir(parents=True, exist_ok=True)
        _git(repo, ["worktree", "prune"])
        proc = _git(repo, ["worktree", "add", "-q", "--detach", "--force", str(tree), commit])
        if proc.returncode != 0:
            raise BuildError(f"--core-rev {rev}: git worktree add failed: "
                             f"{proc.stderr.decode().strip()}")
    return CoreRev(rev, commit, tree)


COMPILE_SCRIPT = REPO_ROOT / "scripts" / "build-compiled-core.sh"
CYTHON_SCRIPT = REPO_ROOT / "scripts" / "build-cython-core.sh"
CORE_BUILDS = ("interpreted", "compiled", "cython")


def _built_core(script: Path, kind: str, core_dir: Path | str, log: TextIO | None) -> Path:
    """The folder a core build script prints last (made now or reused); BuildError with
    the script's last line of stderr if it fails."""
    proc = subprocess.run(["bash", str(script), str(core_dir)], capture_output=True,
                          text=True, env={**os.environ, "PYTHON": sys.executable})
    if log and proc.stderr:
        log.write(proc.stderr)
    lines = proc.stdout.split()
    if proc.returncode != 0 or not lines:
        last = proc.stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        raise BuildError(f"--core {kind}: {last[0]}")
    return Path(lines[-1])


def compiled_core(core_dir: Path | str = REPO_ROOT / "core",
                  log: TextIO | None = sys.stderr) -> Path:
    """The folder holding core_dir's reftable_core compiled by mypyc (a PYTHONPATH entry;
    built now, or reused while the sources are unchanged); BuildError if mypyc fails."""
    return _built_core(COMPILE_SCRIPT, "compiled", core_dir, log)


def cython_core(core_dir: Path | str = REPO_ROOT / "core",
                log: TextIO | None = sys.stderr) -> Path:
    """The folder holding core_dir's reftable_core compiled by Cython in pure Python mode
    (the same .py files, C types from the .pxd files beside them;
    scripts/build-cython-core.sh, out of tree in <cache>/cython-core/<hash>/: built now, or
    reused while the sources are unchanged); BuildError if Cython or the C compiler fails."""
    return _built_core(CYTHON_SCRIPT, "cython", core_dir, log)


# the builds made by a script, by name (the interpreted one is the source tree)
CORE_BUILDERS: dict[str, Callable[..., Path]] = {"compiled": compiled_core,
                                                 "cython": cython_core}


@dataclass(frozen=True)
class CoreBuild:
    """One build of this checkout's reftable_core: interpreted (its .py files), compiled
    (dir: compiled_core()'s folder) or cython (dir: cython_core()'s folder)."""
    name: str          # one of CORE_BUILDS
    dir: Path | None = None

    @property
    def rev(self) -> str:
        return self.name

    @property
    def short(self) -> str:
        return self.name

    @property
    def commit(self) -> str:
        """The compiled build's cache key (its folder's name); "" for the interpreted one."""
        return self.dir.name if self.dir else ""

    def env(self) -> dict[str, str]:
        """The worker's PYTHONPATH: the compiled folder (if any), this checkout's core/ and
        root; PYTHONSAFEPATH as for a CoreRev."""
        path = [str(self.dir)] if self.dir else []
        path += [str(REPO_ROOT / "core"), str(REPO_ROOT)]
        return {"PYTHONPATH": os.pathsep.join(path), "PYTHONSAFEPATH": "1"}


def core_build(name: str) -> CoreBuild:
    """The named build (a compiled one made or reused now); BuildError for another name."""
    if name not in CORE_BUILDS:
        raise BuildError(f"--core {name}: not one of {', '.join(CORE_BUILDS)}")
    return CoreBuild(name, CORE_BUILDERS[name]() if name in CORE_BUILDERS else None)
