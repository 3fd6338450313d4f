"""%(upstream) and %(push): a branch's tracking refs from its config (git's remote.c
branch_get / branch_get_upstream / branch_get_push, ref-filter.c fill_remote_ref_details).

Contract: REMOTE_ATOMS maps "upstream" and "push" to their AtomParser (atom.py).
Arguments, comma separated as remote_ref_atom_parser takes them: short, lstrip=N,
rstrip=N (the refname options), track, trackshort, nobracket, remotename, remoteref;
an unknown one dies with git's words at parse time. Values (only for refs/heads/*):
  upstream      branch.<b>.merge mapped through remote.<r>.fetch of branch.<b>.remote
                (a "." remote: the merge ref itself, dwim'd); "" when there is none.
  push          push.default (simple when unset) over remote.<r>.push, remote.<r>.mirror
                and the fetch refspec of the push remote (branch.<b>.pushRemote, then
                remote.pushDefault, then the branch's remote).
  track         "[ahead N, behind M]" / "[ahead N]" / "[behind M]" / "" / "[gone]"
                (odb.reach.ahead_behind of the branch and its tracking ref);
                trackshort "<>", ">", "<", "=", or ""; nobracket drops the brackets.
  remotename    the remote named explicitly in config, else ""; remoteref the merge
                ref (upstream) or the push refspec's destination (push).
Config is repo.config (one value per key: a remote with several fetch or push
refspecs is seen with its last one; negative refspecs are not read).
"""
from __future__ import annotations

from typing import Any

from ...errors import ReftableError
from ...odb.reach import ahead_behind
from .atom import SOURCE_NONE, AtomContext, AtomParser, AtomValue, GitObject, RefItem
from .ref_atoms import EMPTY, RefnameOption

RR_REF, RR_TRACK, RR_TRACKSHORT, RR_REMOTE_NAME, RR_REMOTE_REF = range(5)


def _refspec(spec: str | None) -> tuple[str, str | None] | None:
    """(src, dst) of a refspec, "+" dropped; None for no spec or a negative one."""
    if not spec or spec.startswith("^"):
        return None
    spec = spec.removeprefix("+")
    src, colon, dst = spec.partition(":")
    return src, (dst if colon and dst else None)


def _match(key: str, name: str, value: str) -> str | None:
    """match_name_with_pattern: key's one "*" matched by name, put into value."""
    star = key.find("*")
    if star < 0:
        return value if key == name else None
    pre, suf = key[:star], key[star + 1:]
    if len(name) < len(pre) + len(suf) or not name.startswith(pre) or not name.endswith(suf):
        return None
    mid = name[len(pre):len(name) - len(suf)]
    return value.replace("*", mid, 1)


def apply_refspec(spec: str | None, name: str) -> str | None:
    rs = _refspec(spec)
    if rs is None or rs[1] is None:
        return None
    return _match(rs[0], name, rs[1])


class Branch:
    """What remote.c's branch_get reads for one branch."""

    def __init__(self, repo: Any, name: str) -> None:
        cfg = repo.config
        self.repo = repo
        self.cfg = cfg
        self.name = name
        self.refname = "refs/heads/" + name
        self.remote_name: str | None = cfg.get(f"branch.{name}.remote") or None
        self.pushremote_name: str | None = cfg.get(f"branch.{name}.pushremote") or None
        self.merge_name: str | None = cfg.get(f"branch.{name}.merge") or None

    def _remotes(self) -> list[str]:
        names: list[str] = []
        for k in self.cfg:
            if k.startswith("remote.") and k.count(".") >= 2:
                n = k[7:k.rindex(".")]
                if n not in names:
                    names.append(n)
        return names

    def remote_for_branch(self) -> tuple[str, bool]:
        if self.remote_name:
            return self.remote_name, True
        remotes = self._remotes()
        return (remotes[0] if len(remotes) == 1 else "origin"), False

    def pushremote_for_branch(self) -> tuple[str, bool]:
        if self.pushremote_name:
            return self.pushremote_name, True
        default = self.cfg.get("remote.pushdefault")
        if default:
            return default, True
        return self.remote_for_branch()

    def upstream(self) -> str | None:
        """branch_get_upstream (set_merge, remote_find_tracking)."""
        if not self.remote_name or not self.merge_name:
            return None
        dst = apply_refspec(self.cfg.get(f"remote.{self.remote_name}.fetch"),
                            self.merge_name)
        if dst is not None:
            return dst
        if self.remote_name != ".":
            return None
        return _dwim(self.repo, self.merge_name)

    def push(self) -> str | None:
        """branch_get_push_1."""
        remote, _ = self.pushremote_for_branch()
        fetch = self.cfg.get(f"remote.{remote}.fetch")
        push = self.cfg.get(f"remote.{remote}.push")
        if push:
            dst = apply_refspec(push, self.refname)
            return apply_refspec(fetch, dst) if dst is not None else None
        if _bool(self.cfg.get(f"remote.{remote}.mirror")):
            return apply_refspec(fetch, self.refname)
        mode = (self.cfg.get("push.default") or "simple").lower()
        if mode == "nothing":
            return None
        if mode in ("matching", "current"):
            return apply_refspec(fetch, self.refname)
        if mode in ("upstream", "tracking"):
            return self.upstream()
        up = self.upstream()
        if up is None:
            return None
        cur = apply_refspec(fetch, self.refname)
        return cur if cur == up else None

    def remote_ref(self, for_push: bool) -> str | None:
        """remote_ref_for_branch."""
        if not for_push:
            return self.merge_name
        remote, _ = self.pushremote_for_branch()
        return apply_refspec(self.cfg.get(f"remote.{remote}.push"), self.refname)


def _bool(v: str | None) -> bool:
    return v is not None and v.lower() in ("true", "yes", "on", "1", "")


_DWIM = ("{}", "refs/{}", "refs/tags/{}", "refs/heads/{}", "refs/remotes/{}",
         "refs/remotes/{}/HEAD")


def _read_ref(repo: Any, name: str) -> bytes | None:
    try:
        r = repo.refs.resolve(name.encode("utf-8", "surrogateescape"), allow_bad_name=False)
    except ReftableError:
        return None
    if r is None:
        return None
    return r if isinstance(r, bytes) else r.value


def _dwim(repo: Any, name: str) -> str:
    found = [rule.format(name) for rule in _DWIM if _read_ref(repo, rule.format(name))]
    return found[0] if len(found) == 1 else name


class RemoteRefAtom:
    source = SOURCE_NONE

    def __init__(self, name: str, arg: str | None) -> None:
        self.push = name == "push"
        self.option = RR_REF
        self.nobracket = False
        self.refname = RefnameOption(name, None)
        if arg is None:
            return
        for s in arg.split(","):
            if s == "track":
                self.option = RR_TRACK
            elif s == "trackshort":
                self.option = RR_TRACKSHORT
            elif s == "nobracket":
                self.nobracket = True
            elif s == "remotename":
                self.option = RR_REMOTE_NAME
            elif s == "remoteref":
                self.option = RR_REMOTE_REF
            else:
                self.option = RR_REF
                self.refname = RefnameOption(name, arg)

    def value(self, ctx: AtomContext, ref: RefItem, obj: GitObject | None) -> AtomValue:
        if not ref.name.startswith(b"refs/heads/"):
            return EMPTY
        branch = Branch(ctx.repo, ref.name[11:].decode("utf-8", "surrogateescape"))
        opt = self.option
        push_remote = opt in (RR_REMOTE_NAME, RR_REMOTE_REF)
        if self.push and push_remote:
            tracking: str | None = None
        else:
            tracking = branch.push() if self.push else branch.upstream()
            if tracking is None:
                return EMPTY
        if opt == RR_REF:
            assert tracking is not None
            return AtomValue(self.refname.show(ctx, tracking.encode("utf-8", "surrogateescape")))
        if opt in (RR_TRACK, RR_TRACKSHORT):
            counts = self._stat(ctx, branch, tracking)
            if opt == RR_TRACKSHORT:
                if counts is None:
                    return EMPTY
                ours, theirs = counts
                return AtomValue(b"=" if not ours and not theirs else b"<" if not ours
                                 else b">" if not theirs else b"<>")
            if counts is None:
                s = "gone"
            else:
                ours, theirs = counts
                s = ("" if not ours and not theirs else f"behind {theirs}" if not ours
                     else f"ahead {ours}" if not theirs else f"ahead {ours}, behind {theirs}")
            if s and not self.nobracket:
                s = f"[{s}]"
            return AtomValue(s.encode())
        if opt == RR_REMOTE_NAME:
            name, explicit = (branch.pushremote_for_branch() if self.push
                              else branch.remote_for_branch())
            return AtomValue(name.encode() if explicit else b"")
        merge = branch.remote_ref(self.push)
        return AtomValue(merge.encode("utf-8", "surrogateescape") if merge else b"")

    def _stat(self, ctx: AtomContext, branch: Branch,
              base: str | None) -> tuple[int, int] | None:
        """stat_tracking_info: (ours, theirs), None when a side is missing."""
        if base is None:
            return None
        theirs = _read_ref(ctx.repo, base)
        ours = _read_ref(ctx.repo, branch.refname)
        if theirs is None or ours is None:
            return None
        store = ctx.repo.objects
        try:
            return ahead_behind(store, theirs, [ours])[0]
        except ReftableError:
            return None


def parse_remote_ref(ctx: Any, name: str, arg: str | None) -> RemoteRefAtom:
    return RemoteRefAtom(name, arg)


REMOTE_ATOMS: dict[str, AtomParser] = {"upstream": parse_remote_ref, "push": parse_remote_ref}
